/* cmdlist — `arsim list`: what models, GPUs, topologies, algorithms and
 * policies this build knows. */
#ifndef ARSIM_CMDLIST_H
#define ARSIM_CMDLIST_H

#include <stdbool.h>
#include <stdio.h>

/* Returns 0, or 2 with *err for an unknown category. */
int cmdlist_run(const char *what, bool json, FILE *out, char **err);

#endif
