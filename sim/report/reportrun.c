/* reportrun — `arsim run` output: table, JSON, CSV, Chrome trace; see
 * reportrun.h. */
#include "report/reportrun.h"
#include "report/reportnode.h"
#include "io/units.h"

#include <cJSON.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static const Policy *policy_of(const Scenario *s, const TrainResult *r)
{
    return g_ptr_array_index(s->policies, r->policy);
}

static const TopoLinkClass *net_link(const Scenario *s)
{
    return s->topo.kind == TOPO_HIERARCHICAL ? &s->topo.inter->link : &s->topo.link;
}

static const char *net_kind(const Scenario *s)
{
    return topo_kind_name(s->topo.kind == TOPO_HIERARCHICAL ? s->topo.inter->kind : s->topo.kind);
}

/* A unit's algorithm column: "nccl" for an NCCL call (its choice beside it). */
static const char *unit_algo_name(const TrainUnitRow *u)
{
    return u->nccl.on ? "nccl" : coll_algo_name(u->algo);
}

/* A cluster of GPU nodes in a few words (reportnode_cluster_name): what
 * its results and their figures are titled by (g_free); NULL for any
 * other cluster. */
static char *cluster_name(const Scenario *s)
{
    return s->node ? reportnode_cluster_name(s->node->name, &s->node_fab, s->oversub_text) : NULL;
}

/* Adds "node" and "cluster" to o for a cluster of GPU nodes. */
static void add_cluster(cJSON *o, const Scenario *s)
{
    char *c = cluster_name(s);
    if (!c)
        return;
    cJSON_AddStringToObject(o, "node", s->node->name);
    cJSON_AddStringToObject(o, "cluster", c);
    g_free(c);
}

/* The names of the algorithms (algo) or protocols whose bits are set, in
 * NCCL's order, joined by '+' ("Ring", "Tree+Ring"), into buf (n bytes). */
static const char *nccl_names(char *buf, size_t n, unsigned bits, bool algo)
{
    buf[0] = 0;
    for (int i = 0; i < (algo ? NCCL_NALGOS : NCCL_NPROTOS); i++)
        if (bits & 1u << i) {
            if (buf[0])
                g_strlcat(buf, "+", n);
            g_strlcat(buf, algo ? nccl_algo_name((NcclAlgo)i) : nccl_proto_name((NcclProto)i), n);
        }
    return buf;
}

/* Does any result have units that went through NCCL. */
static bool any_nccl(const GArray *results)
{
    for (guint i = 0; i < results->len; i++)
        if (g_array_index(results, TrainResult, i).nccl.units)
            return true;
    return false;
}

/* JSON has no infinity: an infinite rate is written as null. */
static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

cJSON *report_result_json(const Scenario *s, const TrainResult *r)
{
    const Policy *p = policy_of(s, r);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scenario", s->name);
    cJSON_AddStringToObject(o, "model", s->model->name);
    cJSON_AddStringToObject(o, "gpu", s->gpu.key);
    cJSON_AddStringToObject(o, "precision", gpu_precision_name(s->precision));
    cJSON_AddStringToObject(o, "topology", net_kind(s));
    add_cluster(o, s);
    cJSON_AddNumberToObject(o, "nodes", s->nodes);
    cJSON_AddNumberToObject(o, "gpus_per_node", s->gpus_per_node);
    cJSON_AddNumberToObject(o, "world", s->world);
    add_num(o, "bandwidth_Bps", net_link(s)->bw_Bps);
    add_num(o, "latency_s", net_link(s)->latency_s);
    cJSON_AddNumberToObject(o, "batch", r->batch);
    cJSON_AddStringToObject(o, "policy", p->name);
    cJSON_AddStringToObject(o, "overlap", policy_overlap_name(p->overlap));
    cJSON_AddStringToObject(o, "algorithm", policy_algo_label(p));
    add_num(o, "iteration_s", r->iteration_s);
    if (s->whatif) {
        add_num(o, "iteration_p50_s", r->iteration_p50_s);
        add_num(o, "iteration_p99_s", r->iteration_p99_s);
        add_num(o, "iteration_max_s", r->iteration_max_s);
        if (r->iter_times)   /* the distribution itself: `arsim plot` draws its CDF */
            cJSON_AddItemToObject(o, "iteration_times_s",
                                  cJSON_CreateDoubleArray((const double *)r->iter_times->data, (int)r->iter_times->len));
    }
    add_num(o, "compute_s", r->compute_s);
    if (p->overlap == OVERLAP_FSDP2)   /* the part of compute_s that is FSDP2's copies */
        add_num(o, "fsdp2_copy_s", r->copy_s);
    add_num(o, "comm_s", r->comm_s);
    add_num(o, "slowdown_s", r->slowdown_s);
    if (s->comm_slowdown > 0 || s->overlap)   /* absent otherwise: results without either stay as they were */
        add_num(o, "comm_slowdown_s", r->comm_slowdown_s);
    if (s->overlap)
        add_num(o, "overlapped_compute_s", r->overlapped_compute_s);
    add_num(o, "exposed_comm_s", r->exposed_comm_s);
    add_num(o, "samples_per_s", r->samples_per_s);
    add_num(o, "speedup", r->speedup);
    cJSON_AddNumberToObject(o, "events", (double)r->events);
    cJSON_AddNumberToObject(o, "comm_bytes", (double)r->comm_bytes);
    if (r->memory_peak_bytes) {   /* absent when the model gives no act_bytes */
        cJSON_AddNumberToObject(o, "memory_peak_bytes", (double)r->memory_peak_bytes);
        if (s->gpu.mem_capacity)
            cJSON_AddBoolToObject(o, "memory_fits", r->memory_peak_bytes <= s->gpu.mem_capacity);
    }
    if (r->nccl.units) {   /* the units that went through NCCL: what their calls ran, simulated and estimated */
        char nm[64];
        cJSON_AddStringToObject(o, "nccl_algo", nccl_names(nm, sizeof nm, r->nccl.algos, true));
        cJSON_AddStringToObject(o, "nccl_proto", nccl_names(nm, sizeof nm, r->nccl.protos, false));
        cJSON_AddStringToObject(o, "nccl_release", nccl_release_name((NcclRelease)p->nccl.release));
        cJSON_AddNumberToObject(o, "channels", r->nccl.channels);
        cJSON_AddNumberToObject(o, "nccl_time_s", r->nccl.time_s);
        cJSON_AddNumberToObject(o, "nccl_tuner_time_s", r->nccl.tuner_s);
    }
    if (r->units) {
        cJSON *arr = cJSON_AddArrayToObject(o, "layers");
        for (guint i = 0; i < r->units->len; i++) {
            const TrainUnitRow *u = &g_array_index(r->units, TrainUnitRow, i);
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", u->name);
            cJSON_AddNumberToObject(x, "bytes", (double)u->bytes);
            cJSON_AddStringToObject(x, "algorithm", unit_algo_name(u));
            if (u->nccl.on) {   /* what NCCL's tuner chose for the unit's size */
                cJSON_AddStringToObject(x, "nccl_algo", nccl_algo_name(u->nccl.choice.algo));
                cJSON_AddStringToObject(x, "nccl_proto", nccl_proto_name(u->nccl.choice.proto));
                cJSON_AddStringToObject(x, "nccl_release", nccl_release_name((NcclRelease)u->nccl.force.release));
                cJSON_AddNumberToObject(x, "channels", u->nccl.choice.channels);
            }
            cJSON_AddStringToObject(x, "reason", u->reason);
            cJSON_AddNumberToObject(x, "ready_s", u->ready_s);
            cJSON_AddNumberToObject(x, "start_s", u->start_s);
            cJSON_AddNumberToObject(x, "end_s", u->end_s);
            cJSON_AddNumberToObject(x, "needed_s", u->needed_s);
            cJSON_AddNumberToObject(x, "hidden_s", u->hidden_s);
            if (s->whatif)
                cJSON_AddNumberToObject(x, "wait_s", u->wait_s);
            cJSON_AddItemToArray(arr, x);
        }
    }
    return o;
}

cJSON *report_run_json(const Scenario *s, const GArray *results)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *sc = cJSON_AddObjectToObject(root, "scenario");
    cJSON_AddStringToObject(sc, "name", s->name);
    cJSON_AddStringToObject(sc, "file", s->file);
    cJSON_AddStringToObject(sc, "model", s->model->name);
    cJSON_AddNumberToObject(sc, "params", (double)s->model->params);
    cJSON_AddStringToObject(sc, "gpu", s->gpu.key);
    cJSON_AddStringToObject(sc, "topology", net_kind(s));
    add_cluster(sc, s);
    cJSON_AddNumberToObject(sc, "nodes", s->nodes);
    cJSON_AddNumberToObject(sc, "gpus_per_node", s->gpus_per_node);
    cJSON_AddNumberToObject(sc, "world", s->world);
    add_num(sc, "bandwidth_Bps", net_link(s)->bw_Bps);
    add_num(sc, "latency_s", net_link(s)->latency_s);
    cJSON_AddStringToObject(sc, "baseline", ((Policy *)g_ptr_array_index(s->policies, s->baseline))->name);
    cJSON *arr = cJSON_AddArrayToObject(root, "results");
    for (guint i = 0; i < results->len; i++)
        cJSON_AddItemToArray(arr, report_result_json(s, &g_array_index(results, TrainResult, i)));
    return root;
}

void report_run_write_json(FILE *out, const Scenario *s, const GArray *results)
{
    cJSON *root = report_run_json(s, results);
    report_print_json(out, root);
    cJSON_Delete(root);
}

/* Does any result carry a memory estimate. */
static bool any_memory(const GArray *results)
{
    for (guint i = 0; i < results->len; i++)
        if (g_array_index(results, TrainResult, i).memory_peak_bytes)
            return true;
    return false;
}

/* Does r's estimated peak fit the GPU's memory (yes when either is unknown). */
static bool fits(const Scenario *s, const TrainResult *r)
{
    return !s->gpu.mem_capacity || !r->memory_peak_bytes || r->memory_peak_bytes <= s->gpu.mem_capacity;
}

void report_run_table(FILE *out, const Scenario *s, const GArray *results, bool layers)
{
    char bw[32], *net;
    if (s->node) {   /* a cluster of GPU nodes: the node and its rails, not the graph built of it */
        units_fmt_rate(bw, sizeof bw, s->node->nic_raw_Bps);
        net = g_strdup_printf("%s nodes, %d x %s rails", s->node->name, s->node->nnics, bw);
    } else {
        units_fmt_rate(bw, sizeof bw, net_link(s)->bw_Bps);
        net = g_strdup_printf("%s %s", net_kind(s), bw);
    }
    fprintf(out, "# %s: %s on %d x %d %s (%s), %s; baseline %s\n", s->name, s->model->name, s->nodes,
            s->gpus_per_node, s->gpu.key, net, gpu_precision_name(s->precision),
            ((Policy *)g_ptr_array_index(s->policies, s->baseline))->name);
    g_free(net);
    fprintf(out, "%6s %-18s %-9s %-12s %11s", "batch", "policy", "overlap", "algorithm", "iter(ms)");
    if (s->whatif)   /* what-if runs: the measured iterations' distribution */
        fprintf(out, " %11s %11s", "p50(ms)", "p99(ms)");
    bool mem = any_memory(results);
    fprintf(out, " %11s %11s %11s", "compute(ms)", "comm(ms)", "exposed(ms)");
    if (s->overlap)   /* the overlap mechanism: what compute and the syncs lost to each other */
        fprintf(out, " %11s %11s", "slowed(ms)", "cslowed(ms)");
    fprintf(out, " %12s %8s%s\n", "samples/s", "speedup", mem ? "  memory(GiB)" : "");
    for (guint i = 0; i < results->len; i++) {
        const TrainResult *r = &g_array_index(results, TrainResult, i);
        const Policy *p = policy_of(s, r);
        fprintf(out, "%6d %-18s %-9s %-12s %11.3f", r->batch, p->name, policy_overlap_name(p->overlap),
                policy_algo_label(p), r->iteration_s * 1e3);
        if (s->whatif)
            fprintf(out, " %11.3f %11.3f", r->iteration_p50_s * 1e3, r->iteration_p99_s * 1e3);
        fprintf(out, " %11.3f %11.3f %11.3f", r->compute_s * 1e3, r->comm_s * 1e3, r->exposed_comm_s * 1e3);
        if (s->overlap)
            fprintf(out, " %11.3f %11.3f", r->slowdown_s * 1e3, r->comm_slowdown_s * 1e3);
        fprintf(out, " %12.1f %8.3f", r->samples_per_s, r->speedup);
        if (mem && r->memory_peak_bytes)
            fprintf(out, "  %11.1f%s", (double)r->memory_peak_bytes / 1073741824.0, fits(s, r) ? "" : " !");
        fprintf(out, "\n");
        if (!layers || !r->units)
            continue;
        fprintf(out, "    %-22s %12s %-12s %10s %10s %10s %10s %10s", "unit", "bytes", "algorithm", "ready(ms)",
                "start(ms)", "end(ms)", "needed(ms)", "hidden(%)");
        if (s->whatif)
            fprintf(out, " %10s", "wait(ms)");
        fprintf(out, "  reason\n");
        for (guint j = 0; j < r->units->len; j++) {
            const TrainUnitRow *u = &g_array_index(r->units, TrainUnitRow, j);
            double dur = u->end_s - u->start_s;
            fprintf(out, "    %-22s %12" G_GUINT64_FORMAT " %-12s %10.3f %10.3f %10.3f %10.3f %10.1f", u->name,
                    (guint64)u->bytes, unit_algo_name(u), u->ready_s * 1e3, u->start_s * 1e3, u->end_s * 1e3,
                    u->needed_s * 1e3, dur > 0 ? 100.0 * u->hidden_s / dur : 100.0);
            if (s->whatif)   /* how long it waited for its slowest rank */
                fprintf(out, " %10.3f", u->wait_s * 1e3);
            fprintf(out, "  %s\n", u->reason);
        }
    }
    for (guint i = 0; i < results->len; i++)
        if (!fits(s, &g_array_index(results, TrainResult, i))) {
            fprintf(out, "# !: the estimated peak memory is above the %s's %.0f GiB\n", s->gpu.key,
                    (double)s->gpu.mem_capacity / 1073741824.0);
            break;
        }
}

void report_run_csv(FILE *out, const Scenario *s, const GArray *results)
{
    bool nccl = any_nccl(results);
    char *cluster = cluster_name(s);
    GString *tail = g_string_new(NULL);   /* node, cluster: the same on every line */
    if (cluster) {
        g_string_append_c(tail, ',');
        report_csv_text(tail, s->node->name);
        g_string_append_c(tail, ',');
        report_csv_text(tail, cluster);
    }
    fprintf(out, "scenario,model,gpu,topology,nodes,gpus_per_node,world,bandwidth_Bps,batch,policy,overlap,algorithm,"
                 "iteration_s,compute_s,comm_s,exposed_comm_s,samples_per_s,speedup%s%s,comm_bytes,memory_peak_bytes%s%s\n",
            s->whatif ? ",iteration_p50_s,iteration_p99_s,iteration_max_s" : "",
            s->overlap ? ",slowdown_s,comm_slowdown_s" : "",
            nccl ? ",nccl_algo,nccl_proto,channels,nccl_time_s,nccl_tuner_time_s,nccl_release" : "",
            cluster ? ",node,cluster" : "");
    for (guint i = 0; i < results->len; i++) {
        const TrainResult *r = &g_array_index(results, TrainResult, i);
        const Policy *p = policy_of(s, r);
        char bw[REPORT_NUM_MAX];
        fprintf(out, "%s,%s,%s,%s,%d,%d,%d,%s,%d,%s,%s,%s", s->name, s->model->name, s->gpu.key, net_kind(s),
                s->nodes, s->gpus_per_node, s->world, report_num(bw, net_link(s)->bw_Bps), r->batch, p->name,
                policy_overlap_name(p->overlap), policy_algo_label(p));
        double v[] = {r->iteration_s, r->compute_s, r->comm_s, r->exposed_comm_s, r->samples_per_s, r->speedup,
                      r->iteration_p50_s, r->iteration_p99_s, r->iteration_max_s};
        for (size_t k = 0; k < (s->whatif ? G_N_ELEMENTS(v) : G_N_ELEMENTS(v) - 3); k++) {
            char num[REPORT_NUM_MAX];
            fprintf(out, ",%s", report_num(num, v[k]));
        }
        char a[REPORT_NUM_MAX], b[REPORT_NUM_MAX];
        if (s->overlap)
            fprintf(out, ",%s,%s", report_num(a, r->slowdown_s), report_num(b, r->comm_slowdown_s));
        fprintf(out, ",%" G_GUINT64_FORMAT ",", (guint64)r->comm_bytes);
        if (r->memory_peak_bytes)   /* empty: unknown */
            fprintf(out, "%" G_GUINT64_FORMAT, (guint64)r->memory_peak_bytes);
        if (nccl && r->nccl.units) {
            char x[64], y[64];
            fprintf(out, ",%s,%s,%d,%s,%s,%s", nccl_names(x, sizeof x, r->nccl.algos, true),
                    nccl_names(y, sizeof y, r->nccl.protos, false), r->nccl.channels, report_num(a, r->nccl.time_s),
                    report_num(b, r->nccl.tuner_s), nccl_release_name((NcclRelease)p->nccl.release));
        } else if (nccl) {   /* a policy without NCCL calls */
            fputs(",,,,,,", out);
        }
        fprintf(out, "%s\n", tail->str);
    }
    g_string_free(tail, TRUE);
    g_free(cluster);
}

/* The trace's names of rank pid: its process and its threads, compute
 * (tid 0) and `lanes` communication lanes (tid 1, 2, ...). */
static void trace_rank_meta(cJSON *ev, int pid, int lanes)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", "process_name");
    cJSON_AddStringToObject(m, "ph", "M");
    cJSON_AddNumberToObject(m, "pid", pid);
    char nm[64];
    snprintf(nm, sizeof nm, "rank %d", pid);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", nm);
    cJSON_AddItemToArray(ev, m);
    for (int tid = 0; tid <= lanes; tid++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", "thread_name");
        cJSON_AddStringToObject(t, "ph", "M");
        cJSON_AddNumberToObject(t, "pid", pid);
        cJSON_AddNumberToObject(t, "tid", tid);
        if (tid > 1)
            snprintf(nm, sizeof nm, "communication %d", tid);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(t, "args"), "name",
                                tid == 0 ? "compute" : tid == 1 ? "communication" : nm);
        cJSON_AddItemToArray(ev, t);
    }
}

/* Span i's start and end in whole ps (exact for the engine's times). */
static void span_ps(const TrainSpan *sp, int64_t *start, int64_t *end)
{
    *start = (int64_t)llround(sp->start_s * PS_PER_S);
    *end = *start + (int64_t)llround(sp->dur_s * PS_PER_S);
}

static gint by_start(gconstpointer a, gconstpointer b, gpointer data)
{
    const GArray *spans = data;
    int i = *(const int *)a, j = *(const int *)b;
    int64_t si, sj, e;
    span_ps(&g_array_index(spans, TrainSpan, i), &si, &e);
    span_ps(&g_array_index(spans, TrainSpan, j), &sj, &e);
    return si != sj ? (si < sj ? -1 : 1) : (i > j) - (i < j);
}

/* The communication lane (tid, from 1) of each span of r (0 for a
 * compute span; g_free it): collectives that overlap in time (several
 * streams, comm.streams > 1) go to lanes of their own, each to the
 * lowest lane free at its start, since a trace viewer nests the slices of
 * one thread and cannot show two that merely overlap. *lanes: how many. */
static int *trace_lanes(const TrainResult *r, int *lanes)
{
    guint n = r->spans ? r->spans->len : 0;
    int *lane = g_new0(int, MAX(n, 1));
    GArray *order = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < n; i++)
        if (g_array_index(r->spans, TrainSpan, i).track == 1)
            g_array_append_val(order, i);
    g_array_sort_with_data(order, by_start, r->spans);
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(int64_t));   /* per lane: its last span's end */
    for (guint k = 0; k < order->len; k++) {
        int i = g_array_index(order, int, k);
        int64_t st, en;
        span_ps(&g_array_index(r->spans, TrainSpan, i), &st, &en);
        guint l = 0;
        while (l < ends->len && g_array_index(ends, int64_t, l) > st)
            l++;
        if (l == ends->len)
            g_array_append_val(ends, en);
        g_array_index(ends, int64_t, l) = en;
        lane[i] = (int)l + 1;
    }
    *lanes = MAX((int)ends->len, 1);
    g_array_free(ends, TRUE);
    g_array_free(order, TRUE);
    return lane;
}

/* One "X" span of the trace on (pid, tid), shifted by t0. */
static void trace_span(cJSON *ev, const TrainSpan *sp, int pid, int tid, double t0)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", sp->name);
    cJSON_AddStringToObject(x, "cat", sp->track ? "comm" : "compute");
    cJSON_AddStringToObject(x, "ph", "X");
    cJSON_AddNumberToObject(x, "pid", pid);
    cJSON_AddNumberToObject(x, "tid", tid);
    cJSON_AddNumberToObject(x, "ts", (sp->start_s - t0) * 1e6);
    cJSON_AddNumberToObject(x, "dur", sp->dur_s * 1e6);
    cJSON_AddItemToArray(ev, x);
}

/* One edge of a collective's span: where the NIC counter changes. */
typedef struct {
    int64_t at;              /* ps */
    double ts_us;            /* the same instant as the trace writes it, shifted by t0 */
    int span;                /* the span's index */
    bool start;              /* its start, else its end */
} NicEdge;

static gint by_edge(gconstpointer a, gconstpointer b)
{
    const NicEdge *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->start != y->start)
        return x->start ? 1 : -1;   /* at one instant, ends before starts */
    return (x->span > y->span) - (x->span < y->span);
}

/* The counter track "link utilization" on pid: at every instant a
 * collective starts or ends, "NIC egress %" is the sum, over the
 * collectives in flight just after it, of each one's egress utilization
 * (TrainSpan.value, x 100); 0 when none is. */
static void trace_nic_counter(cJSON *ev, const TrainResult *r, int pid, double t0)
{
    guint n = r->spans ? r->spans->len : 0;
    GArray *edges = g_array_new(FALSE, FALSE, sizeof(NicEdge));
    for (guint i = 0; i < n; i++) {
        const TrainSpan *sp = &g_array_index(r->spans, TrainSpan, i);
        if (sp->track != 1)
            continue;
        int64_t st, en;
        span_ps(sp, &st, &en);
        NicEdge e[2] = {{st, (sp->start_s - t0) * 1e6, (int)i, true},
                        {en, (sp->start_s - t0 + sp->dur_s) * 1e6, (int)i, false}};
        g_array_append_vals(edges, e, 2);
    }
    g_array_sort(edges, by_edge);
    GArray *live = g_array_new(FALSE, FALSE, sizeof(int));   /* the spans in flight, by start */
    for (guint k = 0; k < edges->len;) {
        const NicEdge *first = &g_array_index(edges, NicEdge, k);
        for (; k < edges->len && g_array_index(edges, NicEdge, k).at == first->at; k++) {
            const NicEdge *e = &g_array_index(edges, NicEdge, k);
            if (e->start) {
                g_array_append_val(live, e->span);
                continue;
            }
            for (guint j = 0; j < live->len; j++)
                if (g_array_index(live, int, j) == e->span) {
                    g_array_remove_index(live, j);
                    break;
                }
        }
        double pct = 0;   /* summed afresh: no rounding left over from the collectives that ended */
        for (guint j = 0; j < live->len; j++)
            pct += 100.0 * g_array_index(r->spans, TrainSpan, g_array_index(live, int, j)).value;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", "link utilization");
        cJSON_AddStringToObject(c, "ph", "C");
        cJSON_AddNumberToObject(c, "pid", pid);
        cJSON_AddNumberToObject(c, "ts", first->ts_us);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(c, "args"), "NIC egress %", pct);
        cJSON_AddItemToArray(ev, c);
    }
    g_array_free(live, TRUE);
    g_array_free(edges, TRUE);
}

/* What-if runs: each traced rank's own compute track (TrainSpan.rank),
 * and the collectives (every rank takes part) on each; the NIC counter
 * on the first traced rank, as in a run of identical ranks. */
static void trace_per_rank(cJSON *ev, const Scenario *s, const TrainResult *r, const int *lane, int lanes, double t0)
{
    bool counter = false;   /* the NIC counter drawn */
    bool *shown = g_new0(bool, s->world);
    for (guint i = 0; r->spans && i < r->spans->len; i++) {
        const TrainSpan *sp = &g_array_index(r->spans, TrainSpan, i);
        if (sp->track == 0 && sp->rank >= 0 && sp->rank < s->world)
            shown[sp->rank] = true;
    }
    for (int k = 0; k < s->world; k++) {
        if (!shown[k])
            continue;
        trace_rank_meta(ev, k, lanes);
        for (guint i = 0; r->spans && i < r->spans->len; i++) {
            const TrainSpan *sp = &g_array_index(r->spans, TrainSpan, i);
            if (sp->track == 1 || sp->rank == k)
                trace_span(ev, sp, k, lane[i], t0);
        }
        if (!counter) {
            counter = true;
            trace_nic_counter(ev, r, k, t0);
        }
    }
    g_free(shown);
}

void report_run_trace(FILE *out, const Scenario *s, const TrainResult *r, int ranks_shown)
{
    const Policy *p = policy_of(s, r);
    cJSON *root = cJSON_CreateObject();
    cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
    int ranks[2] = {0, s->world - 1};
    double t0 = 0;   /* the previous iteration's syncs start before 0: shift so every ts >= 0 */
    for (guint i = 0; r->spans && i < r->spans->len; i++)
        if (g_array_index(r->spans, TrainSpan, i).start_s < t0)
            t0 = g_array_index(r->spans, TrainSpan, i).start_s;
    int nr = ranks_shown < 2 || s->world == 1 ? 1 : 2, lanes;
    int *lane = trace_lanes(r, &lanes);
    if (s->whatif) {
        trace_per_rank(ev, s, r, lane, lanes, t0);
        nr = 0;
    }
    for (int k = 0; k < nr; k++) {
        trace_rank_meta(ev, ranks[k], lanes);
        for (guint i = 0; r->spans && i < r->spans->len; i++) {
            const TrainSpan *sp = &g_array_index(r->spans, TrainSpan, i);
            trace_span(ev, sp, ranks[k], lane[i], t0);
        }
        if (k == 0)
            trace_nic_counter(ev, r, ranks[k], t0);
    }
    g_free(lane);
    cJSON *meta = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(meta, "scenario", s->name);
    cJSON_AddStringToObject(meta, "policy", p->name);
    cJSON_AddNumberToObject(meta, "batch", r->batch);
    cJSON_AddNumberToObject(meta, "iteration_s", r->iteration_s);
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    report_print_json(out, root);
    cJSON_Delete(root);
}
