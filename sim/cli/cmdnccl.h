/* cmdnccl — `arsim collective` on GPU nodes: --node NAME --nodes N builds
 * a rail-optimized cluster of node files (net/node.h); --algo nccl runs
 * NCCL's choice (coll/nccl.h) simulated (coll/ncclsim.h). The options
 * live in cmdcoll's table (CMDNCCL_OPTS); this file holds their parsing
 * and the NCCL run. */
#ifndef ARSIM_CMDNCCL_H
#define ARSIM_CMDNCCL_H

#include "cli/cli.h"
#include "net/topo.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    bool on;                 /* --algo nccl */
    char *node;              /* --node NAME|FILE; NULL: no node cluster */
    int nodes;               /* --nodes, >= 1 */
    int algo;                /* --nccl-algo: NcclAlgo, or -1: the tuner's */
    int proto;               /* --nccl-proto: NcclProto, or -1: the tuner's */
    int channels;            /* --nccl-channels; 0: the tuner's */
    int release;             /* --nccl-release: NcclRelease (coll/nccl.h); 0: 2.21 */
    int op;                  /* --op: NcclOp */
    double oversub;          /* --oversubscription, >= 1 */
    int leaf_radix;          /* --leaf-radix */
} CmdNcclOpts;

void cmdnccl_init(CmdNcclOpts *o);

/* The option rows, for cmdcoll's table (offsets within `type`'s member `m`). */
bool cmdnccl_parse(void *field, const CliOpt *opt, const char *value, char **err);
#define CMDNCCL_OPTS(type, m)                                                                                        \
    {"node", CLI_IN, offsetof(type, m.node), .help = "GPU nodes of this kind (a file in topologies/nodes/) on a "     \
     "rail-optimized fat-tree, instead of --topology", .value = "NAME|FILE", .names = "nodes"},                     \
    {"nodes", CLI_INT, offsetof(type, m.nodes), .help = "nodes of --node", .min = 1, .max = 1 << 20,                \
     .deflt = "1"},                                                                                                  \
    {"oversubscription", CLI_NUMBER, offsetof(type, m.oversub), .help = "with --node: a leaf's downlink capacity "   \
     "over its uplink capacity", .unit = "a finite number >= 1", .deflt = "1"},                                     \
    {"leaf-radix", CLI_INT, offsetof(type, m.leaf_radix), .help = "with --node: ports of a rail's leaf switch "     \
     "(half to nodes, half to spines)", .min = 2, .max = 4096, .deflt = "64"},                                      \
    {"nccl-algo", CLI_CUSTOM, offsetof(type, m.algo), .help = "with --algo nccl: force NCCL's algorithm "           \
     "(NCCL_ALGO)", .value = "ALGO", .unit = "ring, tree, nvls or nvlstree, any case",                              \
     .words = "ring tree nvls nvlstree", .note = "the tuner's choice", .parse = cmdnccl_parse},                     \
    {"nccl-proto", CLI_CUSTOM, offsetof(type, m.proto), .help = "with --algo nccl: force NCCL's protocol "          \
     "(NCCL_PROTO)", .value = "PROTO", .unit = "ll, ll128 or simple, any case", .words = "ll ll128 simple",        \
     .note = "the tuner's choice", .parse = cmdnccl_parse},                                                         \
    {"nccl-channels", CLI_INT, offsetof(type, m.channels), .help = "with --algo nccl: channels (NCCL_MIN_NCHANNELS " \
     "= NCCL_MAX_NCHANNELS)", .min = 1, .max = 64, .note = "the tuner's count for the size"},                       \
    {"nccl-release", CLI_CUSTOM, offsetof(type, m.release), .help = "with --algo nccl: the NCCL release whose "    \
     "NVLS and Tree/Simple to run (NVLS's latency and how it lays a call's data over the channels, Tree/Simple's " \
     "latency in the tuner and its chunk; the rest is 2.21's)",                                                    \
     .value = "RELEASE", .unit = "2.18, 2.19, 2.20 or 2.21", .words = "2.18 2.19 2.20 2.21", .deflt = "2.21",      \
     .parse = cmdnccl_parse},                                                                                       \
    {"op", CLI_CUSTOM, offsetof(type, m.op), .help = "with --algo nccl: the collective", .value = "OP",             \
     .unit = "allreduce, reducescatter, allgather or broadcast", .words = "allreduce reducescatter allgather "      \
     "broadcast", .deflt = "allreduce", .parse = cmdnccl_parse}

/* Options that need another: --nccl-* and --op without --algo nccl,
 * --nodes, --oversubscription and --leaf-radix without --node, --node with
 * --topology. False and *err. */
bool cmdnccl_check(const CmdNcclOpts *o, bool topology, char **err);

/* --node given: spec becomes the cluster's topology (a graph), *gpus the
 * node's GPU count (the hierarchical algorithm's GPUs a node). */
bool cmdnccl_topology(const CmdNcclOpts *o, TopoSpec *spec, int *gpus, char **err);

/* --algo nccl: every size; prints the table on out, the JSON into the
 * file json and the CSV into the file csv (each NULL: none; "-":
 * standard output, instead of the table). A
 * run whose memory estimate is above max_memory (0: the machine's
 * available memory) is refused. Returns 0, 2 (bad input, *err) or 1 (the
 * file could not be written, *err). */
int cmdnccl_run(const CmdNcclOpts *o, int ranks, const GArray *sizes, const char *json, const char *csv,
                uint64_t max_memory, FILE *out, char **err);

#endif
