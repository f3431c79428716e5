/* report — tables and JSON for every command; see report.h. */
#include "report.h"
#include "units.h"

#include <cJSON.h>

void report_coll_table(FILE *out, const CmdCollRow *rows, size_t n)
{
    fprintf(out, "%14s %-12s %6s %12s %12s %12s %10s\n", "size(B)", "algorithm", "ranks", "time(us)",
            "algbw(GB/s)", "busbw(GB/s)", "events");
    for (size_t i = 0; i < n; i++) {
        const CmdCollRow *r = &rows[i];
        fprintf(out, "%14" G_GUINT64_FORMAT " %-12s %6d %12.3f %12.4f %12.4f %10" G_GUINT64_FORMAT "\n",
                (guint64)r->bytes, coll_algo_name(r->algo), r->ranks, r->time_s * 1e6, r->algbw_Bps / 1e9,
                r->busbw_Bps / 1e9, (guint64)r->events);
    }
}

void report_print_json(FILE *out, const cJSON *root)
{
    char *s = cJSON_Print(root);
    fputs(s, out);
    fputc('\n', out);
    cJSON_free(s);
}

void report_coll_json(FILE *out, const CmdCollRow *rows, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const CmdCollRow *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "algorithm", coll_algo_name(r->algo));
        cJSON_AddNumberToObject(o, "ranks", r->ranks);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddNumberToObject(o, "time_s", r->time_s);
        cJSON_AddNumberToObject(o, "algbw_Bps", r->algbw_Bps);
        cJSON_AddNumberToObject(o, "busbw_Bps", r->busbw_Bps);
        cJSON_AddNumberToObject(o, "events", (double)r->events);
        cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
        cJSON_AddItemToArray(arr, o);
    }
    report_print_json(out, arr);
    cJSON_Delete(arr);
}
