/* sweepexp — expands a scenario's `sweep:` section into scenarios.
 *
 *   sweep:
 *     cluster.nodes: [8, 16, 32]            # an axis: key path -> values
 *     cluster.link.bandwidth: [1Gbps, 10Gbps]
 *     zip:                                  # groups whose keys vary together
 *       - {batch: [[32], [64]], iterations.measured: [3, 2]}
 *
 * Groups are the standalone axes and the zip groups, in file order (a
 * `zip:` key takes the place of its groups); the scenarios are their
 * cartesian product with the last group varying fastest. Scenario i is a
 * clone of the base tree (the scenario without `sweep:`) with every axis
 * path replaced by its value node (cfgtree_set), so scenario errors point
 * at the value in the sweep section. A file without `sweep:` is a sweep of
 * one scenario with no axes.
 *
 * Scenario ids are "<index, zero-padded>-<8 hex digits of FNV-1a over the
 * axis paths and values as flow YAML>": the same definition gives the same
 * ids, and sorting ids as strings sorts by index.
 */
#ifndef ARSIM_SWEEPEXP_H
#define ARSIM_SWEEPEXP_H

#include "io/cfg.h"

#define SWEEPEXP_MAX_SCENARIOS 10000000

typedef struct {
    char *path;              /* dotted key path, as written; owned */
    const CfgNode *key;      /* the key node in the sweep section (errors point here); borrowed from sweep */
    const CfgNode *list;     /* its list of values, >= 1 item; borrowed from sweep */
    int group;               /* index into SweepDef.groups */
} SweepAxis;

typedef struct {
    char *file;              /* the scenario file; owned */
    CfgNode *base;           /* the scenario without `sweep:`, --set applied; owned */
    CfgNode *sweep;          /* the sweep section taken out of it; owned (NULL: no sweep) */
    GPtrArray *axes;         /* SweepAxis*, file order; owned */
    GArray *groups;          /* int: values per group (>= 1), file order */
    guint64 count;           /* scenarios = product of the groups' lengths, in [1, SWEEPEXP_MAX_SCENARIOS] */
    int id_width;            /* digits of the zero-padded index, >= 4 */
} SweepDef;

/* Loads FILE, applies the --set assignments (NULL-terminated, may be
 * NULL) to the whole document, and expands. "--set sweep.AXIS=[...]"
 * replaces or adds the axis AXIS (a dotted path itself:
 * --set sweep.cluster.nodes=[8,16]); other keys as cfg_set_path.
 * NULL + *err "file:line:col: ...; expected ...". */
SweepDef *sweepexp_load(const char *file, char **sets, char **err);
/* Same from a loaded tree (consumed). */
SweepDef *sweepexp_from_cfg(CfgNode *root, const char *file, char **err);
void sweepexp_free(SweepDef *d);

/* Value index of each group for scenario i (groups->len ints). */
void sweepexp_digits(const SweepDef *d, guint64 i, int *digits);
/* The value node of axis a in scenario i (borrowed). */
const CfgNode *sweepexp_value(const SweepDef *d, guint64 i, guint a);
/* A fresh tree for scenario i (caller owns), or NULL + *err. */
CfgNode *sweepexp_tree(const SweepDef *d, guint64 i, char **err);
/* The stable id of scenario i (g_free). */
char *sweepexp_id(const SweepDef *d, guint64 i);
/* "cluster.nodes=8 batch=[32]" for progress lines (g_free). */
char *sweepexp_label(const SweepDef *d, guint64 i);

/* The expanded definition as YAML text (what OUT/sweep.yaml holds):
 * version, config, --set list, shard ("I/N" or NULL), axes, count, the
 * base scenario and every scenario's id with its axis values. */
char *sweepexp_yaml(const SweepDef *d, char **sets, const char *shard);

#endif
