/* report — tables on stdout and JSON/CSV files: the only code that sees
 * cJSON. Key names carry SI units (_s, _bytes, _Bps). */
#ifndef ARSIM_REPORT_H
#define ARSIM_REPORT_H

#include "cmdcoll.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct cJSON cJSON;   /* cJSON.h's type; only report code includes cJSON.h */

/* Prints a cJSON tree to out, formatted, with a newline; frees nothing. */
void report_print_json(FILE *out, const cJSON *root);

/* Rows of `arsim collective`; rows with link statistics also list every
 * link that carried bytes (the table: the busiest eight and a total). */
void report_coll_table(FILE *out, const Topo *t, const CmdCollRow *rows, size_t n);
void report_coll_json(FILE *out, const Topo *t, const CmdCollRow *rows, size_t n);

/* Writes text to path atomically (path.tmp, then rename): an existing
 * file is replaced whole or not at all. False + *err. */
bool report_write_text(const char *path, const char *text, char **err);

#endif
