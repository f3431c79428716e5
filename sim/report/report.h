/* report — what every report shares. Report code (sim/report/) is the only
 * code that sees cJSON; key names carry SI units (_s, _bytes, _Bps). */
#ifndef ARSIM_REPORT_H
#define ARSIM_REPORT_H

#include <glib.h>
#include <stdio.h>

typedef struct cJSON cJSON;   /* cJSON.h's type; only report code includes cJSON.h */

/* Prints a cJSON tree to out, formatted, with a newline; frees nothing. */
void report_print_json(FILE *out, const cJSON *root);

/* REPORT_NUM_MAX: room for any double report_num writes, with the NUL. */
#define REPORT_NUM_MAX 32

/* v as CSV writes numbers: the shortest of %.15g, %.16g and %.17g that
 * strtod reads back as exactly v (17 significant digits always do);
 * returns buf. 0.1 is "0.1", not "0.10000000000000001". */
char *report_num(char buf[REPORT_NUM_MAX], double v);

/* Appends text to out as one CSV field: quoted ("" for a quote inside)
 * when it holds a comma, a quote or a line break, else as it is. */
void report_csv_text(GString *out, const char *text);

#endif
