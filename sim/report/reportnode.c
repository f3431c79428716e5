/* reportnode — the node list; see reportnode.h. */
#include "report/reportnode.h"
#include "report/report.h"

#include <cJSON.h>

static const char *fabric_word(NodeFabric f)
{
    return f == NODE_FABRIC_NVSWITCH ? "nvswitch" : f == NODE_FABRIC_MESH ? "mesh" : "pcie";
}

struct cJSON *reportnode_json(const GArray *rows)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < rows->len; i++) {
        const NodeSpec *n = &g_array_index(rows, NodeSpec, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", n->name);
        cJSON_AddStringToObject(o, "gpu", n->gpu);
        cJSON_AddNumberToObject(o, "gpus", n->ngpus);
        cJSON_AddStringToObject(o, "fabric", fabric_word(n->fabric));
        cJSON_AddNumberToObject(o, "nvlinks_per_gpu", n->nvlinks);
        cJSON_AddNumberToObject(o, "nvlink_gpu_Bps", n->nvlinks * n->nvlink_raw_Bps);
        cJSON_AddNumberToObject(o, "nvlink_gpu_data_Bps", node_gpu_nvlink_Bps(n));
        cJSON_AddBoolToObject(o, "nvls", n->nvls);
        cJSON_AddNumberToObject(o, "nics", n->nnics);
        cJSON_AddNumberToObject(o, "nic_Bps", n->nic_raw_Bps);
        cJSON_AddNumberToObject(o, "nic_data_Bps", n->nic_Bps);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

void reportnode_list(FILE *out, const GArray *rows, bool json)
{
    if (json) {
        cJSON *arr = reportnode_json(rows);
        report_print_json(out, arr);
        cJSON_Delete(arr);
        return;
    }
    fprintf(out, "%-12s %-6s %4s %-9s %6s %13s %4s %4s %9s\n", "node", "gpu", "gpus", "fabric", "links",
            "NVLink GB/s", "nvls", "nics", "NIC Gb/s");
    for (guint i = 0; i < rows->len; i++) {
        const NodeSpec *n = &g_array_index(rows, NodeSpec, i);
        fprintf(out, "%-12s %-6s %4d %-9s %6d %13.0f %4s %4d %9.0f\n", n->name, n->gpu, n->ngpus,
                fabric_word(n->fabric), n->nvlinks, n->nvlinks * n->nvlink_raw_Bps / 1e9, n->nvls ? "yes" : "no",
                n->nnics, n->nic_raw_Bps * 8 / 1e9);
    }
}

char *reportnode_cluster_name(const char *node, const NodeFabricSpec *f, const char *oversub_text)
{
    NodeFabricSpec def;
    node_fabric_init(&def);
    GString *t = g_string_new(NULL);
    g_string_printf(t, "%d x %s, rail-optimized fat-tree", f->nodes, node);
    if (f->leaf_radix != def.leaf_radix)
        g_string_append_printf(t, ", leaf radix %d", f->leaf_radix);
    if (f->oversub != def.oversub) {
        if (oversub_text)
            g_string_append_printf(t, ", oversubscription %s", oversub_text);
        else
            g_string_append_printf(t, ", oversubscription %g", f->oversub);
    }
    return g_string_free(t, FALSE);
}
