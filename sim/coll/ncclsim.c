/* ncclsim — NCCL's schedules, channel by channel, on the network; see
 * ncclsim.h. Sizes and rules cite NCCL v2.21.5-1 (docs/dev/references-nccl.md). */
#include "coll/ncclsim.h"
#include "coll/ncclproto.h"
#include "coll/ncclroute.h"
#include "coll/ncclsched.h"
#include "coll/ncclshape.h"
#include "coll/ncclsym.h"
#include "coll/nccltrans.h"

#include <math.h>
#include <string.h>

/* A live run (ncclsim_start): its Run shares the caller's Sim and Net. */
struct NcclLive {
    Run R;                   /* the run; its sim and net borrowed */
    NcclSimSpec spec;        /* the caller's, full */
    uint64_t arrived;        /* messages delivered so far */
    bool ended;              /* every lane ended and every message arrived */
    simtime_t start, end;    /* its issue and its end, ps */
    void (*done)(void *ctx, void *data);
    void *ctx, *data;        /* done's arguments */
    double *rank_s;          /* [rank]: the slow-down s its capped ops hold under (ncclsim_live_set_slow); NULL:
                              * none set; owned */
    void (*pend)(void *ctx, NcclLive *x);   /* ncclsim_live_set_batch's; NULL: the run flushes itself */
    void *pend_ctx;
    uint64_t order;          /* its place among the runs pend's holder flushes together */
};

/* A live run whose ties are broken with others' (ncclsim_live_set_batch):
 * told of its first op end with sends this picosecond; true then. */
static bool live_batch(Run *R)
{
    if (!R->lv || !R->lv->pend)
        return false;
    R->lv->pend(R->lv->pend_ctx, R->lv);
    return true;
}

/* ---- the executor ---- */

static void lane_try(Run *R, int32_t li);

/* A lane's events carry the lane itself (the event queue prefetches it). */
static void wake_ev(void *ctx, void *data)
{
    Run *R = ctx;
    lane_try(R, (int32_t)((Lane *)data - R->lane));
}

static void wake(Run *R, int32_t li)
{
    sim_after(R->sim, 0, wake_ev, R, &R->lane[li]);
}

static void live_arrived(Run *R);
static void live_check(Run *R);

static void arrive(void *ctx, void *data)
{
    Run *R = ctx;
    ConnQ *c = data;
    c->arrived++;
    R->end = R->sim->now > R->end ? R->sim->now : R->end;
    if (R->lv)
        live_arrived(R);
    if (c->recv_wait >= 0) {
        int32_t l = c->recv_wait;
        c->recv_wait = -1;
        lane_try(R, l);
    }
    if (R->lv)
        live_check(R);
}

/* The network delivered a slice: it arrives then, or (capped) once its
 * op has held its lane long enough to have written it, or (a network
 * connection where the proxy threads take time) once its receiver's
 * proxy has seen it done, if later. */
static void delivered(void *ctx, void *data)
{
    Run *R = ctx;
    const ConnQ *c = data;
    uint64_t conn = (uint64_t)(c - R->cq);
    simtime_t t = R->sim->now;
    if (R->nb) {
        simtime_t h = R->nb[conn * R->W + R->nb_k[conn]++ % (uint64_t)R->W];
        t = h > t ? h : t;
    }
    if (R->proxy && c->hw == NCCL_HW_NET) {
        simtime_t p = ncclproxy_take(R->proxy, R->px_host[2 * conn + 1], R->sim->now);
        t = p > t ? p : t;
    }
    if (t > R->sim->now) {
        sim_at(R->sim, t, arrive, R, data);
        return;
    }
    arrive(ctx, data);
}

static simtime_t us_to_ps(double us)
{
    simtime_t t = 0;
    sim_seconds_to_ps(us * 1e-6, &t);
    return t;
}

/* Fills R's latency tables (lat_ps, nv_lat_ps) once, so that an op looks its latency up. */
static void lat_tables(Run *R)
{
    for (int hw = NCCL_HW_NVLINK; hw <= NCCL_HW_NET; hw++)
        R->lat_ps[hw] = us_to_ps(nccl_hw_lat_us((NcclHw)hw, NCCL_ALGO_RING, R->sp->choice.proto));
    R->nv_lat_ps[0] = us_to_ps(nccl_hw_lat_us(NCCL_HW_NVLINK, NCCL_ALGO_RING, NCCL_PROTO_LL));
    R->nv_lat_ps[1] = us_to_ps(nccl_hw_lat_us(NCCL_HW_NET, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
}

/* The op's latency: NCCL's Ring hardware latency a step (tuning.cc's
 * per-hop figure, Tree's included: Tree's own are its pipeline's start)
 * for where its first connection runs; NVLS GPU lanes: LL's NVLink step
 * (a flag), Simple's network step where one of its sends leaves the node;
 * the switch's own lanes: none. */
static simtime_t op_lat_ps(const Run *R, const Lane *L, const Op *o)
{
    if (L->kind == LANE_SW_RED || L->kind == LANE_SW_MC)
        return 0;
    NcclAlgo a = R->sp->choice.algo;
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) {   /* a flag over NVLink, as LL's step */
        for (int i = 0; i < o->nsend; i++)
            if (R->cq[o->send[i]].hw == NCCL_HW_NET)
                return R->nv_lat_ps[1];
        return R->nv_lat_ps[0];
    }
    int32_t c = o->nsend ? o->send[0] : o->nrecv ? o->recv[0] : -1;
    return R->lat_ps[c >= 0 ? R->cq[c].hw : NCCL_HW_NVLINK];
}

/* The wire bytes of a send of `data` bytes: sw, to or from the NVSwitch
 * (at the switch's port rate while it reduces, on a node with NVLS).
 * Memoized on the last size: a schedule's sends take few sizes. */
static uint64_t wire_of(Run *R, uint64_t data, bool sw)
{
    if (data != R->memo_data || R->memo_data == 0) {
        uint64_t wire = ncclproto_wire_bytes(R->sp->choice.proto, data);
        R->memo_data = data;
        R->memo_wire[0] = R->memo_wire[1] = wire;
        if (R->sp->cl->node.nvls) {
            const NodeSpec *nd = &R->sp->cl->node;
            R->memo_wire[1] = (uint64_t)((double)wire * node_gpu_nvlink_Bps(nd) / nd->nvls_Bps + 0.5);
        }
    }
    return R->memo_wire[sw];
}

/* Lane L's i-th send's tie key (ncclsim.h): for channel c, the o-th of
 * its orbit (R->map), the sending rank mapped back to the orbit's first
 * channel (ncclsym_back), that first channel, the lane's kind, i, then o.
 * A channel's send in a full run has the key of the send that stands for
 * it in a merged one, o apart. */
static uint64_t tie_key(const Run *R, const Lane *L, int i)
{
    const NcclSymMap *m = &R->map;
    int c = ncclsched_slot_chan(R, L->chan), q = ncclsym_q(m), o = m->h > 1 ? c % m->G / q : 0;
    int r = L->kind == LANE_RING ? R->ring[(size_t)L->chan * R->n + L->who] : L->who;
    uint64_t k = (uint64_t)ncclsym_back(m, r, o);
    return (((k * 64 + (uint64_t)(c - q * o)) * 8 + L->kind) * 8 + (uint64_t)i) * 64 + (uint64_t)o;
}

/* A network slice its sender's proxy has posted (send_one) leaves. */
static void px_posted(void *ctx, void *data)
{
    Run *R = ctx;
    ConnQ *c = data;
    uint64_t conn = (uint64_t)(c - R->cq);
    net_send(R->net, c->route, R->px_wire[conn * R->W + R->px_out[conn]++ % (uint64_t)R->W], delivered, R, c);
}

/* A slice leaves on conn now; over the network where the proxy threads
 * take time, once its sender's proxy has posted it. */
static void send_one(Run *R, int32_t conn, uint64_t data)
{
    ConnQ *c = &R->cq[conn];
    if (R->proxy && c->hw == NCCL_HW_NET) {
        uint64_t k = (uint64_t)conn;
        R->px_wire[k * R->W + R->px_in[k]++ % (uint64_t)R->W] = wire_of(R, data, c->sw);
        sim_at(R->sim, ncclproxy_take(R->proxy, R->px_host[2 * k], R->sim->now), px_posted, R, c);
    } else {
        net_send(R->net, c->route, wire_of(R, data, c->sw), delivered, R, c);
    }
    R->msgs++;
    R->data += data;
}

/* The picosecond's op ends are all in: their sends leave in key order. */
static void flush(void *ctx, void *data)
{
    Run *R = ctx;
    (void)data;
    g_array_set_size(R->batch_tmp, R->batch->len);
    ncclsched_sort_sends((Send *)(void *)R->batch->data, R->batch->len, (Send *)(void *)R->batch_tmp->data);
    for (guint i = 0; i < R->batch->len; i++)   /* the sends' connections, then their routes, fetched together */
        __builtin_prefetch(&R->cq[g_array_index(R->batch, Send, i).conn]);
    for (guint i = 0; i < R->batch->len; i++)
        __builtin_prefetch(R->cq[g_array_index(R->batch, Send, i).conn].route);
    for (guint i = 0; i < R->batch->len; i++)   /* then each route's first link */
        net_prefetch_send(R->net, R->cq[g_array_index(R->batch, Send, i).conn].route);
    for (guint i = 0; i < R->batch->len; i++) {
        const Send *x = &g_array_index(R->batch, Send, i);
        send_one(R, x->conn, x->data);
    }
    g_array_set_size(R->batch, 0);
}

/* Capped: the ps lane L's op holds it after its latency (its data at the
 * channel's cap where its first send goes, a receive-only op's at the cap
 * inside a node; slower by 1 + s for a live run's rank under s), and each
 * of its sends' earliest delivery then. */
static simtime_t hold(Run *R, const Lane *L, const int32_t *pend)
{
    if (!R->nb || L->kind == LANE_SW_RED || L->kind == LANE_SW_MC)
        return 0;
    double ps = (double)L->pend_data * R->cap_ps_B[L->npend ? R->cq[pend[0]].hw : NCCL_HW_NVLINK];
    const double *rs = R->lv ? R->lv->rank_s : NULL;
    if (rs)   /* a live run beside compute: its rank's slow-down (ncclsim_live_set_slow) */
        ps *= 1 + rs[L->kind == LANE_RING ? R->ring[(size_t)L->chan * R->n + L->who] : L->who];
    simtime_t h = (simtime_t)(ps + 0.5);
    for (int i = 0; i < L->npend; i++)   /* the op's slice is its connection's latest: its lane is still busy */
        R->nb[(uint64_t)pend[i] * R->W + (R->cq[pend[i]].sent - 1) % (uint64_t)R->W] = R->sim->now + h;
    return h;
}

static void fire(void *ctx, void *data)
{
    Run *R = ctx;
    Lane *L = data;
    int32_t li = (int32_t)(L - R->lane);
    const int32_t *pend = R->pend ? R->pend + (size_t)li * R->maxpeer : NULL;
    int32_t send[1];
    if (!pend && R->tree) {   /* tree: the lane's sends, the same for every op */
        pend = L->tr_peer + NS_TREE_PEERS;
    } else if (!pend) {   /* ring: the lane's send (npend 0 or 1) */
        send[0] = ncclsched_ring_send(R, L);
        pend = send;
    }
    simtime_t h = hold(R, L, pend);
    if (R->sent && L->kind != LANE_SW_RED && L->kind != LANE_SW_MC)   /* the rank's bytes; not the switch's */
        R->sent[L->kind == LANE_RING ? R->ring[(size_t)L->chan * R->n + L->who] : L->who] +=
            (uint64_t)L->npend * L->pend_data;
    if (R->batch && L->npend && R->batch->len == 0 && !live_batch(R))   /* every op end of this ps was earlier */
        sim_after(R->sim, 0, flush, R, NULL);
    if (R->batch) {   /* the sends join the batch, its array grown once */
        guint k = R->batch->len;
        g_array_set_size(R->batch, k + L->npend);
        Send *x = &g_array_index(R->batch, Send, k);
        for (int i = 0; i < L->npend; i++)
            x[i] = (Send){.key = L->kind == LANE_RING ? L->rg_key : tie_key(R, L, i), .conn = pend[i],
                          .data = L->pend_data};
    } else {
        for (int i = 0; i < L->npend; i++)
            send_one(R, pend[i], L->pend_data);
    }
    L->npend = 0;
    L->busy = false;
    ncclsched_next(R, L);
    R->end = R->sim->now + h > R->end ? R->sim->now + h : R->end;
    if (R->until)   /* the next op's latency starts once the hold ends (lane_try) */
        R->until[li] = R->sim->now + h;
    if (L->idx == L->nops)
        R->live--;
    lane_try(R, li);
    if (R->lv)
        live_check(R);
}

static void lane_try(Run *R, int32_t li)
{
    Lane *L = &R->lane[li];
    if (L->busy || L->idx >= L->nops)
        return;
    Op *o = &R->scratch;
    ncclsched_op_cur(R, L, o);
    for (int i = 0; i < o->nrecv; i++) {
        ConnQ *c = &R->cq[o->recv[i]];
        if (c->arrived == c->consumed) {
            c->recv_wait = li;
            return;
        }
    }
    for (int i = 0; i < o->nsend; i++) {
        ConnQ *c = &R->cq[o->send[i]];
        if ((uint32_t)(c->sent - c->consumed) >= (uint32_t)R->W) {
            c->send_wait = li;
            return;
        }
    }
    for (int i = 0; i < o->nrecv; i++) {
        ConnQ *c = &R->cq[o->recv[i]];
        c->consumed++;
        if (c->send_wait >= 0) {
            wake(R, c->send_wait);
            c->send_wait = -1;
        }
    }
    int32_t *pend = R->pend ? R->pend + (size_t)li * R->maxpeer : NULL;
    for (int i = 0; i < o->nsend; i++) {
        R->cq[o->send[i]].sent++;
        if (pend)
            pend[i] = o->send[i];
    }
    L->npend = (uint8_t)o->nsend;
    L->pend_data = o->data;
    L->busy = true;
    simtime_t wait = R->until && R->until[li] > R->sim->now ? R->until[li] - R->sim->now : 0;
    sim_after(R->sim, wait + op_lat_ps(R, L, o), fire, R, L);
}

/* The hint for a slice's arrival: the lane waiting for it, which it
 * tries, and that lane's hold end. A deferred arrival's early hint
 * (evq_set_hint: three pops ahead); a delivery's late one (delivered_hint its early one). */
static void arrive_hint(void *ctx, void *data)
{
    const Run *R = ctx;
    const ConnQ *c = data;
    if (c->recv_wait >= 0) {
        __builtin_prefetch(&R->lane[c->recv_wait]);
        if (R->until)
            __builtin_prefetch(&R->until[c->recv_wait]);
    }
}

/* The early hint for a delivery (net_set_deliver_hint): capped, the
 * connection's hold ends and delivery count, which it reads (found from
 * the connection's index alone: its entry may not have arrived yet); its
 * late hint is arrive_hint. */
static void delivered_hint(void *ctx, void *data)
{
    const Run *R = ctx;
    if (R->nb) {
        uint64_t conn = (uint64_t)((const ConnQ *)data - R->cq);
        __builtin_prefetch(&R->nb_k[conn]);
        __builtin_prefetch(&R->nb[conn * R->W]);
        __builtin_prefetch(&R->nb[conn * R->W + R->W - 1]);
    }
}

/* The event queue's hint for a lane's events (evq_set_hint): a tree
 * lane's connections, which its next op reads, and capped, the lane's
 * hold end and its sends' hold ends, which its op's end writes. */
static void lane_hint(void *ctx, void *data)
{
    const Run *R = ctx;
    const Lane *L = data;
    for (int i = 0; i < L->tr_nrecv; i++)
        __builtin_prefetch(&R->cq[L->tr_peer[i]]);
    for (int i = 0; i < L->tr_nsend; i++)
        __builtin_prefetch(&R->cq[L->tr_peer[NS_TREE_PEERS + i]]);
    if (R->until)
        __builtin_prefetch(&R->until[L - R->lane]);
    if (R->nb)
        for (int i = 0; i < L->tr_nsend; i++) {
            uint64_t conn = (uint64_t)L->tr_peer[NS_TREE_PEERS + i];
            __builtin_prefetch(&R->nb[conn * R->W]);
            __builtin_prefetch(&R->nb[conn * R->W + R->W - 1]);
        }
}

static void start_all(void *ctx, void *data)
{
    Run *R = ctx;
    (void)data;
    for (guint i = 0; i < R->nlanes; i++)
        lane_try(R, (int32_t)i);
}

/* The channel cap's state (Run.cap_ps_B, nb, nb_k, until), zeroed, where
 * spec's run has a cap; counted in R->held as layout counts it. */
static void cap_init(Run *R)
{
    double cap = ncclshape_cap_GBps(R->sp);
    if (cap <= 0)
        return;
    uint64_t nc = R->conns->len, nl = R->lanes->len;
    for (int hw = NCCL_HW_NVLINK; hw <= NCCL_HW_NET; hw++)
        R->cap_ps_B[hw] = 1e3 / ncclshape_cap_hw_GBps(R->sp, (NcclHw)hw);
    R->nb = (simtime_t *)ncclsched_ints(R, nc * (uint64_t)R->W * 2);
    R->nb_k = (uint64_t *)ncclsched_ints(R, nc * 2);
    R->until = (simtime_t *)ncclsched_ints(R, nl * 2);
    memset(R->nb, 0, sizeof(simtime_t) * nc * (uint64_t)R->W);
    memset(R->nb_k, 0, sizeof(uint64_t) * nc);
    memset(R->until, 0, sizeof(simtime_t) * nl);
}

/* The proxy threads' state (Run.proxy, px_*), where the node's take time,
 * on R->sim: counted in R->held as layout counts it. */
static void px_init(Run *R)
{
    if (!R->px_plan)
        return;
    const NcclSimSpec *sp = R->sp;
    uint64_t nc = R->conns->len;
    R->px_host = ncclsched_ints(R, nc * 2);
    memcpy(R->px_host, R->px_plan->data, sizeof(int32_t) * nc * 2);
    g_array_unref(R->px_plan);
    R->px_plan = NULL;
    R->px_wire = (uint64_t *)ncclsched_ints(R, nc * (uint64_t)R->W * 2);
    R->px_in = (uint64_t *)ncclsched_ints(R, nc * 2);
    R->px_out = (uint64_t *)ncclsched_ints(R, nc * 2);
    memset(R->px_in, 0, sizeof(uint64_t) * nc);
    memset(R->px_out, 0, sizeof(uint64_t) * nc);
    simtime_t op = 0;
    sim_seconds_to_ps(sp->cl->node.nic_proxy_s, &op);
    R->proxy = ncclproxy_new(R->sim, sp->cl->fab.nodes * sp->cl->node.ngpus, op);
}

static double launch_us(const NcclSimSpec *sp)
{
    NcclAlgo a = sp->choice.algo;
    if (a == NCCL_ALGO_NVLS)
        return nccl_nvls_lat_us(sp->release);
    if (a == NCCL_ALGO_NVLSTREE)
        return nccl_hw_lat_us(NCCL_HW_NVLINK, a, NCCL_PROTO_SIMPLE);
    return nccl_base_lat_us(a, sp->choice.proto);
}

static bool plan(Run *R, char **err)
{
    const NcclSimSpec *sp = R->sp;
    NcclAlgo a = sp->choice.algo;
    NcclProto p = sp->choice.proto;
    R->n = sp->nodes * sp->ppn;
    R->C = sp->choice.channels > 0 ? sp->choice.channels : 1;
    R->map = ncclshape_key_map(sp);
    R->h = ncclshape_orbit(sp);
    R->mm = (NcclSymMap){.G = sp->ppn, .h = R->h};
    R->S = R->C / R->h;
    R->T = ncclshape_blocks(sp);
    R->K = ncclproto_slices_per_chunk(a, p, sp->op);
    R->W = ncclproto_window(a, p, sp->op);
    R->chunk = ncclproto_chunk_bytes(a, p, sp->op);
    R->maxpeer = (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE ? sp->ppn : 0) + 4;
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) && !sp->cl->node.nvls) {
        *err = g_strdup("NVLS needs NVLink SHARP; expected a node kind with nvls");
        return false;
    }
    if (a == NCCL_ALGO_NVLSTREE && (sp->nodes < 2 || sp->op != NCCL_OP_ALLREDUCE)) {
        *err = g_strdup("NVLSTree is an all-reduce between nodes; expected NVLS on one node");
        return false;
    }
    if (a == NCCL_ALGO_NVLS && sp->nodes > 1) {
        *err = g_strdup("NVLS runs on one node; expected NVLSTree between nodes");
        return false;
    }
    if (a == NCCL_ALGO_TREE && sp->op != NCCL_OP_ALLREDUCE) {
        *err = g_strdup_printf("NCCL has no Tree %s; expected Ring", nccl_op_name(sp->op));
        return false;
    }
    uint64_t S = sp->bytes ? sp->bytes : 1;
    bool per_rank = a == NCCL_ALGO_RING && (sp->op == NCCL_OP_REDUCESCATTER || sp->op == NCCL_OP_ALLGATHER);
    R->total = per_rank ? ncclsched_div_up(S, (uint64_t)R->n) : S;
    bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE;
    uint64_t parts = a == NCCL_ALGO_TREE || (a == NCCL_ALGO_RING && sp->op != NCCL_OP_ALLREDUCE) ? 1
                   : nvls ? (uint64_t)sp->ppn : (uint64_t)R->n;
    uint64_t conc = (uint64_t)R->C * sp->ppn;
    if (a == NCCL_ALGO_NVLS) {   /* E:1751-1753: a smaller chunk for smaller sizes */
        if (S < 64 * conc * R->chunk && R->chunk > 65536)
            R->chunk = 65536;
        if (S < 8 * conc * R->chunk && R->chunk > 32768)
            R->chunk = 32768;
        if (S < 2 * conc * R->chunk && R->chunk > 16384)
            R->chunk = 16384;
    }
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128) {   /* E:1762-1767 */
        double ppn = sp->ppn, steps = 1 + floor(log2((double)sp->nodes)) + 0.1 * ppn;
        while ((double)(S / ((uint64_t)R->C * R->chunk)) < steps * 64 / ppn && R->chunk > 131072)
            R->chunk /= 2;
        while ((double)(S / ((uint64_t)R->C * R->chunk)) < steps * 16 / ppn && R->chunk > 32768)
            R->chunk /= 2;
    }
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_SIMPLE && nccl_release_tree_depth_chunk(sp->release)) {
        /* 2.18, 2.19 (nccl.h): halved while a channel would get few chunks for the tree's depth */
        uint64_t d = (uint64_t)sp->ppn - 1 + (uint64_t)floor(log2((double)sp->nodes)), CC = (uint64_t)R->C;
        while (S / (CC * R->chunk) < d * 8 && R->chunk > 131072)
            R->chunk /= 2;
        while (S / (CC * R->chunk) < d * 4 && R->chunk > 65536)
            R->chunk /= 2;
        while (S / (CC * R->chunk) < d && R->chunk > 32768)
            R->chunk /= 2;
    }
    if (a == NCCL_ALGO_NVLSTREE) {   /* E:1754-1761 */
        if (sp->nodes >= 4 && R->chunk > 65536)
            R->chunk = 65536;
        uint64_t caps[4][2] = {{32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}};
        for (int i = 0; i < 4; i++)
            if (S < caps[i][0] * conc * R->chunk && R->chunk > caps[i][1])
                R->chunk = caps[i][1];
    }
    R->loop_span = (uint64_t)R->C * parts * R->chunk;
    R->nloops = ncclsched_div_up(R->total, R->loop_span);
    R->scratch.recv = ncclsched_ints(R, (uint64_t)R->maxpeer);
    R->scratch.send = ncclsched_ints(R, (uint64_t)R->maxpeer);
    if (a == NCCL_ALGO_RING)
        ncclsched_build_ring(R);
    else if (a == NCCL_ALGO_TREE)
        ncclsched_build_tree(R);
    else
        ncclsched_build_nvls(R);
    return true;
}

static void run_free(Run *R)
{
    g_free(R->pend);
    g_free(R->nb);
    g_free(R->nb_k);
    g_free(R->until);
    ncclsym_free(R->sym);
    if (R->batch)
        g_array_unref(R->batch);
    if (R->batch_tmp)
        g_array_unref(R->batch_tmp);
    ncclproxy_free(R->proxy);
    if (R->px_plan)
        g_array_unref(R->px_plan);
    g_free(R->px_host);
    g_free(R->px_wire);
    g_free(R->px_in);
    g_free(R->px_out);
    g_aligned_free(R->lane);
    g_aligned_free(R->cq);
    if (R->lanes)
        g_array_unref(R->lanes);
    if (R->conns)
        g_array_unref(R->conns);
    g_free(R->ring);
    g_free(R->tree);
    g_free(R->conn_up);
    g_free(R->conn_dn);
    g_free(R->nv);
    g_free(R->scratch.recv);
    g_free(R->scratch.send);
    ncclroute_free(R->routes);
    if (R->net)
        net_free(R->net);
    if (R->sim)
        sim_free(R->sim);
}

/* Plans R for sp (R zeroed) on no Sim yet: 1 ready to start, 0 a
 * call of one rank (nothing to run), -1 + *err when sp cannot run. */
static int run_prepare(Run *R, const NcclSimSpec *sp, char **err)
{
    *R = (Run){0};
    if (sp->nodes < 1 || sp->ppn < 1 || sp->ppn > sp->cl->node.ngpus || sp->nodes > sp->cl->fab.nodes) {
        *err = g_strdup_printf("%d nodes x %d GPUs; expected at most %d nodes of at most %d GPUs", sp->nodes, sp->ppn,
                               sp->cl->fab.nodes, sp->cl->node.ngpus);
        return -1;
    }
    if (sp->node0 < 0 || sp->gpu0 < 0 || sp->node0 > sp->cl->fab.nodes - sp->nodes ||
        sp->gpu0 > sp->cl->node.ngpus - sp->ppn) {
        *err = g_strdup_printf("%d nodes x %d GPUs from node %d's GPU %d; expected them inside %d nodes of %d GPUs",
                               sp->nodes, sp->ppn, sp->node0, sp->gpu0, sp->cl->fab.nodes, sp->cl->node.ngpus);
        return -1;
    }
    NcclLayout ly;
    ncclshape_layout(sp, &ly);
    *R = (Run){.sp = sp, .conns = g_array_sized_new(FALSE, FALSE, sizeof(Conn), (guint)ly.conns),
               .lanes = g_array_sized_new(FALSE, FALSE, sizeof(Lane), (guint)ly.lanes), .sent = sp->rank_bytes};
    if (R->sent)
        memset(R->sent, 0, sizeof(uint64_t) * (size_t)sp->nodes * (size_t)sp->ppn);
    R->routes = ncclroute_new_at(sp->topo, sp->cl, sp->gpu0, sp->nodes, sp->ppn);
    if (sp->nodes * sp->ppn <= 1)
        return 0;
    if (sp->cl->node.nic_proxy_s > 0)
        R->px_plan = g_array_new(FALSE, FALSE, sizeof(int32_t));
    if (!plan(R, err))
        return -1;
    lat_tables(R);
    cap_init(R);
    R->nlanes = R->lanes->len;
    R->lane = g_aligned_alloc(R->nlanes ? R->nlanes : 1, sizeof(Lane), 64);
    memcpy(R->lane, R->lanes->data, (size_t)R->nlanes * sizeof(Lane));
    g_array_unref(R->lanes);
    R->lanes = NULL;
    R->cq = g_aligned_alloc(R->conns->len ? R->conns->len : 1, sizeof(ConnQ), 64);
    for (guint i = 0; i < R->conns->len; i++) {
        const Conn *c = &g_array_index(R->conns, Conn, i);
        R->cq[i] = (ConnQ){.route = c->route, .send_wait = -1, .recv_wait = -1, .hw = c->hw, .sw = c->sw};
    }
    if (R->sp->choice.algo == NCCL_ALGO_NVLS || R->sp->choice.algo == NCCL_ALGO_NVLSTREE)
        R->pend = ncclsched_ints(R, (uint64_t)R->nlanes * R->maxpeer);
    if (sp->choice.algo == NCCL_ALGO_RING || sp->choice.algo == NCCL_ALGO_TREE) {
        R->batch = g_array_new(FALSE, FALSE, sizeof(Send));
        R->batch_tmp = g_array_new(FALSE, FALSE, sizeof(Send));
    }
    R->live = 0;
    for (guint i = 0; i < R->nlanes; i++) {
        R->live += R->lane[i].nops > 0;
        if (R->lane[i].kind == LANE_RING)   /* a ring lane's send has one key for all its ops */
            R->lane[i].rg_key = tie_key(R, &R->lane[i], 0);
    }
    return 1;
}

/* What R did (its events: ev). */
static void run_stats(const Run *R, uint64_t ev, NcclSimStats *st)
{
    *st = (NcclSimStats){.events = ev, .msgs = R->msgs * (uint64_t)(R->h * R->T),
                         .data_bytes = R->data * (uint64_t)(R->h * R->T),
                         .lanes = R->nlanes, .conns = R->conns->len,
                         .sched_bytes = R->held + R->nlanes * sizeof(Lane) + R->conns->len * (sizeof(Conn) +
                                                                                                sizeof(ConnQ))};
}

double ncclsim_time(const NcclSimSpec *sp, NcclSimStats *st, char **err)
{
    Run R;
    if (st)
        *st = (NcclSimStats){0};
    int ready = run_prepare(&R, sp, err);
    if (ready <= 0) {
        run_free(&R);
        return ready;
    }
    R.sim = sim_new(SIM_DEFAULT_SEED);
    px_init(&R);
    R.net = net_new(R.sim, sp->topo);
    net_set_stats(R.net, false);   /* nothing reads them; a link is then one line a hop */
    evq_set_hint(R.sim->q, fire, lane_hint, NULL);
    evq_set_hint(R.sim->q, wake_ev, lane_hint, NULL);
    net_set_deliver_hint(R.net, delivered, delivered_hint, arrive_hint);
    evq_set_hint(R.sim->q, arrive, arrive_hint, NULL);
    simtime_t t0;
    sim_seconds_to_ps(launch_us(sp) * 1e-6, &t0);
    sim_at(R.sim, t0, start_all, &R, NULL);
    bool ok = sim_run(R.sim);
    double t = sim_ps_to_seconds(R.end > t0 ? R.end : t0);
    if (!ok || R.live != 0) {
        *err = ok ? g_strdup_printf("the %s schedule stopped with %d lanes unfinished; expected none (a bug)",
                                    nccl_algo_name(sp->choice.algo), R.live)
                  : g_strdup(R.sim->error);
        t = -3;
    }
    if (R.sent && R.T > 1)
        nccltrans_unmerge_sent(&R);
    if (R.sent && R.h > 1)
        ncclsched_unmerge_sent(&R);
    if (st)
        run_stats(&R, R.sim->events, st);
    run_free(&R);
    return t;
}

/* ---- live runs on a shared Sim and Net ---- */

static void live_done(void *ctx, void *data)
{
    NcclLive *x = ctx;
    (void)data;
    x->done(x->ctx, x->data);
}

static void live_arrived(Run *R)
{
    R->lv->arrived++;
}

/* The run ended once its lanes did and its messages (those of this
 * picosecond's batch too) were delivered, at the later of that moment and
 * the last op's hold (Run.end, as ncclsim_time reports): done, from an
 * event of its own, so that the caller may free it there. */
static void live_check(Run *R)
{
    NcclLive *x = R->lv;
    if (x->ended || R->live != 0 || x->arrived != R->msgs || (R->batch && R->batch->len))
        return;
    x->ended = true;
    x->end = R->end > R->sim->now ? R->end : R->sim->now;   /* a capped op may hold its lane past the last arrival */
    sim_at(R->sim, x->end, live_done, x, NULL);
}

static void live_begin(void *ctx, void *data)
{
    Run *R = ctx;
    start_all(R, data);
    live_check(R);
}

NcclLive *ncclsim_start(const NcclSimSpec *sp, Sim *sim, Net *net, void (*done)(void *ctx, void *data), void *ctx,
                        void *data, char **err)
{
    NcclLive *x = g_new0(NcclLive, 1);
    x->spec = *sp;
    x->spec.full = sp->full || !sp->live_orbits;
    x->spec.rank_bytes = NULL;
    int ready = run_prepare(&x->R, &x->spec, err);
    if (ready < 0) {
        ncclsim_live_free(x);
        return NULL;
    }
    x->R.sim = sim;
    x->R.net = net;
    x->R.lv = x;
    px_init(&x->R);
    x->start = sim->now;
    x->done = done;
    x->ctx = ctx;
    x->data = data;
    if (ready == 0) {   /* one rank: nothing moves, as ncclsim_time's 0 */
        x->ended = true;
        x->end = sim->now;
        sim_after(sim, 0, live_done, x, NULL);
        return x;
    }
    simtime_t t0;
    sim_seconds_to_ps(launch_us(&x->spec) * 1e-6, &t0);
    sim_after(sim, t0, live_begin, &x->R, NULL);
    return x;
}

simtime_t ncclsim_live_start(const NcclLive *x)
{
    return x->start;
}

simtime_t ncclsim_live_end(const NcclLive *x)
{
    return x->end;
}

void ncclsim_live_stats(const NcclLive *x, NcclSimStats *st)
{
    run_stats(&x->R, 0, st);
}

void ncclsim_live_set_slow(NcclLive *x, int host, double s)
{
    const NcclSimSpec *sp = &x->spec;
    int G = sp->cl->node.ngpus, node = host / G - sp->node0, gpu = host % G - sp->gpu0;
    if (host < 0 || node < 0 || node >= sp->nodes || gpu < 0 || gpu >= sp->ppn || x->R.n < 1)
        return;
    if (!x->rank_s) {
        if (s == 0)
            return;
        x->rank_s = g_new0(double, (size_t)x->R.n);
    }
    x->rank_s[node * sp->ppn + gpu] = s;
}

void ncclsim_live_free(NcclLive *x)
{
    if (!x)
        return;
    g_free(x->rank_s);
    x->R.sim = NULL;   /* borrowed */
    x->R.net = NULL;
    run_free(&x->R);
    g_free(x);
}

int ncclsim_orbit(const NcclSimSpec *sp, uint32_t *img)
{
    Run R;
    char *err = NULL;
    int h = run_prepare(&R, sp, &err) > 0 ? R.h * R.T : 1;
    for (uint32_t l = 0; img && R.sym && h > 1 && l < sp->topo->links->len; l++) {
        uint32_t v = ncclsym_image(R.sym, l);
        if (v != UINT32_MAX && img[l] != UINT32_MAX && img[l] != v)
            h = 1;
        else if (v != UINT32_MAX)
            img[l] = v;
    }
    g_free(err);
    run_free(&R);
    return h;
}

int ncclsim_live_orbit(const NcclLive *x)
{
    return x->R.n > 1 ? x->R.h * x->R.T : 1;
}

void ncclsim_live_set_batch(NcclLive *x, void (*pend)(void *ctx, NcclLive *x), void *ctx, uint64_t order)
{
    x->pend = pend;
    x->pend_ctx = ctx;
    x->order = order;
}

uint64_t ncclsim_live_order(const NcclLive *x)
{
    return x->order;
}

void ncclsim_live_flush(NcclLive *x)
{
    flush(&x->R, NULL);
}
