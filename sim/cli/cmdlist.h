/* cmdlist — `arsim list`: what models, GPUs, topologies, algorithms and
 * policies this build knows. Models, GPUs and topology files are read
 * along the data search path (io/datapath.h); kinds, algorithms and
 * policies are built in. cmdlist collects rows (report/reportlist.h);
 * reportlist prints them. */
#ifndef ARSIM_CMDLIST_H
#define ARSIM_CMDLIST_H

#include "cli/cli.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    char *json;              /* --json FILE ("-": standard output, instead of the table) or NULL */
    bool names;              /* --names: the names only, one a line */
    char *gpus_file;         /* --gpus-file: the GPU file `list gpus` reads (a path or a bare name in
                              * models/, resolved as gpu_load does); NULL: models/gpus.yaml */
    GPtrArray *args;         /* the arguments: the category */
} CmdListOpts;

extern const CliCmd cmdlist_cli;

/* argv[0] is "list". Returns the exit status. */
int cmdlist_main(int argc, char **argv);

/* Prints the list of `what` (NULL: every category) to out: the table or
 * the names, and writes the JSON to o->json (unless that is standard
 * output, the table is printed too). Returns 0, 2 with *err for an
 * unknown category, o->gpus_file with a category other than gpus, an
 * unreadable GPU file or an entry of o->gpus_file that does not load, 1
 * when the JSON cannot be written. A model or topology file, or an entry
 * of models/gpus.yaml, that does not load is skipped with a one-line note
 * on stderr. */
int cmdlist_run(const char *what, const CmdListOpts *o, FILE *out, char **err);

#endif
