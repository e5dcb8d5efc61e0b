/* JuPedSim's SQLite trajectory files (format version 2): table trajectory_data(frame, id,
 * pos_x, pos_y, ori_x, ori_y) and table metadata(key, value) with key 'fps'. Read through
 * Debian's libsqlite3, read-only. A time is frame / fps. The orientation columns are not used:
 * the follow path takes the heading from the velocity (docs/trajectories.md). */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "traj/traj_impl.h"

static cb_result db_error(cb_error *err, cb_result code, const char *source, sqlite3 *db,
                          const char *what)
{
    if (err != NULL) {
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s: %s: %s", source, what,
                 db != NULL ? sqlite3_errmsg(db) : "cannot open");
    }
    return code;
}

/* metadata.fps, or 0 when the table or the key is missing. */
static cb_result read_fps(sqlite3 *db, const char *source, double *fps, cb_error *err)
{
    sqlite3_stmt *st = NULL;
    *fps = 0.0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM metadata WHERE key = 'fps'", -1, &st, NULL) !=
        SQLITE_OK) {
        /* No metadata table: the caller may give the rate. Not a database at all: say so
         * (sqlite opens any file, and finds out at the first query). */
        return sqlite3_errcode(db) == SQLITE_NOTADB
                   ? db_error(err, CB_ERR_PARSE, source, db,
                              "not a JuPedSim trajectory file (an SQLite database)")
                   : CB_OK;
    }
    cb_result r = CB_OK;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(st, 0);
        double v = 0.0;
        if (text == NULL || !cb_text_number((const char *)text, &v) || !(v > 0.0) || v > 1e6) {
            if (err != NULL) {
                err->code = CB_ERR_PARSE;
                snprintf(err->message, sizeof err->message,
                         "%s: metadata 'fps' is '%s', not a number in (0, 1e6]", source,
                         text != NULL ? (const char *)text : "NULL");
            }
            r = CB_ERR_PARSE;
        }
        *fps = v;
    } else if (rc != SQLITE_DONE) {
        r = db_error(err, CB_ERR_PARSE, source, db, "reading metadata");
    }
    sqlite3_finalize(st);
    return r;
}

static bool is_number(sqlite3_stmt *st, int col)
{
    int type = sqlite3_column_type(st, col);
    return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
}

static cb_result read_rows(sqlite3 *db, traj_builder *b, double fps, cb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT rowid, frame, id, pos_x, pos_y FROM trajectory_data", -1,
                           &st, NULL) != SQLITE_OK) {
        return db_error(err, CB_ERR_PARSE, b->source, db,
                        "not a JuPedSim trajectory file (table trajectory_data(frame, id, pos_x, "
                        "pos_y))");
    }
    cb_result r = CB_OK;
    int rc = SQLITE_DONE;
    while (r == CB_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t row = (uint64_t)sqlite3_column_int64(st, 0);
        if (sqlite3_column_type(st, 1) != SQLITE_INTEGER ||
            sqlite3_column_type(st, 2) != SQLITE_INTEGER) {
            r = cb_traj_error_at(err, CB_ERR_PARSE, b, row, "frame and id must be integers");
            break;
        }
        int64_t frame = sqlite3_column_int64(st, 1), id = sqlite3_column_int64(st, 2);
        if (!is_number(st, 3) || !is_number(st, 4)) {
            r = cb_traj_error_at(err, CB_ERR_PARSE, b, row,
                                 "(frame %lld, id %lld): pos_x and pos_y must be numbers",
                                 (long long)frame, (long long)id);
            break;
        }
        if (frame < -1000000000 || frame > 1000000000) {
            r = cb_traj_error_at(err, CB_ERR_INVALID_ARGUMENT, b, row, "frame %lld is beyond +-1e9",
                                 (long long)frame);
            break;
        }
        double p[3] = {sqlite3_column_double(st, 3), sqlite3_column_double(st, 4), 0.0};
        r = cb_traj_builder_add(b, id, (double)frame / fps, p, row, err);
    }
    if (r == CB_OK && rc != SQLITE_DONE) {
        r = db_error(err, CB_ERR_PARSE, b->source, db, "reading trajectory_data");
    }
    sqlite3_finalize(st);
    return r;
}

cb_result cb_traj_load_jupedsim(const char *path, const char *source, double fps, cb_traj **out,
                                cb_error *err)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        cb_result r = db_error(err, CB_ERR_IO, source, db, "cannot open the database");
        sqlite3_close(db);
        return r;
    }
    double file_fps = 0.0;
    cb_result r = read_fps(db, source, &file_fps, err);
    double rate = fps > 0.0 ? fps : file_fps;
    if (r == CB_OK && rate == 0.0) {
        r = CB_ERR_PARSE;
        if (err != NULL) {
            err->code = r;
            snprintf(err->message, sizeof err->message,
                     "%s: no frame rate: table metadata has no 'fps' (give it with --fps)", source);
        }
    }
    traj_builder b;
    cb_traj_builder_init(&b, source, true);
    if (r == CB_OK) {
        r = read_rows(db, &b, rate, err);
    }
    sqlite3_close(db);
    if (r != CB_OK) {
        cb_traj_builder_finish(&b);
        return r;
    }
    return cb_traj_builder_build(&b, CB_TRAJ_FORMAT_JUPEDSIM, rate, out, err);
}
