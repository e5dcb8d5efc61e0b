/* PeTrack trajectory text (the Juelich pedestrian-dynamics experiments): '#' comment lines,
 * then rows "id frame x y [z ...]" separated by spaces or tabs. Two comments matter:
 *   "# framerate: 25 fps"        turns frames into seconds (cb_traj_load_desc.fps overrides it);
 *   "# id frame x/m y/m z/m"     the unit of the coordinates (x/cm: centimetres, PeTrack's other
 *                                usual choice); without it, metres.
 * PeTrack's z is the tracked head's height, not the ground's elevation, so it is not used: the
 * agents walk at elevation 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "traj/traj_impl.h"

/* Looks for "framerate:" and "x/<unit>" in a comment line. */
static cb_result read_comment(traj_builder *b, const char *s, size_t n, uint64_t line, double *fps,
                              double *scale, cb_error *err)
{
    char buf[CB_TEXT_MAX_LINE];
    char *fields[CB_TEXT_MAX_FIELDS];
    const char *why;
    int count = cb_text_split(s + 1, n - 1, ' ', fields, CB_TEXT_MAX_FIELDS, buf, sizeof buf, &why);
    if (count < 0) {
        return CB_OK; /* free text: not one of the comments we read */
    }
    for (int k = 0; k < count; ++k) {
        if (cb_text_is(fields[k], "framerate:") && k + 1 < count) {
            double v;
            if (!cb_text_number(fields[k + 1], &v) || !(v > 0.0) || v > 1e6) {
                return cb_traj_error_at(err, CB_ERR_PARSE, b, line,
                                        "framerate '%s' is not a number in (0, 1e6]",
                                        fields[k + 1]);
            }
            *fps = v;
        }
        if (strncmp(fields[k], "x/", 2) == 0) {
            double v = cb_text_unit_scale(fields[k] + 2, false);
            if (v == 0.0) {
                return cb_traj_error_at(err, CB_ERR_UNSUPPORTED, b, line,
                                        "unknown unit '%s' (m, cm, mm, ft or in)", fields[k] + 2);
            }
            *scale = v;
        }
    }
    return CB_OK;
}

/* One row "id frame x y [z ...]", added to the builder with its frame in place of a time. */
static cb_result read_row(traj_builder *b, const char *s, size_t n, uint64_t line, cb_error *err)
{
    char buf[CB_TEXT_MAX_LINE];
    char *fields[CB_TEXT_MAX_FIELDS];
    const char *why;
    int count = cb_text_split(s, n, ' ', fields, CB_TEXT_MAX_FIELDS, buf, sizeof buf, &why);
    if (count < 0) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "%s", why);
    }
    if (count < 4) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line,
                                "%d fields where a row has at least 4 (id frame x y)", count);
    }
    int64_t id, frame;
    double p[3] = {0.0, 0.0, 0.0};
    const char *bad_id = cb_text_integer_problem(fields[0], &id);
    if (bad_id != NULL) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "id '%s' %s", fields[0], bad_id);
    }
    const char *bad_frame = cb_text_integer_problem(fields[1], &frame);
    if (bad_frame != NULL) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "frame '%s' %s", fields[1], bad_frame);
    }
    if (!cb_text_number(fields[2], &p[0]) || !cb_text_number(fields[3], &p[1])) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line,
                                "x '%s' or y '%s' is not a finite number", fields[2], fields[3]);
    }
    if (frame < -1000000000 || frame > 1000000000) {
        return cb_traj_error_at(err, CB_ERR_INVALID_ARGUMENT, b, line, "frame %lld is beyond +-1e9",
                                (long long)frame);
    }
    /* The time is frame / fps, set once the rate is known: keep the frame for now. */
    return cb_traj_builder_add(b, id, (double)frame, p, line, err);
}

/* Turns the rows' frames into seconds and their coordinates into metres. */
static cb_result scale_rows(traj_builder *b, double rate, double scale, cb_error *err)
{
    for (size_t i = 0; i < b->count; ++i) {
        b->rows[i].t /= rate;
        b->rows[i].p[0] *= scale;
        b->rows[i].p[1] *= scale;
        /* Units shrink coordinates (every factor is at most 1), but a low frame rate can
         * stretch times beyond the accepted range. */
        if (!(fabs(b->rows[i].t) <= CB_TRAJ_MAX_TIME)) {
            return cb_traj_error_at(err, CB_ERR_INVALID_ARGUMENT, b, b->rows[i].place,
                                    "time %g s is beyond +-%g s", b->rows[i].t, CB_TRAJ_MAX_TIME);
        }
    }
    return CB_OK;
}

cb_result cb_traj_load_petrack(const char *text, size_t length, const char *source, double fps,
                               cb_traj **out, cb_error *err)
{
    traj_builder b;
    cb_traj_builder_init(&b, source, false);
    text_cursor c = {.p = text, .end = text + length};
    const char *s;
    size_t n;
    double file_fps = 0.0, scale = 1.0;
    cb_result r = CB_OK;
    /* Rows are kept in frames until the end: a framerate comment may come after them. */
    while (r == CB_OK && cb_text_next_line(&c, &s, &n)) {
        const char *ts = s;
        size_t tn = n;
        cb_text_trim(&ts, &tn);
        if (tn == 0) {
            continue;
        }
        r = ts[0] == '#' ? read_comment(&b, ts, tn, c.line, &file_fps, &scale, err)
                         : read_row(&b, s, n, c.line, err);
    }
    double rate = fps > 0.0 ? fps : file_fps;
    if (r == CB_OK && b.count > 0 && rate == 0.0) {
        r = cb_traj_error_at(err, CB_ERR_PARSE, &b, 1,
                             "no frame rate: the file has no '# framerate: N fps' comment "
                             "(give it with --fps)");
    }
    if (r == CB_OK) {
        r = scale_rows(&b, rate, scale, err);
    }
    if (r != CB_OK) {
        cb_traj_builder_finish(&b);
        return r;
    }
    return cb_traj_builder_build(&b, CB_TRAJ_FORMAT_PETRACK, rate, out, err);
}
