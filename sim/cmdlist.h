/* cmdlist — `arsim list`: what models, GPUs, topologies, algorithms and
 * policies this build knows. Models, GPUs and topology files are read from
 * the data directory ($ARSIM_HOME if set, else the working directory: the
 * rule of cfg_resolve); kinds, algorithms and policies are built in.
 * cmdlist collects rows; sim/reportlist.c prints them (table or JSON). */
#ifndef ARSIM_CMDLIST_H
#define ARSIM_CMDLIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One models/<name>.yaml. */
typedef struct {
    char *name;          /* file stem: what a scenario's `model:` names; owned */
    char *description;   /* the file's description; owned, may be "" */
    uint64_t params;     /* trainable parameters, exact sum over layers */
    int layers;          /* layers in the file, >= 1 */
    uint64_t tensors;    /* parameter tensors in all layers */
    double flops;        /* forward FLOPs per sample, summed over layers (multiply-add = 2) */
    bool measured;       /* the file carries measured per-layer times */
    int ref_batch;       /* measured: batch the times were taken at; 0 otherwise */
    char *ref_gpu;       /* measured: GPU key of the times; owned, may be NULL */
} CmdListModel;

/* One topology: a built-in kind (file NULL) or a topologies/<name>.yaml. */
typedef struct {
    char *name;          /* kind name or file stem; owned */
    const char *kind;    /* topology kind (static string) */
    char *file;          /* path of the file; owned; NULL for a built-in kind */
    int hosts;           /* ranks the file's topology has; 0 for a built-in kind */
    double bw_Bps;       /* link bandwidth (the inter-node link of hierarchical), bytes/s; 0 for a kind */
    double latency_s;    /* link latency, s, one direction; 0 for a kind */
    char *description;   /* the kind's description or the file's first comment line; owned, may be "" */
} CmdListTopo;

/* A built-in name with a one-line description (algorithms, policies). */
typedef struct {
    const char *name;        /* static string */
    const char *kind;        /* "fixed" or "per-unit rule" for algorithms; "overlap" for policies */
    const char *description; /* one line, static string */
} CmdListEntry;

/* Prints the list of `what` to out (table, or a JSON array when json).
 * Returns 0, or 2 with *err for an unknown category. A model or topology
 * file that does not load is skipped with a one-line note on stderr. */
int cmdlist_run(const char *what, bool json, FILE *out, char **err);

#endif
