/* mbmodes — pingpong, exchange, reduce, allreduce, iteration and all (see mbmodes.h). */
#include "mbmodes.h"

#include "mbcoll.h"
#include "mbwait.h"
#include "io/units.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Default sizes (bytes): pingpong spans the α-dominated and β-dominated
 * regimes on both sides of a 1 ms token bucket, and both sides of the
 * eager limits MPI libraries ship (4 KiB shared memory, 64 KiB Open MPI
 * TCP, 128 KiB MPICH ch3), closely enough that `arsim calibrate` can
 * place the rendezvous handshake's step; reduce and allreduce span 4 KiB
 * to 64 MiB as the validation plan asks. */
static const guint64 pingpong_sizes[] = {8, 64, 512, 3072, 4096, 6144, 16384, 32768, 49152, 61440, 65536,
                                         98304, 122880, 131072, 196608, 524288, 2097152, 8388608, 33554432};
/* exchange: below and above Open MPI's TCP eager limit (64 KiB), up to
 * messages that take milliseconds at 1 Gbit/s, as butterfly steps send. */
static const guint64 exchange_sizes[] = {16384, 65536, 262144, 1048576, 4194304};
static const guint64 vector_sizes[] = {4096, 16384, 65536, 262144, 1048576, 4194304,
                                       16777216, 67108864};
enum { TAG_PINGPONG = 7201, TAG_EXCHANGE = 7202 };
/* exchange: how long after its barrier exit the second rank of the pair
 * starts (s); far above a barrier's own skew, so which rank is late is
 * known */
#define EXCHANGE_DELAY_S 2e-3

void mbmodes_opts_init(MbmodesOpts *o)
{
    memset(o, 0, sizeof *o);
    o->rule = (MbcaseRule){.warmup = 1, .min_reps = 5, .max_reps = 50, .tol = 0.02,
                           .case_time_s = 30, .timeout_s = 600};
    o->inter = COLL_RING;
    mbiter_opts_init(&o->iter);
}

void mbmodes_opts_clear(MbmodesOpts *o)
{
    if (o->sizes)
        g_array_free(o->sizes, TRUE);
    o->sizes = NULL;
    if (o->delays)
        g_array_free(o->delays, TRUE);
    o->delays = NULL;
    mbiter_opts_clear(&o->iter);
}

void mbmodes_ctx_init(MbmodesCtx *c, const MbmodesOpts *o, MPI_Comm comm, MbcaseWatchdog *wd)
{
    memset(c, 0, sizeof *c);
    c->opt = o;
    c->comm = comm;
    c->wd = wd;
    c->all_verified = true;
    c->cases = g_array_new(FALSE, TRUE, sizeof(MbcaseResult));
    g_array_set_clear_func(c->cases, (GDestroyNotify)mbcase_result_clear);
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->p);
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    char *all = g_malloc0((gsize)c->p * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
    c->node = g_new(int, c->p);
    c->host_names = g_ptr_array_new_with_free_func(g_free);
    GArray *count = g_array_new(FALSE, TRUE, sizeof(int));
    c->consecutive = true;
    for (int r = 0; r < c->p; r++) {
        const char *name = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        int h = 0;
        while (h < (int)c->host_names->len && strcmp(g_ptr_array_index(c->host_names, h), name) != 0)
            h++;
        if (h == (int)c->host_names->len) {
            g_ptr_array_add(c->host_names, g_strndup(name, MPI_MAX_PROCESSOR_NAME));
            int zero = 0;
            g_array_append_val(count, zero);
        } else if (c->node[r - 1] != h) {
            c->consecutive = false;   /* host h seen before, but not just before */
        }
        c->node[r] = h;
        g_array_index(count, int, h)++;
    }
    c->ranks_per_host = g_array_index(count, int, 0);
    for (guint h = 1; h < count->len; h++)
        if (g_array_index(count, int, h) != c->ranks_per_host)
            c->ranks_per_host = 0;
    g_array_free(count, TRUE);
    g_free(all);
}

void mbmodes_ctx_clear(MbmodesCtx *c)
{
    g_free(c->node);
    g_ptr_array_free(c->host_names, TRUE);
    g_array_free(c->cases, TRUE);
}

static const guint64 *sizes_for(const MbmodesOpts *o, const guint64 *def, size_t ndef, size_t *n)
{
    if (o->sizes) {
        *n = o->sizes->len;
        return (const guint64 *)(const void *)o->sizes->data;
    }
    *n = ndef;
    return def;
}

/* Appends a finished case (the list takes what it owns) and prints it on
 * rank 0. */
static void record(MbmodesCtx *c, const MbcaseResult *r)
{
    g_array_append_val(c->cases, *r);
    if (c->rank != 0 || c->opt->quiet)
        return;
    char sz[32], t[32], who[32];
    units_fmt_bytes(sz, sizeof sz, r->bytes);
    units_fmt_time(t, sizeof t, r->time_s);
    if (r->config) {
        char comp[32], exp[32];
        units_fmt_time(comp, sizeof comp, r->compute_s);
        units_fmt_time(exp, sizeof exp, r->exposed_s);
        printf("%-9s %-18s batch %d  %10s  compute %s  waited %s  reps %2d%s%s\n", r->mode, r->policy, r->batch, t,
               comp, exp, r->reps, r->stable ? "" : " (not stable)", r->verified ? "  verified" : "  WRONG RESULT");
        fflush(stdout);
        return;
    }
    if (r->peer_a >= 0 && r->pairs > 1)
        snprintf(who, sizeof who, "%s %d pairs", r->klass, r->pairs);
    else if (r->peer_a >= 0)
        snprintf(who, sizeof who, "%s %d<->%d", r->klass, r->peer_a, r->peer_b);
    else if (r->algo[0])
        snprintf(who, sizeof who, "%s P=%d", r->algo, r->ranks);
    else
        snprintf(who, sizeof who, "P=%d", r->ranks);
    printf("%-9s %-18s %10s  %10s  reps %2d%s%s\n", r->mode, who, sz, t, r->reps,
           r->stable ? "" : " (not stable)",
           r->verified < 0 ? "" : r->verified ? "  verified" : "  WRONG RESULT");
    fflush(stdout);
}

/* ---- pingpong ---------------------------------------------------------- */

typedef struct {
    MPI_Comm comm;
    int rank, a, b;   /* this rank; the pinging and the answering rank */
    char *buf;        /* send buffer (a and b only) */
    char *rbuf;       /* receive buffer, apart from buf: a posts it while buf is being sent */
    int bytes;        /* message size */
    int trips;        /* round trips per repetition, >= 1 */
    double poll_s;    /* how every wait waits (mbwait.h), as in a schedule's steps */
} PingCtx;

/* One message each way per trip, each completed as a schedule step is
 * (mbwait_all with the run's --poll), so α is the per-message cost the
 * all-reduces see. The reply's receive is posted before the ping leaves. */
static double ping_rep(void *vctx)
{
    PingCtx *x = vctx;
    MPI_Request req[2];
    mbwait_barrier(x->comm, x->poll_s);
    if (x->rank == x->a) {
        double t0 = MPI_Wtime();
        for (int k = 0; k < x->trips; k++) {
            MPI_Irecv(x->rbuf, x->bytes, MPI_BYTE, x->b, TAG_PINGPONG, x->comm, &req[0]);
            MPI_Isend(x->buf, x->bytes, MPI_BYTE, x->b, TAG_PINGPONG, x->comm, &req[1]);
            mbwait_all(2, req, x->poll_s);
        }
        return (MPI_Wtime() - t0) / (2.0 * x->trips);
    }
    if (x->rank == x->b)
        for (int k = 0; k < x->trips; k++) {
            MPI_Irecv(x->rbuf, x->bytes, MPI_BYTE, x->a, TAG_PINGPONG, x->comm, &req[0]);
            mbwait_all(1, req, x->poll_s);
            MPI_Isend(x->buf, x->bytes, MPI_BYTE, x->a, TAG_PINGPONG, x->comm, &req[1]);
            mbwait_all(1, &req[1], x->poll_s);
        }
    return 0;
}

/* The first pair of ranks on one host (intra) or on two hosts (inter);
 * false if there is none. */
static bool find_pair(const MbmodesCtx *c, bool intra, int *a, int *b)
{
    for (int i = 0; i < c->p; i++)
        for (int j = i + 1; j < c->p; j++)
            if ((c->node[i] == c->node[j]) == intra) {
                *a = i;
                *b = j;
                return true;
            }
    return false;
}

static void run_pingpong(MbmodesCtx *c)
{
    size_t n;
    const guint64 *sizes = sizes_for(c->opt, pingpong_sizes, G_N_ELEMENTS(pingpong_sizes), &n);
    guint64 most = 0;
    for (size_t i = 0; i < n; i++)
        most = MAX(most, sizes[i]);
    static const char *const klass[2] = {"inter", "intra"};
    for (int intra = 0; intra < 2; intra++) {
        PingCtx x = {.comm = c->comm, .rank = c->rank, .poll_s = c->opt->rule.poll_s};
        if (!find_pair(c, intra, &x.a, &x.b)) {
            if (c->rank == 0 && !c->opt->quiet)
                printf("pingpong  %-18s no pair of ranks %s; skipped\n", klass[intra],
                       intra ? "shares a host" : "is on two hosts");
            continue;
        }
        x.buf = (c->rank == x.a || c->rank == x.b) ? g_malloc0(2 * MAX(most, 1)) : NULL;
        x.rbuf = x.buf ? x.buf + MAX(most, 1) : NULL;
        for (size_t i = 0; i < n; i++) {
            x.bytes = (int)sizes[i];
            /* Small messages: several round trips per repetition so the
             * barrier's skew and the clock's resolution do not matter. */
            x.trips = (int)CLAMP(262144 / MAX(sizes[i], 1), 1, 32);
            MbcaseResult r;
            mbcase_result_init(&r, "pingpong");
            g_strlcpy(r.klass, klass[intra], sizeof r.klass);
            r.bytes = sizes[i];
            r.ranks = 2;
            r.peer_a = x.a;
            r.peer_b = x.b;
            char what[128];
            snprintf(what, sizeof what, "pingpong %s %" G_GUINT64_FORMAT " B", klass[intra], sizes[i]);
            mbcase_measure(&c->opt->rule, c->wd, what, c->comm, ping_rep, &x, NULL, &r);
            record(c, &r);
        }
        g_free(x.buf);
    }
}

/* ---- exchange ---------------------------------------------------------- */

typedef struct {
    MPI_Comm comm;
    int rank, a, b;   /* this rank; its pair: a starts at once, b delay_s later (-1, -1: none); the lower
                       * rank is b with --late first */
    char *buf;        /* send buffer (a and b only) */
    char *rbuf;       /* receive buffer, apart from buf */
    int bytes;        /* message size each way */
    double delay_s;   /* b's delay after its barrier exit (s) */
    double poll_s;    /* how every wait waits (mbwait.h) */
} ExchCtx;

/* One pairwise exchange as a butterfly step posts it (MPI_Irecv from the
 * partner, then MPI_Isend to it, then wait for both), with b starting
 * delay_s after its barrier exit: the time, from the barrier exit, until
 * both of this rank's messages completed (b's includes its delay). With
 * --pairs all every pair does so at once. */
static double exch_rep(void *vctx)
{
    ExchCtx *x = vctx;
    mbwait_barrier(x->comm, x->poll_s);
    double t0 = MPI_Wtime();
    if (x->rank != x->a && x->rank != x->b)
        return 0;
    if (x->rank == x->b)
        mbwait_until(t0 + x->delay_s, x->poll_s);
    int peer = x->rank == x->a ? x->b : x->a;
    MPI_Request req[2];
    MPI_Irecv(x->rbuf, x->bytes, MPI_BYTE, peer, TAG_EXCHANGE, x->comm, &req[0]);
    MPI_Isend(x->buf, x->bytes, MPI_BYTE, peer, TAG_EXCHANGE, x->comm, &req[1]);
    mbwait_all(2, req, x->poll_s);
    return MPI_Wtime() - t0;
}

/* The first pair of ranks on two hosts, as pingpong inter; skipped when
 * every rank shares one host. */
static void run_exchange(MbmodesCtx *c)
{
    size_t n;
    const guint64 *sizes = sizes_for(c->opt, exchange_sizes, G_N_ELEMENTS(exchange_sizes), &n);
    static const double dflt_delay[] = {EXCHANGE_DELAY_S};
    const double *delays = c->opt->delays ? (const double *)(void *)c->opt->delays->data : dflt_delay;
    guint ndelays = c->opt->delays ? c->opt->delays->len : 1;
    ExchCtx x = {.comm = c->comm, .rank = c->rank, .poll_s = c->opt->rule.poll_s};
    int first_a, first_b, pairs = 1;
    if (!find_pair(c, false, &first_a, &first_b)) {
        if (c->rank == 0 && !c->opt->quiet)
            printf("exchange  %-18s no pair of ranks is on two hosts; skipped\n", "inter");
        return;
    }
    x.a = first_a;
    x.b = first_b;
    if (c->opt->all_pairs) {
        /* ranks 2j and 2j+1, every pair on two hosts (else the one pair alone) */
        bool apart = c->p >= 2;
        for (int j = 0; j + 1 < c->p; j += 2)
            apart = apart && c->node[j] != c->node[j + 1];
        if (apart) {
            pairs = c->p / 2;
            first_a = 0;
            first_b = 1;
            bool in = c->rank + 1 < c->p || c->rank % 2 == 1;
            x.a = in ? c->rank & ~1 : -1;
            x.b = in ? c->rank | 1 : -1;
        } else if (c->rank == 0 && !c->opt->quiet) {
            printf("exchange  %-18s ranks 2j and 2j+1 do not all sit on two hosts; one pair\n", "inter");
        }
    }
    guint64 most = 1;
    for (size_t i = 0; i < n; i++)
        most = MAX(most, sizes[i]);
    x.buf = (c->rank == x.a || c->rank == x.b) ? g_malloc0(2 * most) : NULL;
    x.rbuf = x.buf ? x.buf + most : NULL;
    const MbmodesLate late = c->opt->late;
    const int early[2] = {first_a, first_b}, mine[2] = {x.a, x.b};   /* the higher rank late */
    for (size_t k = 0; k < (size_t)ndelays * n * 2; k++) {
        size_t i = k / 2 % n;
        bool lower = k % 2 == 1;   /* this case: the pair's lower rank late */
        x.delay_s = delays[k / 2 / n];
        if (lower ? late == MBMODES_LATE_SECOND || (late == MBMODES_LATE_BOTH && x.delay_s == 0)
                  : late == MBMODES_LATE_FIRST)
            continue;
        /* the late rank is b; peers are written early first, as always */
        x.a = mine[lower];
        x.b = mine[!lower];
        first_a = early[lower];
        first_b = early[!lower];
        x.bytes = (int)sizes[i];
        MbcaseResult r;
        mbcase_result_init(&r, "exchange");
        g_strlcpy(r.klass, "inter", sizeof r.klass);
        r.bytes = sizes[i];
        r.ranks = 2;
        r.peer_a = first_a;
        r.peer_b = first_b;
        r.delay_s = x.delay_s;
        r.pairs = pairs;
        char what[128];
        snprintf(what, sizeof what, "exchange inter %" G_GUINT64_FORMAT " B, %.0f us late (%s rank), %d pair%s",
                 sizes[i], x.delay_s * 1e6, lower ? "lower" : "higher", pairs, pairs > 1 ? "s" : "");
        mbcase_measure(&c->opt->rule, c->wd, what, c->comm, exch_rep, &x, NULL, &r);
        record(c, &r);
    }
    g_free(x.buf);
}

/* A two-way option value: *out = (val is yes); -1 and *why = expect when
 * val is neither yes nor no. */
static int parse_either(const char *val, const char *yes, const char *no, const char *expect, bool *out,
                        const char **why)
{
    if (strcmp(val, yes) != 0 && strcmp(val, no) != 0) {
        *why = expect;
        return -1;
    }
    *out = strcmp(val, yes) == 0;
    return 1;
}

/* exchange's own options: --delays T[,T...], each 0 to 1 s; --pairs one|all;
 * --late second|first|both. */
static int parse_exchange_opt(MbmodesOpts *o, const char *flag, const char *val, const char **why)
{
    if (strcmp(flag, "--late") == 0) {
        static const char *const names[] = {"second", "first", "both"};
        for (int i = 0; i < 3; i++)
            if (strcmp(val, names[i]) == 0) {
                o->late = (MbmodesLate)i;
                return 1;
            }
        *why = "not a rank of the pair; expected second (the pair's higher rank starts late, the default), first "
               "(its lower rank) or both (each late case both ways)";
        return -1;
    }
    if (strcmp(flag, "--pairs") == 0)
        return parse_either(val, "all", "one", "not a pairing; expected one (the first pair of ranks on two hosts) "
                            "or all (ranks 2j and 2j+1, every pair at once)", &o->all_pairs, why);
    if (strcmp(flag, "--delays") != 0)
        return 0;
    GArray *d = g_array_new(FALSE, FALSE, sizeof(double));
    gchar **parts = g_strsplit(val, ",", -1);
    bool ok = parts[0] != NULL;
    for (gchar **p = parts; ok && *p; p++) {
        double t;
        ok = units_parse_time(*p, &t, why) && t <= 1;
        if (ok)
            g_array_append_val(d, t);
    }
    g_strfreev(parts);
    if (!ok) {
        *why = "not a list of delays; expected comma-separated times from 0 to 1s such as 0,50us,2ms";
        g_array_free(d, TRUE);
        return -1;
    }
    if (o->delays)
        g_array_free(o->delays, TRUE);
    o->delays = d;
    return 1;
}

/* ---- reduce ------------------------------------------------------------ */

typedef struct {
    MPI_Comm comm;
    double *a, *b;    /* a += b, count elements each */
    uint64_t count;
    int inner;        /* additions per repetition, >= 1 */
    double poll_s;    /* how to wait in the barrier (mbwait.h) */
} ReduceCtx;

/* One repetition: every rank adds at once (as in a collective's steps). */
static double reduce_rep(void *vctx)
{
    ReduceCtx *x = vctx;
    mbwait_barrier(x->comm, x->poll_s);
    double t0 = MPI_Wtime();
    for (int k = 0; k < x->inner; k++)
        mbcoll_add(x->a, x->b, x->count);
    return (MPI_Wtime() - t0) / x->inner;
}

static void run_reduce(MbmodesCtx *c)
{
    size_t n;
    const guint64 *sizes = sizes_for(c->opt, vector_sizes, G_N_ELEMENTS(vector_sizes), &n);
    for (size_t i = 0; i < n; i++) {
        ReduceCtx x = {.comm = c->comm, .count = sizes[i] / sizeof(double), .poll_s = c->opt->rule.poll_s};
        x.a = g_new(double, x.count);
        x.b = g_new(double, x.count);
        mbcoll_fill(x.a, x.count, c->rank);
        mbcoll_fill(x.b, x.count, c->rank + 1);
        x.inner = (int)CLAMP(1048576 / sizes[i], 1, 64);
        MbcaseResult r;
        mbcase_result_init(&r, "reduce");
        r.bytes = sizes[i];
        r.ranks = c->p;
        char what[128];
        snprintf(what, sizeof what, "reduce %" G_GUINT64_FORMAT " B", sizes[i]);
        mbcase_measure(&c->opt->rule, c->wd, what, c->comm, reduce_rep, &x, NULL, &r);
        record(c, &r);
        g_free(x.a);
        g_free(x.b);
    }
}

/* ---- allreduce --------------------------------------------------------- */

typedef struct {
    MPI_Comm comm;
    int rank;
    const CollSchedule *sched;  /* NULL: the library's own (MPI_Allreduce or MPI_Iallreduce) */
    bool nonblocking;           /* sched NULL: MPI_Iallreduce, waited for by mbwait_all (poll_s) */
    double *data, *tmp;         /* the vector and the receive scratch */
    const double *init;         /* this rank's input */
    const double *expect;       /* the exact sum */
    uint64_t count;             /* elements */
    double poll_s;              /* how to wait (mbwait.h) */
    struct timespec start;      /* this rank's start stamp in the last repetition (mbcase_stamp) */
    bool wrong;                 /* some repetition ended with a wrong vector */
    uint64_t wrong_at;          /* first wrong element of the first wrong repetition */
} AllreduceCtx;

static double allreduce_rep(void *vctx)
{
    AllreduceCtx *x = vctx;
    memcpy(x->data, x->init, sizeof *x->data * x->count);
    mbwait_barrier(x->comm, x->poll_s);
    mbcase_stamp(&x->start);
    double t0 = MPI_Wtime();
    if (x->sched) {
        mbcoll_exec(x->sched, x->rank, x->data, x->tmp, x->comm, x->poll_s);
    } else if (x->nonblocking) {
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, x->data, (int)x->count, MPI_DOUBLE, MPI_SUM, x->comm, &req);
        mbwait_all(1, &req, x->poll_s);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, x->data, (int)x->count, MPI_DOUBLE, MPI_SUM, x->comm);
    }
    double t = MPI_Wtime() - t0;
    uint64_t at = mbcoll_mismatch(x->data, x->expect, x->count);
    if (at < x->count && !x->wrong) {
        x->wrong = true;
        x->wrong_at = at;
    }
    return t;
}

/* The hierarchical G: --gpus-per-node, else the ranks per host when hosts
 * hold equal consecutive blocks, else 1. */
static int hier_g(const MbmodesCtx *c)
{
    if (c->opt->gpus_per_node > 0)
        return c->opt->gpus_per_node;
    return c->ranks_per_host > 0 && c->consecutive ? c->ranks_per_host : 1;
}

/* One (algorithm, size) case; algo < 0 is the library's own all-reduce. */
static void allreduce_case(MbmodesCtx *c, int algo, guint64 bytes)
{
    AllreduceCtx x = {.comm = c->comm, .rank = c->rank, .count = bytes / sizeof(double), .poll_s = c->opt->rule.poll_s,
                      .nonblocking = algo < 0 && c->opt->mpi_nonblocking};
    MbcaseResult r;
    mbcase_result_init(&r, "allreduce");
    g_strlcpy(r.algo, algo < 0 ? "mpi" : coll_algo_name((CollAlgo)algo), sizeof r.algo);
    if (algo < 0)
        g_strlcpy(r.call, x.nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce", sizeof r.call);
    r.bytes = bytes;
    r.ranks = c->p;
    CollSchedule *s = NULL;
    uint64_t scratch = 0;
    if (algo >= 0) {
        CollParams prm;
        coll_params_init(&prm);
        prm.inter = c->opt->inter;
        if (algo == COLL_HIERARCHICAL) {
            prm.gpus_per_node = r.gpus_per_node = hier_g(c);
            g_strlcpy(r.inter, coll_algo_name(prm.inter), sizeof r.inter);
        }
        s = coll_schedule_new(c->p, x.count);
        char *err = NULL;
        if (!coll_build(s, (CollAlgo)algo, &prm, &err)) {
            if (c->rank == 0)
                fprintf(stderr, "mpibench: allreduce %s on %d ranks: %s; case skipped\n", r.algo, c->p,
                        err ? err : "coll_build failed");
            g_free(err);
            coll_schedule_free(s);
            return;
        }
        scratch = mbcoll_scratch(s, c->rank);
    }
    x.sched = s;
    double *init = g_new(double, x.count), *expect = g_new(double, x.count);
    mbcoll_fill(init, x.count, c->rank);
    mbcoll_expect(expect, x.count, c->p);
    x.init = init;
    x.expect = expect;
    x.data = g_new(double, x.count);
    x.tmp = g_new(double, MAX(scratch, 1));
    char what[128];
    snprintf(what, sizeof what, "allreduce %s %" G_GUINT64_FORMAT " B", r.algo, bytes);
    mbcase_measure(&c->opt->rule, c->wd, what, c->comm, allreduce_rep, &x, &x.start, &r);
    int wrong = x.wrong, any_wrong = 0;
    MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_LOR, c->comm);
    r.verified = !any_wrong;
    if (wrong)
        fprintf(stderr, "mpibench: allreduce %s %" G_GUINT64_FORMAT " B: rank %d: wrong sum at element %"
                G_GUINT64_FORMAT "\n", r.algo, bytes, c->rank, x.wrong_at);
    if (any_wrong)
        c->all_verified = false;
    record(c, &r);
    g_free(init);
    g_free(expect);
    g_free(x.data);
    g_free(x.tmp);
    if (s)
        coll_schedule_free(s);
}

static void run_allreduce(MbmodesCtx *c)
{
    const MbmodesOpts *o = c->opt;
    size_t n;
    const guint64 *sizes = sizes_for(o, vector_sizes, G_N_ELEMENTS(vector_sizes), &n);
    bool every = !o->algo_given;   /* no --algo: mpi and every algorithm that needs no torus topology */
    if ((every || o->algos[COLL_HIERARCHICAL]) && o->gpus_per_node > 0 && c->p % o->gpus_per_node != 0) {
        if (c->rank == 0)
            fprintf(stderr, "mpibench: --gpus-per-node: %d does not divide the %d ranks; expected a divisor of "
                    "the rank count\n", o->gpus_per_node, c->p);
        c->bad_input = true;
        return;
    }
    for (int a = -1; a < COLL_NALGOS; a++) {
        bool on = a < 0 ? (every || o->algo_mpi) : (every ? coll_algo_fit((CollAlgo)a) != COLL_FIT_TORUS : o->algos[a]);
        if (!on)
            continue;
        for (size_t i = 0; i < n; i++)
            allreduce_case(c, a, sizes[i]);
    }
}

#define MBMODES_COMMA_NAME(ID, name, ...) ", " name

static int parse_allreduce_opt(MbmodesOpts *o, const char *flag, const char *val, const char **why)
{
    if (strcmp(flag, "--algo") == 0) {
        o->algo_given = true;
        gchar **names = g_strsplit(val, ",", -1);
        int rc = names[0] ? 1 : -1;
        for (gchar **nm = names; *nm && rc == 1; nm++) {
            CollAlgo a;
            if (strcmp(*nm, "mpi") == 0)
                o->algo_mpi = true;
            else if (coll_algo_parse(*nm, &a))
                o->algos[a] = true;
            else
                rc = -1;
        }
        g_strfreev(names);
        if (rc < 0)
            *why = "unknown algorithm; expected a comma-separated list of mpi" COLL_ALGO_TABLE(MBMODES_COMMA_NAME);
        return rc;
    }
    if (strcmp(flag, "--mpi-call") == 0) {
        if (strcmp(val, "allreduce") != 0 && strcmp(val, "iallreduce") != 0) {
            *why = "unknown call; expected allreduce (MPI_Allreduce) or iallreduce (MPI_Iallreduce, waited for as "
                   "--poll says)";
            return -1;
        }
        o->mpi_nonblocking = strcmp(val, "iallreduce") == 0;
        return 1;
    }
    if (strcmp(flag, "--inter") == 0) {
        if (!coll_algo_parse(val, &o->inter) || !coll_algo_nestable(o->inter)) {
            char *names = coll_algo_list(true, ", ", " or ");
            snprintf(o->why, sizeof o->why, "not an inter-node algorithm; expected %s", names);
            g_free(names);
            *why = o->why;
            return -1;
        }
        return 1;
    }
    if (strcmp(flag, "--gpus-per-node") == 0) {
        char *end;
        long g = strtol(val, &end, 10);
        if (*val < '0' || *val > '9' || *end || g < 1 || g > UNITS_COUNT_MAX) {
            *why = "not a rank count; expected a positive integer that divides the number of ranks";
            return -1;
        }
        o->gpus_per_node = (int)g;
        return 1;
    }
    return 0;
}

/* Sizes of vectors of doubles: whole doubles and an int element count. */
static bool check_vector_sizes(MbmodesOpts *o, char *msg, size_t n)
{
    for (guint i = 0; o->sizes && i < o->sizes->len; i++) {
        guint64 b = g_array_index(o->sizes, guint64, i);
        if (b == 0 || b % sizeof(double) != 0 || b / sizeof(double) > INT_MAX) {
            snprintf(msg, n, "--sizes: %" G_GUINT64_FORMAT " is not a vector size; expected a positive "
                     "multiple of 8 bytes (whole doubles) up to 16 GiB", b);
            return false;
        }
    }
    return true;
}

/* Message sizes (pingpong, exchange): an int count of bytes. */
static bool check_message_sizes(MbmodesOpts *o, char *msg, size_t n)
{
    for (guint i = 0; o->sizes && i < o->sizes->len; i++) {
        guint64 b = g_array_index(o->sizes, guint64, i);
        if (b > INT_MAX) {
            snprintf(msg, n, "--sizes: %" G_GUINT64_FORMAT " is too large for a message; expected at most "
                     "2147483647 bytes", b);
            return false;
        }
    }
    return true;
}

/* ---- all --------------------------------------------------------------- */

static void run_all(MbmodesCtx *c)
{
    for (const MbmodesMode *m = mbmodes_table; m->name; m++)
        if (m->in_all)
            m->run(c);
}

static int parse_all_opt(MbmodesOpts *o, const char *flag, const char *val, const char **why)
{
    for (const MbmodesMode *m = mbmodes_table; m->name; m++)
        if (m->in_all && m->parse_opt) {
            int rc = m->parse_opt(o, flag, val, why);
            if (rc != 0)
                return rc;
        }
    return 0;
}

static bool check_all(MbmodesOpts *o, char *msg, size_t n)
{
    for (const MbmodesMode *m = mbmodes_table; m->name; m++)
        if (m->in_all && m->check && !m->check(o, msg, n))
            return false;
    return true;
}

/* ---- iteration --------------------------------------------------------- */

static int parse_iteration_opt(MbmodesOpts *o, const char *flag, const char *val, const char **why)
{
    return mbiter_parse_opt(&o->iter, flag, val, why);
}

static bool check_iteration(MbmodesOpts *o, char *msg, size_t n)
{
    return mbiter_prepare(&o->iter, msg, n);
}

/* The scenario's world must be the MPI world; when the launcher did not
 * say its size before MPI_Init, this is the first place it is known. */
static void run_iteration(MbmodesCtx *c)
{
    int world = mbiter_world(&c->opt->iter);
    if (c->p != world) {
        if (c->rank == 0)
            fprintf(stderr, "mpibench: --config: %s has %d ranks (cluster.nodes x gpus_per_node) but MPI runs %d; "
                    "expected mpirun -np %d (one rank per GPU)\n", c->opt->iter.config, world, c->p, world);
        fflush(stderr);
        MPI_Abort(c->comm, 2);
    }
    MbcaseResult r;
    mbiter_measure(&c->opt->iter, &c->opt->rule, c->wd, c->comm, &r);
    if (!r.verified)
        c->all_verified = false;
    record(c, &r);
}

/* The mode table; iteration is not in `all` (it needs --config). */
const MbmodesMode mbmodes_table[] = {
    {"pingpong", "one-way time against message size, for ranks on one host and on two hosts",
     NULL, check_message_sizes, run_pingpong, true},
    {"exchange", "pairwise exchange on two hosts, one rank starting 2 ms (or each of --delays) late (rendezvous "
                 "queueing)",
     parse_exchange_opt, check_message_sizes, run_exchange, true},
    {"reduce", "local reduction time of summing doubles (gamma), all ranks at once",
     NULL, check_vector_sizes, run_reduce, true},
    {"allreduce", "MPI_Allreduce and arsim's schedules over MPI, results checked on every rank",
     parse_allreduce_opt, check_vector_sizes, run_allreduce, true},
    {"iteration", "training iterations of a scenario replayed: emulated compute, real gradient all-reduces",
     parse_iteration_opt, check_iteration, run_iteration, false},
    {"all", "pingpong, exchange, reduce and allreduce over their default sizes (or --sizes)",
     parse_all_opt, check_all, run_all, false},
    {NULL, NULL, NULL, NULL, NULL, false},
};

const MbmodesMode *mbmodes_find(const char *name)
{
    for (const MbmodesMode *m = mbmodes_table; m->name; m++)
        if (strcmp(m->name, name) == 0)
            return m;
    return NULL;
}
