/* collform — what the collective suites share: a contention-free star
 * (BW and LAT per link, so α = 2·LAT host to host and β = 1/BW), and the
 * α-β-γ closed forms of the flat algorithms written out here, independent
 * of collcost.c, with the protocol layer's terms (o at each end of every
 * message; 2α more for a message at or above the eager limit with the rtt
 * handshake, 2α more with the acknowledgement, ack rtt) and packet mode's
 * store and forward (one packet more on the second link); running one
 * collective, or a hand-written schedule (sched_add, run_sched_at).
 * Header-only, static functions. */
#ifndef ARSIM_COLLFORM_H
#define ARSIM_COLLFORM_H

#include "coll/collexec.h"
#include "coll/collrun.h"

#include <check.h>
#include <math.h>

#define BW 1.25e9          /* 10 Gbps in bytes/s */
#define LAT 5e-6           /* per link */
#define PKT 4096.0         /* packet size in packet mode */
#define GAMMA 2e-10        /* reduction s/byte */

/* The cost model: α, β, γ, o, the eager limit (bytes), rtt, ack, and the
 * packet size (0: message mode). Zero o, rtt and ack false: plain α-β-γ. */
typedef struct {
    double a, b, g, o, eager;
    bool rtt;
    double pkt;
    bool ack;
} FormCost;

/* The topology sp describes (its spec cleared); the test fails if it is refused. */
static inline Topo *form_topo(TopoSpec *sp)
{
    char *err = NULL;
    Topo *t = topo_new(sp, &err);
    ck_assert_msg(t != NULL, "topo_new: %s", err ? err : "");
    topo_spec_clear(sp);
    return t;
}

/* A star of `hosts` hosts, links of bw B/s and lat s, packets of `packet`
 * bytes (0: message mode), protocol pr (NULL: topo_spec_init's). */
static inline Topo *star_links(int hosts, double bw, double lat, uint64_t packet, const Protocol *pr)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.kind = TOPO_STAR;
    sp.hosts = hosts;
    sp.link.bw_Bps = bw;
    sp.link.latency_s = lat;
    sp.switch_latency_s = 0;
    sp.packet_bytes = packet;
    if (pr)
        sp.protocol = *pr;
    return form_topo(&sp);
}

/* A star of `hosts` hosts of BW and LAT links with protocol pr (NULL: topo_spec_init's). */
static inline Topo *star_proto(int hosts, uint64_t packet, const Protocol *pr)
{
    return star_links(hosts, BW, LAT, packet, pr);
}

static inline Topo *star(int hosts, uint64_t packet)
{
    return star_proto(hosts, packet, NULL);
}

/* `nodes` nodes of g GPUs (450 GB/s, 1 us to their switch) on a fat-tree
 * of arity k (k 0: a star) of 50 GB/s, 500 ns links and 200 ns switches,
 * its edge->agg and agg->core links oversubscribed by `oversub` (>= 1),
 * message mode, protocol pr (NULL: topo_spec_init's) between and inside
 * nodes. */
static inline Topo *hier_cluster(int nodes, int g, int k, double oversub, const Protocol *pr)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.kind = TOPO_HIERARCHICAL;
    sp.hosts = 0;   /* every GPU: nodes x g */
    sp.gpus_per_node = g;
    sp.intra = (TopoLinkClass){.bw_Bps = 450e9, .latency_s = 1e-6};
    sp.inter = g_new(TopoSpec, 1);
    topo_spec_init(sp.inter);
    sp.inter->kind = k ? TOPO_FATTREE : TOPO_STAR;
    sp.inter->k = k;
    if (k)
        sp.inter->oversub = oversub;
    sp.inter->hosts = nodes;
    sp.inter->link = (TopoLinkClass){.bw_Bps = 50e9, .latency_s = 500e-9};
    sp.inter->switch_latency_s = k ? 200e-9 : 0;
    if (pr)
        sp.protocol = *pr;
    return form_topo(&sp);
}

static inline int lg_floor(int p)
{
    int k = 0;
    while ((2 << k) <= p)
        k++;
    return k;
}

static inline int lg_ceil(int p)
{
    int k = 0;
    while ((1 << k) < p)
        k++;
    return k;
}

/* One message of m bytes host to host across the switch. */
static inline double msg(const FormCost *c, double m)
{
    double t = c->a + m * c->b + (c->pkt > 0 ? fmin(c->pkt, m) * c->b : 0) + 2 * c->o;
    if (m >= c->eager)
        t += (c->rtt ? 2 * c->a : 0) + (c->ack ? 2 * c->a : 0);
    return t;
}

static inline double f_ring(const FormCost *c, int p, double n)
{
    return p < 2 ? 0 : 2.0 * (p - 1) * msg(c, n / p) + (p - 1) * (n / p) * c->g;
}

/* Butterfly; for p not a power of two the fold costs one step with
 * reduction before and one without after. */
static inline double f_butterfly(const FormCost *c, int p, double n)
{
    int k = lg_floor(p);
    if (p == 1 << k)
        return k * (msg(c, n) + n * c->g);
    return (k + 2) * msg(c, n) + (k + 1) * n * c->g;
}

/* Rabenseifner: halving steps of n/2, n/4, ... n/q reduce; doubling steps
 * send the same sizes back; fold as above. */
static inline double f_rab(const FormCost *c, int p, double n)
{
    int k = lg_floor(p);
    double t = p != 1 << k ? 2 * msg(c, n) + n * c->g : 0;
    for (int j = 1; j <= k; j++) {
        double m = n / (double)(1 << j);
        t += 2 * msg(c, m) + m * c->g;
    }
    return t;
}

static inline double f_tree(const FormCost *c, int p, double n)
{
    int k = lg_ceil(p);
    return 2.0 * k * msg(c, n) + k * n * c->g;
}

/* Whether f_flat has a formula of a. */
static inline bool f_known(CollAlgo a)
{
    return a == COLL_RING || a == COLL_BUTTERFLY || a == COLL_RABENSEIFNER || a == COLL_TREE;
}

static inline double f_flat(const FormCost *c, CollAlgo a, int p, double n)
{
    switch (a) {
    case COLL_RING: return f_ring(c, p, n);
    case COLL_BUTTERFLY: return f_butterfly(c, p, n);
    case COLL_RABENSEIFNER: return f_rab(c, p, n);
    case COLL_TREE: return f_tree(c, p, n);
    default: ck_abort_msg("no formula"); return 0;
    }
}

/* collrun_time of algorithm a on t with 1-byte elements; the test fails
 * on an error. */
static inline double run_time(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t n, double g, uint64_t *ev)
{
    char *err = NULL;
    double s = collrun_time(t, a, prm, p, n, 1, g, ev, &err);
    ck_assert_msg(s >= 0, "collrun_time %s p=%d n=%" G_GUINT64_FORMAT ": %s", coll_algo_name(a), p, (guint64)n,
                  err ? err : "");
    return s;
}

static inline uint64_t round_up(uint64_t n, uint64_t d)
{
    return (n + d - 1) / d * d;
}

/* Appends to rank r's steps: send sl elements to sp, receive rl from rp
 * (-1: none), reducing what it receives if red. */
static inline void sched_add(CollSchedule *s, int r, int sp, uint64_t sl, int rp, uint64_t rl, bool red)
{
    CollStep x = {.send_peer = sp, .send_len = sl, .recv_peer = rp, .recv_len = rl, .reduce = red};
    g_array_append_val(s->steps[r], x);
}

static inline void sched_go_rank(void *ctx, void *data)
{
    collexec_rank_go(ctx, (int)GPOINTER_TO_SIZE(data));
}

/* Runs s on t (rank r on host r2h[r], or r when r2h is NULL; 1-byte
 * elements) and returns its time; with at_ps, rank r issues at at_ps[r]
 * (a deferred run) and the time is from 0. */
static inline double run_sched_at(Topo *t, const CollSchedule *s, const int *r2h, double g, const simtime_t *at_ps)
{
    Sim *sim = sim_new(1);
    Net *net = net_new(sim, t);
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .rank2host = r2h, .elem_bytes = 1,
                       .gamma = g, .deferred = at_ps != NULL};
    CollExec *x = collexec_start(&run);
    ck_assert_ptr_nonnull(x);
    for (int r = 0; at_ps && r < s->p; r++)
        sim_at(sim, at_ps[r], sched_go_rank, x, GSIZE_TO_POINTER(r));
    ck_assert(sim_run(sim));
    ck_assert_uint_eq(net_inflight(net), 0);
    double secs = sim_ps_to_seconds(collexec_end_time(x) - collexec_start_time(x));
    collexec_free(x);
    net_free(net);
    sim_free(sim);
    return secs;
}

#endif
