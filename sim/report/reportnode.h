/* reportnode — `arsim list nodes`: the node files as a table or JSON. */
#ifndef ARSIM_REPORTNODE_H
#define ARSIM_REPORTNODE_H

#include "net/node.h"

#include <stdio.h>

/* rows: NodeSpec, in name order. */
void reportnode_list(FILE *out, const GArray *rows, bool json);

#endif
