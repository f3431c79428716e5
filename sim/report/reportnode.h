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

#endif
