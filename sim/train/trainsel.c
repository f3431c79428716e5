/* trainsel — per-unit algorithm selection; see trainsel.h. */
#include "train/trainsel.h"
#include "train/trainnccl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Idle-cluster time of a on the unit, in seconds (< 0 if it does not fit). */
static double predict(CommCost *cost, CollAlgo a, uint64_t elems)
{
    simtime_t d;
    char *why = NULL;
    if (!commcost_get(cost, a, elems, &d, NULL, NULL, &why)) {
        g_free(why);
        return -1;
    }
    return sim_ps_to_seconds(d);
}

/* Unit u's NCCL calls on their group's communicator under force f
 * (trainnccl_unit_cost): their time in seconds, *out's force and choices
 * filled (not switched on); < 0 and *err (unless NULL) when NCCL cannot
 * run them. */
static double predict_nccl(CommNccl *nccl, const Scenario *s, const NcclForce *f, const SyncUnit *u, SyncNccl *out,
                           char **err)
{
    simtime_t d;
    char *why = NULL;
    if (!trainnccl_unit_cost(nccl, s, u, f, &d, out, NULL, &why)) {
        if (err)
            *err = why;
        else
            g_free(why);
        return -1;
    }
    return sim_ps_to_seconds(d);
}

/* "nccl Ring/LL128 16ch": what an NCCL unit runs, into buf (n bytes);
 * returns the characters written. */
static int nccl_label(char *buf, size_t n, const NcclChoice *c)
{
    return snprintf(buf, n, "nccl %s/%s %dch", nccl_algo_name(c->algo), nccl_proto_name(c->proto), c->channels);
}

/* One of auto's NCCL candidates. */
typedef struct {
    SyncNccl n;              /* its force and the tuner's choice under it */
    double t;                /* its simulated time, s */
} NcclCand;

/* auto's NCCL candidates for unit u: the tuner's choice (under what
 * policy p forces) and, unless p forces an algorithm, each other
 * algorithm NCCL runs here (its protocol the tuner's for it), since the
 * tuner's model is not the simulated time. Fills cand (NCCL_NALGOS + 1
 * entries), the tuner's first; returns how many. */
static int nccl_candidates(const Scenario *s, const Policy *p, const SyncUnit *u, CommNccl *nccl, NcclCand *cand)
{
    int k = 0;
    if ((cand[k].t = predict_nccl(nccl, s, &p->nccl, u, &cand[k].n, NULL)) >= 0)
        k++;
    for (int a = 0; a < NCCL_NALGOS && p->nccl.algo < 0; a++) {
        NcclForce f = p->nccl;
        f.algo = a;
        if ((k == 0 || (int)cand[0].n.choice.algo != a) &&
            (cand[k].t = predict_nccl(nccl, s, &f, u, &cand[k].n, NULL)) >= 0)
            k++;
    }
    return k;
}

/* Predicted overlap window of a unit: compute time between its gradients
 * being ready and the next forward needing it (no communication stalls). */
static double window_s(const Scenario *s, const SyncUnit *u, int batch)
{
    const Model *m = s->model;
    double w = 0;
    for (int l = 0; l < u->ready_layer; l++)
        w += gpu_backward_s(&s->gpu, m, &g_array_index(m->layers, ModelLayer, l), batch, s->precision, s->bwd_ratio);
    if (u->need.task == GATE_FORWARD)   /* needed by the next forward: the forwards before it overlap too */
        for (int l = 0; l < u->need.layer; l++)
            w += gpu_forward_s(&s->gpu, m, &g_array_index(m->layers, ModelLayer, l), batch, s->precision);
    return w;
}

static bool fits(const Scenario *s, CollAlgo a)
{
    return coll_algo_fits(a, s->gpus_per_node, s->topo.kind == TOPO_TORUS2D);
}

/* A lower bound of every candidate's time on this cluster: the α-β-γ
 * closed form with the smallest link latency and the largest bandwidth
 * (contention, longer paths, the protocol's overheads and handshakes only
 * add). A closed form that bounds nothing on this p (coll_algo_cost_bounds:
 * tree's off powers of two) gives no bound (0). Segments pipeline steps, which the closed forms do
 * not: with a segment there is no bound (0), every candidate is simulated. */
static double lower_bound(const Scenario *s, const CommCost *cost, CollAlgo a, uint64_t elems)
{
    (void)cost;
    if (s->topo.protocol.segment_bytes > 0)
        return 0;
    double lat = INFINITY, bw = 0;
    const TopoSpec *nets[2] = {&s->topo, s->topo.inter};
    for (int i = 0; i < 2; i++) {
        if (!nets[i])
            continue;
        lat = fmin(lat, nets[i]->link.latency_s);
        bw = fmax(bw, nets[i]->link.bw_Bps);
    }
    if (s->topo.kind == TOPO_HIERARCHICAL) {
        lat = fmin(lat, s->topo.intra.latency_s);
        bw = fmax(bw, s->topo.intra.bw_Bps);
    }
    CollParams prm;
    coll_params_init(&prm);
    prm.gpus_per_node = s->gpus_per_node;
    double n = (double)elems * s->elem_bytes;
    double lb = coll_cost(a, &prm, s->world, n, lat, 1.0 / bw, 0);
    return !coll_algo_cost_bounds(a, s->world) || !isfinite(lb) ? 0 : lb;
}

/* Branch and bound: simulate candidates in order of their lower bounds
 * and stop once no bound can beat the best simulated time. The choice is
 * the same as simulating every candidate; big clusters pay for far fewer. */
static void choose_auto(const Scenario *s, const Policy *p, SyncUnit *u, CommCost *cost, CommNccl *nccl, int batch)
{
    double best = -1, costs[COLL_NALGOS], lb[COLL_NALGOS];
    int order[COLL_NALGOS], ncand = 0;
    for (int a = 0; a < COLL_NALGOS; a++) {
        costs[a] = -1;
        if (!fits(s, (CollAlgo)a))
            continue;
        lb[a] = lower_bound(s, cost, (CollAlgo)a, u->elems);
        int i = ncand++;
        while (i > 0 && lb[order[i - 1]] > lb[a]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = a;
    }
    for (int i = 0; i < ncand; i++) {
        int a = order[i];
        if (best >= 0 && lb[a] >= best)
            continue;
        costs[a] = predict(cost, (CollAlgo)a, u->elems);
        if (costs[a] >= 0 && (best < 0 || costs[a] < best)) {
            best = costs[a];
            u->algo = (CollAlgo)a;
        }
    }
    NcclCand cand[NCCL_NALGOS + 1];
    int nn = nccl ? nccl_candidates(s, p, u, nccl, cand) : 0, nb = -1;
    for (int i = 0; i < nn; i++)
        if (nb < 0 || cand[i].t < cand[nb].t)
            nb = i;
    if (nb >= 0 && (best < 0 || cand[nb].t < best)) {   /* NCCL wins: the best algorithm is listed with the others */
        u->nccl = cand[nb].n;
        u->nccl.on = true;
        best = cand[nb].t;
        u->algo = COLL_RING;
    }
    double w = window_s(s, u, batch);
    char label[64];
    if (u->nccl.on)
        nccl_label(label, sizeof label, &u->nccl.choice);
    int n = snprintf(u->reason, sizeof u->reason, "auto: %s %.3g ms", u->nccl.on ? label : coll_algo_name(u->algo),
                     best * 1e3);
    for (int i = 0; i < nn && n < (int)sizeof u->reason; i++)
        if (i != nb || !u->nccl.on) {
            nccl_label(label, sizeof label, &cand[i].n.choice);
            n += snprintf(u->reason + n, sizeof u->reason - n, ", %s %.3g", label, cand[i].t * 1e3);
        }
    for (int a = 0; a < COLL_NALGOS && n < (int)sizeof u->reason; a++)
        if (costs[a] >= 0 && (a != (int)u->algo || u->nccl.on))
            n += snprintf(u->reason + n, sizeof u->reason - n, ", %s %.3g", coll_algo_name((CollAlgo)a),
                          costs[a] * 1e3);
        else if (costs[a] < 0 && fits(s, (CollAlgo)a))
            n += snprintf(u->reason + n, sizeof u->reason - n, ", %s >=%.3g", coll_algo_name((CollAlgo)a),
                          lb[a] * 1e3);
    if (n < (int)sizeof u->reason)
        snprintf(u->reason + n, sizeof u->reason - n, "; window %.3g ms, %s", w * 1e3,
                 best <= w ? "fits it alone" : "longer than it");
}

/* Unit u (its algorithm selected) as an NCCL call: policy p's force,
 * hybrid's algorithm mapped onto NCCL's; its label appended to the
 * reason. False + *err when NCCL cannot run it. */
static bool to_nccl(const Scenario *s, const Policy *p, SyncUnit *u, CommNccl *nccl, char **err)
{
    NcclForce f = p->nccl;
    if (p->select == ALGSEL_HYBRID)
        f.algo = (int)trainnccl_hybrid_algo(u->algo);
    char *why = NULL;
    if (predict_nccl(nccl, s, &f, u, &u->nccl, &why) < 0) {
        *err = g_strdup_printf("%s: policy '%s', unit %s: %s", s->file, p->name, u->name, why);
        g_free(why);
        return false;
    }
    u->nccl.on = true;
    size_t n = strlen(u->reason);
    if (p->select == ALGSEL_HYBRID)
        n += snprintf(u->reason + n, sizeof u->reason - n, " (%s) -> ", coll_algo_name(u->algo));
    else if (n > 0 && n + 2 < sizeof u->reason)   /* after another reason (a collective's): "...; nccl ..." */
        n += snprintf(u->reason + n, sizeof u->reason - n, "; ");
    if (n < sizeof u->reason)
        n += (size_t)nccl_label(u->reason + n, sizeof u->reason - n, &u->nccl.choice);
    if (u->nccl.calls > 1 && n < sizeof u->reason)   /* hybrid_shard: then the all-reduce across nodes */
        snprintf(u->reason + n, sizeof u->reason - n, " + %s/%s %dch across nodes", nccl_algo_name(u->nccl.next.algo),
                 nccl_proto_name(u->nccl.next.proto), u->nccl.next.channels);
    return true;
}

bool trainsel_select(const Scenario *s, const Policy *p, GArray *units, CommCost *cost, CommNccl *nccl, int batch,
                     char **err)
{
    if (p->select == ALGSEL_NCCL && !nccl) {
        *err = g_strdup_printf("%s: policy '%s' runs NCCL, which needs GPU nodes; expected cluster: {node: NAME}",
                               s->file, p->name);
        return false;
    }
    const Model *m = s->model;
    bool live = trainnccl_live(s, p) != NULL;
    for (guint i = 0; i < units->len; i++) {
        SyncUnit *u = &g_array_index(units, SyncUnit, i);
        uint64_t bytes = u->elems * (uint64_t)s->elem_bytes;
        u->nccl.live = live;
        gpointer ov = NULL;
        if (u->first_layer == u->last_layer)
            ov = g_hash_table_lookup(p->overrides, g_array_index(m->layers, ModelLayer, u->first_layer).name);
        if (u->coll != COLL_OP_ALLREDUCE || u->split > 0) {   /* its builder chose the algorithm */
            snprintf(u->reason, sizeof u->reason, "%s by the policy", coll_op_name(u->coll));
        } else if (ov) {
            u->algo = (CollAlgo)(GPOINTER_TO_INT(ov) - 1);
            snprintf(u->reason, sizeof u->reason, "override");
        } else if (p->select == ALGSEL_AUTO) {
            choose_auto(s, p, u, cost, nccl, batch);
            u->nccl.live = live;
        } else if (p->select == ALGSEL_HYBRID) {
            if (p->hybrid_threshold > 0 && bytes <= p->hybrid_threshold) {
                u->algo = COLL_BUTTERFLY;
                snprintf(u->reason, sizeof u->reason, "hybrid: %" G_GUINT64_FORMAT " B <= threshold", (guint64)bytes);
            } else {
                u->algo = p->hybrid[u->kind];
                snprintf(u->reason, sizeof u->reason, "hybrid: %s layer", model_kind_name(u->kind));
            }
        } else if (p->select == ALGSEL_NCCL) {
            u->algo = COLL_RING;
            u->reason[0] = '\0';
        } else {
            u->algo = p->algo;
            snprintf(u->reason, sizeof u->reason, "fixed");
        }
        bool by_nccl = p->select == ALGSEL_NCCL || p->select == ALGSEL_HYBRID;
        if (!ov && nccl && by_nccl && !to_nccl(s, p, u, nccl, err))
            return false;
        if (!u->nccl.on && u->group == 0 && u->split == 0 && !fits(s, u->algo)) {   /* groups: checked elsewhere */
            *err = g_strdup_printf("%s: policy '%s' uses %s, which needs %s; expected another algorithm", s->file,
                                   p->name, coll_algo_name(u->algo),
                                   coll_algo_needs(u->algo));
            return false;
        }
    }
    return true;
}
