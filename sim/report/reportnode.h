/* reportnode — `arsim list nodes`: the node files as a table or JSON. */
#ifndef ARSIM_REPORTNODE_H
#define ARSIM_REPORTNODE_H

#include "net/node.h"

#include <stdio.h>

struct cJSON;

/* rows: NodeSpec, in name order, as a JSON array (the caller owns it). */
struct cJSON *reportnode_json(const GArray *rows);

/* rows: NodeSpec, in name order: a table, or the array above. */
void reportnode_list(FILE *out, const GArray *rows, bool json);

/* A cluster of nodes of node file `node` on fabric f in a few words, "16
 * x dgx-h100, rail-optimized fat-tree", the fabric's leaf radix and
 * oversubscription after it where they are not the defaults (the
 * oversubscription as oversub_text, how its input wrote it, or with %g
 * when NULL): the JSON key `cluster` of `arsim run` and `arsim collective
 * --algo nccl` (g_free). */
char *reportnode_cluster_name(const char *node, const NodeFabricSpec *f, const char *oversub_text);

#endif
