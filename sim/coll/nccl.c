/* nccl — NCCL's names and its tuner; see nccl.h. Every table and rule
 * below is NCCL v2.21.5-1's, at the place docs/dev/references-nccl.md
 * gives (T: src/graph/tuning.cc, E: src/enqueue.cc, S: src/graph/search.cc,
 * C: src/graph/connect.cc, P: src/graph/paths.cc, by line). */
#include "coll/nccl.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const algo_names[NCCL_NALGOS] = {"Tree", "Ring", "NVLS", "NVLSTree"};
static const char *const proto_names[NCCL_NPROTOS] = {"LL", "LL128", "Simple"};
static const char *const op_names[NCCL_NOPS] = {"allreduce", "reducescatter", "allgather", "broadcast"};

const char *nccl_algo_name(NcclAlgo a) { return (unsigned)a < NCCL_NALGOS ? algo_names[a] : "?"; }
const char *nccl_proto_name(NcclProto p) { return (unsigned)p < NCCL_NPROTOS ? proto_names[p] : "?"; }
const char *nccl_op_name(NcclOp o) { return (unsigned)o < NCCL_NOPS ? op_names[o] : "?"; }

static bool parse_in(const char *s, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0) {
            *out = i;
            return true;
        }
    return false;
}

bool nccl_algo_parse(const char *s, NcclAlgo *out) { return parse_in(s, algo_names, NCCL_NALGOS, (int *)out); }
bool nccl_proto_parse(const char *s, NcclProto *out) { return parse_in(s, proto_names, NCCL_NPROTOS, (int *)out); }
bool nccl_op_parse(const char *s, NcclOp *out) { return parse_in(s, op_names, NCCL_NOPS, (int *)out); }

static const char *const release_names[NCCL_NRELS] = {"2.21", "2.18", "2.19", "2.20"};

const char *nccl_release_name(NcclRelease r) { return (unsigned)r < NCCL_NRELS ? release_names[r] : "?"; }

bool nccl_release_parse(const char *s, NcclRelease *out) { return parse_in(s, release_names, NCCL_NRELS, (int *)out); }

/* tuning.cc: 2.18 baseLat (v2.18.5-1:59, hwLat 0); 2.19, 2.20 hwLat (v2.20.5-1:69); 2.21 T:69. */
double nccl_nvls_lat_us(NcclRelease r) { return r == NCCL_REL_2_21 ? 25.0 : 23.0; }

/* NVLS all-reduce kernel, all_reduce.h at v2.18.5-1 (src/collectives/device/, 411-434) and
 * v2.19.4-1 (src/device/, 411-422): offset = gridOffset + bid x nHeads x chunkSize; from v2.20.3-1
 * E:346-347 splits the count over the channels first (the kernel's oneNode path, all_reduce.h:384-386). */
bool nccl_release_nvls_grid(NcclRelease r) { return r == NCCL_REL_2_18 || r == NCCL_REL_2_19; }

/* tuning.cc's hwLat Tree rows: v2.18.5-1:67, 71, 75 (Simple 4, 6, 14); 28 on each at v2.19.4-1:67-75 and T:67-75. */
double nccl_tree_simple_hw_lat_us(NcclHw hw, NcclRelease r)
{
    static const double v218[3] = {4, 6, 14};
    return r == NCCL_REL_2_18 ? v218[hw] : 28;
}

/* enqueue.cc v2.18.5-1:1313-1318, v2.19.4-1:1349-1354 (the tree's depth: connect.cc:135); from v2.20.3-1
 * computeCollChunkInfo (E:1722-1771) has no Tree/Simple rule. */
bool nccl_release_tree_depth_chunk(NcclRelease r) { return r == NCCL_REL_2_18 || r == NCCL_REL_2_19; }

double nccl_busbw_factor(NcclOp o, int n)
{
    if (n <= 1)
        return o == NCCL_OP_BROADCAST ? 1 : 0;
    return o == NCCL_OP_ALLREDUCE ? 2.0 * (n - 1) / n : o == NCCL_OP_BROADCAST ? 1.0 : (double)(n - 1) / n;
}

/* The NVLS graph of n GPUs on one NVSwitch (the NICs trimmed, P:678-681),
 * as NCCL's search finds it: one channel a GPU, each GPU the head of one
 * (S:895-902); a channel of speed s takes s through every GPU's NVLink
 * each way and 2s through its head's (S:337-371), so the speed is the
 * fastest of sm90SpeedArrayIntra (S:855) at most nvl / (n - 1) (the
 * search's start, totalBw x n/(n - 1) over n channels: S:919-923) with
 * (n + 1) s <= nvl (lowered until the search succeeds: S:990-994; no
 * duplication for NVLS: S:837); the graph's bandwidth n x s, GB/s. */
static double nvls_graph_GBps(double nvl, int n)
{
    static const double speeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
    size_t i = 0, k = G_N_ELEMENTS(speeds);
    while (i + 1 < k && (speeds[i] > nvl || speeds[i] * (n - 1) > nvl || speeds[i] * (n + 1) > nvl))
        i++;
    return n * speeds[i];
}

/* The ring graph of GPUs on one NVSwitch, each GPU's NVLink nvl GB/s to
 * the switch, as NCCL's search finds it: the fastest speed s of the
 * release's table within nvl (S:850, 855, 922) gives floor(nvl / s)
 * channels, at most MAXCHANNELS/2 = 16 (init.cc:1051); slower speeds are
 * tried while s / best > .49 and one is kept only if channels x s grows
 * (S:380-384, 991-994), until channels x s reaches nvl or 16 channels
 * (S:465, 957); the result is duplicated when its speed is >= 25 GB/s,
 * except on Hopper below 50 GB/s with more than 4 channels (S:835-848),
 * and the communicator doubles it (C:443). 24 on DGX A100 (6 x 40 GB/s,
 * duplicated) and on DGX H100 (6 x 60). */
static int nvswitch_channels(double nvl, int compcap)
{
    static const double sm80[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
    static const double sm90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
    const double *sp = compcap >= 90 ? sm90 : sm80;
    size_t k = compcap >= 90 ? G_N_ELEMENTS(sm90) : G_N_ELEMENTS(sm80), i = 0;
    while (i + 1 < k && sp[i] > nvl)
        i++;
    int nch = 0;
    double speed = 0;
    for (; i < k && (nch == 0 || sp[i] / speed > .49); i++) {
        int c = (int)floor(nvl / sp[i] + 1e-9);
        c = c > 16 ? 16 : c;
        if (c * sp[i] > nch * speed) {
            nch = c;
            speed = sp[i];
        }
        if (nch == 16 || nch * speed >= nvl)
            break;
    }
    if (nch == 0)
        nch = 1;
    if (speed >= 25.0 && !(compcap > 80 && speed < 50.0 && nch > 4))
        nch = 2 * nch > 16 ? 16 : 2 * nch;
    return 2 * nch;
}

void nccl_system_from_node(const NodeSpec *n, int ranks, int nodes, NcclSystem *sys)
{
    memset(sys, 0, sizeof *sys);
    sys->nranks = ranks;
    sys->nnodes = nodes;
    sys->compcap = n->compcap;
    sys->nvlink = n->fabric != NODE_FABRIC_PCIE;
    sys->nvls = n->nvls;
    double nvl = node_gpu_nvlink_Bps(n) / 1e9;
    int ch = sys->nvlink ? 2 * (int)ceil(nvl / 24.0) : 2;
    sys->channels = ch > 32 ? 32 : ch;
    if (n->fabric == NODE_FABRIC_NVSWITCH)
        sys->channels = nvswitch_channels(nvl, sys->compcap);
    if (nodes > 1 && n->nnics > 0)   /* between nodes a graph channel is a NIC; NCCL doubles them */
        sys->channels = 2 * n->nnics;
    sys->nvls_channels = 16;                                  /* NCCL_NVLS_NCHANNELS' default */
    sys->bw_intra_GBps = sys->nvlink ? nvl : n->pcie_Bps / 1e9;
    int ppn = ranks / nodes;
    int nics = n->nnics < ppn ? n->nnics : ppn;
    sys->bw_inter_GBps = nodes > 1 ? nics * n->nic_Bps / 1e9 : sys->bw_intra_GBps;
    if (nodes > 1 && ppn == 1 && n->nnics > 0) {
        /* one GPU a node: the search finds one channel through the GPU's
         * own NIC (S:400-420: local NICs first; P:604-622: no PXN without a
         * second local GPU) at the path's bandwidth, duplicated when that
         * is >= 25 GB/s (S:835-846), then doubled (C:443); the graph's
         * intra bandwidth is its inter (both one speed, S:923) */
        double path = fmin(n->nic_Bps, n->pcie_Bps) / 1e9;
        sys->channels = path >= 25.0 ? 4 : 2;
        sys->bw_intra_GBps = sys->bw_inter_GBps;
    }
    sys->nvls_bw_GBps = sys->bw_intra_GBps;
    if (sys->nvls && nodes == 1 && ranks > 2)
        sys->nvls_bw_GBps = nvls_graph_GBps(nvl, ranks);
}

/* T:56-59, T:65-78 (us). */
static const double base_lat[2][NCCL_NPROTOS] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
#define HW_NVLINK NCCL_HW_NVLINK
#define HW_PCI NCCL_HW_PCI
#define HW_NET NCCL_HW_NET
static const double hw_lat[3][NCCL_NALGOS][NCCL_NPROTOS] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}},
};
/* T:86-106 (GB/s): [compcap index][nodes index]. */
static const double ll_max_bw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
static const double per_ch_ring_ll128[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}};
static const double per_ch_tree_ll128[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}};
static const double per_ch_tree[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
/* T:412-416: Tree's correction by log2(bytes/64). */
static const double tree_corr[NCCL_NPROTOS][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

double nccl_base_lat_us(NcclAlgo a, NcclProto p)
{
    return a <= NCCL_ALGO_RING ? base_lat[a][p] : 0;
}

double nccl_hw_lat_us(NcclHw hw, NcclAlgo a, NcclProto p)
{
    return hw_lat[hw][a][p];
}

static int log2i(uint64_t n)
{
    int l = 0;
    while (n >>= 1)
        l++;
    return l;
}

/* T:166-172 and T:268-320: whether NCCL runs (op, a, p) here at all. */
static bool available(const NcclSystem *s, NcclOp op, NcclAlgo a, NcclProto p)
{
    if (op == NCCL_OP_BROADCAST && a != NCCL_ALGO_RING)
        return false;
    if ((op == NCCL_OP_REDUCESCATTER || op == NCCL_OP_ALLGATHER) && a != NCCL_ALGO_RING && a != NCCL_ALGO_NVLS)
        return false;
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) && (p != NCCL_PROTO_SIMPLE || !s->nvls))
        return false;
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) && s->nranks / s->nnodes <= 2)   /* nvls.cc:241 */
        return false;
    if (a == NCCL_ALGO_NVLSTREE && s->nnodes == 1)
        return false;
    if (a == NCCL_ALGO_NVLS && s->nnodes > 1)                 /* no CollNet: T:290 */
        return false;
    return true;
}

/* LL128 on by default only inside NVLink nodes of one Volta/Ampere/Hopper
 * kind (T:305-317), or with one GPU a node (its graph's path is local). */
static bool default_on(const NcclSystem *s, NcclProto p)
{
    bool one = s->nnodes > 1 && s->nranks == s->nnodes;
    return p != NCCL_PROTO_LL128 || ((s->nvlink || one) && (s->compcap == 70 || s->compcap == 80 || s->compcap == 90));
}

void nccl_model(const NcclSystem *s, NcclOp op, NcclAlgo a, NcclProto p, double *lat_us, double *bw_GBps)
{
    *lat_us = 0;
    *bw_GBps = 0;
    if (s->nranks <= 1 || !available(s, op, a, p))
        return;
    int n = s->nranks, nn = s->nnodes;
    int cc = s->compcap >= 90 ? 2 : s->compcap >= 80 ? 1 : 0, i2 = nn <= 2 ? nn - 1 : 2;
    double llmax = ll_max_bw[nn == 1 ? cc : 0][i2], ppn = (double)n / nn;
    int nsteps = op == NCCL_OP_ALLREDUCE ? 2 * (n - 1) : op == NCCL_OP_BROADCAST ? n : n - 1;
    int ninter = op == NCCL_OP_ALLREDUCE ? (nn > 1 ? 2 * nn : 0) : op == NCCL_OP_BROADCAST ? nn : nn - 1;
    double bw = nn <= 2 ? s->bw_intra_GBps : s->bw_inter_GBps;   /* T:174-177, all channels */
    if (a == NCCL_ALGO_NVLS)
        bw = fmin(s->nvls_bw_GBps, s->bw_inter_GBps);
    if (a == NCCL_ALGO_NVLSTREE)
        bw = fmin(s->nvls_bw_GBps, nn <= 2 ? s->bw_inter_GBps : s->bw_inter_GBps / 2);
    double bus = bw;
    int ch = s->channels;
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL)            /* T:180-184 */
        bus = fmin(llmax, bus * .5);
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128)
        bus = fmin(bus * (ppn < 2 ? 0.7 : 0.92), ch * per_ch_ring_ll128[cc][i2]);
    if (a == NCCL_ALGO_TREE)
        bus = fmin(bus * .92, ch * per_ch_tree[cc][i2]);
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL)
        bus = fmin(bus / 3.8, llmax);
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128)
        bus = fmin(bus * (nn == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * per_ch_tree_ll128[cc][i2]);
    if (a == NCCL_ALGO_TREE && n == nn)   /* one GPU a node: the search's TREE pattern (S:897, T:185) */
        bus *= .85;
    bus *= a == NCCL_ALGO_RING ? (double)n / nsteps : a == NCCL_ALGO_TREE ? .5 : 5.0 / 6.0;   /* T:213-219 */
    int intra_hw = s->nvlink && n > nn ? HW_NVLINK : HW_PCI;   /* one GPU a node: not an NVLink graph (T:154) */
    int ai = a == NCCL_ALGO_TREE ? 0 : 1;
    double lat = a <= NCCL_ALGO_RING ? base_lat[ai][p] : 0;
    double intra = hw_lat[intra_hw][a][p], inter = hw_lat[HW_NET][a][p];   /* T:225-229 */
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_SIMPLE) {
        intra = nccl_tree_simple_hw_lat_us((NcclHw)intra_hw, s->release);
        inter = nccl_tree_simple_hw_lat_us(NCCL_HW_NET, s->release);
    }
    if (a == NCCL_ALGO_RING) {
        if (op == NCCL_OP_BROADCAST) {
            lat += hw_lat[nn == 1 ? intra_hw : HW_NET][a][p];             /* sameChannels: T:233-235 */
        } else {
            double net_over = nn > 1 ? (p == NCCL_PROTO_SIMPLE ? 3.0 : 1.0) : 0;   /* Intel CPU: T:111-118, T:243-246 */
            intra = fmax(intra, net_over);
            lat += (nsteps - ninter) * intra + ninter * inter;
        }
    } else if (a == NCCL_ALGO_TREE) {
        lat += 2 * ((n / nn - 1) * intra + log2i((uint64_t)nn) * inter);
    } else if (a == NCCL_ALGO_NVLS) {
        lat = nccl_nvls_lat_us(s->release) + (nn > 1 ? inter : 0);
    } else {
        lat += intra + 2 * log2i((uint64_t)nn) * inter;
    }
    *lat_us = lat;
    *bw_GBps = bus;
}

double nccl_lane_cap_GBps(const NcclSystem *s, NcclAlgo a, NcclProto p, bool in_node)
{
    int nn = s->nnodes < 1 ? 1 : s->nnodes;
    int cc = s->compcap >= 90 ? 2 : s->compcap >= 80 ? 1 : 0, i2 = nn <= 2 ? nn - 1 : 2;
    if (in_node && p == NCCL_PROTO_LL)   /* LL's multi-node row is the network path's (T:143-145): one node's */
        nn = 1, i2 = 0;
    double ll = ll_max_bw[nn == 1 ? cc : 0][i2] / (s->channels > 0 ? s->channels : 1);
    if (a == NCCL_ALGO_RING)
        return p == NCCL_PROTO_LL ? ll : p == NCCL_PROTO_LL128 ? per_ch_ring_ll128[cc][i2] : 0;
    if (a == NCCL_ALGO_TREE) {
        double ch = p == NCCL_PROTO_LL128 ? per_ch_tree_ll128[cc][i2] : per_ch_tree[cc][i2];
        return (p == NCCL_PROTO_LL ? fmin(ch, ll) : ch) / 2;
    }
    return 0;
}

/* E:1566-1606: channels and threads for this size. */
static void channels_threads(const NcclSystem *s, uint64_t bytes, NcclChoice *c, int forced)
{
    bool nvls = c->algo == NCCL_ALGO_NVLS || c->algo == NCCL_ALGO_NVLSTREE;
    int nt = nvls ? 640 : c->proto == NCCL_PROTO_LL128 ? 640 : 512;
    if (c->algo == NCCL_ALGO_RING && c->proto == NCCL_PROTO_SIMPLE && s->bw_intra_GBps <= 12.0)
        nt = 256;                                                     /* T:121 */
    double thr = c->proto == NCCL_PROTO_SIMPLE ? 64 : 8;              /* collectives.h THREAD_THRESHOLDs */
    if (c->algo == NCCL_ALGO_RING && c->proto == NCCL_PROTO_LL)
        thr *= s->nranks;                                             /* T:381 */
    int nc = forced > 0 ? forced : nvls ? s->nvls_channels : s->channels;
    if (forced <= 0 && !nvls)
        while ((double)bytes < (double)nc * nt * thr && nc >= 2)
            nc--;
    if (!nvls)
        while ((double)bytes < (double)nc * nt * thr && nt % 128 == 0)
            nt /= 2;
    if (c->proto == NCCL_PROTO_SIMPLE && c->algo == NCCL_ALGO_RING)
        nt += 32;
    if (c->proto == NCCL_PROTO_SIMPLE && c->algo == NCCL_ALGO_TREE)
        nt += 128;
    c->channels = nc;
    c->threads = nt < 96 ? 96 : nt;
}

/* T:418-444: the model's time of (a, p) for bytes, us; < 0 unavailable. */
static double algo_time_us(const NcclSystem *s, NcclOp op, NcclAlgo a, NcclProto p, uint64_t bytes, int forced_ch,
                           double *lat_out, double *bw_out)
{
    double lat, bw;
    nccl_model(s, op, a, p, &lat, &bw);
    if (bw <= 0)
        return -1;
    int ls = log2i(bytes >> 6);
    if (a == NCCL_ALGO_TREE && ls < 23)
        bw *= tree_corr[p][ls];
    int comm_ch = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE ? s->nvls_channels : s->channels;
    if (forced_ch > 0)
        bw = bw / comm_ch * forced_ch;
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE && s->nnodes > 1 && op == NCCL_OP_ALLREDUCE &&
        bytes / ((uint64_t)s->channels * s->nranks) >= 64)
        lat *= s->compcap < 80 ? 1.9 : 1.4;
    *lat_out = lat;
    *bw_out = bw;
    return lat + (double)bytes / (1000.0 * bw);
}

/* What NCCL runs for op on s, any protocol forced: "Ring (LL, LL128,
 * Simple), Tree (LL, LL128, Simple) or NVLS (Simple)" (g_free). */
static char *runnable(const NcclSystem *s, NcclOp op, uint64_t bytes)
{
    static const NcclAlgo order[] = {NCCL_ALGO_RING, NCCL_ALGO_TREE, NCCL_ALGO_NVLS, NCCL_ALGO_NVLSTREE};
    GPtrArray *runs = g_ptr_array_new_with_free_func(g_free);
    for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
        GString *g = g_string_new(NULL);
        double lat, bw;
        for (int p = 0; p < NCCL_NPROTOS; p++)
            if (algo_time_us(s, op, order[i], p, bytes, 0, &lat, &bw) >= 0)
                g_string_append_printf(g, "%s%s", g->len ? ", " : "", proto_names[p]);
        if (g->len)
            g_ptr_array_add(runs, g_strdup_printf("%s (%s)", algo_names[order[i]], g->str));
        g_string_free(g, TRUE);
    }
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < runs->len; i++)
        g_string_append_printf(out, "%s%s", i == 0 ? "" : i + 1 < runs->len ? ", " : " or ",
                               (char *)g_ptr_array_index(runs, i));
    g_ptr_array_unref(runs);
    return g_string_free(out, FALSE);
}

bool nccl_tune(const NcclSystem *s, NcclOp op, uint64_t bytes, int algo, int proto, int channels, NcclChoice *out,
               char **err)
{
    memset(out, 0, sizeof *out);
    double best = -1;
    for (int a = 0; a < NCCL_NALGOS; a++)
        for (int p = 0; p < NCCL_NPROTOS; p++) {
            if ((algo >= 0 && a != algo) || (proto >= 0 && p != proto) || (proto < 0 && !default_on(s, p)))
                continue;
            double lat, bw, t = algo_time_us(s, op, a, p, bytes, channels, &lat, &bw);
            if (t >= 0 && (best < 0 || t < best)) {
                best = t;
                *out = (NcclChoice){.algo = a, .proto = p, .lat_us = lat, .bw_GBps = bw, .time_s = t * 1e-6};
            }
        }
    if (best < 0 && s->nranks > 1) {
        char *can = runnable(s, op, bytes);
        *err = g_strdup_printf("NCCL cannot run %s%s%s%s for %s on %d GPUs in %d node%s%s; expected what NCCL runs "
                               "there: %s%s",
                               algo >= 0 ? "algorithm " : "", algo >= 0 ? algo_names[algo] : "",
                               proto >= 0 ? (algo >= 0 ? " with protocol " : "protocol ") : "",
                               proto >= 0 ? proto_names[proto] : "", op_names[op], s->nranks, s->nnodes,
                               s->nnodes > 1 ? "s" : "", s->nvls ? "" : " without NVLink SHARP", can,
                               op == NCCL_OP_ALLREDUCE ? " (NVLS needs an H100 NVSwitch and more than 2 GPUs a node, "
                                                         "NVLSTree more than one node, NVLS one node)" : "");
        g_free(can);
        return false;
    }
    if (s->nranks <= 1) {
        *out = (NcclChoice){.algo = algo >= 0 ? algo : NCCL_ALGO_RING, .proto = proto >= 0 ? proto : NCCL_PROTO_SIMPLE};
        out->channels = 1;
        out->threads = 96;
        return true;
    }
    channels_threads(s, bytes, out, channels);
    return true;
}
