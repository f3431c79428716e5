/* report — the JSON printer and the CSV number form every report uses;
 * see report.h. */
#include "report/report.h"

#include <cJSON.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

char *report_num(char buf[REPORT_NUM_MAX], double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, REPORT_NUM_MAX, "%.*g", digits, v);
        if (digits == 17 || strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

void report_print_json(FILE *out, const cJSON *root)
{
    char *s = cJSON_Print(root);
    fputs(s, out);
    fputc('\n', out);
    cJSON_free(s);
}

void report_csv_text(GString *out, const char *text)
{
    if (strpbrk(text, ",\"\n\r")) {
        g_string_append_c(out, '"');
        for (const char *c = text; *c; c++) {
            if (*c == '"')
                g_string_append_c(out, '"');
            g_string_append_c(out, *c);
        }
        g_string_append_c(out, '"');
    } else {
        g_string_append(out, text);
    }
}
