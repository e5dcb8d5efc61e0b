/* Weight maps as pictures (plot.h). The whole pixel grid of a panel is one batch through the
 * evaluation callback, so a picture costs one SIMD evaluation of panel^2 queries; every panel
 * shows a different row of the same result. */
#include "cli/plot.h"

#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAD = 6 };

typedef struct canvas {
    int w, h;
    uint8_t *rgb;
} canvas;

static void put(canvas *c, int x, int y, const uint8_t col[3])
{
    if (x >= 0 && y >= 0 && x < c->w && y < c->h) {
        memcpy(c->rgb + 3 * ((size_t)y * c->w + x), col, 3);
    }
}

/* Weight to colour: a ramp through dark indigo, purple, red, orange and pale yellow, so that
 * 0 recedes and 1 stands out, readable in grey scale too (luminance rises monotonically). */
static void ramp(float w, uint8_t out[3])
{
    static const float stops[5][3] = {
        {14, 10, 42}, {76, 32, 116}, {176, 52, 94}, {240, 132, 44}, {252, 244, 160}};
    float t = w <= 0 ? 0 : w >= 1 ? 4 : 4 * w;
    int k = t >= 4 ? 3 : (int)t;
    float f = t - (float)k;
    for (int i = 0; i < 3; ++i) {
        out[i] = (uint8_t)(stops[k][i] + f * (stops[k + 1][i] - stops[k][i]) + 0.5f);
    }
}

/* 3 x 5 digits, one row per 3 bits (high bit left). */
static const uint8_t digits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
};

/* Letters used by the built-in labels (velocity blend: F B L R), same format. */
static const uint8_t *glyph(char ch)
{
    static const uint8_t f[5] = {7, 4, 6, 4, 4}, b[5] = {6, 5, 6, 5, 6};
    static const uint8_t l[5] = {4, 4, 4, 4, 7}, r[5] = {6, 5, 6, 5, 5};
    if (ch >= '0' && ch <= '9') {
        return digits[ch - '0'];
    }
    switch (ch) {
    case 'F':
        return f;
    case 'B':
        return b;
    case 'L':
        return l;
    case 'R':
        return r;
    default:
        return NULL;
    }
}

static void text(canvas *c, int x, int y, const char *s, int scale)
{
    static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    for (; *s != '\0'; ++s, x += 4 * scale) {
        const uint8_t *g = glyph(*s);
        if (g == NULL) {
            continue;
        }
        for (int row = 0; row < 5; ++row) {
            for (int col = 0; col < 3; ++col) {
                if (!(g[row] >> (2 - col) & 1)) {
                    continue;
                }
                for (int dy = -1; dy <= scale; ++dy) {
                    for (int dx = -1; dx <= scale; ++dx) {
                        bool inner = dx >= 0 && dy >= 0 && dx < scale && dy < scale;
                        int px = x + col * scale + dx, py = y + row * scale + dy;
                        if (inner) {
                            put(c, px, py, white);
                        } else if (px >= 0 && py >= 0 && px < c->w && py < c->h &&
                                   memcmp(c->rgb + 3 * ((size_t)py * c->w + px), white, 3) != 0) {
                            put(c, px, py, black);
                        }
                    }
                }
            }
        }
    }
}

static void disc(canvas *c, int cx, int cy, int r, bool filled)
{
    static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    for (int y = -r - 1; y <= r + 1; ++y) {
        for (int x = -r - 1; x <= r + 1; ++x) {
            double d = sqrt((double)(x * x + y * y));
            if (d <= r - 1 && filled) {
                put(c, cx + x, cy + y, white);
            } else if (d <= r && d > r - 1.5) {
                put(c, cx + x, cy + y, white);
            } else if (d <= r + 1 && d > r) {
                put(c, cx + x, cy + y, black);
            }
        }
    }
}

void cb_plot_window(const float *nodes, size_t n, int dimension, float lo[2], float hi[2])
{
    for (int k = 0; k < 2; ++k) {
        lo[k] = hi[k] = 0.0f;
    }
    for (size_t i = 0; i < n; ++i) {
        for (int k = 0; k < dimension; ++k) {
            float v = nodes[i * dimension + k];
            lo[k] = i == 0 || v < lo[k] ? v : lo[k];
            hi[k] = i == 0 || v > hi[k] ? v : hi[k];
        }
    }
    float side = hi[0] - lo[0];
    if (dimension == 2 && hi[1] - lo[1] > side) {
        side = hi[1] - lo[1];
    }
    float grow = side > 0 ? 0.25f * side : 1.0f;
    for (int k = 0; k < dimension; ++k) {
        float mid = 0.5f * (lo[k] + hi[k]), half = 0.5f * side + grow;
        lo[k] = mid - half, hi[k] = mid + half;
    }
    if (dimension == 1) {
        lo[1] = 0.0f, hi[1] = 1.0f;
    }
}

/* Pixel centre -> parameter coordinate. */
static float coord(const cb_plot *p, int axis, int pixel)
{
    float t = ((float)pixel + 0.5f) / (float)p->panel;
    return p->lo[axis] + t * (p->hi[axis] - p->lo[axis]);
}

static int to_pixel(const cb_plot *p, int axis, float v)
{
    float t = (v - p->lo[axis]) / (p->hi[axis] - p->lo[axis]);
    return (int)floorf(t * (float)p->panel);
}

static const uint8_t axis_col[3] = {110, 110, 110};

/* The weight band (quarter) of v for the iso-lines. The small bias keeps weights an ulp below 1
 * (or a band edge) in the upper band, so a flat region does not flicker into stripes. */
static int band_of(float v)
{
    return (int)(v * 4.0f + 1e-3f);
}

/* A 2-D panel's colour map of one node's weights, with iso-lines at 0.25, 0.5, 0.75. */
static void draw_map_2d(const cb_plot *p, canvas *c, const float *row, int ox, int oy)
{
    int s = p->panel;
    for (int py = 0; py < s; ++py) {
        for (int px = 0; px < s; ++px) {
            /* Image rows run top-down, the parameter's y bottom-up. */
            float v = row[(size_t)(s - 1 - py) * s + px];
            uint8_t col[3];
            ramp(v, col);
            /* Iso-lines: darken where the band changes. */
            int band = band_of(v);
            if (px + 1 < s && py + 1 < s) {
                float vr = row[(size_t)(s - 1 - py) * s + px + 1];
                float vd = row[(size_t)(s - 2 - py) * s + px];
                if (band_of(vr) != band || band_of(vd) != band) {
                    for (int k = 0; k < 3; ++k) {
                        col[k] = (uint8_t)(col[k] * 3 / 5);
                    }
                }
            }
            put(c, ox + px, oy + py, col);
        }
    }
}

/* A 2-D panel's dashed axes through the origin (where it is in view), and every node as a disc,
 * the panel's own node larger and filled. */
static void draw_axes_and_nodes_2d(const cb_plot *p, canvas *c, size_t node, int ox, int oy)
{
    int s = p->panel;
    int ax = to_pixel(p, 0, 0.0f), ay = s - 1 - to_pixel(p, 1, 0.0f);
    for (int k = 0; k < s; ++k) {
        if (ax >= 0 && ax < s && (k / 3) % 2 == 0) {
            put(c, ox + ax, oy + k, axis_col);
        }
        if (ay >= 0 && ay < s && (k / 3) % 2 == 0) {
            put(c, ox + k, oy + ay, axis_col);
        }
    }
    for (size_t i = 0; i < p->node_count; ++i) {
        int nx = to_pixel(p, 0, p->nodes[2 * i]), ny = s - 1 - to_pixel(p, 1, p->nodes[2 * i + 1]);
        disc(c, ox + nx, oy + ny, i == node ? 4 : 3, i == node);
    }
}

/* A 1-D panel: one node's weight as a curve over the parameter, on a dark background with a
 * line across the middle, and the nodes as discs along the bottom. */
static void draw_panel_1d(const cb_plot *p, canvas *c, size_t node, const float *row, int ox,
                          int oy)
{
    static const uint8_t back[3] = {14, 10, 42};
    int s = p->panel;
    for (int py = 0; py < s; ++py) {
        for (int px = 0; px < s; ++px) {
            put(c, ox + px, oy + py, back);
        }
    }
    for (int px = 0; px < s; ++px) {
        put(c, ox + px, oy + s / 2, axis_col);
    }
    uint8_t curve[3];
    ramp(1.0f, curve);
    int prev = -1;
    for (int px = 0; px < s; ++px) {
        float v = row[px];
        int y = s - 1 - (int)lroundf(v * (float)(s - 9)) - 4;
        int a = prev < 0 ? y : prev, b = y;
        for (int k = a < b ? a : b; k <= (a < b ? b : a); ++k) {
            put(c, ox + px, oy + k, curve);
            put(c, ox + px, oy + k + 1, curve);
        }
        prev = y;
    }
    for (size_t i = 0; i < p->node_count; ++i) {
        int nx = to_pixel(p, 0, p->nodes[i]);
        disc(c, ox + nx, oy + s - 5, i == node ? 4 : 3, i == node);
    }
}

static void draw_panel(const cb_plot *p, canvas *c, size_t node, const float *w, int ox, int oy)
{
    int s = p->panel;
    size_t per = p->dimension == 2 ? (size_t)s * s : (size_t)s;
    const float *row = w + node * per;
    if (p->dimension == 2) {
        draw_map_2d(p, c, row, ox, oy);
        draw_axes_and_nodes_2d(p, c, node, ox, oy);
    } else {
        draw_panel_1d(p, c, node, row, ox, oy);
    }
    char label[24];
    if (p->labels != NULL) {
        snprintf(label, sizeof label, "%s", p->labels[node]);
    } else {
        snprintf(label, sizeof label, "%zu", node);
    }
    text(c, ox + 4, oy + 4, label, 2);
}

bool cb_plot_write_png(const cb_plot *p, const char *path, char *err, size_t err_size)
{
    size_t m = p->node_count;
    int cols = (int)ceil(sqrt((double)m)), rows = (int)((m + (size_t)cols - 1) / (size_t)cols);
    int s = p->panel;
    canvas c = {cols * s + (cols + 1) * PAD, rows * s + (rows + 1) * PAD, NULL};
    size_t per = p->dimension == 2 ? (size_t)s * s : (size_t)s;
    float *qx = malloc(per * sizeof(float)), *qy = malloc(per * sizeof(float));
    float *w = malloc(per * m * sizeof(float));
    c.rgb = malloc((size_t)c.w * c.h * 3);
    bool ok = qx != NULL && qy != NULL && w != NULL && c.rgb != NULL;
    if (!ok) {
        snprintf(err, err_size, "out of memory for a %d x %d picture", c.w, c.h);
    }
    if (ok) {
        for (size_t k = 0; k < per; ++k) {
            qx[k] = coord(p, 0, (int)(k % (size_t)s));
            qy[k] = p->dimension == 2 ? coord(p, 1, (int)(k / (size_t)s)) : 0.0f;
        }
        ok = p->eval(p->ctx, qx, qy, per, w);
        if (!ok) {
            snprintf(err, err_size, "evaluating the picture's queries failed");
        }
    }
    if (ok) {
        memset(c.rgb, 36, (size_t)c.w * c.h * 3);
        for (size_t i = 0; i < m; ++i) {
            int col = (int)(i % (size_t)cols), row = (int)(i / (size_t)cols);
            draw_panel(p, &c, i, w, PAD + col * (s + PAD), PAD + row * (s + PAD));
        }
        png_image image;
        memset(&image, 0, sizeof image);
        image.version = PNG_IMAGE_VERSION;
        image.width = (png_uint_32)c.w;
        image.height = (png_uint_32)c.h;
        image.format = PNG_FORMAT_RGB;
        if (!png_image_write_to_file(&image, path, 0, c.rgb, 0, NULL)) {
            snprintf(err, err_size, "cannot write %s: %s", path, image.message);
            ok = false;
        }
    }
    free(qx);
    free(qy);
    free(w);
    free(c.rgb);
    return ok;
}
