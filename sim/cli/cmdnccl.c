/* cmdnccl — GPU node clusters and NCCL runs for `arsim collective`; see cmdnccl.h. */
#include "cli/cmdnccl.h"
#include "cli/cliprogress.h"
#include "io/fileio.h"
#include "coll/ncclshape.h"
#include "coll/ncclsim.h"
#include "io/memlimit.h"
#include "report/reportnccl.h"
#include "report/reportnode.h"

#include <string.h>
#include <time.h>

void cmdnccl_init(CmdNcclOpts *o)
{
    memset(o, 0, sizeof *o);
    o->nodes = 1;
    o->algo = -1;
    o->proto = -1;
    o->oversub = 1;
    o->leaf_radix = 64;
}

bool cmdnccl_parse(void *field, const CliOpt *opt, const char *value, char **err)
{
    int *v = field;
    if (strcmp(opt->name, "nccl-algo") == 0) {
        NcclAlgo a;
        if (nccl_algo_parse(value, &a)) {
            *v = (int)a;
            return true;
        }
        *err = g_strdup_printf("--%s: unknown NCCL algorithm '%s'; expected ring, tree, nvls or nvlstree", opt->name,
                               value);
        return false;
    }
    if (strcmp(opt->name, "nccl-proto") == 0) {
        NcclProto p;
        if (nccl_proto_parse(value, &p)) {
            *v = (int)p;
            return true;
        }
        *err = g_strdup_printf("--%s: unknown NCCL protocol '%s'; expected ll, ll128 or simple", opt->name, value);
        return false;
    }
    if (strcmp(opt->name, "nccl-release") == 0) {
        NcclRelease r;
        if (nccl_release_parse(value, &r)) {
            *v = (int)r;
            return true;
        }
        *err = g_strdup_printf("--%s: unknown NCCL release '%s'; expected 2.18, 2.19, 2.20 or 2.21", opt->name, value);
        return false;
    }
    NcclOp op;
    if (nccl_op_parse(value, &op)) {
        *v = (int)op;
        return true;
    }
    *err = g_strdup_printf("--%s: unknown collective '%s'; expected allreduce, reducescatter, allgather or broadcast",
                           opt->name, value);
    return false;
}

bool cmdnccl_check(const CmdNcclOpts *o, bool topology, char **err)
{
    *err = NULL;
    if (o->node && topology)
        *err = g_strdup("--node: not with --topology (--node builds the network); expected one of the two");
    else if (!o->on && (o->algo >= 0 || o->proto >= 0 || o->channels > 0 || o->release || o->op != NCCL_OP_ALLREDUCE)) {
        const char *f = o->algo >= 0 ? "nccl-algo" : o->proto >= 0 ? "nccl-proto" : o->channels > 0 ? "nccl-channels"
                      : o->release ? "nccl-release" : "op";
        *err = g_strdup_printf("--%s: only with --algo nccl; expected --algo nccl or no --%s", f, f);
    }
    else if (!o->node && (o->nodes != 1 || o->oversub != 1 || o->leaf_radix != 64))
        *err = g_strdup_printf("--%s: only with --node; expected --node NAME or no --%s",
                               o->nodes != 1 ? "nodes" : o->oversub != 1 ? "oversubscription" : "leaf-radix",
                               o->nodes != 1 ? "nodes" : o->oversub != 1 ? "oversubscription" : "leaf-radix");
    return *err == NULL;
}

static bool build(const CmdNcclOpts *o, TopoSpec *spec, NodeCluster *cl, char **err)
{
    NodeSpec n;
    if (!node_load(o->node, &n, err))
        return false;
    NodeFabricSpec f;
    node_fabric_init(&f);
    f.nodes = o->nodes;
    f.oversub = o->oversub;
    f.leaf_radix = o->leaf_radix;
    char *why = NULL;
    NodeFabricField refused = NODE_FIELD_NODES;
    bool ok = node_cluster(&n, &f, spec, cl, &refused, &why);
    node_spec_clear(&n);
    if (!ok) {   /* the option that gave the field node_cluster refused */
        *err = g_strdup_printf("--%s: %s", refused == NODE_FIELD_OVERSUB      ? "oversubscription"
                                           : refused == NODE_FIELD_LEAF_RADIX ? "leaf-radix"
                                                                                : "nodes", why);
        g_free(why);
    }
    return ok;
}

bool cmdnccl_topology(const CmdNcclOpts *o, TopoSpec *spec, int *gpus, char **err)
{
    NodeCluster cl;
    bool ok = build(o, spec, &cl, err);
    if (ok) {
        *gpus = cl.node.ngpus;
        node_cluster_clear(&cl);
    }
    return ok;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The process itself (binary, libraries): bytes. */
#define CMDNCCL_MEM_BASE ((uint64_t)8 << 20)

/* One size: the tuner, then (simulate) the simulation; refused where NCCL
 * cannot run what is forced or above limit bytes, which !simulate checks
 * alone (before any size runs). */
static bool one_size(const CmdNcclOpts *o, Topo *t, const NodeCluster *cl, int ppn, uint64_t bytes, uint64_t limit,
                     bool simulate, ReportNcclRow *r, char **err)
{
    NcclSystem sys;
    int ranks = o->nodes * ppn;
    nccl_system_from_node(&cl->node, ranks, o->nodes, &sys);
    sys.release = (NcclRelease)o->release;
    char *why = NULL;
    *r = (ReportNcclRow){.bytes = bytes, .op = (NcclOp)o->op, .ranks = ranks, .nodes = o->nodes,
                         .release = (NcclRelease)o->release};
    if (!nccl_tune(&sys, (NcclOp)o->op, bytes, o->algo, o->proto, o->channels, &r->choice, &why)) {
        *err = g_strdup_printf("%s: %s", o->algo >= 0 ? "--nccl-algo" : "--nccl-proto", why);
        g_free(why);
        return false;
    }
    NcclSimSpec sp = {.topo = t, .cl = cl, .nodes = o->nodes, .ppn = ppn, .op = (NcclOp)o->op, .bytes = bytes,
                      .choice = r->choice, .release = (NcclRelease)o->release};
    int fit = ncclshape_mem_channels_fit(&sp, CMDNCCL_MEM_BASE, limit);
    if (fit < MAX(r->choice.channels, 1)) {
        char *change = fit > 0 ? g_strdup_printf("--nccl-channels %d (the most that fit), fewer --nodes or --ranks", fit)
                               : g_strdup("fewer --nodes or --ranks");
        *err = memlimit_refusal("this collective", ncclshape_mem_estimate(&sp) + CMDNCCL_MEM_BASE, limit, change);
        g_free(change);
        return false;
    }
    if (!simulate)
        return true;
    double w0 = wall_now();
    NcclSimStats st;
    r->time_s = ncclsim_time(&sp, &st, &why);
    r->events = st.events;
    r->msgs = st.msgs;
    r->wall_s = wall_now() - w0;
    if (r->time_s < 0) {
        *err = g_strdup_printf("--nccl-algo: %s", why);
        g_free(why);
        return false;
    }
    double f = nccl_busbw_factor((NcclOp)o->op, ranks);
    r->algbw_Bps = r->time_s > 0 ? (double)bytes / r->time_s : 0;
    r->busbw_Bps = r->algbw_Bps * f;
    r->tuner_busbw_Bps = r->choice.time_s > 0 ? (double)bytes / r->choice.time_s * f : 0;
    return true;
}

/* What --json writes. */
typedef struct {
    const char *what;     /* what was built */
    const char *name;     /* the cluster's name */
    const GArray *rows;   /* ReportNcclRow */
} NcclOut;

static void write_json(FILE *f, void *ctx)
{
    const NcclOut *no = ctx;
    reportnccl_json(f, no->name, no->what, (const ReportNcclRow *)no->rows->data, no->rows->len);
}

static void write_csv(FILE *f, void *ctx)
{
    const NcclOut *no = ctx;
    reportnccl_csv(f, (const ReportNcclRow *)no->rows->data, no->rows->len);
}

int cmdnccl_run(const CmdNcclOpts *o, int ranks, const GArray *sizes, const char *json, const char *csv,
                uint64_t max_memory, FILE *out, char **err)
{
    if (!o->node) {
        *err = g_strdup("--algo: nccl runs on GPU nodes; expected --node NAME (arsim list nodes)");
        return 2;
    }
    TopoSpec spec;
    topo_spec_init(&spec);
    NodeCluster cl;
    if (!build(o, &spec, &cl, err)) {
        topo_spec_clear(&spec);
        return 2;
    }
    char *why = NULL;
    Topo *t = topo_new(&spec, &why);
    topo_spec_clear(&spec);
    int G = cl.node.ngpus, ppn = G;
    if (t && ranks > 0) {
        if (ranks % o->nodes || ranks / o->nodes > G || ranks < o->nodes) {
            *err = g_strdup_printf("--ranks: %d GPUs on %d node%s of %d; expected a multiple of --nodes, at most %d",
                                   ranks, o->nodes, o->nodes > 1 ? "s" : "", G, o->nodes * G);
            topo_free(t);
            node_cluster_clear(&cl);
            return 2;
        }
        ppn = ranks / o->nodes;
    }
    if (!t) {
        *err = g_strdup_printf("--node: %s", why);
        g_free(why);
        node_cluster_clear(&cl);
        return 2;
    }
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(ReportNcclRow));
    int rc = 0;
    uint64_t limit = memlimit_resolve(max_memory);
    for (guint i = 0; i < sizes->len && rc == 0; i++) {   /* every size's refusals before the first runs */
        ReportNcclRow r;
        if (!one_size(o, t, &cl, ppn, g_array_index(sizes, uint64_t, i), limit, false, &r, err))
            rc = 2;
    }
    CliProgress *bar = cliprogress_start(stderr, "arsim collective");
    for (guint i = 0; i < sizes->len && rc == 0; i++) {
        ReportNcclRow r;
        uint64_t bytes = g_array_index(sizes, uint64_t, i);
        char *now = g_strdup_printf("size %" G_GUINT64_FORMAT " B", bytes);
        cliprogress_step(bar, (int)i, (int)sizes->len, now);
        g_free(now);
        if (one_size(o, t, &cl, ppn, bytes, limit, true, &r, err))
            g_array_append_val(rows, r);
        else
            rc = 2;
    }
    cliprogress_end(bar);
    if (rc == 0) {
        char *what = node_cluster_describe(&cl);
        char *name = reportnode_cluster_name(cl.node.name, &cl.fab, NULL);
        NcclOut no = {what, name, rows};
        if (json && !fileio_write_with(json, write_json, &no, err))
            rc = 1;
        if (rc == 0 && csv && !fileio_write_with(csv, write_csv, &no, err))
            rc = 1;
        if (rc == 0 && !fileio_is_stdout(json) && !fileio_is_stdout(csv))
            reportnccl_table(out, what, (const ReportNcclRow *)rows->data, rows->len);
        g_free(what);
        g_free(name);
    }
    g_array_free(rows, TRUE);
    topo_free(t);
    node_cluster_clear(&cl);
    return rc;
}
