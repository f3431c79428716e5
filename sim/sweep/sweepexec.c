/* sweepexec — validate, resume, run, record, derive; see sweepexec.h. */
#include "sweep/sweepexec.h"
#include "io/fileio.h"
#include "report/reportsweep.h"
#include "sweep/sweepout.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

struct SweepPlan {
    const SweepDef *d;       /* the sweep; borrowed */
    const SweepOpts *o;      /* options; borrowed */
    char *jsonl;             /* out/results.jsonl path; owned */
    int fd;                  /* results.jsonl open for appending, or -1 */
    GArray *todo;            /* guint64 indices still to run, ascending */
    guint64 total;           /* scenarios of this shard */
    guint64 done;            /* finished ones, resumed included */
    guint64 ran;             /* finished in this run */
    guint64 failed;          /* runner failures in this run */
    gint64 t0_us;            /* monotonic start of the runs */
};

/* A scenario back from a worker thread. */
typedef struct {
    guint64 index;           /* scenario index */
    char *json;              /* run: results array text; owned; NULL on failure or skip */
    char *err;               /* failure message; owned */
    bool skipped;            /* not attempted (the pool was stopping) */
    double secs;             /* wall time of the scenario */
} SweepDone;

/* What the pool threads share. */
typedef struct {
    const SweepDef *d;       /* borrowed */
    const SweepRunner *r;    /* borrowed */
    bool validate;           /* call check instead of run */
    GAsyncQueue *q;          /* SweepDone* to the main thread */
    gint stop;               /* atomic: skip what is not started yet */
} SweepPool;

static void done_free(SweepDone *dn)
{
    g_free(dn->json);
    g_free(dn->err);
    g_free(dn);
}

static void pool_work(gpointer data, gpointer user)
{
    SweepPool *p = user;
    SweepDone *dn = g_new0(SweepDone, 1);
    dn->index = (guint64)GPOINTER_TO_SIZE(data) - 1;
    if (g_atomic_int_get(&p->stop)) {
        dn->skipped = true;
        g_async_queue_push(p->q, dn);
        return;
    }
    gint64 t0 = g_get_monotonic_time();
    CfgNode *t = sweepexp_tree(p->d, dn->index, &dn->err);
    if (t && p->validate) {
        if (!p->r->check(t, p->r->ctx, &dn->err) && !dn->err)
            dn->err = g_strdup("the scenario is not valid");
    } else if (t) {
        dn->json = p->r->run(t, p->r->ctx, &dn->err);
        if (!dn->json && !dn->err)
            dn->err = g_strdup("the simulation gave no results");
    }
    dn->secs = (double)(g_get_monotonic_time() - t0) / 1e6;
    g_async_queue_push(p->q, dn);
}

/* Starts a pool of jobs threads over indices; the caller pops
 * indices->len SweepDone from pool->q, then calls pool_end. */
static GThreadPool *pool_start(SweepPool *pool, int jobs, const GArray *indices, char **err)
{
    GError *ge = NULL;
    int n = jobs < 1 ? 1 : jobs;
    if (indices->len < (guint)n)
        n = indices->len ? (int)indices->len : 1;
    GThreadPool *tp = g_thread_pool_new(pool_work, pool, n, TRUE, &ge);
    if (!tp) {
        *err = g_strdup_printf("cannot start %d threads: %s", n, ge->message);
        g_error_free(ge);
        return NULL;
    }
    for (guint k = 0; k < indices->len; k++)
        g_thread_pool_push(tp, GSIZE_TO_POINTER((gsize)g_array_index(indices, guint64, k) + 1), NULL);
    return tp;
}

static char *scenario_error(const SweepDef *d, guint64 i, const char *msg)
{
    if (d->axes->len == 0)
        return g_strdup(msg);
    char *id = sweepexp_id(d, i), *label = sweepexp_label(d, i);
    char *out = g_strdup_printf("%s (sweep scenario %s: %s)", msg, id, label);
    g_free(id);
    g_free(label);
    return out;
}

bool sweepexec_validate(const SweepDef *d, const SweepRunner *r, int jobs, char **err)
{
    GArray *all = g_array_sized_new(FALSE, FALSE, sizeof(guint64), (guint)d->count);
    for (guint64 i = 0; i < d->count; i++)
        g_array_append_val(all, i);
    SweepPool pool = {.d = d, .r = r, .validate = true, .q = g_async_queue_new()};
    GThreadPool *tp = pool_start(&pool, jobs, all, err);
    bool ok = tp != NULL;
    guint64 bad = G_MAXUINT64;
    char *bad_msg = NULL;
    for (guint k = 0; tp && k < all->len; k++) {
        SweepDone *dn = g_async_queue_pop(pool.q);
        if (dn->err && dn->index < bad) {
            bad = dn->index;
            g_free(bad_msg);
            bad_msg = g_steal_pointer(&dn->err);
            g_atomic_int_set(&pool.stop, 1);
        }
        done_free(dn);
    }
    if (tp)
        g_thread_pool_free(tp, FALSE, TRUE);
    if (bad_msg) {
        *err = scenario_error(d, bad, bad_msg);
        ok = false;
    }
    g_free(bad_msg);
    g_async_queue_unref(pool.q);
    g_array_free(all, TRUE);
    return ok;
}

static bool in_shard(const SweepOpts *o, guint64 i)
{
    return o->shard_n <= 1 || i % (guint64)o->shard_n == (guint64)o->shard_i;
}

static void plan_free(SweepPlan *p)
{
    if (p->fd >= 0)
        close(p->fd);
    g_free(p->jsonl);
    g_array_free(p->todo, TRUE);
    g_free(p);
}

/* Checks the directory against this run: a fresh run needs no results
 * there; a resumed one the same sweep.yaml. */
static int check_dir(const SweepOpts *o, const char *yaml, const char *jsonl, char **err)
{
    char *sy = g_build_filename(o->out, "sweep.yaml", NULL), *old = NULL;
    int rc = 0;
    GStatBuf st;
    if (!o->resume && g_stat(jsonl, &st) == 0 && st.st_size > 0) {
        *err = g_strdup_printf("%s: already holds results; expected --resume to continue that sweep, or a new "
                               "--out DIR", jsonl);
        rc = 2;
    } else if (o->resume && g_file_get_contents(sy, &old, NULL, NULL) &&
               !sweepout_same_sweep(old, yaml, SWEEPOUT_SAME_SHARD)) {
        *err = g_strdup_printf("%s:1:1: describes a different sweep (config, --set, shard or arsim version); "
                               "expected the same command line to --resume, or a new --out DIR", sy);
        rc = 2;
    }
    g_free(old);
    g_free(sy);
    return rc;
}

/* Reads (and repairs) what an earlier run left; marks done indices. */
static int load_done(SweepPlan *p, GHashTable *done, char **err)
{
    gsize dropped = 0;
    GPtrArray *lines = sweepout_read(p->jsonl, SWEEPOUT_REPAIR, &dropped, err);
    if (!lines)
        return 2;
    if (dropped)
        fprintf(p->o->log, "%s: dropped a torn last line (%zu bytes); its scenario runs again\n", p->jsonl,
                dropped);
    int rc = 0;
    for (guint k = 0; k < lines->len && rc == 0; k++) {
        const SweepLine *l = g_ptr_array_index(lines, k);
        char *want = l->index < p->d->count ? sweepexp_id(p->d, l->index) : NULL;
        if (!want || strcmp(want, l->id) != 0 || !in_shard(p->o, l->index)) {
            *err = cfg_oneline(g_strdup_printf("%s:%u:1: scenario %s is not one of this sweep's%s; expected the "
                                               "results of the same sweep", p->jsonl, k + 1, l->id,
                                               p->o->shard_n > 1 ? " shard" : ""));
            rc = 2;
        } else {
            g_hash_table_add(done, GSIZE_TO_POINTER((gsize)l->index + 1));
        }
        g_free(want);
    }
    g_ptr_array_free(lines, TRUE);
    return rc;
}

SweepPlan *sweepexec_prepare(const SweepDef *d, const SweepRunner *r, const SweepOpts *o, int *rc, char **err)
{
    *rc = 2;
    if (!sweepexec_validate(d, r, o->jobs, err))
        return NULL;
    char *shard = o->shard_n > 1 ? g_strdup_printf("%d/%d", o->shard_i, o->shard_n) : NULL;
    char *yaml = sweepexp_yaml(d, o->sets, shard);
    g_free(shard);
    SweepPlan *p = g_new0(SweepPlan, 1);
    *p = (SweepPlan){.d = d, .o = o, .fd = -1, .todo = g_array_new(FALSE, FALSE, sizeof(guint64))};
    p->jsonl = g_build_filename(o->out, "results.jsonl", NULL);
    char *sy = g_build_filename(o->out, "sweep.yaml", NULL);
    GHashTable *done = g_hash_table_new(g_direct_hash, g_direct_equal);
    *rc = check_dir(o, yaml, p->jsonl, err);
    if (*rc == 0 && g_mkdir_with_parents(o->out, 0777) != 0) {
        *err = g_strdup_printf("%s: cannot create the directory: %s", o->out, g_strerror(errno));
        *rc = 1;
    }
    if (*rc == 0 && !fileio_write_text(sy, yaml, err))
        *rc = 1;
    if (*rc == 0 && o->resume)
        *rc = load_done(p, done, err);
    if (*rc == 0) {
        p->fd = open(p->jsonl, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (p->fd < 0) {
            *err = g_strdup_printf("%s: cannot open: %s", p->jsonl, g_strerror(errno));
            *rc = 1;
        }
    }
    for (guint64 i = 0; *rc == 0 && i < d->count; i++) {
        if (!in_shard(o, i))
            continue;
        p->total++;
        if (g_hash_table_contains(done, GSIZE_TO_POINTER((gsize)i + 1)))
            p->done++;
        else
            g_array_append_val(p->todo, i);
    }
    g_hash_table_destroy(done);
    g_free(sy);
    g_free(yaml);
    if (*rc != 0) {
        plan_free(p);
        return NULL;
    }
    if (p->done)
        fprintf(o->log, "resuming: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " scenarios already done\n",
                p->done, p->total);
    p->t0_us = g_get_monotonic_time();
    return p;
}

const GArray *sweepexec_todo(const SweepPlan *p)
{
    return p->todo;
}

static void progress(SweepPlan *p, guint64 index, double secs, bool ok)
{
    double el = (double)(g_get_monotonic_time() - p->t0_us) / 1e6;
    guint64 finished = p->ran + p->failed;
    double rate = el > 0 ? (double)finished / el : 0;
    guint64 left = p->total - p->done - p->failed;
    double eta = rate > 0 ? (double)left / rate : 0;
    if (p->o->tty) {
        int width = 30, fill = p->total ? (int)(width * (p->done + p->failed) / p->total) : width;
        fprintf(p->o->log, "\r[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "  %.2f/s  ETA %d:%02d%s\033[K",
                fill, "##############################", width - fill, "", p->done, p->total, rate, (int)eta / 60,
                (int)eta % 60, p->failed ? "  (failures)" : "");
    } else {
        char *id = sweepexp_id(p->d, index), *label = sweepexp_label(p->d, index);
        fprintf(p->o->log, "[%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "] %s %s in %.2f s  %s  (%.2f/s, ETA %d:%02d)\n",
                p->done, p->total, id, ok ? "done" : "FAILED", secs, label, rate, (int)eta / 60, (int)eta % 60);
        g_free(id);
        g_free(label);
    }
    fflush(p->o->log);
}

bool sweepexec_record(SweepPlan *p, guint64 index, const char *results_json, double secs, char **err)
{
    guint n = p->d->axes->len;
    ReportSweepAxis *axes = g_new(ReportSweepAxis, n ? n : 1);
    for (guint a = 0; a < n; a++) {
        axes[a].path = ((const SweepAxis *)g_ptr_array_index(p->d->axes, a))->path;
        axes[a].value = sweepexp_value(p->d, index, a);
    }
    char *id = sweepexp_id(p->d, index);
    char *line = reportsweep_line(id, index, axes, n, results_json, err);
    g_free(id);
    g_free(axes);
    bool ok = line && sweepout_append(p->fd, p->jsonl, line, err);
    g_free(line);
    if (!ok)
        return false;
    p->done++;
    p->ran++;
    progress(p, index, secs, true);
    return true;
}

void sweepexec_fail(SweepPlan *p, guint64 index, const char *msg)
{
    p->failed++;
    char *m = scenario_error(p->d, index, msg);
    fprintf(p->o->log, "%s%s\n", p->o->tty ? "\n" : "", m);
    g_free(m);
    progress(p, index, 0, false);
}

int sweepexec_finish(SweepPlan *p, char **err)
{
    if (p->o->tty)
        fputc('\n', p->o->log);
    int rc = 0;
    if (close(p->fd) != 0) {
        *err = g_strdup_printf("%s: close failed: %s", p->jsonl, g_strerror(errno));
        rc = 1;
    }
    p->fd = -1;
    gsize dropped = 0;
    GPtrArray *lines = rc ? NULL : sweepout_read(p->jsonl, SWEEPOUT_KEEP_FILE, &dropped, err);
    if (!lines || !sweepout_write_csv(lines, p->o->out, err))
        rc = 1;
    if (lines)
        g_ptr_array_free(lines, TRUE);
    double el = (double)(g_get_monotonic_time() - p->t0_us) / 1e6;
    fprintf(p->o->log, "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " scenarios done (%" G_GUINT64_FORMAT
            " in this run, %.1f s%s)%s%s/results.csv\n", p->done, p->total, p->ran, el,
            p->failed ? ", some FAILED: run again with --resume" : "", rc ? "" : "; wrote ", rc ? "" : p->o->out);
    if (p->failed && rc == 0) {
        *err = g_strdup_printf("%" G_GUINT64_FORMAT " scenarios failed", p->failed);
        rc = 1;
    }
    plan_free(p);
    return rc;
}

int sweepexec_run(const SweepDef *d, const SweepRunner *r, const SweepOpts *o, char **err)
{
    int rc;
    SweepPlan *p = sweepexec_prepare(d, r, o, &rc, err);
    if (!p)
        return rc;
    SweepPool pool = {.d = d, .r = r, .q = g_async_queue_new()};
    GThreadPool *tp = pool_start(&pool, o->jobs, p->todo, err);
    bool io_ok = tp != NULL;
    for (guint k = 0; tp && k < p->todo->len; k++) {
        SweepDone *dn = g_async_queue_pop(pool.q);
        if (dn->json && io_ok && !sweepexec_record(p, dn->index, dn->json, dn->secs, err)) {
            io_ok = false;
            g_atomic_int_set(&pool.stop, 1);
        } else if (dn->err) {
            sweepexec_fail(p, dn->index, dn->err);
        }
        done_free(dn);
    }
    if (tp)
        g_thread_pool_free(tp, FALSE, TRUE);
    g_async_queue_unref(pool.q);
    if (!io_ok) {
        if (o->tty)
            fputc('\n', o->log);
        plan_free(p);
        return 1;
    }
    return sweepexec_finish(p, err);
}
