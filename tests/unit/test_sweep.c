/* test_sweep — sweep expansion (counts, order, zip groups, errors with
 * file:line:col, stable ids), results files (torn-line recovery, CSV
 * order), the engine with a fake runner (jobs, resume, shards, merge),
 * and the real scenario check on an unknown axis key. */
#include "io/cfgtree.h"
#include "io/units.h"
#include "report/reportsweep.h"
#include "sweep/sweepexec.h"
#include "sweep/sweepout.h"
#include "sweep/sweepsim.h"

#include "testmain.h"

#include <check.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------- */

/* Writes text to a new temporary file; returns its path (g_free). */
static char *write_tmp(const char *text)
{
    char *path = NULL;
    int fd = g_file_open_tmp("sweepXXXXXX.yaml", &path, NULL);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

static SweepDef *load_text(const char *text, char **path_out, char **err)
{
    char *path = write_tmp(text);
    SweepDef *d = sweepexp_load(path, NULL, err);
    if (path_out)
        *path_out = path;
    else {
        g_unlink(path);
        g_free(path);
    }
    return d;
}

static char *slurp(const char *dir, const char *name)
{
    char *p = g_build_filename(dir, name, NULL), *text = NULL;
    if (!g_file_get_contents(p, &text, NULL, NULL))
        text = NULL;
    g_free(p);
    return text;
}

static void rm_rf(const char *dir)
{
    const char *names[] = {"results.jsonl", "results.csv", "sweep.yaml", NULL};
    for (int i = 0; names[i]; i++) {
        char *p = g_build_filename(dir, names[i], NULL);
        g_unlink(p);
        g_free(p);
    }
    g_rmdir(dir);
}

static guint32 fnv1a(const char *s)
{
    guint32 h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (guint8)*s) * 16777619u;
    return h;
}

/* ---- the fake runner ---------------------------------------------------- */

typedef struct {
    gint runs;        /* atomic: run calls */
    int fail_nodes;   /* nodes value whose run fails (0: none) */
} Fake;

/* A scenario is {name, batch: [..], cluster: {nodes: N}, policies: [..]};
 * any other key is unknown, like the real reader. */
static bool fake_check(CfgNode *t, void *ctx, char **err)
{
    (void)ctx;
    static const char *top = "name batch cluster policies";
    bool ok = true;
    for (guint i = 0; ok && i < t->keys->len; i++) {
        CfgNode *k = g_ptr_array_index(t->keys, i);
        if (!strstr(top, k->scalar)) {
            *err = cfg_err(k, "unknown key '%s' in the scenario; expected one of: %s", k->scalar, top);
            ok = false;
        }
    }
    CfgNode *cl = cfg_peek(t, "cluster");
    for (guint i = 0; ok && cl && i < cl->keys->len; i++) {
        CfgNode *k = g_ptr_array_index(cl->keys, i);
        if (strcmp(k->scalar, "nodes") != 0) {
            *err = cfg_err(k, "unknown key '%s' in cluster; expected one of: nodes", k->scalar);
            ok = false;
        }
    }
    int64_t n;
    if (ok && !cfg_as_int(cfg_peek(cl, "nodes"), 1, 4096, &n, err))
        ok = false;
    cfg_free(t);
    return ok;
}

/* Rows: batches in reverse file order (the CSV sorts them) x policies. */
static char *fake_run(CfgNode *t, void *ctx, char **err)
{
    Fake *f = ctx;
    g_atomic_int_inc(&f->runs);
    int64_t nodes = 0;
    cfg_as_int(cfg_peek(cfg_peek(t, "cluster"), "nodes"), 1, 4096, &nodes, err);
    if (nodes == f->fail_nodes) {
        *err = g_strdup("fake failure");
        cfg_free(t);
        return NULL;
    }
    CfgNode *b = cfg_peek(t, "batch"), *p = cfg_peek(t, "policies");
    GString *s = g_string_new("[");
    for (int i = (int)b->items->len - 1; i >= 0; i--) {
        int64_t batch;
        cfg_as_int(g_ptr_array_index(b->items, i), 1, UNITS_COUNT_MAX, &batch, err);
        for (guint j = 0; j < p->items->len; j++) {
            const char *pol = ((CfgNode *)g_ptr_array_index(p->items, j))->scalar;
            g_string_append_printf(s, "%s{\"batch\":%d,\"policy\":\"%s\",\"iteration_s\":%.3f,\"nodes\":%d}",
                                   s->len > 1 ? "," : "", (int)batch, pol, nodes * 0.5 + batch * 0.25 + j,
                                   (int)nodes);
        }
    }
    g_string_append_c(s, ']');
    cfg_free(t);
    return g_string_free(s, FALSE);
}

static const char *SWEEP12 =
    "name: fake\n"
    "batch: [32, 64]\n"
    "cluster: {nodes: 1}\n"
    "policies: [ddp, thesis]\n"
    "sweep:\n"
    "  cluster.nodes: [1, 2, 3, 4]\n"
    "  name: [a, b, c]\n";

static SweepOpts opts_for(const char *out, int jobs, FILE *log)
{
    return (SweepOpts){.out = out, .jobs = jobs, .log = log, .tty = false};
}

static char *run_fake(const char *yaml, int jobs, int shard_i, int shard_n, bool resume, const char *dir,
                      Fake *f, int *rc)
{
    char *err = NULL;
    SweepDef *d = load_text(yaml, NULL, &err);
    ck_assert_msg(d, "%s", err);
    SweepRunner r = {.check = fake_check, .run = fake_run, .ctx = f};
    FILE *log = fopen("/dev/null", "w");
    SweepOpts o = opts_for(dir, jobs, log);
    o.resume = resume;
    o.shard_i = shard_i;
    o.shard_n = shard_n;
    *rc = sweepexec_run(d, &r, &o, &err);
    fclose(log);
    sweepexp_free(d);
    return err;
}

/* ---- expansion ---------------------------------------------------------- */

START_TEST(test_counts_and_order)
{
    char *err = NULL;
    SweepDef *d = load_text("model: m\nsweep:\n  a: [1, 2]\n  b.c: [x, y, z]\n  d: [[1], [2], [3], [4]]\n",
                            NULL, &err);
    ck_assert_msg(d, "%s", err);
    ck_assert_uint_eq(d->count, 2 * 3 * 4);
    ck_assert_uint_eq(d->axes->len, 3);
    /* scenario 17 = a[17 / 12], b.c[(17 / 4) % 3], d[17 % 4]: last axis fastest */
    ck_assert_str_eq(sweepexp_value(d, 17, 0)->scalar, "2");
    ck_assert_str_eq(sweepexp_value(d, 17, 1)->scalar, "y");
    const CfgNode *v = sweepexp_value(d, 17, 2);
    ck_assert_int_eq(v->type, CFG_SEQ);
    ck_assert_str_eq(((CfgNode *)g_ptr_array_index(v->items, 0))->scalar, "2");
    CfgNode *t = sweepexp_tree(d, 17, &err);
    ck_assert_msg(t, "%s", err);
    ck_assert_ptr_null(cfg_peek(t, "sweep"));
    ck_assert_str_eq(cfg_peek(t, "model")->scalar, "m");
    ck_assert_str_eq(cfg_peek(t, "a")->scalar, "2");
    ck_assert_str_eq(cfg_peek(cfg_peek(t, "b"), "c")->scalar, "y");
    cfg_free(t);
    sweepexp_free(d);
}
END_TEST

START_TEST(test_zip_groups)
{
    char *err = NULL;
    SweepDef *d = load_text("model: m\nsweep:\n  x: [1, 2, 3]\n"
                            "  zip: [{cluster.nodes: [8, 16], batch: [[32], [64]]}, {p: [a, b, c, d]}]\n",
                            NULL, &err);
    ck_assert_msg(d, "%s", err);
    ck_assert_uint_eq(d->count, 3 * 2 * 4);
    ck_assert_uint_eq(d->groups->len, 3);
    /* scenario 13: x[13 / 8] = 2, zip[(13 / 4) % 2] = 1, p[13 % 4] = 1 */
    ck_assert_str_eq(sweepexp_value(d, 13, 0)->scalar, "2");
    ck_assert_str_eq(sweepexp_value(d, 13, 1)->scalar, "16");
    ck_assert_str_eq(((CfgNode *)g_ptr_array_index(sweepexp_value(d, 13, 2)->items, 0))->scalar, "64");
    ck_assert_str_eq(sweepexp_value(d, 13, 3)->scalar, "b");
    /* the zipped keys move together in every scenario */
    for (guint64 i = 0; i < d->count; i++) {
        bool small = strcmp(sweepexp_value(d, i, 1)->scalar, "8") == 0;
        const char *b = ((CfgNode *)g_ptr_array_index(sweepexp_value(d, i, 2)->items, 0))->scalar;
        ck_assert_str_eq(b, small ? "32" : "64");
    }
    sweepexp_free(d);
}
END_TEST

/* Each bad definition and the exact position its error names. */
START_TEST(test_errors_have_positions)
{
    static const struct {
        const char *yaml;
        const char *where;   /* ":line:col: " */
        const char *what;    /* part of the message */
    } cases[] = {
        {"model: m\nsweep:\n  zip: [{a: [1, 2], b: [1, 2, 3]}]\n", ":3:24: ", "lists of equal length"},
        {"model: m\nsweep:\n  a: []\n", ":3:6: ", "no values"},
        {"model: m\nsweep:\n  a: 8\n", ":3:3: ", "expected a list of values"},
        {"model: m\nsweep: {}\n", ":2:8: ", "no axes"},
        {"model: m\nsweep:\n  a: [1]\n  zip: [{a: [2]}]\n", ":4:10: ", "appears twice"},
        {"model: m\nsweep:\n  zip: 3\n", ":3:8: ", "expected a list of groups"},
        {"model: m\nsweep:\n  a..b: [1]\n", ":3:3: ", "not a key path"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *err = NULL, *path = NULL;
        SweepDef *d = load_text(cases[i].yaml, &path, &err);
        ck_assert_msg(!d, "case %zu expanded", i);
        char *want = g_strconcat(path, cases[i].where, NULL);
        ck_assert_msg(g_str_has_prefix(err, want), "case %zu: '%s' does not start with '%s'", i, err, want);
        ck_assert_msg(strstr(err, cases[i].what), "case %zu: '%s'", i, err);
        ck_assert_msg(strstr(err, "; expected"), "case %zu: '%s'", i, err);
        g_free(want);
        g_free(err);
        g_unlink(path);
        g_free(path);
    }
}
END_TEST

/* An axis path that the scenario does not know fails validation at the
 * axis key, before anything runs. */
START_TEST(test_unknown_axis_key)
{
    char *err = NULL, *path = NULL;
    SweepDef *d = load_text("name: f\nbatch: [32]\ncluster: {nodes: 1}\npolicies: [p]\nsweep:\n"
                            "  cluster.nodes: [1, 2]\n  cluster.nodez: [3, 4]\n", &path, &err);
    ck_assert_msg(d, "%s", err);
    SweepRunner r = {.check = fake_check, .run = fake_run};
    ck_assert(!sweepexec_validate(d, &r, 2, &err));
    char *want = g_strconcat(path, ":7:3: unknown key 'nodez' in cluster", NULL);
    ck_assert_msg(g_str_has_prefix(err, want), "'%s'", err);
    ck_assert_msg(strstr(err, "(sweep scenario 0000-"), "'%s'", err);
    g_free(want);
    g_free(err);
    sweepexp_free(d);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* The same check through the real scenario reader (configs/default.yaml's
 * keys; runs from the repository root like every suite). */
START_TEST(test_unknown_axis_key_real_scenario)
{
    char *err = NULL, *path = NULL;
    SweepDef *d = load_text("model: vgg16\nbatch: [32]\ncluster: {topology: star, nodes: 8}\n"
                            "policies: [{name: a, overlap: layer, algorithm: ring}]\n"
                            "sweep:\n  cluster.link.bandwith: [1Gbps]\n", &path, &err);
    ck_assert_msg(d, "%s", err);
    ck_assert(!sweepexec_validate(d, sweepsim_runner(), 1, &err));
    char *want = g_strconcat(path, ":6:3: unknown key 'bandwith'", NULL);
    ck_assert_msg(g_str_has_prefix(err, want), "'%s'", err);
    g_free(want);
    g_free(err);
    sweepexp_free(d);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* --set sweep.AXIS=... replaces an axis in place or adds one at the end;
 * other --set paths edit the base scenario. */
START_TEST(test_set_axes)
{
    char *path = write_tmp("model: m\nname: a\nsweep:\n  cluster.nodes: [8, 16]\n  b: [1, 2, 3]\n"), *err = NULL;
    char *sets[] = {"sweep.cluster.nodes=[2, 4, 6, 8]", "sweep.batch=[[1], [2]]", "name=z", NULL};
    SweepDef *d = sweepexp_load(path, sets, &err);
    ck_assert_msg(d, "%s", err);
    ck_assert_uint_eq(d->count, 4 * 3 * 2);
    ck_assert_str_eq(((SweepAxis *)g_ptr_array_index(d->axes, 0))->path, "cluster.nodes");
    ck_assert_str_eq(((SweepAxis *)g_ptr_array_index(d->axes, 2))->path, "batch");
    ck_assert_str_eq(sweepexp_value(d, 23, 0)->scalar, "8");
    ck_assert_str_eq(cfg_peek(d->base, "name")->scalar, "z");
    sweepexp_free(d);
    char *plain = write_tmp("model: m\n");
    char *one[] = {"sweep.cluster.nodes=[2, 4]", NULL};
    d = sweepexp_load(plain, one, &err);
    ck_assert_msg(d, "%s", err);
    ck_assert_uint_eq(d->count, 2);
    sweepexp_free(d);
    g_unlink(path);
    g_unlink(plain);
    g_free(path);
    g_free(plain);
}
END_TEST

START_TEST(test_ids_stable)
{
    char *err = NULL;
    const char *y = "model: m\nsweep:\n  cluster.nodes: [8, 16]\n  batch: [[32], [64, 128]]\n";
    SweepDef *a = load_text(y, NULL, &err), *b = load_text(y, NULL, &err);
    ck_assert(a && b);
    for (guint64 i = 0; i < a->count; i++) {
        char *x = sweepexp_id(a, i), *z = sweepexp_id(b, i);
        ck_assert_str_eq(x, z);
        g_free(x);
        g_free(z);
    }
    char *id3 = sweepexp_id(a, 3), *want = g_strdup_printf("0003-%08x", fnv1a("cluster.nodes=16\nbatch=[64, 128]\n"));
    ck_assert_str_eq(id3, want);
    g_free(id3);
    g_free(want);
    /* a different value gives a different hash at the same index */
    SweepDef *c = load_text("model: m\nsweep:\n  cluster.nodes: [8, 32]\n  batch: [[32], [64, 128]]\n", NULL, &err);
    char *x = sweepexp_id(a, 3), *z = sweepexp_id(c, 3);
    ck_assert_str_ne(x, z);
    g_free(x);
    g_free(z);
    sweepexp_free(a);
    sweepexp_free(b);
    sweepexp_free(c);
}
END_TEST

START_TEST(test_cfgtree_set_and_emit)
{
    char *err = NULL;
    CfgNode *t = cfg_parse_string("a: {b: [1, {c: 2}]}\nq: \"x, y\"\n", "t", &err);
    CfgNode *v = cfg_parse_string("[7, \"s p\"]", "v", &err);
    ck_assert(cfgtree_set(t, "a.b.1.c", v, v, &err));
    ck_assert(cfgtree_set(t, "new.key", v, v, &err));
    ck_assert(!cfgtree_set(t, "a.b.5", v, v, &err));
    ck_assert_msg(strstr(err, "v:1:1: 'a.b.5': '5' is not an index"), "%s", err);
    g_free(err);
    GString *s = g_string_new(NULL);
    cfgtree_emit_flow(s, t);
    ck_assert_str_eq(s->str, "{a: {b: [1, {c: [7, \"s p\"]}]}, q: \"x, y\", new: {key: [7, \"s p\"]}}");
    g_string_free(s, TRUE);
    CfgNode *q = cfgtree_take(t, "q");
    ck_assert_str_eq(q->scalar, "x, y");
    ck_assert_ptr_null(cfg_peek(t, "q"));
    cfg_free(q);
    cfg_free(v);
    cfg_free(t);
}
END_TEST

/* ---- results files ------------------------------------------------------ */

static const char *LINE1 = "{\"id\":\"0000-aa\",\"index\":0,\"axes\":{},\"results\":[]}";
static const char *LINE2 = "{\"id\":\"0001-bb\",\"index\":1,\"axes\":{},\"results\":[{\"batch\":1}]}";

START_TEST(test_torn_line_recovery)
{
    const char *tails[] = {"{\"id\":\"0002-cc\",\"ind",                /* no newline */
                           "{\"id\":\"0002-cc\",\"index\":2,\"axes\":{},\"results\":[]}", /* whole, no newline */
                           "{\"id\":\"0002-cc\",\"ind\n"};             /* newline, not JSON */
    for (size_t k = 0; k < G_N_ELEMENTS(tails); k++) {
        char *good = g_strdup_printf("%s\n%s\n", LINE1, LINE2);
        char *all = g_strconcat(good, tails[k], NULL);
        char *path = write_tmp(all);
        gsize dropped = 0;
        char *err = NULL;
        GPtrArray *lines = sweepout_read(path, SWEEPOUT_REPAIR, &dropped, &err);
        ck_assert_msg(lines, "%s", err);
        ck_assert_uint_eq(lines->len, 2);
        ck_assert_str_eq(((SweepLine *)g_ptr_array_index(lines, 1))->id, "0001-bb");
        ck_assert_uint_eq(dropped, strlen(tails[k]));
        char *after = NULL;
        ck_assert(g_file_get_contents(path, &after, NULL, NULL));
        ck_assert_str_eq(after, good);
        g_free(after);
        g_ptr_array_free(lines, TRUE);
        g_unlink(path);
        g_free(path);
        g_free(all);
        g_free(good);
    }
    /* a bad line in the middle is corruption, not a torn tail: an error */
    char *text = g_strdup_printf("%s\nnot json\n%s\n", LINE1, LINE2), *path = write_tmp(text), *err = NULL;
    gsize dropped = 0;
    ck_assert_ptr_null(sweepout_read(path, SWEEPOUT_REPAIR, &dropped, &err));
    char *want = g_strconcat(path, ":2:1: not valid JSON", NULL);
    ck_assert_msg(g_str_has_prefix(err, want), "%s", err);
    g_free(want);
    g_free(err);
    g_unlink(path);
    g_free(path);
    g_free(text);
}
END_TEST

START_TEST(test_csv_sorted_jobs_independent)
{
    Fake f = {0};
    char *d1 = g_dir_make_tmp("sweepA-XXXXXX", NULL), *d4 = g_dir_make_tmp("sweepB-XXXXXX", NULL);
    int rc;
    char *err = run_fake(SWEEP12, 1, 0, 0, false, d1, &f, &rc);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(g_atomic_int_get(&f.runs), 12);
    err = run_fake(SWEEP12, 4, 0, 0, false, d4, &f, &rc);
    ck_assert_msg(rc == 0, "%s", err);
    char *c1 = slurp(d1, "results.csv"), *c4 = slurp(d4, "results.csv");
    ck_assert_str_eq(c1, c4);
    gchar **rows = g_strsplit(c1, "\n", -1);
    ck_assert_str_eq(rows[0], "id,cluster.nodes,name,batch,policy,iteration_s,nodes");
    ck_assert_uint_eq(g_strv_length(rows), 1 + 12 * 4 + 1);   /* header, 12 x 2 batches x 2 policies, "" */
    /* scenario 5 = nodes[5 / 3] = 2, name[5 % 3] = c; batches sorted up */
    char *id5 = NULL;
    {
        SweepDef *d = load_text(SWEEP12, NULL, &err);
        id5 = sweepexp_id(d, 5);
        sweepexp_free(d);
    }
    char *want = g_strdup_printf("%s,2,c,32,ddp,9,2", id5);
    ck_assert_str_eq(rows[1 + 5 * 4], want);
    g_free(want);
    want = g_strdup_printf("%s,2,c,64,thesis,18,2", id5);
    ck_assert_str_eq(rows[1 + 5 * 4 + 3], want);
    for (int i = 2; rows[i] && rows[i][0]; i++)
        ck_assert_int_le(strcmp(rows[i - 1], rows[i]), 0);     /* ids ascend (first field) */
    g_free(want);
    g_free(id5);
    g_strfreev(rows);
    g_free(c1);
    g_free(c4);
    rm_rf(d1);
    rm_rf(d4);
    g_free(d1);
    g_free(d4);
}
END_TEST

/* A run killed midway (lines written, a torn tail) resumes to the same
 * files as a run never killed, running only what was missing. */
START_TEST(test_resume_after_kill)
{
    Fake f = {0};
    char *full = g_dir_make_tmp("sweepF-XXXXXX", NULL), *cut = g_dir_make_tmp("sweepK-XXXXXX", NULL);
    int rc;
    char *err = run_fake(SWEEP12, 2, 0, 0, false, full, &f, &rc);
    ck_assert_int_eq(rc, 0);
    char *jl = slurp(full, "results.jsonl"), *sy = slurp(full, "sweep.yaml");
    const char *p = jl;
    for (int i = 0; i < 5; i++)
        p = strchr(p, '\n') + 1;
    gsize keep = (gsize)(p - jl) + 17;                   /* five lines and a torn sixth */
    char *cj = g_build_filename(cut, "results.jsonl", NULL), *cs = g_build_filename(cut, "sweep.yaml", NULL);
    ck_assert(g_file_set_contents(cj, jl, (gssize)keep, NULL));
    ck_assert(g_file_set_contents(cs, sy, -1, NULL));
    g_atomic_int_set(&f.runs, 0);
    err = run_fake(SWEEP12, 3, 0, 0, false, cut, &f, &rc);  /* no --resume: refused */
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "--resume"), "%s", err);
    g_free(err);
    err = run_fake(SWEEP12, 3, 0, 0, true, cut, &f, &rc);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(g_atomic_int_get(&f.runs), 7);
    char *a = slurp(full, "results.csv"), *b = slurp(cut, "results.csv");
    ck_assert_str_eq(a, b);
    char *lines = slurp(cut, "results.jsonl");
    int n = 0;
    for (const char *c = lines; *c; c++)
        n += *c == '\n';
    ck_assert_int_eq(n, 12);
    /* a resume of a complete directory runs nothing */
    g_atomic_int_set(&f.runs, 0);
    err = run_fake(SWEEP12, 3, 0, 0, true, cut, &f, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(g_atomic_int_get(&f.runs), 0);
    /* another definition in the same directory is refused */
    err = run_fake("name: x\nbatch: [1]\ncluster: {nodes: 1}\npolicies: [p]\nsweep: {cluster.nodes: [1, 2]}\n", 1, 0,
                   0, true, cut, &f, &rc);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "different sweep"), "%s", err);
    g_free(err);
    g_free(lines);
    g_free(a);
    g_free(b);
    g_free(cj);
    g_free(cs);
    g_free(jl);
    g_free(sy);
    rm_rf(full);
    rm_rf(cut);
    g_free(full);
    g_free(cut);
}
END_TEST

START_TEST(test_failures_not_recorded)
{
    Fake f = {.fail_nodes = 3};
    char *dir = g_dir_make_tmp("sweepE-XXXXXX", NULL);
    int rc;
    char *err = run_fake(SWEEP12, 2, 0, 0, false, dir, &f, &rc);
    ck_assert_int_eq(rc, 1);
    g_free(err);
    char *jl = slurp(dir, "results.jsonl");
    int n = 0;
    for (const char *c = jl; *c; c++)
        n += *c == '\n';
    ck_assert_int_eq(n, 9);                               /* 3 of 12 have nodes = 3 */
    f.fail_nodes = 0;
    g_atomic_int_set(&f.runs, 0);
    err = run_fake(SWEEP12, 2, 0, 0, true, dir, &f, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(g_atomic_int_get(&f.runs), 3);
    g_free(jl);
    rm_rf(dir);
    g_free(dir);
}
END_TEST

/* Shards 0..2 of 3 are disjoint and cover the sweep; merged (with one
 * shard given twice) they equal the whole run. */
START_TEST(test_shards_and_merge)
{
    Fake f = {0};
    char *whole = g_dir_make_tmp("sweepW-XXXXXX", NULL), *sh[3], *merged = g_dir_make_tmp("sweepM-XXXXXX", NULL);
    int rc;
    char *err = run_fake(SWEEP12, 2, 0, 0, false, whole, &f, &rc);
    ck_assert_int_eq(rc, 0);
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 0; i < 3; i++) {
        sh[i] = g_dir_make_tmp("sweepS-XXXXXX", NULL);
        g_atomic_int_set(&f.runs, 0);
        err = run_fake(SWEEP12, 2, i, 3, false, sh[i], &f, &rc);
        ck_assert_msg(rc == 0, "%s", err);
        ck_assert_int_eq(g_atomic_int_get(&f.runs), 4);   /* 12 scenarios / 3 shards */
        char *jl = slurp(sh[i], "results.jsonl");
        gchar **ls = g_strsplit(jl, "\n", -1);
        for (int k = 0; ls[k] && ls[k][0]; k++) {
            char *id = g_strndup(ls[k] + 7, 13);              /* {"id":"NNNN-xxxxxxxx" */
            ck_assert_msg(!g_hash_table_contains(seen, id), "%s twice", id);
            ck_assert_int_eq(g_ascii_strtoll(id, NULL, 10) % 3, i);
            g_hash_table_add(seen, id);
        }
        g_strfreev(ls);
        g_free(jl);
    }
    ck_assert_uint_eq(g_hash_table_size(seen), 12);
    char *dirs[] = {sh[2], sh[0], sh[1], sh[0]};
    FILE *log = fopen("/dev/null", "w");
    rc = sweepout_merge(dirs, 4, merged, log, &err);
    ck_assert_msg(rc == 0, "%s", err);
    char *a = slurp(whole, "results.csv"), *b = slurp(merged, "results.csv");
    ck_assert_str_eq(a, b);
    char *y1 = slurp(whole, "sweep.yaml"), *y2 = slurp(merged, "sweep.yaml");
    ck_assert(sweepout_same_sweep(y1, y2, SWEEPOUT_ANY_SHARD));
    /* a directory of another sweep is refused */
    char *other = g_dir_make_tmp("sweepO-XXXXXX", NULL);
    err = run_fake("name: x\nbatch: [1]\ncluster: {nodes: 1}\npolicies: [p]\nsweep: {cluster.nodes: [1, 2]}\n", 1, 0,
                   0, false, other, &f, &rc);
    char *bad[] = {sh[0], other};
    rc = sweepout_merge(bad, 2, merged, log, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "a different sweep"), "%s", err);
    g_free(err);
    fclose(log);
    g_free(a);
    g_free(b);
    g_free(y1);
    g_free(y2);
    g_hash_table_destroy(seen);
    for (int i = 0; i < 3; i++) {
        rm_rf(sh[i]);
        g_free(sh[i]);
    }
    rm_rf(other);
    rm_rf(whole);
    rm_rf(merged);
    g_free(other);
    g_free(whole);
    g_free(merged);
}
END_TEST

/* Axis values are shown as the sweep file wrote them: an unquoted 2.20
 * (an NCCL release) is 2.20 in results.jsonl, its CSV and the axis texts
 * plot labels come from, never the 2.2 a double prints; a scalar that is
 * no JSON number as written (+5) is its text, a string. */
START_TEST(test_axis_values_as_written)
{
    char *err = NULL;
    CfgNode *root = cfg_parse_string("{a: 2.20, b: 1.50, c: \"2.21\", d: 16, e: +5, f: [1.50, 2], g: 1e3, h: -0.0}",
                                     "x.yaml", &err);
    ck_assert_msg(root, "%s", err);
    ReportSweepAxis axes[8];
    ck_assert_uint_eq(root->items->len, G_N_ELEMENTS(axes));
    for (guint i = 0; i < G_N_ELEMENTS(axes); i++)
        axes[i] = (ReportSweepAxis){((CfgNode *)g_ptr_array_index(root->keys, i))->scalar,
                                    g_ptr_array_index(root->items, i)};
    char *line = reportsweep_line("0000-x", 0, axes, G_N_ELEMENTS(axes), "[{\"batch\":1}]", &err);
    ck_assert_msg(line, "%s", err);
    ck_assert_str_eq(line, "{\"id\":\"0000-x\",\"index\":0,\"axes\":{\"a\":2.20,\"b\":1.50,\"c\":\"2.21\",\"d\":16,"
                           "\"e\":\"+5\",\"f\":[1.50,2],\"g\":1e3,\"h\":-0.0},\"results\":[{\"batch\":1}]}");
    GHashTable *tx = reportsweep_axis_texts(line, strlen(line));
    ck_assert_ptr_nonnull(tx);
    ck_assert_str_eq(g_hash_table_lookup(tx, "a"), "2.20");
    ck_assert_str_eq(g_hash_table_lookup(tx, "c"), "2.21");
    ck_assert_str_eq(g_hash_table_lookup(tx, "e"), "+5");
    ck_assert_str_eq(g_hash_table_lookup(tx, "f"), "[1.50,2]");
    g_hash_table_destroy(tx);
    GPtrArray *lines = g_ptr_array_new();
    g_ptr_array_add(lines, line);
    char *csv = reportsweep_csv(lines);
    ck_assert_str_eq(csv, "id,a,b,c,d,e,f,g,h,batch\n0000-x,2.20,1.50,2.21,16,+5,\"[1.50,2]\",1e3,-0.0,1\n");
    g_free(csv);
    g_ptr_array_free(lines, TRUE);
    g_free(line);
    cfg_free(root);
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = testmain_case(s, "expansion");
    tcase_add_test(tc, test_counts_and_order);
    tcase_add_test(tc, test_zip_groups);
    tcase_add_test(tc, test_set_axes);
    tcase_add_test(tc, test_ids_stable);
    tcase_add_test(tc, test_cfgtree_set_and_emit);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_errors_have_positions);
    tcase_add_test(tc, test_unknown_axis_key);
    tcase_add_test(tc, test_unknown_axis_key_real_scenario);
    tc = testmain_case(s, "results");
    tcase_add_test(tc, test_torn_line_recovery);
    tcase_add_test(tc, test_resume_after_kill);
    tcase_add_test(tc, test_failures_not_recorded);
    tcase_add_test(tc, test_shards_and_merge);
    tcase_add_test(tc, test_axis_values_as_written);
    tc = testmain_case(s, "determinism");
    tcase_add_test(tc, test_csv_sorted_jobs_independent);
    return s;
}

int main(void)
{
    return testmain_run(sweep_suite());
}
