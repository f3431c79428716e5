/* cmdcoll — `arsim collective`: its options and its run; see cmdcoll.h. */
#include "cli/cmdcoll.h"
#include "cli/cliprogress.h"
#include "coll/collexec.h"
#include "coll/collrun.h"
#include "io/fileio.h"
#include "io/memlimit.h"
#include "io/units.h"
#include "net/topocfg.h"
#include "report/reportcoll.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The process itself (binary, libraries, the Topo's spec): bytes. */
#define CMDCOLL_MEM_BASE ((uint64_t)8 << 20)

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --skew: o->trials runs with the ranks' issue offsets drawn anew (trial
 * k's draws named by (--seed, k, rank)); fills r's trials, min, max and
 * events (summed) and returns the median time, or the failing run's
 * COLLRUN_ERR_ value with *why. */
static double skewed_time(Topo *t, const CmdCollOpts *o, const CollParams *prm, int p, ReportCollRow *r, char **why)
{
    int trials = o->trials > 0 ? o->trials : CMDCOLL_TRIALS;
    uint64_t seed = o->seed >= 0 ? (uint64_t)o->seed : CMDCOLL_SEED;
    double *v = g_new(double, trials);
    double med = -1;
    int k;
    for (k = 0; k < trials; k++) {
        CollSkew skew = {.skew_s = o->skew_s, .seed = seed, .trial = (uint64_t)k};
        uint64_t ev = 0;
        v[k] = collrun_time_skewed(t, o->algo, prm, p, r->bytes, (uint32_t)o->elem_bytes, o->gamma, &skew, &ev, why);
        r->events += ev;
        if (v[k] < 0) {
            med = v[k];   /* the COLLRUN_ERR_ value */
            break;
        }
    }
    if (k == trials) {
        qsort(v, (size_t)k, sizeof *v, cmp_double);
        med = (v[(k - 1) / 2] + v[k / 2]) / 2;
        r->trials = k;
        r->skew_s = o->skew_s;
        r->time_min_s = v[0];
        r->time_max_s = v[k - 1];
    }
    g_free(v);
    return med;
}

/* What --json and --csv write. */
typedef struct {
    const Topo *t;
    const ReportCollRow *rows;
    size_t n;
} CollOut;

static void write_csv(FILE *f, void *ctx)
{
    const CollOut *co = ctx;
    report_coll_csv(f, co->rows, co->n);
}

static void write_json(FILE *f, void *ctx)
{
    const CollOut *co = ctx;
    report_coll_json(f, co->t, co->rows, co->n);
}

/* --intra: on a hierarchical network, its intra links; on a flat one, its
 * hosts become nodes of --gpus-per-node GPUs on such links (--ranks then
 * counts GPUs: whole nodes). false + *err. */
static bool apply_intra(const CmdCollOpts *o, TopoSpec *spec, char **err)
{
    if (o->intra.bw_Bps <= 0)
        return true;
    if (spec->kind == TOPO_HIERARCHICAL) {
        spec->intra.bw_Bps = o->intra.bw_Bps;
        spec->intra.latency_s = o->intra.latency_s;
        return true;
    }
    int g = o->prm.gpus_per_node;
    if (g <= 1) {
        *err = g_strdup("--intra: the network's hosts are single GPUs; expected --gpus-per-node G > 1 with it (or a "
                        "hierarchical --topology)");
        return false;
    }
    if (o->ranks > 0 && o->ranks % g) {
        *err = g_strdup_printf("--ranks: %d GPUs are not whole nodes of %d; expected a multiple of --gpus-per-node",
                               o->ranks, g);
        return false;
    }
    if (o->ranks > 0)
        spec->hosts = o->ranks / g;
    if (spec->hosts == 0) {   /* every host the kind has: count them */
        Topo *t = topo_new(spec, err);
        if (!t)
            return false;
        spec->hosts = t->nhosts;
        topo_free(t);
    }
    topocfg_nodes(spec, g, o->intra);
    return true;
}

/* An option --algo nccl does not use (NCCL's run has its own protocols,
 * links and timing), or NULL. */
static const char *nccl_unused(const CmdCollOpts *o)
{
    return o->links ? "links"
         : o->intra.bw_Bps > 0 ? "intra"
         : o->skew_s > 0 ? "skew"
         : o->bw_Bps > 0 ? "bandwidth"
         : o->latency_s >= 0 ? "latency"
         : o->packet != CMDCOLL_PACKET_TOPO ? "packet"
         : o->gamma > 0 ? "gamma"
         : o->elem_bytes > 1 ? "elem-bytes"
         : o->prm.gpus_per_node > 1 ? "gpus-per-node"   /* the node file's GPUs; --ranks takes fewer */
         : o->prm.inter != COLL_RING ? "inter"
         : o->proto.mask ? "a protocol option"
                         : NULL;
}

/* The network of the options: --node, --topology (or a star of --ranks hosts)
 * with --bandwidth, --latency, --packet, the protocol options and --intra
 * over it; *node_gpus: --node's GPUs a node (0 without --node). NULL and
 * *err on a bad topology, for --bandwidth or --latency on a graph, whose
 * links took theirs when it was read, and for --intra on --node's (the
 * node file says how its GPUs meet). */
static Topo *coll_topo(const CmdCollOpts *o, int *node_gpus, char **err)
{
    TopoSpec spec;
    topo_spec_init(&spec);
    *node_gpus = 0;
    if (o->nccl.node) {
        if (!cmdnccl_topology(&o->nccl, &spec, node_gpus, err)) {
            topo_spec_clear(&spec);
            return NULL;
        }
    } else if (o->topology) {
        if (!topocfg_load(o->topology, &spec, err)) {
            topo_spec_clear(&spec);
            return NULL;
        }
    } else {
        spec.kind = TOPO_STAR;
        spec.hosts = o->ranks > 0 ? o->ranks : 8;
    }
    const char *fixed = o->bw_Bps > 0 ? "bandwidth" : o->latency_s >= 0 ? "latency"
                      : o->intra.bw_Bps > 0 && o->nccl.node ? "intra" : NULL;
    if (spec.kind == TOPO_GRAPH && fixed) {
        *err = o->nccl.node ? g_strdup_printf("--%s: --node's links are the node file's and the fabric's; expected no "
                                              "--%s (other links: a node file of your own)", fixed, fixed)
                            : g_strdup_printf("--%s: a graph topology's links took theirs from its file; expected no "
                                              "--%s (other links: in the file)", fixed, fixed);
        topo_spec_clear(&spec);
        return NULL;
    }
    if (o->bw_Bps > 0)
        spec.link.bw_Bps = o->bw_Bps;
    if (o->latency_s >= 0)
        spec.link.latency_s = o->latency_s;
    if (o->packet != CMDCOLL_PACKET_TOPO)
        spec.packet_bytes = o->packet;
    protocol_apply(&spec.protocol, &o->proto.value, o->proto.mask);
    if (spec.intra_protocol_set)
        protocol_apply(&spec.intra_protocol, &o->proto.value, o->proto.mask);
    if (!apply_intra(o, &spec, err)) {
        topo_spec_clear(&spec);
        return NULL;
    }
    char *why = NULL;
    Topo *t = topo_new(&spec, &why);
    topo_spec_clear(&spec);
    if (!t) {
        *err = g_strdup_printf("%s: %s", o->topology ? o->topology : "--ranks", why);
        g_free(why);
    }
    return t;
}

/* The one-line message of a failed run: code a COLLRUN_ERR_ value, why
 * collrun's message (g_free). */
static char *run_error(const CmdCollOpts *o, double code, const char *why)
{
    const char *name = coll_algo_name(o->algo);
    if (code == COLLRUN_ERR_CLOCK)
        return g_strdup_printf("--size: %s; expected a smaller --size, a faster --bandwidth or a smaller --gamma",
                               why);
    if (code == COLLRUN_ERR_PARAMS)
        return g_strdup_printf("--algo: %s", why);
    if (code == COLLRUN_ERR_DEADLOCK)
        return g_strdup_printf("--algo: %s: %s; expected parameters that fit the algorithm", name, why);
    return g_strdup_printf("--algo: %s: %s", name, why);
}

int cmdcoll_run(const CmdCollOpts *o, FILE *out, char **err)
{
    if (o->skew_s <= 0 && (o->trials > 0 || o->seed >= 0)) {
        const char *w = o->trials > 0 ? "trials" : "seed";
        *err = g_strdup_printf("--%s: given without --skew, whose draws it sets; expected --skew TIME with it (or no "
                               "--%s)", w, w);
        return 2;
    }
    if (o->prm.inter != COLL_RING && o->algo != COLL_HIERARCHICAL && !o->nccl.on) {
        *err = g_strdup_printf("--inter: %s between nodes is for --algo hierarchical, not %s; expected --algo "
                               "hierarchical with it (or no --inter)", coll_algo_name(o->prm.inter),
                               coll_algo_name(o->algo));
        return 2;
    }
    const char *unused = o->nccl.on ? nccl_unused(o) : NULL;
    if (unused) {
        *err = g_strdup_printf("--algo: nccl does not use %s%s (NCCL's run times its own protocols on the node's "
                               "links); expected it without", unused[0] == 'a' ? "" : "--", unused);
        return 2;
    }
    if (!cmdnccl_check(&o->nccl, o->topology != NULL, err))
        return 2;
    if (o->nccl.on)
        return cmdnccl_run(&o->nccl, o->ranks, o->sizes, o->json, o->csv, o->max_memory, out, err);
    int node_gpus;
    Topo *t = coll_topo(o, &node_gpus, err);
    if (!t)
        return 2;
    int p = o->ranks > 0 ? o->ranks : t->nhosts;
    if (p > t->nhosts) {
        *err = g_strdup_printf("--ranks: %d ranks but the topology has %d hosts; expected at most %d", p,
                               t->nhosts, t->nhosts);
        topo_free(t);
        return 2;
    }
    CollParams prm = o->prm;
    if (o->algo == COLL_HIERARCHICAL && prm.gpus_per_node <= 1)   /* --node: its GPUs, as a scenario's units */
        prm.gpus_per_node = node_gpus > 0 && p % node_gpus == 0 ? node_gpus : t->gpus_per_node;
    if (o->algo == COLL_TORUS2D && prm.torus_x == 0 && t->torus_x * t->torus_y == p) {
        prm.torus_x = t->torus_x;
        prm.torus_y = t->torus_y;
    }
    uint64_t need = 0, limit = memlimit_resolve(o->max_memory);
    for (guint i = 0; i < o->sizes->len; i++) {
        uint64_t m = collexec_mem_estimate(t, o->algo, &prm, p, g_array_index(o->sizes, uint64_t, i));
        need = m > need ? m : need;
    }
    *err = memlimit_refusal("this collective", need + CMDCOLL_MEM_BASE, limit,
                            "fewer --ranks or a smaller --topology");
    if (*err) {
        topo_free(t);
        return 2;
    }
    if (o->skew_s > COLLRUN_SKEW_MAX_S) {
        *err = g_strdup_printf("--skew: %g s; expected at most %g s", o->skew_s, COLLRUN_SKEW_MAX_S);
        topo_free(t);
        return 2;
    }
    if (o->skew_s > 0 && o->links) {
        *err = g_strdup("--links: not with --skew (link statistics are of one run); expected one of the two");
        topo_free(t);
        return 2;
    }
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(ReportCollRow));
    char *why = NULL;
    int rc = 0;
    CliProgress *bar = cliprogress_start(stderr, "arsim collective");
    for (guint i = 0; i < o->sizes->len; i++) {
        ReportCollRow r = {.algo = o->algo, .ranks = p, .bytes = g_array_index(o->sizes, uint64_t, i)};
        char *now = g_strdup_printf("size %" G_GUINT64_FORMAT " B", r.bytes);
        cliprogress_step(bar, (int)i, (int)o->sizes->len, now);
        g_free(now);
        double w0 = wall_now();
        if (o->links)
            r.links = g_new0(NetLinkStats, t->links->len);
        if (o->skew_s > 0)
            r.time_s = skewed_time(t, o, &prm, p, &r, &why);
        else
            r.time_s = collrun_time_links(t, o->algo, &prm, p, r.bytes, (uint32_t)o->elem_bytes, o->gamma,
                                           &r.events, r.links, &why);
        r.wall_s = wall_now() - w0;
        if (r.time_s < 0) {
            g_free(r.links);
            *err = run_error(o, r.time_s, why);
            g_free(why);
            rc = 2;
            break;
        }
        r.algbw_Bps = r.time_s > 0 ? (double)r.bytes / r.time_s : 0;
        r.busbw_Bps = p > 1 ? r.algbw_Bps * 2.0 * (p - 1) / p : 0;
        g_array_append_val(rows, r);
    }
    cliprogress_end(bar);
    CollOut co = {t, (const ReportCollRow *)rows->data, rows->len};
    if (rc == 0 && o->json && !fileio_write_with(o->json, write_json, &co, err))
        rc = 1;
    if (rc == 0 && o->csv && !fileio_write_with(o->csv, write_csv, &co, err))
        rc = 1;
    if (rc == 0 && !fileio_is_stdout(o->json) && !fileio_is_stdout(o->csv))
        report_coll_table(out, t, co.rows, co.n);
    for (guint i = 0; i < rows->len; i++)
        g_free(g_array_index(rows, ReportCollRow, i).links);
    g_array_free(rows, TRUE);
    topo_free(t);
    return rc;
}

/* --algo and --inter: an algorithm name (--inter: not hierarchical). */
static bool parse_algo(void *field, const CliOpt *opt, const char *value, char **err)
{
    CollAlgo a;
    bool inter = strcmp(opt->name, "inter") == 0;
    if (!inter && g_ascii_strcasecmp(value, "nccl") == 0) {
        ((CmdCollOpts *)((char *)field - offsetof(CmdCollOpts, algo)))->nccl.on = true;
        return true;
    }
    if (coll_algo_parse(value, &a) && (coll_algo_nestable(a) || !inter)) {
        *(CollAlgo *)field = a;
        return true;
    }
    char *names = coll_algo_list(false, ", ", inter ? " or " : ", ");
    *err = g_strdup_printf("--%s: unknown algorithm '%s'; expected %s%s", opt->name, value, names,
                           inter ? "" : " or nccl");
    g_free(names);
    return false;
}

/* --size S[,S...]: appended to the sizes. */
static bool parse_sizes(void *field, const CliOpt *opt, const char *value, char **err)
{
    GArray *sizes = *(GArray **)field;
    gchar **parts = g_strsplit(value, ",", -1);
    bool ok = true;
    for (int i = 0; ok && parts[i]; i++) {
        uint64_t b;
        const char *why;
        if (!(ok = units_parse_bytes(parts[i], &b, &why))) {
            *err = g_strdup_printf("--%s: '%s': %s", opt->name, parts[i], why);
            break;
        }
        for (guint j = 0; ok && j < sizes->len; j++)
            if (g_array_index(sizes, uint64_t, j) == b) {   /* the same row twice */
                *err = g_strdup_printf("--%s: '%s' is %" G_GUINT64_FORMAT " bytes, given twice; expected distinct "
                                       "sizes", opt->name, parts[i], (guint64)b);
                ok = false;
            }
        if (ok)
            g_array_append_val(sizes, b);
    }
    if (ok && !parts[0]) {
        *err = g_strdup_printf("--%s: no sizes; expected --%s S[,S...] such as 1KB,1MB", opt->name, opt->name);
        ok = false;
    }
    g_strfreev(parts);
    return ok;
}

/* --packet: a size > 0, or `message`. */
static bool parse_packet(void *field, const CliOpt *opt, const char *value, char **err)
{
    uint64_t *packet = field;
    const char *why;
    if (strcmp(value, "message") == 0) {
        *packet = 0;
    } else if (!units_parse_bytes(value, packet, &why)) {
        *err = g_strdup_printf("--%s: '%s': %s", opt->name, value, why);
    } else if (*packet == 0) {
        *err = g_strdup_printf("--%s: '%s': packet size must be positive; expected a size such as 64KiB or message",
                               opt->name, value);
    }
    return !*err;
}

/* A protocol setting's option (io/protocol.h's key table): into the
 * overrides. */
static bool parse_protocol(void *field, const CliOpt *opt, const char *value, char **err)
{
    CmdCollProtocol *pr = field;
    return protocol_parse_option(opt->name, value, &pr->value, &pr->mask, err);
}

/* The option rows of io/protocol.h's key table (PROTOCOL_KEYS), in its
 * order; a setting without a flag has none. */
#define PROTOCOL_OPT(id, flag, val, unit_text, dflt, help_text, ...)                                                 \
    {flag, CLI_CUSTOM, offsetof(CmdCollOpts, proto), .help = help_text, .value = val, .unit = unit_text,            \
     .note = "the topology's (" dflt " by default)", .parse = parse_protocol},
#define PROTOCOL_CHOICE(id, flag, name0, name1, help_text, ...)                                                      \
    {flag, CLI_CUSTOM, offsetof(CmdCollOpts, proto), .help = help_text, .value = name0 "|" name1,                   \
     .words = name0 " " name1, .note = "the topology's (" name0 " by default)", .parse = parse_protocol},
#define PROTOCOL_NO_OPT(...)

/* --intra RATE[,TIME]: the rate and latency (default 1us) of the links inside a node. */
static bool parse_intra(void *field, const CliOpt *opt, const char *value, char **err)
{
    TopoLinkClass *l = field;
    gchar **parts = g_strsplit(value, ",", 3);
    const char *why = NULL;
    l->latency_s = CMDCOLL_INTRA_LATENCY_S;
    if (!parts[0] || (parts[1] && parts[2]))
        why = "not RATE[,TIME]; expected a rate and an optional latency such as 900GB/s,1us";
    else if (units_parse_rate(parts[0], &l->bw_Bps, &why) && parts[1])
        units_parse_time(parts[1], &l->latency_s, &why);
    if (why)
        *err = g_strdup_printf("--%s: '%s': %s", opt->name, value, why);
    g_strfreev(parts);
    return !why;
}

static const CliOpt opts[] = {
    {"topology", CLI_IN, offsetof(CmdCollOpts, topology),
     .help = "the network: a topology file, or a name in topologies/", .value = "FILE|NAME",
     .note = "a star of --ranks hosts", .names = "topologies"},
    {"ranks", CLI_INT, offsetof(CmdCollOpts, ranks),
     .help = "ranks taking part, one per host (with --node: GPUs, the first --ranks/--nodes GPUs of each node)", .min = 1, .max = UNITS_COUNT_MAX,
     .note = "every host of the topology (8 on the default star)"},
    {"bandwidth", CLI_RATE, offsetof(CmdCollOpts, bw_Bps),
     .help = "each link's bandwidth, instead of the topology's (not on a graph topology or --node: their links "
             "are their files')",
     .note = "the topology's (10Gbps on the default star)"},
    {"latency", CLI_TIME, offsetof(CmdCollOpts, latency_s),
     .help = "each link's latency, instead of the topology's (not on a graph topology or --node)",
     .note = "the topology's (5us on the default star)"},
    {"packet", CLI_CUSTOM, offsetof(CmdCollOpts, packet),
     .help = "the packet size, or message: whole messages", .value = "SIZE|message", .unit = "a size: 9000, 64KiB",
     .note = "the topology's (message on the default star)", .parse = parse_packet},
    {"gamma", CLI_NUMBER, offsetof(CmdCollOpts, gamma),
     .help = "reduction cost, seconds per byte", .value = "S_PER_BYTE", .deflt = "0"},
    {"algo", CLI_CUSTOM, offsetof(CmdCollOpts, algo),
     .help = "the all-reduce algorithm (nccl: NCCL's, for --op's collective)", .value = "ALGO",
     .words = &(COLL_ALGO_TABLE(COLL_ALGO_WORD) " nccl")[1],
     .required = true,
     .parse = parse_algo},
    {"size", CLI_CUSTOM, offsetof(CmdCollOpts, sizes),
     .help = "the vector sizes, one collective each", .value = "S[,S...]", .unit = "sizes: 4096, 64KiB, 1MB",
     .required = true, .parse = parse_sizes},
    {"inter", CLI_CUSTOM, offsetof(CmdCollOpts, prm.inter),
     .help = "the inter-node algorithm of hierarchical", .value = "ALGO", .deflt = "ring",
     .words = COLL_INTER_WORDS, .parse = parse_algo},
    {"gpus-per-node", CLI_INT, offsetof(CmdCollOpts, prm.gpus_per_node),
     .help = "ranks per node, for hierarchical (and for --intra on a flat topology)", .min = 1, .max = 1 << 16,
     .note = "the topology's (1 on a flat topology)"},
    {"intra", CLI_CUSTOM, offsetof(CmdCollOpts, intra),
     .help = "the links between the GPUs of a node and their node's switch: on a hierarchical topology instead of "
             "its own; on a flat one its hosts become nodes of --gpus-per-node GPUs (--ranks counts GPUs)",
     .value = "RATE[,TIME]", .unit = "a rate and a latency: 900GB/s,1us; the latency 1us if left out",
     .note = "the topology's (a flat topology: none, every GPU its own host)", .parse = parse_intra},
    {"elem-bytes", CLI_INT, offsetof(CmdCollOpts, elem_bytes),
     .help = "element size: sizes are split in whole elements", .min = 1, .max = UNITS_COUNT_MAX, .deflt = "1"},
    {"json", CLI_OUT, offsetof(CmdCollOpts, json),
     .help = "write every size's result as a JSON array (- : on standard output, instead of the table)"},
    {"csv", CLI_OUT, offsetof(CmdCollOpts, csv),
     .help = "write every size's result as CSV, one header for every algorithm (NCCL's columns empty for the "
             "others; - : on standard output, instead of the table)"},
    {"links", CLI_FLAG, offsetof(CmdCollOpts, links),
     .help = "add each link's bytes, busy time and peak queue depth"},
    PROTOCOL_KEYS(PROTOCOL_OPT, PROTOCOL_CHOICE, PROTOCOL_NO_OPT)
    {"max-memory", CLI_BYTES, offsetof(CmdCollOpts, max_memory),
     .help = "refuse (exit 2) a run whose memory estimate is above SIZE", .value = "SIZE",
     .note = "the machine's available memory (MemAvailable)"},
    {"skew", CLI_TIME, offsetof(CmdCollOpts, skew_s),
     .help = "ranks issue the all-reduce up to TIME apart (each a uniform draw), as they leave a barrier; the time is "
             "then the median over --trials, from the first issue to the last end, with min and max",
     .deflt = "0"},
    {"trials", CLI_INT, offsetof(CmdCollOpts, trials),
     .help = "skewed runs per size (with --skew)", .min = 1, .max = 100000, .note = "100"},
    {"seed", CLI_INT, offsetof(CmdCollOpts, seed),
     .help = "seed of the --skew draws", .min = 0, .max = INT32_MAX, .note = "1"},
    CMDNCCL_OPTS(CmdCollOpts, nccl),
    {NULL},
};

const CliCmd cmdcoll_cli = {
    .name = "collective",
    .summary = "time one collective per size on a topology (an all-reduce; with --algo nccl, --op's), in nccl-tests' "
               "terms (time, algbw, busbw)",
    .about = "Without --topology the network is a star of --ranks hosts; --bandwidth, --latency and --packet "
             "override the topology's links.",
    .args_field = offsetof(CmdCollOpts, args),
    .opts = opts,
    .main = cmdcoll_main,
};

static int coll_main(void *opts, char **err)
{
    return cmdcoll_run(opts, stdout, err);
}

int cmdcoll_main(int argc, char **argv)
{
    CmdCollOpts o = {.latency_s = -1, .packet = CMDCOLL_PACKET_TOPO, .trials = 0, .seed = -1,
                     .sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t))};
    coll_params_init(&o.prm);
    cmdnccl_init(&o.nccl);
    int rc = cli_main(&cmdcoll_cli, argc, argv, &o, coll_main);
    g_array_free(o.sizes, TRUE);
    return rc;
}
