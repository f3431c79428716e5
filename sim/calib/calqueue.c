/* calqueue — fitting the handshake's control queue; see calqueue.h. */
#include "calib/calqueue.h"
#include "calib/calfit.h"
#include "coll/collexec.h"
#include "coll/collrun.h"

#include <math.h>
#include <string.h>

TopoLinkClass calqueue_link(const CalClass *k)
{
    return (TopoLinkClass){1 / k->beta, k->alpha_s / 2, k->burst_bytes, k->peak_Bps};
}

Topo *calqueue_star(const CalFile *cal, int hosts, char **err)
{
    TopoSpec s;
    topo_spec_init(&s);
    if (cal->inter_protocol.set)
        s.protocol = cal->inter_protocol.p;
    s.kind = TOPO_STAR;
    s.hosts = hosts;
    s.link = calqueue_link(&cal->inter);
    s.switch_latency_s = 0;
    Topo *t = topo_new(&s, err);
    topo_spec_clear(&s);
    return t;
}

/* The two-host star of cal with its inter protocol's queues and duplex replaced. */
static Topo *star_with(const CalFile *cal, const uint64_t queue[2], ProtocolDuplex duplex, char **err)
{
    CalFile q = *cal;   /* a shallow copy, only read */
    memcpy(q.inter_protocol.p.control_queue, queue, sizeof q.inter_protocol.p.control_queue);
    q.inter_protocol.p.duplex = duplex;
    return calqueue_star(&q, 2, err);
}

/* Exchange case c simulated on two-host star t. */
static double exchange_on(Topo *t, const MeasCase *c, char **err)
{
    /* two ranks, one step each: the whole vector to the other (butterfly on 2), no reduction cost; rank 1
     * late unless the lower rank was */
    const double at[2] = {c->late_lower ? c->delay_s : 0, c->late_lower ? 0 : c->delay_s};
    CollSkew k = {.at_s = at, .own_span = true};
    CollParams prm;
    coll_params_init(&prm);
    return collrun_time_skewed(t, COLL_BUTTERFLY, &prm, 2, c->bytes, 1, 0, &k, NULL, err);
}

bool calqueue_case_trials(Topo *t, CollAlgo a, const CollParams *prm, const MeasCase *c, double gamma, int n,
                          double *v, char **err)
{
    double w = c->start_spread_s * (c->ranks + 1) / (c->ranks - 1);
    if (c->has_gap) {
        CollSkew sk = {.skew_s = w, .seed = CALQUEUE_SKEW_SEED, .own_span = true};
        CollReps reps = {.warmup = CALQUEUE_WARMUP, .reps = n, .gap_s = c->gap_s};
        return collrun_times_back_to_back(t, a, prm, c->ranks, c->bytes, CALQUEUE_ELEM_BYTES, gamma, &sk, &reps, v,
                                          NULL, err) >= 0;
    }
    for (int k = 0; k < n; k++) {
        CollSkew sk = {.skew_s = w, .seed = CALQUEUE_SKEW_SEED, .trial = (uint64_t)k, .own_span = true};
        v[k] = collrun_time_skewed(t, a, prm, c->ranks, c->bytes, CALQUEUE_ELEM_BYTES, gamma, &sk, NULL, err);
        if (v[k] < 0)
            return false;
    }
    return true;
}

double calqueue_exchange_time(const CalFile *cal, const MeasCase *c, char **err)
{
    Topo *t = calqueue_star(cal, 2, err);
    if (!t)
        return -1;
    double secs = exchange_on(t, c, err);
    topo_free(t);
    return secs;
}

/* Sum of squared relative errors of the cases (MeasCase *) under the
 * queues and duplex; INFINITY when one cannot be simulated. */
static double cost(const CalFile *cal, GPtrArray *cases, const uint64_t queue[2], ProtocolDuplex duplex)
{
    char *err = NULL;
    Topo *t = star_with(cal, queue, duplex, &err);
    double sum = t ? 0 : INFINITY;
    for (guint i = 0; t && i < cases->len && isfinite(sum); i++) {
        const MeasCase *c = g_ptr_array_index(cases, i);
        double secs = exchange_on(t, c, &err);
        g_clear_pointer(&err, g_free);
        double e = (secs - c->time_s) / c->time_s;
        sum = secs < 0 ? INFINITY : sum + e * e;
    }
    g_free(err);
    topo_free(t);
    return sum;
}

uint64_t calqueue_candidate(int k)
{
    return k < -1 ? PROTOCOL_INF
           : k < 0 ? 0
                   : (uint64_t)llround(ldexp(1.0, 10 + k / 4) * pow(2.0, (k % 4) / 4.0));
}

enum { BOTH_ENDS = 2 };   /* best_end: one value for queue[PROTOCOL_FROM_LOWER] and [PROTOCOL_FROM_HIGHER] */

/* The best value of queue[e] (e = PROTOCOL_FROM_LOWER or _HIGHER), or of
 * both at once (e = BOTH_ENDS), under `duplex` for the cases, the other
 * held: queue[] and its cost (a candidate replaces the one held only when
 * strictly better). */
static double best_end(const CalFile *cal, GPtrArray *cases, ProtocolDuplex duplex, int e, uint64_t queue[2],
                       double held_cost)
{
    double best_cost = held_cost;
    uint64_t best[2] = {queue[0], queue[1]};
    for (int k = -2; k <= CALQUEUE_LAST; k++) {
        uint64_t q[2] = {e == PROTOCOL_FROM_HIGHER ? queue[PROTOCOL_FROM_LOWER] : calqueue_candidate(k),
                         e == PROTOCOL_FROM_LOWER ? queue[PROTOCOL_FROM_HIGHER] : calqueue_candidate(k)};
        double c = cost(cal, cases, q, duplex);
        if (c < best_cost) {
            best_cost = c;
            memcpy(best, q, sizeof best);
        }
    }
    memcpy(queue, best, sizeof best);
    return best_cost;
}

/* The best queues under cal's protocol and `duplex` for the cases: the
 * best single queue for both ends (the first best wins); where a case's
 * lower rank was late (only such cases show the higher rank's queue: its
 * clear-to-send is the one that can wait behind its data) each end's own
 * from there, the higher's then the lower's (a case depends on one end's
 * queue only, the early rank's, so one pass finds the best pair). */
static double best_queue(const CalFile *cal, GPtrArray *cases, ProtocolDuplex duplex, uint64_t best[2])
{
    best[0] = best[1] = PROTOCOL_INF;
    double c = best_end(cal, cases, duplex, BOTH_ENDS, best, INFINITY);
    bool apart = false;
    for (guint i = 0; i < cases->len; i++)
        apart = apart || ((const MeasCase *)g_ptr_array_index(cases, i))->late_lower;
    if (apart) {
        c = best_end(cal, cases, duplex, PROTOCOL_FROM_HIGHER, best, c);
        c = best_end(cal, cases, duplex, PROTOCOL_FROM_LOWER, best, c);
    }
    return c;
}

/* How an exchange case's two ends start. */
typedef enum {
    START_TOGETHER,          /* delay 0 */
    START_APART,             /* one end late (delay > 0) */
} ExchangeStart;

/* The cases (MeasCase *) whose ends start as `start` says. New array; the
 * caller frees it (not the cases). */
static GPtrArray *cases_by_start(GPtrArray *cases, ExchangeStart start)
{
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; i < cases->len; i++)
        if ((((const MeasCase *)g_ptr_array_index(cases, i))->delay_s > 0) == (start == START_APART))
            g_ptr_array_add(out, g_ptr_array_index(cases, i));
    return out;
}

/* The duplex, judged on the cases that start together alone (only they
 * tell half from full: with a late partner both can serialize, and
 * whether one does may flip from run to run): half when it cuts their
 * squared error, each under its best queue, to CALFIT_KEEP_DUPLEX of
 * full's; then the best queue under it over every case, and its cost. */
static double best_fit(const CalFile *cal, GPtrArray *cases, uint64_t queue[2], ProtocolDuplex *duplex)
{
    GPtrArray *together = cases_by_start(cases, START_TOGETHER);
    *duplex = PROTOCOL_DUPLEX_FULL;
    if (together->len) {
        uint64_t q[2];
        double c_full = best_queue(cal, together, PROTOCOL_DUPLEX_FULL, q);
        double c_half = best_queue(cal, together, PROTOCOL_DUPLEX_HALF, q);
        if (c_half < CALFIT_KEEP_DUPLEX * c_full)
            *duplex = PROTOCOL_DUPLEX_HALF;
    }
    g_ptr_array_free(together, TRUE);
    return best_queue(cal, cases, *duplex, queue);
}

/* Under rtt: the queues and duplex with an empty request-to-send, then
 * with one that carries the eager part (rts_payload eager), kept where it
 * cuts the squared error of the cases with a late partner (only they can
 * show it: ends that start together answer each other's request before
 * any data is queued) to CALFIT_KEEP_RTS_PAYLOAD of the empty one's; cal's
 * protocol gets the payload kept. Returns the cost over every case. */
static double fit_rtt(CalFile *cal, GPtrArray *cases, CalQueueFit *out)
{
    Protocol *pr = &cal->inter_protocol.p;
    GPtrArray *late = cases_by_start(cases, START_APART);
    pr->rts_payload = PROTOCOL_RTS_EMPTY;
    double c_empty = best_fit(cal, cases, out->control_queue, &out->duplex);
    double l_empty = cost(cal, late, out->control_queue, out->duplex);
    uint64_t q[2];
    ProtocolDuplex dx;
    pr->rts_payload = PROTOCOL_RTS_EAGER;
    double c_eager = best_fit(cal, cases, q, &dx);
    double l_eager = cost(cal, late, q, dx);
    g_ptr_array_free(late, TRUE);
    if (l_eager < CALFIT_KEEP_RTS_PAYLOAD * l_empty) {
        memcpy(out->control_queue, q, sizeof q);
        out->duplex = dx;
        out->rts_payload = PROTOCOL_RTS_EAGER;
        return c_eager;
    }
    pr->rts_payload = out->rts_payload = PROTOCOL_RTS_EMPTY;
    return c_empty;
}

bool calqueue_fit(const MeasFile *m, CalFile *cal, CalQueueFit *out)
{
    const Protocol *pr = &cal->inter_protocol.p;
    bool rtt = pr->handshake == PROTOCOL_HANDSHAKE_RTT;
    bool none_seen = pr->handshake == PROTOCOL_HANDSHAKE_NONE && pr->eager_limit == PROTOCOL_INF;
    if (!cal->inter.set || !cal->inter_protocol.set || !(rtt || none_seen))
        return false;
    GPtrArray *cases = g_ptr_array_new();
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        if (c->mode == MEAS_EXCHANGE && !c->intra)
            g_ptr_array_add(cases, (gpointer)c);
    }
    if (cases->len == 0) {
        g_ptr_array_free(cases, TRUE);
        return false;
    }
    *out = (CalQueueFit){.control_queue = {PROTOCOL_INF, PROTOCOL_INF}, .points = (int)cases->len};
    double best_cost;
    if (rtt) {
        best_cost = fit_rtt(cal, cases, out);
    } else {
        /* A handshake shows only where the partner starts late (starting together, a rendezvous
         * costs 2α more, which the ping-pong already did not see): the eager model against a
         * handshake from each late exchange's size on, judged on the late cases; then the queue
         * and the duplex from every case. */
        GPtrArray *late = cases_by_start(cases, START_APART);
        const uint64_t all[2] = {PROTOCOL_INF, PROTOCOL_INF};
        double eager_late = late->len ? cost(cal, late, all, PROTOCOL_DUPLEX_FULL) : 0, best_late = eager_late;
        CalFile q = *cal;
        q.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
        q.inter_protocol.p.overhead_s = 0;
        for (guint i = 0; i < late->len * 2; i++) {
            q.inter_protocol.p.eager_limit = ((const MeasCase *)g_ptr_array_index(late, i / 2))->bytes;
            q.inter_protocol.p.rts_payload = i % 2 ? PROTOCOL_RTS_EAGER : PROTOCOL_RTS_EMPTY;
            uint64_t queue[2];
            double c = best_queue(&q, late, PROTOCOL_DUPLEX_FULL, queue);
            if (c < best_late && c < CALFIT_KEEP_HANDSHAKE * eager_late) {
                best_late = c;
                out->handshake_found = true;
                out->eager_limit = q.inter_protocol.p.eager_limit;
            }
        }
        g_ptr_array_free(late, TRUE);
        if (out->handshake_found) {
            cal->inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
            cal->inter_protocol.p.eager_limit = out->eager_limit;
            cal->inter_protocol.p.overhead_s = 0;
            best_cost = fit_rtt(cal, cases, out);
        } else {
            best_cost = cost(cal, cases, all, PROTOCOL_DUPLEX_FULL);
        }
    }
    out->rms_rel = sqrt(best_cost / cases->len);
    memcpy(cal->inter_protocol.p.control_queue, out->control_queue, sizeof out->control_queue);
    cal->inter_protocol.p.duplex = out->duplex;
    for (guint i = 0; i < cases->len; i++)
        g_array_append_val(cal->used, ((const MeasCase *)g_ptr_array_index(cases, i))->index);
    g_ptr_array_free(cases, TRUE);
    return true;
}
