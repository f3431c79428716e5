/* report — the JSON printer every report uses; see report.h. */
#include "report/report.h"

#include <cJSON.h>
#include <glib.h>

void report_print_json(FILE *out, const cJSON *root)
{
    char *s = cJSON_Print(root);
    fputs(s, out);
    fputc('\n', out);
    cJSON_free(s);
}
