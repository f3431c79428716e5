/* cmdlist — `arsim list`: what models, GPUs, topologies, algorithms and
 * policies this build knows. Models, GPUs and topology files are read from
 * the data directory ($ARSIM_HOME if set, else the working directory: the
 * rule of cfg_resolve); kinds, algorithms and policies are built in.
 * cmdlist collects rows (report/reportlist.h); reportlist prints them. */
#ifndef ARSIM_CMDLIST_H
#define ARSIM_CMDLIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Prints the list of `what` to out (table, or a JSON array when json).
 * Returns 0, or 2 with *err for an unknown category. A model or topology
 * file that does not load is skipped with a one-line note on stderr. */
int cmdlist_run(const char *what, bool json, FILE *out, char **err);

#endif
