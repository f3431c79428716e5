/* reportsim — results to JSON array text; see reportsim.h. */
#include "report/reportsim.h"
#include "report/reportrun.h"

#include <cJSON.h>

char *reportsim_results_text(const Scenario *s, const GArray *results)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < results->len; i++)
        cJSON_AddItemToArray(arr, report_result_json(s, &g_array_index(results, TrainResult, i)));
    char *p = cJSON_PrintUnformatted(arr);
    char *out = g_strdup(p);
    cJSON_free(p);
    cJSON_Delete(arr);
    return out;
}
