/* cmdcoll — `arsim collective`: one all-reduce per size on a topology,
 * reported in nccl-tests' terms (time, algbw, busbw). */
#ifndef ARSIM_CMDCOLL_H
#define ARSIM_CMDCOLL_H

#include "coll/coll.h"
#include "net/net.h"
#include "net/topo.h"

#include <stdio.h>

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
    Protocol proto;         /* --eager-limit, --handshake, --overhead, --segment values */
    bool set_eager, set_handshake, set_overhead, set_segment; /* which were given: they override the
                             * topology's protocol (every route class) */
} CmdCollOpts;

/* Runs every size; prints to out. Returns 0, 2 (bad input: *err set) or 1. */
int cmdcoll_run(const CmdCollOpts *o, FILE *out, char **err);

#endif
