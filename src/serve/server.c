/* The network side of `crowdblend serve` (docs/serve.md): libwebsockets serves the viewer's
 * files over HTTP and the crowd over WebSocket, all on this thread. The simulation thread
 * publishes on boards and wakes this loop with lws_cancel_service(); each client is then sent,
 * as its socket becomes writable, the newest frame and nothing older. A client that cannot keep
 * up skips frames: libwebsockets holds at most the unsent part of one frame per client, so
 * memory stays bounded by clients x one frame, whatever the clients do. */
#include "serve/serve.h"

#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "crowdblend/crowd.h"
#include "serve/sim.h"

enum { OUTBOX = 32, STATS_PERIOD_US = 500000, SEND_BUFFER_BYTES = 128 * 1024 };

typedef struct session {
    struct lws *wsi;
    uint32_t slot, serial;
    cb_frame_encoding encoding;
    bool greeted; /* sent the hello of `epoch` */
    uint32_t epoch;
    uint64_t frame_seq, details_seq; /* board publications already sent */
    uint64_t last_frame, frames_sent, frames_skipped, errors, dropped_messages;
    char *out[OUTBOX]; /* queued text messages (LWS_PRE bytes of headroom each) */
    size_t out_len[OUTBOX];
    unsigned out_head, out_count;
    size_t rx_len;
    bool rx_binary;
    char rx[CB_CTL_MAX_MESSAGE + 1];
} session;

typedef struct server {
    cb_sim *sim;
    struct lws_context *ctx;
    const struct lws_protocols *ws;
    session *slots[CB_SIM_MAX_CLIENTS];
    uint32_t max_clients, clients, clients_peak, next_serial;
    lws_sorted_usec_list_t stats_timer;
    uint64_t deadline_ns;
    /* sending, over the whole run and over the current stats window */
    uint64_t send_ns, sent_characters, frames_sent, frames_skipped, window_send_ns,
        window_sent_characters;
    uint64_t refused_clients;
    const char *model_path;
    char model_name[256];
    char model_url[300]; /* the hello's link to it: the simulation keeps the pointer */
} server;

static volatile sig_atomic_t stop_requested;
static struct lws_context *signal_ctx;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
    if (signal_ctx != NULL) {
        lws_cancel_service(signal_ctx); /* a write to lws's pipe: async-signal-safe */
    }
}

static void wake(void *user)
{
    lws_cancel_service(((server *)user)->ctx);
}

/* ---- text messages ------------------------------------------------------------------------ */

static void queue_text(session *s, const char *text, size_t len)
{
    if (s->out_count == OUTBOX) {
        s->dropped_messages++; /* bounded: a client that reads nothing loses replies, not us */
        return;
    }
    char *buf = malloc(LWS_PRE + len);
    if (buf == NULL) {
        s->dropped_messages++;
        return;
    }
    memcpy(buf + LWS_PRE, text, len);
    unsigned at = (s->out_head + s->out_count++) % OUTBOX;
    s->out[at] = buf;
    s->out_len[at] = len;
    lws_callback_on_writable(s->wsi);
}

static void queue_error(session *s, cb_ctl_error code, int64_t req, const char *why)
{
    char msg[CB_ERROR_MESSAGE_SIZE + 64], quoted[2 * CB_ERROR_MESSAGE_SIZE], r[32] = "null";
    if (req >= 0) {
        snprintf(r, sizeof r, "%lld", (long long)req);
    }
    cb_json_quote(why, quoted, sizeof quoted);
    int n =
        snprintf(msg, sizeof msg, "{\"type\":\"error\",\"req\":%s,\"code\":\"%s\",\"message\":%s}",
                 r, cb_ctl_error_name(code), quoted);
    s->errors++;
    queue_text(s, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

/* ---- receiving ---------------------------------------------------------------------------- */

static void handle_message(server *srv, session *s)
{
    if (s->rx_binary) {
        queue_error(s, CB_CTL_ERR_BINARY, -1, "binary messages are not accepted; send JSON text");
        return;
    }
    cb_sim_command cmd = {.slot = s->slot, .serial = s->serial};
    char why[CB_ERROR_MESSAGE_SIZE];
    cb_ctl_error e = cb_ctl_parse(s->rx, s->rx_len, &cmd.ctl, why);
    if (e != CB_CTL_OK) {
        queue_error(s, e, cmd.ctl.req, why);
        return;
    }
    if (cmd.ctl.kind == CB_CTL_ENCODING) {
        /* Which frames a client gets is the network side's business: no need to ask the
         * simulation, only to tell it which encodings to produce. */
        cb_sim_want(srv->sim, cmd.ctl.encoding, 1);
        cb_sim_want(srv->sim, s->encoding, -1);
        s->encoding = cmd.ctl.encoding;
        s->frame_seq = 0;
        char ok[96];
        int n = snprintf(ok, sizeof ok, "{\"type\":\"ok\",\"req\":%lld,\"for\":\"encoding\"}",
                         (long long)cmd.ctl.req);
        queue_text(s, ok, (size_t)n);
        return;
    }
    if (!cb_sim_post(srv->sim, &cmd)) {
        queue_error(s, CB_CTL_ERR_REFUSED, cmd.ctl.req, "server busy: too many commands queued");
    }
}

static int on_receive(server *srv, session *s, const void *in, size_t len)
{
    if (s->rx_len == 0) {
        s->rx_binary = lws_frame_is_binary(s->wsi) != 0;
    }
    if (len > CB_CTL_MAX_MESSAGE - s->rx_len) {
        /* Too large: say so in the close frame (at most 123 bytes) and close with 1009. */
        static const char reason[] = "{\"type\":\"error\",\"code\":\"too_large\","
                                     "\"message\":\"messages are limited to 4096 bytes\"}";
        lws_close_reason(s->wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)reason,
                         sizeof reason - 1);
        return -1;
    }
    memcpy(s->rx + s->rx_len, in, len);
    s->rx_len += len;
    if (lws_is_final_fragment(s->wsi) && lws_remaining_packet_payload(s->wsi) == 0) {
        s->rx[s->rx_len] = '\0';
        handle_message(srv, s);
        s->rx_len = 0;
    }
    return 0;
}

/* ---- sending ------------------------------------------------------------------------------ */

static int send_text(session *s, const uint8_t *text, size_t len)
{
    /* lws_write needs LWS_PRE writable bytes before the payload: board slots and queued
     * messages carry them. */
    return lws_write(s->wsi, (unsigned char *)text, len, LWS_WRITE_TEXT) < (int)len ? -1 : 0;
}

static uint64_t read_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; --k) {
        v = (v << 8) | p[k];
    }
    return v;
}

static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Sends the newest frame if this client has not had it. 1 when something was sent. */
static int send_frame(server *srv, session *s)
{
    size_t len;
    uint64_t seq;
    const uint8_t *f = cb_board_read(cb_sim_frames(srv->sim, s->encoding), &len, &seq, NULL);
    if (seq == 0 || seq <= s->frame_seq || len < CB_FRAME_HEADER_BYTES) {
        return 0;
    }
    if (read_u32(f + 48) != s->epoch) {
        return 0; /* its hello first */
    }
    uint64_t frame = read_u64(f + 8);
    if (s->last_frame != 0 && frame > s->last_frame + 1) {
        s->frames_skipped += frame - s->last_frame - 1;
        srv->frames_skipped += frame - s->last_frame - 1;
    }
    uint64_t t0 = mono_ns();
    if (lws_write(s->wsi, (unsigned char *)f, len, LWS_WRITE_BINARY) < (int)len) {
        return -1;
    }
    uint64_t dt = mono_ns() - t0;
    uint32_t chars = read_u32(f + 32);
    srv->send_ns += dt;
    srv->window_send_ns += dt;
    srv->sent_characters += chars;
    srv->window_sent_characters += chars;
    srv->frames_sent++;
    s->frames_sent++;
    s->frame_seq = seq;
    s->last_frame = frame;
    return 1;
}

/* One message per writable callback, in order: hello (new epoch), replies, details, frame. */
static int on_writable(server *srv, session *s)
{
    size_t len;
    uint64_t seq, tag;
    const uint8_t *hello = cb_board_read(cb_sim_hello(srv->sim), &len, &seq, &tag);
    if (!s->greeted || (uint32_t)tag != s->epoch) {
        s->greeted = true;
        s->epoch = (uint32_t)tag;
        s->frame_seq = 0;
        s->last_frame = 0;
        if (send_text(s, hello, len) < 0) {
            return -1;
        }
        lws_callback_on_writable(s->wsi);
        return 0;
    }
    if (s->out_count > 0) {
        unsigned at = s->out_head;
        int r = send_text(s, (uint8_t *)s->out[at] + LWS_PRE, s->out_len[at]);
        free(s->out[at]);
        s->out[at] = NULL;
        s->out_head = (s->out_head + 1) % OUTBOX;
        s->out_count--;
        if (r < 0) {
            return -1;
        }
        lws_callback_on_writable(s->wsi);
        return 0;
    }
    const uint8_t *d = cb_board_read(cb_sim_details(srv->sim), &len, &seq, &tag);
    if (seq > s->details_seq) {
        s->details_seq = seq;
        if (tag & (1ull << s->slot)) {
            if (send_text(s, d, len) < 0) {
                return -1;
            }
            lws_callback_on_writable(s->wsi);
            return 0;
        }
    }
    return send_frame(srv, s) < 0 ? -1 : 0;
}

/* ---- statistics --------------------------------------------------------------------------- */

static void queue_stats(server *srv, session *s, const cb_sim_stats *st, double send_ns_per_char)
{
    char buf[2048];
    int n = snprintf(
        buf, sizeof buf,
        "{\"type\":\"stats\",\"frame\":%llu,\"time\":%.3f,\"characters\":%u,\"capacity\":%u,"
        "\"paused\":%s,\"time_scale\":%.3g,\"tick_hz\":%.2f,\"step_ms\":%.3f,"
        "\"step_ms_max\":%.3f,\"late_ticks\":%llu,\"threads\":%u,\"clients\":%u,"
        "\"clamped_positions\":%llu,\"send_ns_per_character\":%.1f,\"stages\":[",
        (unsigned long long)st->frame, st->sim_time_s, st->characters, st->capacity,
        st->paused ? "true" : "false", st->time_scale, st->tick_hz, st->step_ms_mean,
        st->step_ms_max, (unsigned long long)st->late_ticks, st->threads, srv->clients,
        (unsigned long long)st->clamped_positions, send_ns_per_char);
    for (uint32_t k = 0; k < st->stage_count && n > 0 && (size_t)n < sizeof buf; ++k) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s{\"name\":\"%s\",\"ms\":%.4f}",
                      k ? "," : "", cb_crowd_stage_name((cb_crowd_stage)k), st->stage_ms[k]);
    }
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT && n > 0 && (size_t)n < sizeof buf; ++e) {
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "%s\"%s\":{\"bytes_per_frame\":%llu,\"encode_ns_per_character\":%.1f}",
                      e ? "," : "],\"encodings\":{", cb_frame_encoding_name(e),
                      (unsigned long long)st->bytes_per_frame[e], st->encode_ns_per_character[e]);
    }
    if (n > 0 && (size_t)n < sizeof buf) {
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "},\"you\":{\"encoding\":\"%s\",\"frames_sent\":%llu,"
                      "\"frames_skipped\":%llu,\"errors\":%llu,\"dropped_messages\":%llu}}",
                      cb_frame_encoding_name(s->encoding), (unsigned long long)s->frames_sent,
                      (unsigned long long)s->frames_skipped, (unsigned long long)s->errors,
                      (unsigned long long)s->dropped_messages);
    }
    if (n > 0 && (size_t)n < sizeof buf) {
        queue_text(s, buf, (size_t)n);
    }
}

/* The simulation's latest statistics into *st; false while it has published none. */
static bool read_stats(const server *srv, cb_sim_stats *st)
{
    size_t len;
    uint64_t seq;
    const uint8_t *p = cb_board_read(cb_sim_stats_board(srv->sim), &len, &seq, NULL);
    if (seq > 0 && len == sizeof *st) {
        memcpy(st, p, sizeof *st);
        return true;
    }
    return false;
}

static void on_stats_timer(lws_sorted_usec_list_t *sul)
{
    server *srv = lws_container_of(sul, server, stats_timer);
    cb_sim_stats st;
    if (read_stats(srv, &st)) {
        double per_char = srv->window_sent_characters
                              ? (double)srv->window_send_ns / srv->window_sent_characters
                              : 0.0;
        srv->window_send_ns = srv->window_sent_characters = 0;
        for (uint32_t k = 0; k < CB_SIM_MAX_CLIENTS; ++k) {
            if (srv->slots[k] != NULL) {
                queue_stats(srv, srv->slots[k], &st, per_char);
            }
        }
    }
    if (srv->deadline_ns != 0 && mono_ns() >= srv->deadline_ns) {
        stop_requested = 1;
        lws_cancel_service(srv->ctx);
    }
    lws_sul_schedule(srv->ctx, 0, &srv->stats_timer, on_stats_timer, STATS_PERIOD_US);
}

/* ---- callbacks ---------------------------------------------------------------------------- */

static void drain_replies(server *srv)
{
    cb_sim_reply r;
    while (cb_sim_next_reply(srv->sim, &r)) {
        session *s = r.slot < CB_SIM_MAX_CLIENTS ? srv->slots[r.slot] : NULL;
        if (s != NULL && s->serial == r.serial) {
            if (strncmp(r.text, "{\"type\":\"error\"", 15) == 0) {
                s->errors++;
            }
            queue_text(s, r.text, r.length);
        }
    }
}

static int on_established(server *srv, session *s, struct lws *wsi)
{
    uint32_t slot = 0;
    while (slot < CB_SIM_MAX_CLIENTS && srv->slots[slot] != NULL) {
        ++slot;
    }
    if (slot == CB_SIM_MAX_CLIENTS) {
        return -1;
    }
    memset(s, 0, sizeof *s);
    s->wsi = wsi;
    s->slot = slot;
    s->serial = ++srv->next_serial;
    s->encoding = CB_FRAME_Q16;
    srv->slots[slot] = s;
    srv->clients++;
    srv->clients_peak = srv->clients > srv->clients_peak ? srv->clients : srv->clients_peak;
    cb_sim_want(srv->sim, s->encoding, 1);
    /* A small kernel send buffer: otherwise Linux grows it to megabytes, a slow client's
     * socket holds seconds of old frames, and "newest frame" would only apply after them.
     * With it, at most about one frame waits (the unsent rest of the last one, which lws
     * keeps), and whatever is sent next is the newest. */
    int sndbuf = SEND_BUFFER_BYTES;
    setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    lws_callback_on_writable(wsi);
    return 0;
}

static void on_closed(server *srv, session *s)
{
    if (s->wsi == NULL || srv->slots[s->slot] != s) {
        return;
    }
    /* Its subscriptions end with it; the simulation hears it in order after its commands. */
    cb_sim_command bye = {.slot = s->slot, .serial = s->serial, .quiet = true};
    bye.ctl.kind = CB_CTL_UNSUBSCRIBE;
    bye.ctl.all = true;
    bye.ctl.req = -1;
    (void)cb_sim_post(srv->sim, &bye);
    cb_sim_want(srv->sim, s->encoding, -1);
    for (unsigned k = 0; k < s->out_count; ++k) {
        free(s->out[(s->out_head + k) % OUTBOX]);
    }
    srv->slots[s->slot] = NULL;
    srv->clients--;
    s->wsi = NULL;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
    server *srv = lws_context_user(lws_get_context(wsi));
    session *s = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        if (srv->clients >= srv->max_clients) {
            srv->refused_clients++;
            return 1; /* refused: the client sees the upgrade fail */
        }
        return 0;
    case LWS_CALLBACK_ESTABLISHED:
        return on_established(srv, s, wsi);
    case LWS_CALLBACK_CLOSED:
        on_closed(srv, s);
        return 0;
    case LWS_CALLBACK_RECEIVE:
        return on_receive(srv, s, in, len);
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return on_writable(srv, s);
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        if (srv != NULL && srv->sim != NULL) {
            drain_replies(srv);
            lws_callback_on_writable_all_protocol(srv->ctx, srv->ws);
        }
        return 0;
    default:
        return 0;
    }
}

/* /models/<name>: the one model file given on the command line, nothing else. */
static int model_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                          size_t len)
{
    server *srv = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        const char *path = in != NULL ? in : "";
        while (*path == '/') {
            ++path;
        }
        if (srv->model_path == NULL || strcmp(path, srv->model_name) != 0) {
            lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
            return -1;
        }
        int n = lws_serve_http_file(wsi, srv->model_path, "model/gltf-binary", NULL, 0);
        if (n < 0 || (n > 0 && lws_http_transaction_completed(wsi))) {
            return -1;
        }
        return 0;
    }
    case LWS_CALLBACK_HTTP_FILE_COMPLETION:
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

/* ---- setup -------------------------------------------------------------------------------- */

static bool parse_listen(const char *listen, char *host, size_t host_size, int *port)
{
    const char *colon = strrchr(listen, ':');
    if (colon == NULL || colon == listen || (size_t)(colon - listen) >= host_size) {
        return false;
    }
    /* Digits only, as the command line's integers (no spaces, sign or base prefix). */
    size_t digits = strspn(colon + 1, "0123456789");
    if (digits == 0 || digits > 5 || colon[1 + digits] != '\0') {
        return false;
    }
    long p = strtol(colon + 1, NULL, 10);
    if (p > 65535) {
        return false;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    *port = (int)p;
    return true;
}

/* The viewer cannot work without its files: say so at start rather than serve 404s. */
static void warn_if_missing(const char *root, const char *file, const char *hint)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", root, file);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "crowdblend serve: warning: %s is missing: %s\n", path, hint);
        return;
    }
    fclose(f);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* The model file the viewer may load: served at /models/<its file name>, which the hello
 * names. */
static void name_model(server *srv, const char *model)
{
    const char *slash = strrchr(model, '/');
    snprintf(srv->model_name, sizeof srv->model_name, "%s", slash ? slash + 1 : model);
    snprintf(srv->model_url, sizeof srv->model_url, "/models/%s", srv->model_name);
    srv->model_path = model;
}

/* Builds the simulation the command line asks for (not started yet); false, said on stderr,
 * when it cannot. */
static bool create_sim(server *srv, const cb_serve_desc *d)
{
    if (d->model != NULL) {
        name_model(srv, d->model);
    }
    char why[CB_SIM_WHY_BYTES];
    cb_sim_desc sd = {
        .graph = d->graph,
        .characters = d->characters,
        .capacity = d->capacity,
        .threads = d->threads,
        .seed = d->seed,
        .headroom = LWS_PRE,
        .model_url = d->model != NULL ? srv->model_url : NULL,
        .pack = d->pack,
        .area = d->area,
        .traj = d->traj,
        .max_turn_rps = d->max_turn_rps,
        .gait = d->gait,
    };
    srv->sim = cb_sim_create(&sd, why);
    if (srv->sim == NULL) {
        fprintf(stderr, "crowdblend serve: %s\n", why);
        return false;
    }
    return true;
}

/* The HTTP side: the viewer's files under the web root, the vendored three.js and uPlot, and
 * the model, if any. Static, as lws keeps pointers to them for the context's life. */
static const struct lws_http_mount *mount_web_root(const cb_serve_desc *d)
{
    static char public_dir[1024], three_dir[1024], uplot_dir[1024];
    warn_if_missing(d->web_root, "public/index.html", "--web-root should name the viewer's web/");
    warn_if_missing(d->web_root, "node_modules/three/build/three.module.js",
                    "run `npm ci` in web/ (scripts/setup.sh does)");
    snprintf(public_dir, sizeof public_dir, "%s/public", d->web_root);
    snprintf(three_dir, sizeof three_dir, "%s/node_modules/three", d->web_root);
    snprintf(uplot_dir, sizeof uplot_dir, "%s/node_modules/uplot/dist", d->web_root);
    static const struct lws_protocol_vhost_options mime_glb = {NULL, NULL, ".glb",
                                                               "model/gltf-binary"};
    static const struct lws_protocol_vhost_options mime_mjs = {&mime_glb, NULL, ".mjs",
                                                               "text/javascript"};
    static struct lws_http_mount m_model, m_uplot, m_three, m_public;
    m_model = (struct lws_http_mount){.mountpoint = "/models",
                                      .origin = "cb-model",
                                      .protocol = "cb-model",
                                      .origin_protocol = LWSMPRO_CALLBACK,
                                      .mountpoint_len = 7};
    m_uplot = (struct lws_http_mount){.mount_next = d->model != NULL ? &m_model : NULL,
                                      .mountpoint = "/vendor/uplot",
                                      .origin = uplot_dir,
                                      .extra_mimetypes = &mime_mjs,
                                      .origin_protocol = LWSMPRO_FILE,
                                      .mountpoint_len = 13};
    m_three = (struct lws_http_mount){.mount_next = &m_uplot,
                                      .mountpoint = "/vendor/three",
                                      .origin = three_dir,
                                      .extra_mimetypes = &mime_mjs,
                                      .origin_protocol = LWSMPRO_FILE,
                                      .mountpoint_len = 13};
    m_public = (struct lws_http_mount){.mount_next = &m_three,
                                       .mountpoint = "/",
                                       .origin = public_dir,
                                       .def = "index.html",
                                       .extra_mimetypes = &mime_mjs,
                                       .origin_protocol = LWSMPRO_FILE,
                                       .mountpoint_len = 1};
    return &m_public;
}

/* HTTP, the model's callback and the crowd's WebSocket protocol (srv->ws). */
static const struct lws_protocols *define_protocols(server *srv)
{
    static struct lws_protocols protocols[4];
    protocols[0] = (struct lws_protocols){"http", lws_callback_http_dummy, 0, 0, 0, NULL, 0};
    protocols[1] = (struct lws_protocols){"cb-model", model_callback, 0, 0, 0, NULL, 0};
    /* rx_buffer_size bounds one read; tx_packet_size lets a frame go out in large send()s. */
    protocols[2] = (struct lws_protocols){
        "crowdblend", ws_callback, sizeof(session), CB_CTL_MAX_MESSAGE, 0, NULL, 1u << 22};
    srv->ws = &protocols[2];
    return protocols;
}

/* The context's settings: one vhost on HOST:PORT serving these protocols and mounts. */
static void describe_context(struct lws_context_creation_info *info, server *srv, const char *host,
                             int port, const struct lws_protocols *protocols,
                             const struct lws_http_mount *mounts)
{
    memset(info, 0, sizeof *info);
    info->port = port;
    info->iface = host;
    info->protocols = protocols;
    info->mounts = mounts;
    info->user = srv;
    info->vhost_name = "default";
    /* Not LWS_SERVER_OPTION_VALIDATE_UTF8: lws would close on bad UTF-8, where the protocol
     * answers with an error and keeps the connection (jansson refuses bad UTF-8). Not lws's
     * security-header preset either: its Content-Security-Policy forbids the inline import
     * map the viewer loads three.js with. */
    info->options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    /* Sockets per thread bound every kind of connection, HTTP included. */
    info->fd_limit_per_thread = srv->max_clients + 64;
    info->timeout_secs = 10;
}

/* The line that says where the viewer is (port 0 asked: the one the system gave). */
static void announce(const server *srv, const cb_serve_desc *d, const char *host, int port)
{
    struct lws_vhost *vh = lws_get_vhost_by_name(srv->ctx, "default");
    char who[64];
    snprintf(who, sizeof who, "%u characters", d->characters);
    if (d->traj != NULL) {
        snprintf(who, sizeof who, "characters from the trajectory file");
    }
    printf("listening on http://%s:%d/ (%s, web root %s)\n", host,
           vh != NULL ? lws_get_vhost_listen_port(vh) : port, who, d->web_root);
    fflush(stdout);
}

/* Ctrl-C and SIGTERM stop the loop; a client gone mid-send is an error to lws, not a signal. */
static void catch_signals(struct lws_context *ctx)
{
    stop_requested = 0;
    signal_ctx = ctx;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Starts the simulation thread and services the network until asked to stop: the exit code. */
static int serve_until_stopped(server *srv)
{
    if (!cb_sim_start(srv->sim, wake, srv)) {
        fprintf(stderr, "crowdblend serve: cannot start the simulation thread\n");
        return 1;
    }
    while (!stop_requested) {
        if (lws_service(srv->ctx, 0) < 0) {
            break;
        }
    }
    return 0;
}

/* One JSON line that scripts (the load test) read. Its tick rate is the whole run's: the
 * stats' rate is over the last full second, none in a run shorter than one. */
static void print_summary(const server *srv, const cb_sim_stats *st, double run_s)
{
    const double run_tick_hz = run_s > 0.0 ? (double)st->ticks / run_s : 0.0;
    printf("{\"summary\":true,\"frames\":%llu,\"ticks\":%llu,\"late_ticks\":%llu,"
           "\"tick_hz\":%.2f,\"sim_time\":%.3f,\"clients_peak\":%u,\"refused_clients\":%llu,"
           "\"frames_sent\":%llu,\"frames_skipped\":%llu,\"send_ns_per_character\":%.1f,"
           "\"max_rss_kb\":%ld}\n",
           (unsigned long long)st->frame, (unsigned long long)st->ticks,
           (unsigned long long)st->late_ticks, run_tick_hz, st->sim_time_s, srv->clients_peak,
           (unsigned long long)srv->refused_clients, (unsigned long long)srv->frames_sent,
           (unsigned long long)srv->frames_skipped,
           srv->sent_characters ? (double)srv->send_ns / srv->sent_characters : 0.0, max_rss_kb());
}

int cb_serve_run(const cb_serve_desc *d)
{
    char host[128];
    int port;
    const char *listen = d->listen != NULL ? d->listen : "127.0.0.1:8080";
    if (!parse_listen(listen, host, sizeof host, &port)) {
        fprintf(stderr, "crowdblend serve: --listen wants HOST:PORT, got '%s'\n", listen);
        return 2;
    }
    static server srv;
    memset(&srv, 0, sizeof srv);
    srv.max_clients = d->max_clients ? d->max_clients : 16;
    if (srv.max_clients > CB_SIM_MAX_CLIENTS) {
        srv.max_clients = CB_SIM_MAX_CLIENTS;
    }
    if (!create_sim(&srv, d)) {
        return 1;
    }
    const struct lws_http_mount *mounts = mount_web_root(d);
    const struct lws_protocols *protocols = define_protocols(&srv);
    lws_set_log_level(d->verbose ? LLL_ERR | LLL_WARN | LLL_NOTICE : LLL_ERR, NULL);
    struct lws_context_creation_info info;
    describe_context(&info, &srv, host, port, protocols, mounts);
    srv.ctx = lws_create_context(&info);
    if (srv.ctx == NULL) {
        fprintf(stderr, "crowdblend serve: cannot listen on %s\n", listen);
        cb_sim_destroy(srv.sim);
        return 1;
    }
    announce(&srv, d, host, port);
    catch_signals(srv.ctx);

    srv.deadline_ns = d->seconds > 0.0 ? mono_ns() + (uint64_t)(d->seconds * 1e9) : 0;
    lws_sul_schedule(srv.ctx, 0, &srv.stats_timer, on_stats_timer, STATS_PERIOD_US);
    const uint64_t run_start = mono_ns();
    int rc = serve_until_stopped(&srv);
    cb_sim_stop(srv.sim);
    const double run_s = (double)(mono_ns() - run_start) / 1e9;
    cb_sim_stats st = {0};
    (void)read_stats(&srv, &st);
    lws_sul_cancel(&srv.stats_timer);
    signal_ctx = NULL;
    lws_context_destroy(srv.ctx);
    print_summary(&srv, &st, run_s);
    cb_sim_destroy(srv.sim);
    return rc;
}
