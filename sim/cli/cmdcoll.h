/* cmdcoll — `arsim collective`: one all-reduce per size on a topology,
 * reported in nccl-tests' terms (time, algbw, busbw). */
#ifndef ARSIM_CMDCOLL_H
#define ARSIM_CMDCOLL_H

#include "cli/cli.h"
#include "cli/cmdnccl.h"
#include "coll/coll.h"
#include "io/protocol.h"
#include "net/topo.h"

#include <stdint.h>
#include <stdio.h>

#define CMDCOLL_PACKET_TOPO UINT64_MAX   /* --packet not given: as the topology says */
#define CMDCOLL_INTRA_LATENCY_S 1e-6     /* --intra without a latency: an NVLink-class link's, seconds */

/* The protocol options given: each overrides that setting of the
 * topology's protocol in every route class (protocol_apply). */
typedef struct {
    Protocol value;          /* the values given (the others unused) */
    unsigned mask;           /* PROTOCOL_SET_ bits of the options given */
} CmdCollProtocol;

typedef struct {
    char *topology;          /* --topology FILE or NAME; NULL: a star of `ranks` hosts */
    int ranks;               /* --ranks; 0: every host of the topology (8 for the default star) */
    double bw_Bps;           /* --bandwidth, bytes/s; 0: the topology's */
    double latency_s;        /* --latency, s; < 0: the topology's */
    uint64_t packet;         /* --packet, bytes; 0: whole messages; CMDCOLL_PACKET_TOPO: the topology's */
    double gamma;            /* --gamma, s/byte of reduction */
    CollAlgo algo;           /* --algo */
    CollParams prm;          /* .inter (--inter), .gpus_per_node (--gpus-per-node); torus dims */
    int elem_bytes;          /* --elem-bytes: element size, bytes (1: any byte count) */
    TopoLinkClass intra;     /* --intra RATE[,TIME]: the GPU links inside a node; bw_Bps 0: not given */
    GArray *sizes;           /* --size: uint64_t bytes, >= 1 entry; the command's to free */
    char *json;              /* --json FILE ("-": standard output, instead of the table) or NULL */
    char *csv;               /* --csv FILE ("-": standard output, instead of the table) or NULL */
    bool links;              /* --links: per-link statistics too */
    CmdCollProtocol proto;   /* the protocol options: every setting of io/protocol.h's key table
                              * that has a flag */
    uint64_t max_memory;     /* --max-memory, bytes; 0: the machine's available memory */
    double skew_s;           /* --skew, s: ranks issue up to this far apart (0: together) */
    int trials;              /* --trials: skewed runs per size (their median is the time); 0: not
                              * given, CMDCOLL_TRIALS */
    int seed;                /* --seed: the skew draws' seed; -1: not given, CMDCOLL_SEED */
    GPtrArray *args;         /* arguments: none are taken */
    CmdNcclOpts nccl;        /* --node, --nodes, --algo nccl and its options (cli/cmdnccl.h) */
} CmdCollOpts;

/* --trials' and --seed's defaults (with --skew; refused without it). */
#define CMDCOLL_TRIALS 100
#define CMDCOLL_SEED 1

extern const CliCmd cmdcoll_cli;

/* argv[0] is "collective". Returns the exit status. */
int cmdcoll_main(int argc, char **argv);

/* Runs every size; prints to out. Returns 0, 2 (bad input: *err set) or 1. */
int cmdcoll_run(const CmdCollOpts *o, FILE *out, char **err);

#endif
