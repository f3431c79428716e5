/* calhostq — fitting the control messages' host queue; see calhostq.h. */
#include "calib/calhostq.h"
#include "calib/calfit.h"
#include "calib/calqueue.h"

#include <math.h>

/* Sum of squared relative errors of the ring cases (MeasCase *) on cal's
 * star with the host queue q; INFINITY when one cannot be simulated. */
static double cost(const CalFile *cal, GPtrArray *cases, uint64_t q)
{
    CalFile c = *cal;   /* a shallow copy, only read */
    c.inter_protocol.p.host_queue = q;
    double sum = 0, v[CALQUEUE_SKEW_TRIALS];
    char *err = NULL;
    CollParams prm;
    coll_params_init(&prm);
    for (guint i = 0; i < cases->len; i++) {
        const MeasCase *mc = g_ptr_array_index(cases, i);
        Topo *t = calqueue_star(&c, mc->ranks, &err);
        bool ok = t && calqueue_case_trials(t, COLL_RING, &prm, mc, cal->has_gamma ? cal->gamma : 0,
                                            CALQUEUE_SKEW_TRIALS, v, &err);
        topo_free(t);
        g_clear_pointer(&err, g_free);
        if (!ok) {
            sum = INFINITY;
            break;
        }
        double e = (calfit_median(v, CALQUEUE_SKEW_TRIALS) - mc->time_s) / mc->time_s;
        sum += e * e;
    }
    return sum;
}

bool calhostq_fit(const MeasFile *m, CalFile *cal, CalHostQueueFit *out)
{
    const Protocol *pr = &cal->inter_protocol.p;
    if (!cal->inter.set || !cal->inter_protocol.set ||
        (pr->handshake != PROTOCOL_HANDSHAKE_RTT && pr->ack != PROTOCOL_ACK_RTT))
        return false;
    GPtrArray *cases = g_ptr_array_new();
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        if (c->mode == MEAS_ALLREDUCE && !c->mpi && c->algo == COLL_RING && !c->intra && c->ranks >= 3 &&
            c->start_spread_s > 0 && protocol_rendezvous(pr, c->bytes / (uint64_t)c->ranks))
            g_ptr_array_add(cases, (gpointer)c);
    }
    if (cases->len == 0) {
        g_ptr_array_free(cases, TRUE);
        return false;
    }
    double zero = cost(cal, cases, 0), best = zero;
    uint64_t best_q = 0;
    for (int k = -2; k <= CALQUEUE_LAST; k++) {
        uint64_t q = calqueue_candidate(k);
        double c = q == 0 ? zero : cost(cal, cases, q);
        if (c < best) {
            best = c;
            best_q = q;
        }
    }
    *out = (CalHostQueueFit){.host_queue = best_q, .kept = best < CALHOSTQ_GAIN * zero,
                             .rms_rel = sqrt(best / cases->len), .rms_rel_zero = sqrt(zero / cases->len),
                             .points = (int)cases->len};
    cal->inter_protocol.p.host_queue = out->kept ? best_q : 0;
    g_ptr_array_free(cases, TRUE);
    return true;
}
