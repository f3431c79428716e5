/* node — GPU nodes as they are built (DGX-class machines) and clusters
 * of them on a rail-optimized fat-tree.
 *
 * A NodeSpec is read from a node file (topologies/nodes/NAME.yaml): its
 * GPUs, how they meet (NVSwitch, a direct NVLink mesh, or PCIe only),
 * whether the switch reduces in the fabric (NVLink SHARP, "NVLS"), the
 * PCIe switches and which GPU and NIC sit on which, and the NICs.
 * node_cluster() builds a graph topology of N such nodes: NIC i of every
 * node on rail i's leaf switches, spines above them, and records where
 * each piece sits so that NCCL's schedules (coll/nccl*) route their
 * messages as NCCL does (a channel's traffic between nodes on one rail).
 *
 * Every rate is a data rate: the bytes per second a copy or an RDMA
 * write achieves, below the signalling rate the file also states.
 */
#ifndef ARSIM_NODE_H
#define ARSIM_NODE_H

#include "io/cfg.h"
#include "net/topo.h"

#include <stdbool.h>

typedef enum {
    NODE_FABRIC_NVSWITCH,    /* every GPU on the NVSwitch with all its NVLinks */
    NODE_FABRIC_MESH,        /* GPUs joined pairwise by NVLinks (DGX-1's hybrid cube-mesh) */
    NODE_FABRIC_PCIE,        /* no NVLink: GPUs meet through their PCIe switches and the CPU */
} NodeFabric;

typedef struct {
    int a, b;                /* GPU indices, a < b */
    int links;               /* NVLinks between them, >= 1 */
} NodeMeshLink;

#define NODE_MAX_GPUS 16
#define NODE_MAX_NICS 16

typedef struct {
    char *name;              /* the file's stem; owned */
    char *gpu;               /* the GPU kind, a key of models/gpus.yaml; owned */
    int ngpus;               /* 1..NODE_MAX_GPUS */
    int compcap;             /* the GPU's compute capability, 10 x major + minor (70, 75, 80, 86, 89, 90) */
    NodeFabric fabric;
    int nvlinks;             /* NVLinks per GPU (0 for PCIe) */
    double nvlink_raw_Bps;   /* one NVLink's signalling rate, per direction, bytes/s (documentation) */
    double nvlink_Bps;       /* one NVLink's data rate, per direction, bytes/s */
    double nvlink_lat_s;     /* GPU to switch (or to its mesh peer), s */
    bool nvls;               /* the NVSwitch reduces and multicasts (NVLink SHARP) */
    double nvls_Bps;         /* with NVLS: each GPU's port rate while the switch reduces, bytes/s */
    GArray *mesh;            /* NODE_FABRIC_MESH: NodeMeshLink; owned; NULL otherwise */
    int npcie;               /* PCIe switches, >= 1 */
    double pcie_Bps;         /* a PCIe x16 port's data rate, per direction, bytes/s */
    double pcie_lat_s;       /* one PCIe hop, s */
    int gpu_pcie[NODE_MAX_GPUS]; /* GPU g's PCIe switch */
    int nnics;               /* NICs (rails), 0..NODE_MAX_NICS */
    double nic_raw_Bps;      /* a NIC's signalling rate, per direction, bytes/s (documentation) */
    double nic_Bps;          /* a NIC's data rate, per direction, bytes/s */
    double nic_lat_s;        /* NIC to its leaf switch, s */
    double nic_proxy_s;      /* NCCL's proxy thread (one a GPU): what one network operation of a step costs it,
                              * s, >= 0; 0 (the default): not modelled (coll/ncclproxy.h) */
    int nic_pcie[NODE_MAX_NICS]; /* NIC i's PCIe switch */
    int gpu_nic[NODE_MAX_GPUS];  /* the NIC nearest GPU g (on its PCIe switch), -1 if none */
} NodeSpec;

void node_spec_clear(NodeSpec *n);

/* Reads a node file (a name resolves to topologies/nodes/<name>.yaml)
 * along the data search path of including_file (the config that names
 * it; NULL: a name from the command line), as cfg_resolve does; false and
 * *err ("file:line:col: ...; expected ...") otherwise: the node file's
 * own position, or, when there is no such file, NODE_LOAD_MISSING after
 * "name:1:1: ". */
#define NODE_LOAD_MISSING "no such node file"
bool node_load_from(const char *name_or_path, const char *including_file, NodeSpec *n, char **err);
/* node_load_from a name from the command line. */
bool node_load(const char *name_or_path, NodeSpec *n, char **err);
/* Reads a node mapping (every key checked). */
bool node_read(CfgNode *map, NodeSpec *n, char **err);

/* The NVLink data rate of one GPU, per direction (links x rate), bytes/s. */
double node_gpu_nvlink_Bps(const NodeSpec *n);

/* The fabric between the nodes. */
typedef struct {
    int nodes;               /* >= 1 */
    int leaf_radix;          /* ports of a leaf switch, even, >= 2: radix/2 face nodes, radix/2 face spines */
    double oversub;          /* >= 1: a leaf's uplink capacity is its downlink capacity over this */
    double switch_lat_s;     /* each switch hop, s */
} NodeFabricSpec;

void node_fabric_init(NodeFabricSpec *f);   /* 1 node, radix 64, oversubscription 1, 300 ns */

/* Where the pieces of a cluster sit in its Topo (node ids and link ids). */
typedef struct {
    NodeSpec node;           /* the node, copied (owned) */
    NodeFabricSpec fab;
    int rails;               /* = node.nnics */
    int leaves_per_rail;     /* ceil(nodes / (radix/2)) */
    int spines;              /* 0 when one leaf serves everything */
    int nodes_per_leaf;      /* radix / 2 */
    /* Directed link ids, (-1 where absent), indexed as the accessors below say. */
    GArray *gpu_up;          /* [node*G+g]: GPU -> NVSwitch (nvswitch) */
    GArray *gpu_down;        /* [node*G+g]: NVSwitch -> GPU */
    GArray *mesh_link;       /* [(node*G+a)*G+b]: GPU a -> GPU b over NVLink (mesh) */
    GArray *gpu_pcie_up;     /* [node*G+g]: GPU -> its PCIe port (a node of its own, so that GPUs on one
                              * PCIe switch are four hops apart, never a shortest path beside NVLink) */
    GArray *gpu_pcie_down;   /* [node*G+g]: port -> GPU */
    GArray *port_up;         /* [node*G+g]: the GPU's port -> its PCIe switch */
    GArray *port_down;       /* [node*G+g]: PCIe switch -> the GPU's port */
    GArray *pcie_cpu_up;     /* [node*npcie+s]: PCIe switch -> CPU */
    GArray *pcie_cpu_down;   /* [node*npcie+s]: CPU -> PCIe switch */
    GArray *nic_pcie_up;     /* [node*R+i]: PCIe switch -> NIC */
    GArray *nic_pcie_down;   /* [node*R+i]: NIC -> PCIe switch */
    GArray *nic_leaf_up;     /* [node*R+i]: NIC -> its leaf */
    GArray *nic_leaf_down;   /* [node*R+i]: leaf -> NIC */
    GArray *leaf_spine_up;   /* [(rail*L+leaf)*spines+s]: leaf -> spine */
    GArray *leaf_spine_down; /* [(rail*L+leaf)*spines+s]: spine -> leaf */
} NodeCluster;

/* The field of a NodeFabricSpec that node_cluster refused: what its
 * callers name (a command-line option, a scenario key) beside the
 * message. */
typedef enum {
    NODE_FIELD_NODES,        /* nodes: more than the fabric holds, or < 1 */
    NODE_FIELD_LEAF_RADIX,   /* leaf_radix: odd or < 2 */
    NODE_FIELD_OVERSUB,      /* oversub: < 1 or not finite */
} NodeFabricField;

/* Builds the graph TopoSpec of f->nodes nodes n (GPUs are the hosts, node
 * k's GPU g is host k*G+g) into *spec (initialised by the caller; its
 * kind, graph and link fields are replaced) and the map of its pieces
 * into *c. False, *err ("what is wrong; expected ...", no position) and
 * *refused (when not NULL: the field at fault) if the fabric cannot hold
 * the nodes. */
bool node_cluster(const NodeSpec *n, const NodeFabricSpec *f, TopoSpec *spec, NodeCluster *c,
                  NodeFabricField *refused, char **err);
void node_cluster_clear(NodeCluster *c);

static inline int32_t node_link(const GArray *a, int i) { return g_array_index((GArray *)a, int32_t, i); }

/* One line saying what node_cluster built (for `arsim check` and the
 * collective's table). g_free it. */
char *node_cluster_describe(const NodeCluster *c);

/* The names of the node files on the data path, sorted (g_ptr_array_unref). */
GPtrArray *node_names(void);

#endif
