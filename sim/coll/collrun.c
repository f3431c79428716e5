/* collrun — one collective alone on a fresh Sim and Net, once or back to back; see collrun.h. */
#include "coll/collrun.h"
#include "coll/collexec.h"
#include "engine/simrng.h"

#include <math.h>

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
