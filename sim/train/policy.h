/* policy — how gradients are synchronized: which sync units (layers,
 * DDP buckets, partitions), which algorithm per unit, and when each unit
 * may start and must be done (docs/dev/design.md §8.4). Pure functions of the
 * model and the policy; the timing is train.c's. */
#ifndef ARSIM_POLICY_H
#define ARSIM_POLICY_H

#include "coll/coll.h"
#include "train/model.h"

typedef enum { OVERLAP_NONE, OVERLAP_DDP, OVERLAP_LAYER, OVERLAP_PRIORITY } OverlapKind;
typedef enum { ALGSEL_FIXED, ALGSEL_HYBRID, ALGSEL_AUTO } AlgSel;

typedef struct {
    char *name;                          /* unique in the scenario; owned */
    OverlapKind overlap;
    AlgSel select;                       /* fixed algorithm, hybrid rule or auto */
    CollAlgo algo;                       /* ALGSEL_FIXED: the algorithm */
    CollAlgo inter;                      /* inter-node algorithm of hierarchical */
    CollAlgo hybrid[LAYER_NKINDS];       /* hybrid: layer kind -> algorithm */
    uint64_t hybrid_threshold;           /* hybrid: units of at most this many bytes use butterfly; 0 = off */
    uint64_t bucket_bytes;               /* ddp: bucket cap, bytes (25 MiB) */
    uint64_t first_bucket_bytes;         /* ddp: first bucket cap, bytes (1 MiB) */
    bool ddp_rebuilt;                    /* ddp: buckets in gradient-ready order (rebuilt after iteration 1;
                                          * the default); false: the initial, reversed forward order */
    uint64_t partition_bytes;            /* priority: split units into pieces of at most this; 0 = none */
    uint64_t fusion_bytes;               /* layer/priority: fuse adjacent small layers up to this; 0 = off */
    GHashTable *overrides;               /* layer name (char*) -> CollAlgo+1 (GINT_TO_POINTER); owned */
} Policy;

const char *policy_overlap_name(OverlapKind k);
bool policy_overlap_parse(const char *s, OverlapKind *out);
/* "ring", "hybrid", "auto", ... — the algorithm column of a result. */
const char *policy_algo_label(const Policy *p);
void policy_init(Policy *p, const char *name);   /* layer + ring, PyTorch's DDP defaults (rebuilt layout) */
void policy_clear(Policy *p);

/* One all-reduce of the iteration. */
typedef struct {
    char *name;              /* "fc6", "bucket3", "conv5_1#2"; owned */
    uint64_t elems;          /* gradient elements */
    int first_layer;         /* lowest layer index whose gradients it carries */
    int last_layer;          /* highest layer index it carries */
    int ready_layer;         /* ready when backward of this layer ended (lowest index it carries) */
    int need_layer;          /* forward of this layer waits for it (layer/priority) */
    LayerKind kind;          /* kind of the layer with most parameters in the unit */
    int order;               /* launch order (ddp: bucket order; layer: readiness; priority: key) */
    CollAlgo algo;           /* filled by the algorithm selection */
    char reason[200];        /* why this algorithm (auto, hybrid, override) */
} SyncUnit;

/* Builds the sync units of policy p for model m (GArray of SyncUnit in
 * launch order for FIFO policies). elem_bytes sizes bytes-based caps. */
GArray *policy_units(const Policy *p, const Model *m, int elem_bytes);
void policy_units_free(GArray *units);

#endif
