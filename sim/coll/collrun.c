/* collrun — one collective alone on a fresh Sim and Net, once or back to back; see collrun.h. */
#include "coll/collrun.h"
#include "coll/collexec.h"
#include "engine/simrng.h"

#include <math.h>
#include <stdint.h>

static void mark_done(void *ctx, void *data)
{
    (void)data;
    *(bool *)ctx = true;
}

double collrun_time(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                     double gamma_s_per_byte, uint64_t *events, char **err)
{
    return collrun_time_links(t, a, prm, p, bytes, elem_bytes, gamma_s_per_byte, events, NULL, err);
}

/* Rank r's issue time in a skewed run: skew_s x its draw, in ps. */
static simtime_t issue_ps(const CollSkew *k, int r)
{
    if (k->at_s)
        return (simtime_t)llround(k->at_s[r] * 1e12);
    return (simtime_t)llround(k->skew_s * simrng_uniform(k->seed, COLLRUN_SKEW_STREAM, (int64_t)k->trial,
                                                         (uint64_t)r) * 1e12);
}

static void issue_event(void *ctx, void *data)
{
    collexec_rank_go(ctx, (int)GPOINTER_TO_INT(data));
}

/* ---- The hierarchical all-reduce with a ring between nodes, one ring a node ----
 *
 * hier_ring_fast runs the same collective as the full schedule and returns
 * every time the full run would (to the picosecond), or declines (false)
 * and the caller runs the full schedule. It applies where the full run is
 * known to take a shape that one ring a node determines
 * (docs/dev/performance.md, "One ring a node between nodes"):
 *   A  the ring reduce-scatter inside each node: simulated in full, alone
 *      (a truncated schedule); every rank must end it at one time T_A;
 *   B1 A plus the first step between nodes, simulated in full: the G
 *      GPUs of a node reach its port at one picosecond and leave in their
 *      queue order; GPU g's first inter step must end q(g) x delta after
 *      the first one's, q the same permutation at every node;
 *   B  the ring between nodes of the GPU with q = 0 only, from T_A, on a
 *      Net of trains (net_set_train: each message stands for G - 1 copies
 *      delta apart, as the other GPUs' rings run): exact only if no
 *      message ever waited for a link nor held one longer than delta
 *      (net_train_broken), and the other GPUs' routes to their next node
 *      share every link but their own first and last (those used by their
 *      ring alone and timed alike); GPU g then ends B q(g) x delta after it.
 *      Its messages are express (net_set_express: booked whole at the
 *      send, one event each); the trains break wherever that could differ
 *      from hop by hop, and the order of deliveries at one picosecond,
 *      which express changes, moves no time here: a ring lane's step ends
 *      when both its send and its receive are delivered and its reduction
 *      is done, whichever event comes first, and a send's order only
 *      decides whether the trains break;
 *   C  the ring all-gather inside each node, rank r issuing at its end of B:
 *      exact only if no B message can still hold a link when a C message
 *      reaches it (bounded by the ranks' ends of B and the latencies) and
 *      no two ranks' C messages share a link.
 * Preconditions besides: a generated hierarchical all-reduce, ring between
 * nodes, N >= 2 nodes of 2 <= G <= 32 GPUs, the vector a multiple of G elements,
 * message mode, no token bucket, no control message (collexec_sends_controls),
 * no segments, and between nodes no overhead and every message of B eager
 * (inside nodes A and C may be rendezvous, with overhead: they are
 * simulated in full), and ARSIM_HIER_FULL unset. The CPU is free at the
 * end of A and of B (a step ends after its reduction), so A, B and C may
 * each start theirs idle. */

typedef struct {
    simtime_t *end;     /* per rank: when it ended its last step */
    uint64_t events;
} SubRun;

/* Schedule s on a fresh Sim and Net: rank r on host (map ? map[r] : r),
 * issuing at at[r] (NULL: all at 0), trains of `followers` copies gap
 * apart. False if the run failed, did not finish or a train broke. */
static bool sub_run(Topo *t, const CollSchedule *s, const int *map, const simtime_t *at, uint32_t followers,
                    simtime_t gap, uint32_t elem_bytes, double gamma, SubRun *out)
{
    bool fired = false, ok = false;
    Sim *sim = sim_new(SIM_DEFAULT_SEED);
    Net *net = net_new(sim, t);
    net_set_stats(net, false);
    collexec_hint_net(net);
    net_set_train(net, followers, gap);
    net_set_express(net, followers > 0);   /* B: a message one event, exact while no train breaks */
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .rank2host = map, .elem_bytes = elem_bytes,
                       .gamma = gamma, .done = mark_done, .ctx = &fired, .deferred = at != NULL};
    CollExec *x = collexec_start(&run);
    for (int r = 0; x && at && r < s->p; r++)
        sim_at(sim, at[r], issue_event, x, GINT_TO_POINTER(r));
    if (x) {
        sim_run(sim);
        ok = !sim->failed && fired && !net_train_broken(net);
    }
    if (ok) {
        out->end = g_new(simtime_t, s->p);
        for (int r = 0; r < s->p; r++)
            out->end[r] = collexec_rank_end_time(x, r);
        out->events += sim->events;
    }
    collexec_free(x);
    net_free(net);
    sim_free(sim);
    return ok;
}

/* The first nsteps steps of every rank of s, as explicit tables. */
static CollSchedule *truncated(const CollSchedule *s, uint32_t nsteps)
{
    CollSchedule *u = coll_schedule_new(s->p, s->count);
    for (int r = 0; r < s->p; r++)
        for (uint32_t k = 0; k < nsteps; k++) {
            CollStep st;
            coll_step(s, r, k, &st);
            g_array_append_val(u->steps[r], st);
        }
    return u;
}

static bool hier_ring_applies(const Topo *t, const CollSchedule *s)
{
    const CollParams *prm = &s->prm;
    int g = prm->gpus_per_node;
    if (g_getenv("ARSIM_HIER_FULL") || s->steps || s->algo != COLL_HIERARCHICAL || prm->op != COLL_OP_ALLREDUCE ||
        prm->inter != COLL_RING || prm->group > 1 || g < 2 || t->gpus_per_node != g || s->p % g || s->p / g < 2 ||
        s->count % (uint64_t)g || t->packet_bytes)
        return false;
    if (collexec_sends_controls(t) || t->protocol[TOPO_CLASS_INTER].overhead_s != 0 ||
        t->protocol[TOPO_CLASS_INTER].segment_bytes != 0)
        return false;
    for (guint l = 0; l < t->links->len; l++)
        if (g_array_index(t->links, TopoLink, l).burst_B > 0)
            return false;
    return true;
}

static simtime_t link_lat(const Topo *t, uint32_t l)
{
    return g_array_index(t->links, TopoLink, l).latency_ps;
}

/* B's routes: GPU g's of node n to node n + 1 share every link with GPU
 * g0's but their first and last, which are used by no other route of B
 * and time alike. */
static bool routes_alike(Topo *t, int nodes, int g, int g0)
{
    uint32_t *uses = g_new0(uint32_t, t->links->len);
    bool ok = true;
    for (int n = 0; n < nodes; n++)
        for (int j = 0; j < g; j++) {
            const TopoRoute *r = topo_route(t, n * g + j, (n + 1) % nodes * g + j);
            for (uint32_t h = 0; h < r->nhops; h++)
                uses[r->link[h]]++;
        }
    for (int n = 0; n < nodes && ok; n++) {
        const TopoRoute *r0 = topo_route(t, n * g + g0, (n + 1) % nodes * g + g0);
        for (int j = 0; j < g && ok; j++) {
            const TopoRoute *r = topo_route(t, n * g + j, (n + 1) % nodes * g + j);
            ok = r->nhops == r0->nhops && r->nhops >= 2;
            for (uint32_t h = 0; h < r->nhops && ok; h++) {
                const TopoLink *a = &g_array_index(t->links, TopoLink, r->link[h]);
                const TopoLink *b = &g_array_index(t->links, TopoLink, r0->link[h]);
                bool own = h == 0 || h == r->nhops - 1;
                ok = own ? (j == g0 || r->link[h] != r0->link[h]) && uses[r->link[h]] == 1 &&
                               a->bw_Bps == b->bw_Bps && a->latency_ps == b->latency_ps
                         : r->link[h] == r0->link[h];
            }
        }
    }
    g_free(uses);
    return ok;
}

/* No B message holds a link of C when a C message reaches it, and no two
 * ranks' C messages share a link. eb: every rank's end of B. */
static bool c_after_b(Topo *t, const CollSchedule *c, int nodes, int g, const simtime_t *eb)
{
    guint nl = t->links->len;
    simtime_t *bmax = g_new0(simtime_t, nl), *cmin = g_new(simtime_t, nl);
    int *owner = g_new(int, nl);
    for (guint l = 0; l < nl; l++) {
        cmin[l] = INT64_MAX;
        owner[l] = -1;
    }
    bool ok = true;
    for (int src = 0; src < nodes * g; src++) {   /* a B message leaves each link by its delivery less the latencies */
        int dst = (src / g + 1) % nodes * g + src % g;
        const TopoRoute *r = topo_route(t, src, dst);
        simtime_t at = eb[src] < eb[dst] ? eb[src] : eb[dst];
        for (uint32_t h = r->nhops; h-- > 0;) {
            at -= link_lat(t, r->link[h]);
            if (at > bmax[r->link[h]])
                bmax[r->link[h]] = at;
        }
    }
    for (int src = 0; src < c->p && ok; src++)   /* a C message reaches each link no earlier than its sender's end of B */
        for (uint32_t k = 0; k < coll_nsteps(c, src) && ok; k++) {
            CollStep st;
            coll_step(c, src, k, &st);
            if (st.send_peer < 0)
                continue;
            const TopoRoute *r = topo_route(t, src, st.send_peer);
            simtime_t at = eb[src];
            for (uint32_t h = 0; h < r->nhops && ok; h++) {
                uint32_t l = r->link[h];
                ok = owner[l] < 0 || owner[l] == src;
                owner[l] = src;
                if (at < cmin[l])
                    cmin[l] = at;
                at += link_lat(t, l);
            }
        }
    for (guint l = 0; l < nl && ok; l++)
        ok = cmin[l] == INT64_MAX || cmin[l] >= bmax[l];
    g_free(bmax);
    g_free(cmin);
    g_free(owner);
    return ok;
}

/* See the block comment above. True with *end_ps (the last rank's end)
 * and *events; false: run s in full. */
static bool hier_ring_fast(Topo *t, const CollSchedule *s, uint32_t elem_bytes, double gamma, simtime_t *end_ps,
                           uint64_t *events)
{
    if (!hier_ring_applies(t, s))
        return false;
    int p = s->p, g = s->prm.gpus_per_node, nodes = p / g;
    bool ok = false;
    SubRun a = {0}, ab = {0}, b = {0}, c = {0};
    CollSchedule *sa = truncated(s, (uint32_t)g - 1), *sab = truncated(s, (uint32_t)g), *sb = NULL, *sc = NULL;
    int *q = g_new(int, g), *map = g_new(int, nodes);
    simtime_t *at = g_new(simtime_t, p), *eb = g_new(simtime_t, p);
    if (!sub_run(t, sa, NULL, NULL, 0, 0, elem_bytes, gamma, &a) ||
        !sub_run(t, sab, NULL, NULL, 0, 0, elem_bytes, gamma, &ab))
        goto out;
    for (int r = 1; r < p; r++)   /* A ends at one time everywhere */
        if (a.end[r] != a.end[0])
            goto out;
    /* B1: node 0's queue order and spacing, the same at every node */
    int g0 = 0;
    for (int j = 1; j < g; j++)
        if (ab.end[j] < ab.end[g0])
            g0 = j;
    simtime_t delta = 0;
    for (int j = 0; j < g; j++)
        if (ab.end[j] > ab.end[g0] && (delta == 0 || ab.end[j] - ab.end[g0] < delta))
            delta = ab.end[j] - ab.end[g0];
    if (delta == 0)
        goto out;
    uint32_t seen = 0;
    for (int j = 0; j < g; j++) {
        simtime_t d = ab.end[j] - ab.end[g0];
        q[j] = (int)(d / delta);
        if (d % delta || q[j] >= g || q[j] >= 32 || (seen >> q[j] & 1))
            goto out;
        seen |= 1u << q[j];
    }
    for (int n = 1; n < nodes; n++)
        for (int j = 0; j < g; j++)
            if (ab.end[n * g + j] - ab.end[n * g + g0] != q[j] * delta)
                goto out;
    if (!routes_alike(t, nodes, g, g0))
        goto out;
    /* B: GPU g0's ring, trains for the others */
    CollParams rp;
    coll_params_init(&rp);
    sb = coll_schedule_new(nodes, s->count / (uint64_t)g);
    char *err = NULL;
    if (!coll_build(sb, COLL_RING, &rp, &err)) {
        g_free(err);
        goto out;
    }
    if (protocol_rendezvous(&t->protocol[TOPO_CLASS_INTER], coll_max_send(sb) * elem_bytes))
        goto out;   /* B's messages eager: each leaves at its step's start */
    for (int n = 0; n < nodes; n++) {
        map[n] = n * g + g0;
        at[n] = a.end[0];
    }
    if (!sub_run(t, sb, map, at, (uint32_t)g - 1, delta, elem_bytes, gamma, &b))
        goto out;
    for (int r = 0; r < p; r++)
        eb[r] = b.end[r / g] + q[r % g] * delta;
    /* C: the all-gather inside each node, each rank from its end of B */
    CollParams cp = s->prm;
    cp.op = COLL_OP_ALLGATHER;
    sc = coll_schedule_new(p, s->count);
    if (!coll_build(sc, COLL_HIERARCHICAL, &cp, &err)) {
        g_free(err);
        goto out;
    }
    if (!c_after_b(t, sc, nodes, g, eb) || !sub_run(t, sc, NULL, eb, 0, 0, elem_bytes, gamma, &c))
        goto out;
    *end_ps = 0;
    for (int r = 0; r < p; r++)
        *end_ps = c.end[r] > *end_ps ? c.end[r] : *end_ps;
    *events = a.events + ab.events + b.events + c.events;
    ok = true;
out:
    g_free(a.end);
    g_free(ab.end);
    g_free(b.end);
    g_free(c.end);
    g_free(q);
    g_free(map);
    g_free(at);
    g_free(eb);
    coll_schedule_free(sa);
    coll_schedule_free(sab);
    coll_schedule_free(sb);
    coll_schedule_free(sc);
    return ok;
}

/* Checks timed_run's arguments; false with *err. */
static bool check_args(const Topo *t, int p, uint32_t elem_bytes, double gamma_s_per_byte, const CollSkew *skew,
                       char **err)
{
    if (p < 1 || p > t->nhosts) {
        *err = g_strdup_printf("%d ranks on a topology of %d hosts; expected 1..%d ranks", p, t->nhosts, t->nhosts);
        return false;
    }
    if (elem_bytes == 0 || !(gamma_s_per_byte >= 0) || isinf(gamma_s_per_byte)) {
        *err = g_strdup_printf("element size %u, gamma %g s/B; expected an element size >= 1 and a finite gamma >= 0",
                               elem_bytes, gamma_s_per_byte);
        return false;
    }
    if (skew && !(skew->skew_s >= 0 && skew->skew_s <= COLLRUN_SKEW_MAX_S)) {
        *err = g_strdup_printf("skew %g s; expected a time from 0 to %g s", skew->skew_s, COLLRUN_SKEW_MAX_S);
        return false;
    }
    for (int r = 0; skew && skew->at_s && r < p; r++)
        if (!(skew->at_s[r] >= 0 && skew->at_s[r] <= COLLRUN_SKEW_MAX_S)) {
            *err = g_strdup_printf("rank %d issues at %g s; expected a time from 0 to %g s", r, skew->at_s[r],
                                   COLLRUN_SKEW_MAX_S);
            return false;
        }
    return true;
}

/* One run of schedule s on sim and net: every rank at once (skew NULL,
 * from collexec_start) or rank r at base + its issue offset under skew
 * (trial `trial`). Returns its time as timed_run defines it, or a
 * COLLRUN_ERR_ value and *err; *last_end: when its last rank finished. */
static double run_once(Sim *sim, Net *net, Topo *t, CollAlgo a, const CollSchedule *s, uint32_t elem_bytes,
                       double gamma_s_per_byte, const CollSkew *skew, uint64_t trial, simtime_t base,
                       simtime_t *last_end, char **err)
{
    int p = s->p;
    bool fired = false;
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .elem_bytes = elem_bytes,
                       .gamma = gamma_s_per_byte, .done = mark_done, .ctx = &fired, .deferred = skew != NULL};
    CollExec *x = collexec_start(&run);
    simtime_t first = 0;
    simtime_t *at = skew ? g_new(simtime_t, p) : NULL;
    CollSkew k = skew ? *skew : (CollSkew){0};
    k.trial = trial;
    for (int r = 0; x && skew && r < p; r++) {
        at[r] = sim_add(sim, base, issue_ps(&k, r));
        first = r == 0 || at[r] < first ? at[r] : first;
        sim_at(sim, at[r], issue_event, x, GINT_TO_POINTER(r));
    }
    sim_run(sim);
    double secs = COLLRUN_ERR_RUN;
    if (sim->failed) {
        *err = g_strdup(sim->error);
        secs = sim->code == SIM_ERR_CLOCK ? COLLRUN_ERR_CLOCK : COLLRUN_ERR_RUN;
    } else if (!fired) {
        *err = g_strdup_printf("%s on %d ranks did not finish (deadlocked schedule)", coll_algo_name(a), p);
        secs = COLLRUN_ERR_DEADLOCK;
    } else if (skew && skew->own_span) {
        simtime_t most = 0;
        for (int r = 0; r < p; r++)
            if (collexec_rank_end_time(x, r) - at[r] > most)
                most = collexec_rank_end_time(x, r) - at[r];
        secs = sim_ps_to_seconds(most);
    } else
        secs = sim_ps_to_seconds(collexec_end_time(x) - (skew ? first : collexec_start_time(x)));
    if (secs >= 0)
        *last_end = collexec_end_time(x);
    g_free(at);
    collexec_free(x);
    return secs;
}

/* collrun_time_links, collrun_time_skewed and collrun_times_back_to_back:
 * skew NULL (every rank at once) or the ranks' issue offsets; reps NULL
 * (one run, its time returned, links filled) or repetitions back to back
 * (their times in v[0..reps->reps), 0 returned). */
static double timed_run(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                        double gamma_s_per_byte, const CollSkew *skew, const CollReps *reps, double *v,
                        uint64_t *events, NetLinkStats *links, char **err)
{
    if (!check_args(t, p, elem_bytes, gamma_s_per_byte, skew, err))
        return COLLRUN_ERR_INPUT;
    simtime_t gap = 0;
    if (reps && (reps->warmup < 0 || reps->reps < 1 || !(reps->gap_s >= 0) ||
                 !sim_seconds_to_ps(reps->gap_s, &gap) || reps->gap_s > COLLRUN_SKEW_MAX_S)) {
        *err = g_strdup_printf("%d warm-up and %d measured repetitions %g s apart; expected >= 0, >= 1 and a gap "
                               "from 0 to %g s", reps->warmup, reps->reps, reps->gap_s, COLLRUN_SKEW_MAX_S);
        return COLLRUN_ERR_INPUT;
    }
    uint64_t count = bytes / elem_bytes + (bytes % elem_bytes != 0);
    CollSchedule *s = coll_schedule_new(p, count);
    if (!coll_build(s, a, prm, err)) {
        coll_schedule_free(s);
        return COLLRUN_ERR_PARAMS;
    }
    simtime_t fast_end;
    uint64_t fast_events = 0;
    if (!skew && !reps && !links && hier_ring_fast(t, s, elem_bytes, gamma_s_per_byte, &fast_end, &fast_events)) {
        if (events)
            *events = fast_events;
        coll_schedule_free(s);
        return sim_ps_to_seconds(fast_end);
    }
    Sim *sim = sim_new(SIM_DEFAULT_SEED);   /* an idle-network run draws nothing; a skewed one from skew->seed */
    Net *net = net_new(sim, t);
    if (!links && !collexec_sends_controls(t))
        net_set_stats(net, false);   /* nothing reads them: a link is one line a hop, the timing the same */
    collexec_hint_net(net);
    const CollSkew together = {.skew_s = 0};   /* repetitions: every rank issues at the repetition's start */
    const CollSkew *k = reps && !skew ? &together : skew;
    int total = reps ? reps->warmup + reps->reps : 1;
    simtime_t base = 0, end = 0;
    double secs = 0;
    for (int j = 0; j < total && secs >= 0; j++) {
        /* one run: the skew's own trial; repetition j: trial j */
        secs = run_once(sim, net, t, a, s, elem_bytes, gamma_s_per_byte, k, reps ? (uint64_t)j : skew ? skew->trial : 0,
                        base, &end, err);
        if (reps && secs >= 0 && j >= reps->warmup)
            v[j - reps->warmup] = secs;
        base = sim_add(sim, end, gap);
    }
    if (reps && secs >= 0)
        secs = 0;
    if (events)
        *events = sim->events;
    for (guint l = 0; links && l < t->links->len; l++)
        links[l] = *net_link_stats(net, l);
    net_free(net);
    sim_free(sim);
    coll_schedule_free(s);
    return secs;
}

double collrun_time_links(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                           double gamma_s_per_byte, uint64_t *events, NetLinkStats *links, char **err)
{
    return timed_run(t, a, prm, p, bytes, elem_bytes, gamma_s_per_byte, NULL, NULL, NULL, events, links, err);
}

double collrun_time_skewed(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                            double gamma_s_per_byte, const CollSkew *skew, uint64_t *events, char **err)
{
    return timed_run(t, a, prm, p, bytes, elem_bytes, gamma_s_per_byte, skew, NULL, NULL, events, NULL, err);
}

double collrun_times_back_to_back(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes,
                                  uint32_t elem_bytes, double gamma_s_per_byte, const CollSkew *skew,
                                  const CollReps *reps, double *v, uint64_t *events, char **err)
{
    return timed_run(t, a, prm, p, bytes, elem_bytes, gamma_s_per_byte, skew, reps, v, events, NULL, err);
}
