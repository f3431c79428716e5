/* scenario — a whole scenario from YAML (docs/dev/design.md §13.4), every
 * key checked, every error with file:line:col. */
#ifndef ARSIM_SCENARIO_H
#define ARSIM_SCENARIO_H

#include "train/gpu.h"
#include "train/policy.h"
#include "train/trainvar.h"
#include "net/node.h"
#include "net/topo.h"

typedef struct {
    bool set;                /* a calibration file was named */
    char *file;              /* its path; owned */
    double alpha_inter_s;    /* per-message latency between nodes, s (< 0: keep the link's) */
    double beta_inter;       /* s/byte between nodes (< 0: keep) */
    double alpha_intra_s;    /* per-message latency inside a node (< 0: keep) */
    double beta_intra;       /* s/byte inside a node (< 0: keep) */
    double gamma;            /* reduction s/byte (< 0: keep) */
    double burst_inter_B;    /* token bucket of the links between nodes, bytes (fit.inter_burst_bytes;
                              * < 0: keep) */
    double burst_intra_B;    /* token bucket of the links inside a node (fit.intra_burst_bytes; < 0: keep) */
    double peak_inter_Bps;   /* the rate the inter bucket's credit passes at, bytes/s (fit.inter_peak_bytes_per_s;
                              * 0: at once; set with burst_inter_B) */
    double peak_intra_Bps;   /* ... inside a node (set with burst_intra_B) */
    bool proto_inter_set;    /* the calibration has a protocol between nodes */
    Protocol proto_inter;    /* its eager limit, handshake and overhead (the cluster's segment stays) */
    bool proto_intra_set;    /* ... inside a node */
    Protocol proto_intra;
} Calibration;

/* comm.channels' default for a sync that is not an NCCL call (an NCCL
 * call holds its tuner's channels): an assumed middle of the 2 to 32
 * channels NCCL runs (docs/explanation/gpu-overlap.md says why). */
#define SCENARIO_CHANNELS 8
/* comm.overlap's default. */
#define SCENARIO_OVERLAP true

typedef struct {
    char *name;              /* owned */
    char *file;              /* the scenario file; owned */
    Model *model;            /* owned */
    Gpu gpu;                 /* owned members */
    Precision precision;     /* the arithmetic (gpu.h) */
    int elem_bytes;          /* bytes per gradient element: fp32 and tf32 4, fp16/bf16 2 (comm.gradient_precision,
                              * else precision's) */
    GArray *batches;         /* int per-GPU batch sizes, >= 1 entry */
    TopoSpec topo;           /* the cluster's network (hierarchical when gpus_per_node > 1) */
    int nodes;               /* nodes, >= 1 */
    int gpus_per_node;       /* >= 1 */
    int world;               /* ranks = nodes * gpus_per_node */
    char *cluster_desc;      /* cluster.node: what was built (train/scenode.h); owned; NULL otherwise */
    NodeSpec *node;          /* cluster.node: the node (NCCL units run on it); owned; NULL otherwise */
    NodeFabricSpec node_fab; /* cluster.node: the fabric between the nodes */
    char *oversub_text;      /* cluster.node: oversubscription as written ("1.50"), owned; NULL when not given */
    Calibration calib;
    GPtrArray *policies;     /* Policy*, owned, >= 1 */
    int baseline;            /* index into policies */
    int warmup, measured;    /* iterations (>= 0, >= 1) */
    double bwd_ratio;        /* backward / forward FLOP time, > 0 */
    double gamma;            /* reduction s/byte on a GPU (default 3 / memory bandwidth) */
    double update_bytes_per_param; /* optimizer memory traffic per parameter */
    int comm_streams;        /* collectives in flight at once, >= 1 */
    double interference;     /* compute slows by this fraction while a sync is in flight, >= 0
                              * (comm.interference; default the GPU's) */
    double comm_slowdown;    /* a sync slows by this fraction while compute runs, >= 0 (comm.slowdown;
                              * default the GPU's comm_slowdown); > 0 only where syncs run from the memo
                              * on an idle network (scenario_from_cfg refuses the rest) */
    bool interference_given; /* comm.interference was given: it overrides the overlap mechanism's f */
    bool slowdown_given;     /* comm.slowdown was given: it overrides the mechanism's s */
    bool overlap;            /* comm.overlap: the mechanism (interfere.h) sets the rates where the GPU has sms,
                              * and ddp runs pay DDP's own costs (ddpcost.h) */
    int channels;            /* comm.channels: SMs (NCCL channels, one CTA each) a sync holds, >= 0 (0: a CPU
                              * backend such as Gloo; default SCENARIO_CHANNELS), below the GPU's sms */
    bool channels_given;     /* comm.channels was given: every sync holds it, an NCCL call's too; else an NCCL
                              * call holds the channels its tuner chose and the others comm.channels */
    uint64_t seed;           /* RNG seed of its simulations: SIM_DEFAULT_SEED (no key names one yet) */
    bool whatif;             /* a what-if key (variation, stragglers, ...) was given: results carry the
                              * iteration-time percentiles */
    TrainVar var;            /* compute variation and stragglers (trainvar.h) */
    GArray *faults;          /* NetFault on the cluster's topology (net/netfault.h); owned, never NULL once read */
    GArray *background;      /* TrainBgFlow, other jobs' traffic (train/trainbg.h); owned, never NULL once read */
    CfgNode *tree;           /* the (overridden) tree it was read from; owned */
} Scenario;

/* Reads a scenario from a tree (consumed: the Scenario owns it). */
Scenario *scenario_from_cfg(CfgNode *root, char **err);
/* Loads FILE, applies --set assignments (char* array, may be NULL), reads. */
Scenario *scenario_load(const char *file, char **sets, char **err);
void scenario_free(Scenario *s);
/* The overlap mechanism sets the rates (comm.overlap on a GPU with sms): a
 * given comm.slowdown then stands in for its s on every sync it reaches. */
bool scenario_overlap_mech(const Scenario *s);

#endif
