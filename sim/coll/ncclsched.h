/* ncclsched — an NCCL run's state (ncclsim.h) and its schedules: per
 * channel the lanes (a GPU's sequence of ops), the connections between
 * them and each op's receives and sends, for Ring, Tree and NVLS; and,
 * where ncclsym.h's orbits hold, one channel of each orbit on links
 * merged by orbit, and where nccltrans.h's translation holds, a Ring's
 * first block of nodes. Private to ncclsim.c, ncclsched.c and nccltrans.c.
 */
#ifndef ARSIM_NCCLSCHED_H
#define ARSIM_NCCLSCHED_H

#include "coll/ncclsim.h"
#include "coll/ncclproxy.h"
#include "coll/ncclroute.h"
#include "coll/ncclsym.h"

#define NS_TREE_PEERS 3             /* a tree op's most receives, and its most sends */

typedef enum { LANE_TREE_UP, LANE_TREE_DOWN, LANE_TREE_ROOT, LANE_RING, LANE_NV_LD, LANE_NV_RES, LANE_SW_RED,
               LANE_SW_MC } LaneKind;

/* A connection: what it is (Conn, while planning) and, made from it once
 * planned, all the run touches of it (ConnQ): half a 64-byte line, the
 * route and the flow state that an op's start, its sends and a delivery
 * read. Slice counts are kept modulo 2^32: only their differences
 * (at most the window) and their equality are used. */
typedef struct {
    const TopoRoute *route;  /* borrowed from the route cache */
    uint8_t hw;              /* NcclHw of the connection */
    bool sw;                 /* to or from the NVSwitch (NVLS): at the switch's port rate */
} Conn;

typedef struct {
    const TopoRoute *route;  /* Conn.route */
    uint32_t sent, arrived, consumed;  /* slices, modulo 2^32; consumed <= arrived, sent - consumed <= W */
    int32_t send_wait;       /* a lane waiting for a free slot, or -1 */
    int32_t recv_wait;       /* the receiving lane waiting for a slice, or -1 */
    uint8_t hw;              /* Conn.hw */
    bool sw;                 /* Conn.sw */
} ConnQ;
G_STATIC_ASSERT(sizeof(ConnQ) == 32);

/* A lane: its fields fit one 64-byte line, as an event touches a lane at random. */
typedef struct {
    uint64_t idx, nops;      /* next op, ops in all */
    uint64_t pend_data;      /* data bytes each pending send carries */
    int32_t chan, who;       /* channel (its slot: Run.S); rank (or owner position) the lane belongs to */
    uint8_t kind;            /* LaneKind */
    bool busy;               /* between an op's start and its slices leaving */
    uint8_t npend;           /* sends pending (their conns: Run.pend for NVLS, else the op's sends again) */
    uint8_t tr_nrecv, tr_nsend; /* Tree: the receives and sends of every op of the lane */
    union {
        int32_t tr_peer[2 * NS_TREE_PEERS]; /* Tree: their conns, receives from 0, sends from NS_TREE_PEERS */
        struct {             /* Ring: op idx decoded (ncclsched_next keeps it so as idx advances) */
            uint64_t rg_key;     /* the tie key of the lane's send, the same for every op */
            uint64_t rg_data;    /* data bytes of a send of op idx (its loop's), bytes */
            uint32_t rg_step;    /* op idx's step of its loop, < the ring's steps */
            uint32_t rg_slice;   /* op idx's slice of its step, < K */
        };
    };
} Lane;
G_STATIC_ASSERT(sizeof(Lane) == 64);

typedef struct {
    int nrecv, nsend;
    int32_t *recv, *send;    /* maxpeer each */
    uint64_t data;           /* data bytes each send carries */
    double lat_us;           /* the op's latency before its slices leave */
} Op;

typedef struct {
    const NcclSimSpec *sp;
    Sim *sim;
    Net *net;
    NcclRoutes *routes;
    int n, C, K, W;          /* ranks, channels, slices a chunk, slots a connection */
    NcclSymMap map;          /* the orbits the tie key follows (map.h 1: none) */
    NcclSymMap mm;           /* the orbits a merged run merges (mm.h == h) */
    int h;                   /* channels an orbit a lane stands for: G or G/2 in a merged run, else 1 */
    int S;                   /* channels simulated (slots): C / h; a lane's chan is its slot */
    int T;                   /* Ring: blocks of nodes a position stands for (nccltrans.h): nodes / a leaf's
                              * nodes in a run of one block, else 1 */
    int np;                  /* Ring: positions simulated a slot, n / T (lanes and connections s*np + pos) */
    NcclSym *sym;            /* a merged run's orbits of links; NULL in a full run; owned */
    GArray *batch;           /* Ring and Tree: the sends of the op ends at this picosecond (Send), or NULL */
    GArray *batch_tmp;       /* with batch: scratch for sorting it (Send) */
    uint64_t chunk, nloops;  /* chunk data bytes; loops */
    uint64_t loop_span;      /* bytes a loop covers */
    uint64_t total;          /* bytes the loops cover (S, or S/n for RS/AG ring) */
    GArray *conns;           /* Conn */
    ConnQ *cq;               /* [conn]: its flow state, 64-byte aligned, made once planned; owned */
    GArray *lanes;           /* Lane, while planning; NULL after */
    Lane *lane;              /* the lanes once planned, 64-byte aligned (one line each); owned */
    guint nlanes;            /* their count */
    int maxpeer;             /* the most sends or receives one op has */
    int32_t *pend;           /* NVLS: [lane * maxpeer + i]: the conns of a lane's pending sends; else NULL (a
                              * ring or tree op's sends follow from the lane and the op's index) */
    int32_t *ring;           /* [s*n + pos]: rank at pos of slot s's ring (built for every channel, C*n
                              * entries; a merged run keeps its slots' first) */
    int32_t *tree;           /* [(s*n + r)*4 + i]: parent, child0, child1, child2 (-1 none); as ring */
    int32_t *conn_up;        /* [s*n + r]: r -> its parent */
    int32_t *conn_dn;        /* [s*n + r]: parent -> r */
    int32_t *nv;             /* NVLS conns: [((c*4)+kind)*n + g] */
    simtime_t end;
    int live;                /* lanes not finished */
    uint64_t msgs, data;
    simtime_t lat_ps[3];     /* [NcclHw]: an op's latency (Ring's per-step figure for the protocol), ps */
    simtime_t nv_lat_ps[2];  /* NVLS GPU lanes: a flag over NVLink, and a step that sends between nodes, ps */
    double cap_ps_B[3];      /* [NcclHw its op sends over]: a Ring or Tree lane's op holds its lane this many ps
                              * a data byte after its latency (the channel's cap there, ncclshape_cap_hw_GBps);
                              * 0: no cap */
    simtime_t *nb;           /* capped: [conn * W + k % W]: the earliest delivery of conn's k-th slice (its op's
                              * end of holding); NULL: no cap */
    uint64_t *nb_k;          /* capped: [conn]: the slices the network delivered on conn; NULL: no cap */
    simtime_t *until;        /* capped: [lane]: when its last op's hold ends (its next op's latency starts
                              * then, ps); NULL: no cap */
    uint64_t *sent;          /* spec's rank_bytes (NULL: not counted): data bytes each rank sent */
    uint64_t held;           /* bytes of the int32 arrays allocated so far (ints_new) */
    uint64_t memo_data;      /* the last data size wire_of converted (0: none yet), bytes */
    uint64_t memo_wire[2];   /* its wire bytes: [0] on a link, [1] to or from the NVSwitch at its port rate */
    NcclProxy *proxy;        /* the GPUs' proxy threads where the node's nic_proxy_s > 0 (then every channel is
                              * simulated: ncclshape.c's merges), else NULL; owned */
    GArray *px_plan;         /* with proxy, while planning: int32 pairs, each connection's hosts from and to */
    int32_t *px_host;        /* with proxy: [2 conn], [2 conn + 1]: conn's hosts from and to */
    uint64_t *px_wire;       /* with proxy: [conn * W + k % W]: wire bytes of conn's k-th slice to the network,
                              * waiting for its post */
    uint64_t *px_in, *px_out;   /* with proxy: [conn]: the slices its sender's proxy was asked to post, and posted */
    Op scratch;
    struct NcclLive *lv;     /* a live run's (ncclsim_start): told of each delivery and op end; NULL alone */
} Run;

/* A send waiting for the picosecond's other op ends (Run.batch). */
typedef struct {
    uint64_t key;            /* tie key (tie_key): the order they leave in */
    int32_t conn;
    uint64_t data;           /* data bytes */
} Send;

/* Sorts a[0..n) by key, ascending (keys distinct, so the order is the
 * one order), with tmp of n entries as scratch: an insertion sort of a
 * few, else a radix sort by the bytes in which the keys differ. The same
 * order as g_array_sort by key; a batch is sorted at every picosecond
 * with op ends, so it does no comparison calls. */
void ncclsched_sort_sends(Send *a, size_t n, Send *tmp);

static inline uint64_t ncclsched_div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Slot s's channel: in a merged run the orbits' first channels (c % G < G/h), else s. */
static inline int ncclsched_slot_chan(const Run *R, int s)
{
    int q = ncclsym_q(&R->mm);
    return R->h > 1 ? s / q * R->mm.G + s % q : s;
}

/* The cluster's host that rank `rank` runs on. */
int ncclsched_host(const Run *R, int rank);

/* k int32s, counted in R->held. */
int32_t *ncclsched_ints(Run *R, uint64_t k);

/* Channel by channel (a merged run: slot by slot), the lanes and
 * connections of Ring, Tree (merging where the orbits hold) and NVLS. */
void ncclsched_build_ring(Run *R);
void ncclsched_build_tree(Run *R);
void ncclsched_build_nvls(Run *R);
/* The ops of each Ring lane. */
uint64_t ncclsched_ring_nops(const Run *R);
/* Lane L's op L->idx into o, as ncclsched_op(R, L, L->idx, o) makes it
 * (a Ring lane's from its decoded fields, rg_*, without a division). */
void ncclsched_op_cur(Run *R, const Lane *L, Op *o);
/* Lane L moved on to its next op (a Ring lane's decoded fields with it). */
void ncclsched_next(const Run *R, Lane *L);
/* The connection Ring lane L sends on (its ops' only send). */
static inline int32_t ncclsched_ring_send(const Run *R, const Lane *L) { return L->chan * R->np + L->who; }
/* Op idx of lane L: its receives, sends and data bytes, into o. */
void ncclsched_op(Run *R, const Lane *L, uint64_t idx, Op *o);
/* A merged run's per-rank bytes (Run.sent) made every channel's. */
void ncclsched_unmerge_sent(Run *R);

#endif
