/* traj: trajectory files in (src/traj). Each text format and its errors (the message names the
 * file and the line, or the SQLite row), gzip, format detection, and the interpolation's
 * properties against closed forms: it passes through every sample, position and velocity are
 * continuous, uniformly accelerated motion is reproduced exactly, a stop is approached without
 * overshoot and held with zero velocity (so the heading is held), and random smooth paths give
 * a heading without jumps. The real files are checked against an independent reader in
 * test_animate.py. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crowdblend/follow.h"
#include "test_util.h"
#include "traj/traj.h"

static cb_traj *load(const char *text, cb_traj_format format)
{
    cb_traj_load_desc d = {.format = format, .source_name = "t"};
    cb_traj *t = NULL;
    cb_error err = {0};
    cb_result r = cb_traj_load_text(text, strlen(text), &d, &t, &err);
    CB_CHECK(r == CB_OK, "load failed: %s", err.message);
    return t;
}

/* Loading fails with `code` and a message that starts with `prefix` (the place). */
static void expect_error(const char *text, cb_traj_format format, cb_result code,
                         const char *prefix)
{
    cb_traj_load_desc d = {.format = format, .source_name = "t"};
    cb_traj *t = NULL;
    cb_error err = {0};
    cb_result r = cb_traj_load_text(text, strlen(text), &d, &t, &err);
    CB_CHECK(r == code, "'%s': got %s (%s), want %s", text, cb_result_str(r), err.message,
             cb_result_str(code));
    CB_CHECK(t == NULL, "output written on failure");
    CB_CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0,
             "'%s': message '%s' should start "
             "with '%s'",
             text, err.message, prefix);
}

static void check_sample(const cb_traj *t, uint32_t agent, uint32_t i, double time, double x,
                         double y, double z)
{
    size_t k = t->agents[agent].first + i;
    CB_CHECK(t->t[k] == time && t->p[3 * k] == x && t->p[3 * k + 1] == y && t->p[3 * k + 2] == z,
             "agent %u sample %u: (%g; %g %g %g), want (%g; %g %g %g)", agent, i, t->t[k],
             t->p[3 * k], t->p[3 * k + 1], t->p[3 * k + 2], time, x, y, z);
}

/* ---- formats ------------------------------------------------------------------------------ */

static void traj_plain_csv(void **state)
{
    (void)state;
    /* Columns in any order, z optional, comments and blank lines anywhere, rows unsorted. */
    cb_traj *t = load("# a comment\n\nid,x,time,y,z\n7,1.5,0.5,2,0.25\n3,0,0,0,0\n"
                      "7,1,0,2.5,0\r\n3,1,1,0,0\n",
                      CB_TRAJ_FORMAT_AUTO);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_CSV);
    assert_int_equal(t->agent_count, 2);
    assert_int_equal(t->sample_count, 4);
    assert_true(t->agents[0].id == 3 && t->agents[1].id == 7);
    check_sample(t, 0, 0, 0.0, 0.0, 0.0, 0.0);
    check_sample(t, 0, 1, 1.0, 1.0, 0.0, 0.0);
    check_sample(t, 1, 0, 0.0, 1.0, 2.5, 0.0);
    check_sample(t, 1, 1, 0.5, 1.5, 2.0, 0.25);
    assert_true(t->t_min == 0.0 && t->t_max == 1.0);
    cb_traj_destroy(t);
    t = load("time,id,x,y\n0,1,2,3\n", CB_TRAJ_FORMAT_CSV);
    check_sample(t, 0, 0, 0.0, 2.0, 3.0, 0.0);
    cb_traj_destroy(t);
}

static void traj_pathfinder_units(void **state)
{
    (void)state;
    const char *text = "\"t\",\"id\",\"name\",\"active\",\"x\",\"y\",\"z\",\"v\",\"location\"\n"
                       "\"s\",\"\",\"\",\"\",\"ft\",\"ft\",\"cm\",\"m/s\",\"\"\n"
                       "0.000000,4,\"00005\",0,10,20,100,0,\"Room, 1\"\n"
                       "1.000000,4,\"00005\",1,13,24,100,0.5,\"Room \"\"A\"\"\"\n";
    cb_traj *t = load(text, CB_TRAJ_FORMAT_AUTO);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_PATHFINDER);
    check_sample(t, 0, 0, 0.0, 10 * 0.3048, 20 * 0.3048, 1.0);
    check_sample(t, 0, 1, 1.0, 13 * 0.3048, 24 * 0.3048, 1.0);
    cb_traj_destroy(t);
    expect_error("\"t\",\"id\",\"x\",\"y\"\n\"s\",\"\",\"furlong\",\"m\"\n0,1,2,3\n",
                 CB_TRAJ_FORMAT_PATHFINDER, CB_ERR_UNSUPPORTED, "t:2: unknown unit 'furlong'");
    expect_error("\"t\",\"id\",\"x\",\"y\"\n", CB_TRAJ_FORMAT_PATHFINDER, CB_ERR_PARSE,
                 "t:2: no units row");
    expect_error("\"t\",\"id\",\"x\",\"y\"\n\"s\",\"\",\"m\"\n", CB_TRAJ_FORMAT_PATHFINDER,
                 CB_ERR_PARSE, "t:2: the units row has 3 fields");
}

static void traj_crowdit_and_gzip(void **state)
{
    (void)state;
    const char *text = "time,pedID,posX,posY\n0.00,0,40.64,35.44\n0.50,0,40.10,35.00\n";
    cb_traj *t = load(text, CB_TRAJ_FORMAT_AUTO);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_CROWDIT);
    check_sample(t, 0, 1, 0.5, 40.10, 35.00, 0.0);
    cb_traj_destroy(t);
    /* The same bytes gzipped, from a file: zlib reads them. */
    char path[] = "/tmp/cb_test_traj_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    gzFile gz = gzdopen(fd, "wb");
    assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    gzclose(gz);
    cb_error err = {0};
    assert_int_equal(cb_traj_load_file(path, NULL, &t, &err), CB_OK);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_CROWDIT);
    check_sample(t, 0, 0, 0.0, 40.64, 35.44, 0.0);
    cb_traj_destroy(t);
    remove(path);
    assert_int_equal(cb_traj_load_file(path, NULL, &t, &err), CB_ERR_IO);
    CB_CHECK(strstr(err.message, path) != NULL, "the message names the file: %s", err.message);
}

static void traj_vadere_steps(void **state)
{
    (void)state;
    /* Two steps that touch (one sample between them), a gap (standing), then a third step. */
    const char *text = "#IDXCOL=2,DATACOL=6,SEP=' '\n"
                       "pedestrianId simTime endTime-PID1 startX-PID1 startY-PID1 endX-PID1 "
                       "endY-PID1 targetId-PID2\n"
                       "1 0.4 1.0 0 0 0.6 0 8\n"
                       "1 1.0 1.5 0.6 0 0.6 0.5 8\n"
                       "1 2.5 3.0 0.6 0.5 1.0 0.5 8\n";
    cb_traj *t = load(text, CB_TRAJ_FORMAT_AUTO);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_VADERE);
    assert_int_equal(t->sample_count, 5);
    check_sample(t, 0, 0, 0.4, 0.0, 0.0, 0.0);
    check_sample(t, 0, 1, 1.0, 0.6, 0.0, 0.0);
    check_sample(t, 0, 2, 1.5, 0.6, 0.5, 0.0);
    check_sample(t, 0, 3, 2.5, 0.6, 0.5, 0.0);
    check_sample(t, 0, 4, 3.0, 1.0, 0.5, 0.0);
    cb_traj_destroy(t);
    const char *head = "pedestrianId simTime endTime startX startY endX endY\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%s1 1 0.5 0 0 1 1\n", head);
    expect_error(buf, CB_TRAJ_FORMAT_VADERE, CB_ERR_PARSE, "t:2: the step ends");
    /* A step that starts somewhere else than where the previous one ended: a teleport. */
    snprintf(buf, sizeof buf, "%s1 0 1 0 0 1 0\n1 1 2 5 0 6 0\n", head);
    expect_error(buf, CB_TRAJ_FORMAT_VADERE, CB_ERR_DUPLICATE,
                 "t:3: agent 1 has two different samples at t = 1 s (the other at line 2)");
    expect_error("pedestrianId simTime endTime startX startY endX\n", CB_TRAJ_FORMAT_VADERE,
                 CB_ERR_PARSE, "t:1: the header has no column 'endY'");
}

static void traj_petrack_units_and_rate(void **state)
{
    (void)state;
    cb_traj *t = load("# framerate: 10 fps\n# id frame x/cm y/cm z/cm\n"
                      "2\t5\t100\t-50\t176\n2\t6\t110\t-50\t176\n",
                      CB_TRAJ_FORMAT_AUTO);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_PETRACK);
    assert_true(t->source_rate == 10.0);
    /* z is the head's height, not the ground's: agents walk at elevation 0. */
    check_sample(t, 0, 0, 0.5, 1.0, -0.5, 0.0);
    check_sample(t, 0, 1, 0.6, 1.1, -0.5, 0.0);
    cb_traj_destroy(t);
    expect_error("# no rate\n1 0 0 0\n", CB_TRAJ_FORMAT_PETRACK, CB_ERR_PARSE,
                 "t:1: no frame rate");
    /* The rate may come from the desc instead. */
    cb_traj_load_desc d = {.format = CB_TRAJ_FORMAT_PETRACK, .fps = 4.0};
    cb_error err = {0};
    assert_int_equal(cb_traj_load_text("1 2 0 0\n", 8, &d, &t, &err), CB_OK);
    assert_true(t->t[0] == 0.5);
    cb_traj_destroy(t);
}

/* Every error of the text loaders names the line at fault. */
static void traj_text_errors_name_the_line(void **state)
{
    (void)state;
    const cb_traj_format csv = CB_TRAJ_FORMAT_CSV;
    expect_error("time,id,x,y\n0,1,2,3\n1,1,2\n", csv, CB_ERR_PARSE,
                 "t:3: 3 fields where the header has 4");
    expect_error("time,id,x,y\n0,1,2,3\n\n1,one,2,3\n", csv, CB_ERR_PARSE,
                 "t:4: column 'id': 'one' is not an integer");
    expect_error("time,id,x,y\n0,1,2,nan\n", csv, CB_ERR_PARSE,
                 "t:2: column 'y': 'nan' is not a finite number");
    expect_error("time,id,x,y\n0,1,2,1e400\n", csv, CB_ERR_PARSE, "t:2: column 'y'");
    expect_error("time,id,x,y\n0,1,2,3e7\n", csv, CB_ERR_INVALID_ARGUMENT,
                 "t:2: coordinate 3e+07 m is beyond");
    expect_error("time,id,x,y\n0,1,\"2,3\n", csv, CB_ERR_PARSE, "t:2: unclosed quote");
    expect_error("time,id,x,y,speed\n", csv, CB_ERR_PARSE, "t:1: unknown column 'speed'");
    expect_error("time,id,x\n", csv, CB_ERR_PARSE,
                 "t:1: the header has no column 'y' (the y coordinate)");
    expect_error("time,pedID,posX\n", CB_TRAJ_FORMAT_CROWDIT, CB_ERR_PARSE,
                 "t:1: the header has no column 'posY' (the y coordinate)");
    expect_error("time,id,x,y\n0,99999999999999999999,2,3\n", csv, CB_ERR_PARSE,
                 "t:2: column 'id': '99999999999999999999' is beyond the 64-bit integers");
    expect_error("time,id,x,y,x\n", csv, CB_ERR_PARSE, "t:1: column 'x' appears twice");
    expect_error("# only a comment\n", csv, CB_ERR_PARSE, "t:2: no header");
    expect_error("time,id,x,y\n", csv, CB_ERR_TOO_FEW, "t: no samples");
    expect_error("time,id,x,y\n0,1,2,3\n0,1,2,3\n", csv, CB_ERR_DUPLICATE,
                 "t:3: agent 1 has two samples at t = 0 s (the other at line 2)");
    expect_error("# framerate: 25 fps\n1 0 0\n", CB_TRAJ_FORMAT_PETRACK, CB_ERR_PARSE,
                 "t:2: 3 fields where a row has at least 4");
    expect_error("# framerate: 25 fps\n1 0.5 0 0\n", CB_TRAJ_FORMAT_PETRACK, CB_ERR_PARSE,
                 "t:2: frame '0.5' is not an integer");
    expect_error("# framerate: 25 fps\n99999999999999999999 1 0 0\n", CB_TRAJ_FORMAT_PETRACK,
                 CB_ERR_PARSE, "t:2: id '99999999999999999999' is beyond the 64-bit integers");
    expect_error("# framerate: fast fps\n", CB_TRAJ_FORMAT_PETRACK, CB_ERR_PARSE,
                 "t:1: framerate 'fast'");
    /* A NUL inside a line would hide the rest of the field from the number parser. */
    static const char with_nul[] = "time,id,x,y\n0,1,2,3\0009\n";
    cb_traj_load_desc d = {.format = csv, .source_name = "t"};
    cb_traj *t = NULL;
    cb_error err = {0};
    assert_int_equal(cb_traj_load_text(with_nul, sizeof with_nul - 1, &d, &t, &err), CB_ERR_PARSE);
    CB_CHECK(strcmp(err.message, "t:2: NUL byte in the line") == 0, "%s", err.message);
    char line[5000];
    memset(line, '1', sizeof line);
    memcpy(line, "time,id,x,y\n", 12);
    line[sizeof line - 1] = '\0';
    expect_error(line, csv, CB_ERR_PARSE, "t:2: line too long");
    expect_error("hello world\n", CB_TRAJ_FORMAT_AUTO, CB_ERR_UNSUPPORTED, "t: not a trajectory");
}

/* A file auto-detection cannot place: the message shows its first line (control and non-ASCII
 * bytes as '?', cut at 60 bytes), or says it is empty. */
static void traj_unknown_files_say_why(void **state)
{
    (void)state;
    const cb_traj_format aut = CB_TRAJ_FORMAT_AUTO;
#define UNKNOWN                                                                                    \
    "t: not a trajectory format crowdblend knows: name it with --format (csv, vadere, "            \
    "pathfinder, crowdit, petrack, jupedsim); a plain CSV starts 'time,id,x,y', this file "
    expect_error("# a comment\nframe;id;x;y\n1;2;3;4\n", aut, CB_ERR_UNSUPPORTED,
                 UNKNOWN "'frame;id;x;y'");
    expect_error("ab\x01\xff\n", aut, CB_ERR_UNSUPPORTED, UNKNOWN "'ab?\?'");
    char line[200];
    memset(line, 'q', sizeof line);
    line[sizeof line - 1] = '\0';
    char want[300];
    snprintf(want, sizeof want, UNKNOWN "'%.40s...'", line);
    expect_error(line, aut, CB_ERR_UNSUPPORTED, want);
#undef UNKNOWN
    expect_error("", aut, CB_ERR_TOO_FEW, "t: no trajectories: the file is empty");
    expect_error("\n  \n# only comments\n", aut, CB_ERR_TOO_FEW,
                 "t: no trajectories: the file is empty");
    /* A long file name cuts the excerpt, not the advice. */
    char source[120];
    memset(source, 'p', sizeof source);
    source[sizeof source - 1] = '\0';
    cb_traj_load_desc d = {.source_name = source};
    cb_traj *t = NULL;
    cb_error err = {0};
    assert_int_equal(cb_traj_load_text(line, strlen(line), &d, &t, &err), CB_ERR_UNSUPPORTED);
    CB_CHECK(strstr(err.message, "name it with --format (csv, vadere, pathfinder, crowdit, "
                                 "petrack, jupedsim)") != NULL,
             "%s", err.message);
}

/* A UTF-8 byte order mark (spreadsheet programs write one) is skipped: the header is found and
 * the samples are those of the file without it. */
static void traj_byte_order_mark(void **state)
{
    (void)state;
    const char *text = "\xEF\xBB\xBFtime,id,x,y\n0,7,1.5,2\n1,7,2.5,2\n";
    for (int f = 0; f < 2; ++f) {
        cb_traj *t = load(text, f == 0 ? CB_TRAJ_FORMAT_AUTO : CB_TRAJ_FORMAT_CSV);
        assert_int_equal(t->format, CB_TRAJ_FORMAT_CSV);
        assert_int_equal(t->agent_count, 1);
        assert_true(t->agents[0].id == 7);
        check_sample(t, 0, 0, 0.0, 1.5, 2.0, 0.0);
        check_sample(t, 0, 1, 1.0, 2.5, 2.0, 0.0);
        cb_traj_destroy(t);
    }
    /* Only at the start: elsewhere the bytes are data, and a header field with them unknown. */
    expect_error("time,id,x,\xEF\xBB\xBFy\n", CB_TRAJ_FORMAT_CSV, CB_ERR_PARSE,
                 "t:1: unknown column");
}

/* A JuPedSim database written by the test: good rows, then each way a row or the file can be
 * wrong. */
static void write_db(const char *path, const char *sql)
{
    remove(path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    CB_CHECK(rc == SQLITE_OK, "sqlite: %s", msg != NULL ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(db);
}

static void traj_jupedsim_rows(void **state)
{
    (void)state;
    const char *path = "/tmp/cb_test_traj.sqlite";
    const char *schema = "CREATE TABLE trajectory_data(frame INTEGER, id INTEGER, pos_x REAL, "
                         "pos_y REAL, ori_x REAL, ori_y REAL);"
                         "CREATE TABLE metadata(key TEXT, value TEXT);";
    char sql[1024];
    snprintf(sql, sizeof sql,
             "%s INSERT INTO metadata VALUES('fps', '20');"
             "INSERT INTO trajectory_data VALUES(2, 5, 1.5, -2, 0, 0), (3, 5, 1.75, -2, 0, 0);",
             schema);
    write_db(path, sql);
    cb_traj *t = NULL;
    cb_error err = {0};
    assert_int_equal(cb_traj_load_file(path, NULL, &t, &err), CB_OK);
    assert_int_equal(t->format, CB_TRAJ_FORMAT_JUPEDSIM);
    assert_true(t->source_rate == 20.0);
    check_sample(t, 0, 0, 0.1, 1.5, -2.0, 0.0);
    check_sample(t, 0, 1, 0.15, 1.75, -2.0, 0.0);
    cb_traj_destroy(t);

    snprintf(sql, sizeof sql,
             "%s INSERT INTO metadata VALUES('fps', '20');"
             "INSERT INTO trajectory_data VALUES(2, 5, 1.5, -2, 0, 0), (3, 5, NULL, -2, 0, 0);",
             schema);
    write_db(path, sql);
    assert_int_equal(cb_traj_load_file(path, NULL, &t, &err), CB_ERR_PARSE);
    CB_CHECK(strstr(err.message, ": row 2: (frame 3, id 5): pos_x and pos_y must be numbers"), "%s",
             err.message);
    snprintf(sql, sizeof sql, "%s INSERT INTO trajectory_data VALUES(2, 5, 1.5, -2, 0, 0);",
             schema);
    write_db(path, sql);
    assert_int_equal(cb_traj_load_file(path, NULL, &t, &err), CB_ERR_PARSE);
    CB_CHECK(strstr(err.message, "no frame rate") != NULL, "%s", err.message);
    cb_traj_load_desc d = {.fps = 10.0};
    assert_int_equal(cb_traj_load_file(path, &d, &t, &err), CB_OK);
    assert_true(t->t[0] == 0.2);
    cb_traj_destroy(t);
    write_db(path, "CREATE TABLE other(a);");
    assert_int_equal(cb_traj_load_file(path, &d, &t, &err), CB_ERR_PARSE);
    CB_CHECK(strstr(err.message, "not a JuPedSim trajectory file") != NULL, "%s", err.message);
    /* A text file named as JuPedSim: not a database, said as such (not "no frame rate"). */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("time,id,x,y\n0,1,0,0\n", f);
    fclose(f);
    cb_traj_load_desc as_db = {.format = CB_TRAJ_FORMAT_JUPEDSIM};
    assert_int_equal(cb_traj_load_file(path, &as_db, &t, &err), CB_ERR_PARSE);
    CB_CHECK(strstr(err.message, "not a JuPedSim trajectory file (an SQLite database)") != NULL,
             "%s", err.message);
    remove(path);
}

/* ---- interpolation ------------------------------------------------------------------------ */

/* A trajectory from arrays, through the plain CSV loader (the tangents come with it). */
static cb_traj *from_samples(const double *t, const double *x, const double *y, size_t n)
{
    size_t cap = 64 + n * 96;
    char *text = malloc(cap);
    size_t len = (size_t)snprintf(text, cap, "time,id,x,y\n");
    for (size_t i = 0; i < n; ++i) {
        len += (size_t)snprintf(text + len, cap - len, "%.17g,1,%.17g,%.17g\n", t[i], x[i], y[i]);
    }
    cb_traj *traj = load(text, CB_TRAJ_FORMAT_CSV);
    free(text);
    return traj;
}

/* n random samples: steps of 0.04 s to max_step, positions within +-extent; with `stands`,
 * one sample in five repeats the previous position (the agent stands). */
static cb_traj *random_samples(cb_prng *r, int n, float max_step, float extent, bool stands,
                               double *t, double *x, double *y)
{
    double time = 0.0;
    for (int i = 0; i < n; ++i) {
        time += cb_prng_range(r, 0.04f, max_step);
        t[i] = time;
        x[i] = cb_prng_range(r, -extent, extent);
        y[i] = cb_prng_range(r, -extent, extent);
        if (stands && i > 0 && cb_prng_below(r, 5) == 0) {
            x[i] = x[i - 1], y[i] = y[i - 1];
        }
    }
    return from_samples(t, x, y, (size_t)n);
}

static void traj_passes_through_every_sample(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("traj_passes_through_every_sample");
    enum { N = 40 };
    double t[N], x[N], y[N];
    cb_traj *traj = random_samples(&r, N, 1.5f, 50.0f, true, t, x, y);
    for (int i = 0; i < N; ++i) {
        double p[3];
        cb_traj_eval(traj, 0, t[i], p, NULL);
        CB_CHECK(fabs(p[0] - x[i]) <= 1e-12 * (1 + fabs(x[i])) &&
                     fabs(p[1] - y[i]) <= 1e-12 * (1 + fabs(y[i])),
                 "sample %d: (%.17g, %.17g) want (%.17g, %.17g)", i, p[0], p[1], x[i], y[i]);
    }
    cb_traj_destroy(traj);
}

/* Position and velocity continuous at every sample: the one-sided limits agree (their
 * difference shrinks with the step, which a jump would not do). */
static void traj_velocity_is_continuous(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("traj_velocity_is_continuous");
    enum { N = 60 };
    double t[N], x[N], y[N];
    cb_traj *traj = random_samples(&r, N, 1.0f, 5.0f, false, t, x, y);
    double worst_v = 0.0, worst_p = 0.0;
    const double eps = 1e-7;
    for (int i = 1; i + 1 < N; ++i) {
        double pa[3], va[3], pb[3], vb[3];
        cb_traj_eval(traj, 0, t[i] - eps, pa, va);
        cb_traj_eval(traj, 0, t[i] + eps, pb, vb);
        worst_v = fmax(worst_v, hypot(va[0] - vb[0], va[1] - vb[1]));
        worst_p = fmax(worst_p, hypot(pa[0] - pb[0], pa[1] - pb[1]));
    }
    cb_test_note("largest velocity jump across a sample: %.3g m/s, position %.3g m", worst_v,
                 worst_p);
    /* Over 2 eps the velocity moves by at most (acceleration) 2 eps: accelerations here stay
     * below 1e3 m/s^2, so 1e-3 m/s bounds a continuous velocity; a jump would be O(1). */
    CB_CHECK(worst_v < 1e-3, "velocity jumps by %g m/s", worst_v);
    CB_CHECK(worst_p < 1e-4, "position jumps by %g m", worst_p);
    cb_traj_destroy(traj);
}

/* Uniformly accelerated motion p = p0 + v0 t + a t^2 / 2: the interior tangents are its exact
 * derivatives, so every segment away from the ends reproduces it exactly. */
static void traj_exact_for_uniform_acceleration(void **state)
{
    (void)state;
    enum { N = 12 };
    const double v0[2] = {1.2, -0.4}, acc[2] = {0.3, 0.25};
    double t[N], x[N], y[N];
    for (int i = 0; i < N; ++i) {
        t[i] = 0.5 * i + (i % 3) * 0.1; /* uneven steps */
        x[i] = v0[0] * t[i] + 0.5 * acc[0] * t[i] * t[i];
        y[i] = v0[1] * t[i] + 0.5 * acc[1] * t[i] * t[i];
    }
    cb_traj *traj = from_samples(t, x, y, N);
    cb_err_track ep = cb_err_track_make("position"), ev = cb_err_track_make("velocity");
    for (double s = t[1]; s <= t[N - 2]; s += 0.013) {
        double p[3], v[3];
        cb_traj_eval(traj, 0, s, p, v);
        cb_err_track_add(&ep, p[0], v0[0] * s + 0.5 * acc[0] * s * s, 0);
        cb_err_track_add(&ep, p[1], v0[1] * s + 0.5 * acc[1] * s * s, 0);
        cb_err_track_add(&ev, v[0], v0[0] + acc[0] * s, 0);
        cb_err_track_add(&ev, v[1], v0[1] + acc[1] * s, 0);
    }
    /* Double rounding over a few operations. */
    cb_err_track_check(&ep, 1e-12);
    cb_err_track_check(&ev, 1e-12);
    cb_traj_destroy(traj);
}

/* An agent walks, stops for 3 samples and walks on: the curve never passes the stopping point,
 * stands still with zero velocity, and the follow path holds the heading meanwhile. */
static void traj_stop_is_held_without_overshoot(void **state)
{
    (void)state;
    const double t[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const double x[] = {0, 1.4, 2.8, 3.0, 3.0, 3.0, 3.0, 3.0};
    const double y[] = {0, 0, 0, 0, 0, 0, 1.2, 2.4};
    cb_traj *traj = from_samples(t, x, y, 8);
    float heading = 1.5707963f; /* along +x: world X = x, so yaw = atan2(vX, vZ) = pi / 2 */
    double last_x = -1.0;
    for (double s = 0.0; s <= 7.0; s += 1.0 / 60.0) {
        double p[3], v[3];
        cb_traj_eval(traj, 0, s, p, v);
        CB_CHECK(p[0] <= 3.0 + 1e-12, "t %.3f: x %.17g passes the stop at 3", s, p[0]);
        CB_CHECK(p[0] >= last_x - 1e-12, "t %.3f: x goes back from %.17g to %.17g", s, last_x,
                 p[0]);
        last_x = p[0];
        float h =
            cb_follow_heading(heading, (float)v[0], (float)-v[1], CB_FOLLOW_DEFAULT_STAND_SPEED,
                              2 * CB_FOLLOW_DEFAULT_STAND_SPEED);
        if (s >= 3.0 && s <= 5.0) {
            CB_CHECK(v[0] == 0.0 && v[1] == 0.0 && p[0] == 3.0 && p[1] == 0.0,
                     "t %.3f: standing agent moves (%g, %g)", s, v[0], v[1]);
            CB_CHECK(h == heading, "t %.3f: heading changed while standing", s);
        }
        heading = h;
    }
    /* It walks on along -Z (y grows: world Z = -y): yaw pi. */
    CB_CHECK(fabsf(fabsf(heading) - 3.1415927f) < 1e-5f, "final heading %g", (double)heading);
    cb_traj_destroy(traj);
}

/* Random smooth walks (1 s samples, 0.5-2 m/s, turns up to 60 degrees a step): the heading the
 * follow path takes is continuous: its largest change per frame shrinks in proportion to the
 * frame time (a jump would not). */
static void traj_heading_is_continuous(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng("traj_heading_is_continuous");
    enum { N = 80 };
    double t[N], x[N], y[N], dir = 0.0;
    x[0] = y[0] = 0.0;
    for (int i = 0; i < N; ++i) {
        t[i] = i;
        if (i > 0) {
            dir += cb_prng_range(&r, -1.05f, 1.05f);
            double speed = cb_prng_range(&r, 0.5f, 2.0f);
            x[i] = x[i - 1] + speed * cos(dir);
            y[i] = y[i - 1] + speed * sin(dir);
        }
    }
    cb_traj *traj = from_samples(t, x, y, N);
    double worst[2] = {0, 0};
    const double dts[2] = {1.0 / 60.0, 1.0 / 600.0};
    for (int k = 0; k < 2; ++k) {
        double p[3], v[3];
        cb_traj_eval(traj, 0, 0.0, p, v);
        float h = atan2f((float)v[0], (float)-v[1]);
        for (double s = dts[k]; s <= t[N - 1]; s += dts[k]) {
            cb_traj_eval(traj, 0, s, p, v);
            float nh = cb_follow_heading(h, (float)v[0], (float)-v[1], 0.15f, 0.3f);
            worst[k] = fmax(worst[k], fabs(remainder((double)nh - h, 2 * 3.14159265358979)));
            h = nh;
        }
    }
    cb_test_note("largest heading change per frame: %.4f rad at 60 Hz, %.5f rad at 600 Hz",
                 worst[0], worst[1]);
    CB_CHECK(worst[1] < 0.2 * worst[0], "heading jumps: %g at 60 Hz, %g at 600 Hz", worst[0],
             worst[1]);
    CB_CHECK(worst[0] < 0.5, "a %g rad turn in one frame", worst[0]);
    cb_traj_destroy(traj);
}

static void traj_eval_outside_the_span(void **state)
{
    (void)state;
    const double t[] = {1, 2}, x[] = {0, 1}, y[] = {0, 0};
    cb_traj *traj = from_samples(t, x, y, 2);
    double p[3], v[3];
    cb_traj_eval(traj, 0, 0.5, p, v);
    assert_true(p[0] == 0.0 && v[0] == 0.0);
    cb_traj_eval(traj, 0, 2.0, p, v);
    assert_true(p[0] == 1.0 && v[0] == 1.0);
    cb_traj_eval(traj, 0, 9.0, p, v);
    assert_true(p[0] == 1.0 && v[0] == 0.0);
    cb_traj_eval(traj, 0, 1.5, p, v);
    assert_true(fabs(p[0] - 0.5) < 1e-15 && fabs(v[0] - 1.0) < 1e-15);
    cb_traj_destroy(traj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(traj_plain_csv),
        cmocka_unit_test(traj_pathfinder_units),
        cmocka_unit_test(traj_crowdit_and_gzip),
        cmocka_unit_test(traj_vadere_steps),
        cmocka_unit_test(traj_petrack_units_and_rate),
        cmocka_unit_test(traj_text_errors_name_the_line),
        cmocka_unit_test(traj_unknown_files_say_why),
        cmocka_unit_test(traj_byte_order_mark),
        cmocka_unit_test(traj_jupedsim_rows),
        cmocka_unit_test(traj_passes_through_every_sample),
        cmocka_unit_test(traj_velocity_is_continuous),
        cmocka_unit_test(traj_exact_for_uniform_acceleration),
        cmocka_unit_test(traj_stop_is_held_without_overshoot),
        cmocka_unit_test(traj_heading_is_continuous),
        cmocka_unit_test(traj_eval_outside_the_span),
    };
    return CB_RUN_TESTS(tests);
}
