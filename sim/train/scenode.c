/* scenode — GPU node clusters in scenarios; see scenode.h. */
#include "train/scenode.h"
#include "io/units.h"
#include "net/node.h"

#include <string.h>

bool scenode_read(CfgNode *c, bool gpu_given, Gpu *gpu, const char *gpus_file, TopoSpec *topo, ScenodeInfo *info,
                  char **err)
{
    const char *name = NULL;
    int64_t nodes = 1, radix = 64;
    double oversub = 1;
    CfgNode *nv = cfg_get(c, "node");
    if (!cfg_as_string(nv, &name, err) || !cfg_opt_int(c, "nodes", 1, 1 << 20, &nodes, err) ||
        !cfg_opt_double(c, "oversubscription", 1, 1e6, &oversub, err) ||
        !cfg_opt_int(c, "leaf_radix", 2, 4096, &radix, err))
        return false;
    NodeSpec n;
    char *why = NULL;
    if (!node_load_from(name, nv->file, &n, &why)) {
        /* a missing file is the scenario's fault; a broken one names its own position */
        char *missing = g_strdup_printf("%s:1:1: " NODE_LOAD_MISSING, name);
        *err = g_str_has_prefix(why, missing) ? cfg_err(nv, "%s", why + strlen(missing) - strlen(NODE_LOAD_MISSING))
                                              : g_strdup(why);
        g_free(missing);
        g_free(why);
        return false;
    }
    bool ok = true;
    if (gpu_given && strcmp(gpu->key, n.gpu) != 0) {
        *err = cfg_err(nv, "node %s has %s GPUs, the scenario's gpu is %s; expected gpu: %s or none", n.name, n.gpu,
                       gpu->key, n.gpu);
        ok = false;
    } else if (!gpu_given && strcmp(gpu->key, n.gpu) != 0) {
        Gpu g;
        if ((ok = gpu_load(n.gpu, gpus_file, &g, &why))) {
            gpu_clear(gpu);
            *gpu = g;
        } else {
            /* a GPU missing from the file is the node's fault; a broken file names its own position */
            *err = g_str_has_prefix(why, "unknown GPU") ? cfg_err(nv, "%s", why) : g_strdup(why);
            g_free(why);
            why = NULL;
        }
    }
    NodeFabricSpec f;
    node_fabric_init(&f);
    f.nodes = (int)nodes;
    f.oversub = oversub;
    f.leaf_radix = (int)radix;
    NodeCluster cl;
    NodeFabricField refused = NODE_FIELD_NODES;
    if (ok && (ok = node_cluster(&n, &f, topo, &cl, &refused, &why))) {
        info->nodes = (int)nodes;
        info->gpus_per_node = n.ngpus;
        info->describe = node_cluster_describe(&cl);
        info->fab = f;
        CfgNode *ov = cfg_peek(c, "oversubscription");
        info->oversub_text = ov && ov->type == CFG_SCALAR ? g_strdup(ov->scalar) : NULL;
        info->node = g_new(NodeSpec, 1);
        *info->node = n;
        n = (NodeSpec){0};   /* moved into info */
        node_cluster_clear(&cl);
    } else if (why) {
        /* the key that gave the field node_cluster refused (nodes: its default, 1, never is) */
        CfgNode *at = cfg_peek(c, refused == NODE_FIELD_OVERSUB      ? "oversubscription"
                                  : refused == NODE_FIELD_LEAF_RADIX ? "leaf_radix"
                                                                       : "nodes");
        *err = cfg_err(at ? at : nv, "%s", why);
        g_free(why);
    }
    node_spec_clear(&n);
    return ok;
}
