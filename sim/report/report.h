/* report — what every report shares. Report code (sim/report/) is the only
 * code that sees cJSON; key names carry SI units (_s, _bytes, _Bps). */
#ifndef ARSIM_REPORT_H
#define ARSIM_REPORT_H

#include <stdio.h>

typedef struct cJSON cJSON;   /* cJSON.h's type; only report code includes cJSON.h */

/* Prints a cJSON tree to out, formatted, with a newline; frees nothing. */
void report_print_json(FILE *out, const cJSON *root);

#endif
