/* cmdcoll — `arsim collective`: one all-reduce per size on a topology,
 * reported in nccl-tests' terms (time, algbw, busbw). */
#ifndef ARSIM_CMDCOLL_H
#define ARSIM_CMDCOLL_H

#include "coll.h"
#include "net.h"
#include "topo.h"

#include <stdio.h>

typedef struct {
    CollAlgo algo;          /* algorithm run */
    int ranks;              /* p */
    uint64_t bytes;         /* vector size */
    double time_s;          /* simulated time */
    double algbw_Bps;       /* bytes / time */
    double busbw_Bps;       /* algbw * 2(p-1)/p */
    uint64_t events;        /* events the engine processed */
    double wall_s;          /* host seconds the simulation took */
    NetLinkStats *links;    /* per link (topology order) with --links, else NULL; owned by the command */
} CmdCollRow;

typedef struct {
    const char *topology;   /* NULL: a star of `ranks` hosts with the link below */
    int ranks;              /* 0: every host of the topology (8 for the default star) */
    TopoLinkClass link;     /* star links; overrides the topology file's link when set_link */
    bool set_bw, set_lat;   /* --bandwidth / --latency given */
    uint64_t packet;        /* --packet; 0 = as the topology says */
    bool set_packet;
    double gamma;           /* s/byte of reduction; default 0 */
    CollAlgo algo;
    CollParams prm;         /* inter algorithm for hierarchical, torus dims */
    uint32_t elem_bytes;    /* element size (1: any byte count) */
    GArray *sizes;          /* uint64_t bytes, >= 1 entry */
    bool json;              /* JSON array instead of a table */
    bool links;             /* per-link statistics too */
} CmdCollOpts;

/* Runs every size; prints to out. Returns 0, 2 (bad input: *err set) or 1. */
int cmdcoll_run(const CmdCollOpts *o, FILE *out, char **err);

#endif
