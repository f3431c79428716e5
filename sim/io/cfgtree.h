/* cfgtree — structural edits and YAML text emission on CfgNode trees
 * (cfg.h), for sweeps: put a value node at a dotted path, take a key out
 * of a map, and write a node back as YAML text (flow or block style).
 * Additive to sim/io/cfgget.c; knows nothing of libyaml. */
#ifndef ARSIM_CFGTREE_H
#define ARSIM_CFGTREE_H

#include "io/cfg.h"

/* Replaces (or adds) the node at dotted `path` under root with a clone of
 * val. A numeric part indexes a sequence; a missing map key on the way is
 * created as an empty map. Keys it creates carry where's position (so a
 * later "unknown key" error points at where), and errors are
 * "file:line:col" of where. Returns false + *err (root may then hold
 * the maps created on the way). */
bool cfgtree_set(CfgNode *root, const char *path, const CfgNode *val, const CfgNode *where, char **err);

/* Replaces (or appends) the value of the literal key (dots and all) in
 * map with a clone of val; a new key carries val's position. */
void cfgtree_put(CfgNode *map, const char *key, const CfgNode *val);

/* Removes key from map; returns its value (caller owns) or NULL. */
CfgNode *cfgtree_take(CfgNode *map, const char *key);

/* Appends n as one-line flow YAML ({a: 1, b: [x, "y z"]}); scalars that
 * were quoted, or that would not read back as the same plain scalar, are
 * written double-quoted with escapes. Deterministic: same tree, same text. */
void cfgtree_emit_flow(GString *out, const CfgNode *n);

/* Appends a map or sequence in block style at indent spaces, nested
 * collections of scalars in flow style; ends with a newline. */
void cfgtree_emit_block(GString *out, const CfgNode *n, int indent);

#endif
