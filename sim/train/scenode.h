/* scenode — a scenario's cluster of GPU nodes: `cluster: {node: NAME,
 * nodes: N, oversubscription: X, leaf_radix: K}` builds the node file's
 * rail-optimized cluster (net/node.h) as the scenario's topology. */
#ifndef ARSIM_SCENODE_H
#define ARSIM_SCENODE_H

#include "io/cfg.h"
#include "net/node.h"
#include "net/topo.h"
#include "train/gpu.h"

#include <stdbool.h>

#define SCENODE_KEYS "node, nodes, oversubscription, leaf_radix"

/* What scenode_read found. */
typedef struct {
    int nodes, gpus_per_node;
    char *describe;          /* node_cluster_describe's line; owned */
    NodeSpec *node;          /* the node file read; owned (node_spec_clear, g_free) */
    NodeFabricSpec fab;      /* the fabric between the nodes */
    char *oversub_text;      /* oversubscription as the file wrote it ("1.50"); owned; NULL when not given */
} ScenodeInfo;

/* Reads the cluster mapping c (which has a `node` key) into *topo (a
 * graph; initialised by the caller) and *info. gpu_given: the scenario
 * named a GPU, *gpu: it (or the default one), replaced by the node's kind
 * when not given; given, it must be the node's. Keys other than
 * SCENODE_KEYS and `extra` (comma-separated, the caller's) are refused. */
bool scenode_read(CfgNode *c, bool gpu_given, Gpu *gpu, const char *gpus_file, TopoSpec *topo, ScenodeInfo *info,
                  char **err);

#endif
