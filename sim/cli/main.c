/* main — arsim's command line: parses options, wires modules, maps
 * results to exit status (0 ok, 2 bad input or usage, 1 anything else).
 * Every bad-input message is one line on stderr. */
#include "cli/cmdcalib.h"
#include "cli/cmdcoll.h"
#include "cli/cmdcompare.h"
#include "cli/cmdimport.h"
#include "cli/cmdlist.h"
#include "cli/cmdrun.h"
#include "plot/plot.h"
#include "sweep/sweep.h"
#include "io/units.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARSIM_USAGE                                                                                    \
    "usage: arsim run CONFIG [--set KEY=VALUE]... [--json FILE] [--csv FILE] [--trace FILE] [--plot DIR]\n" \
    "       arsim collective [--topology NAME|FILE] [--ranks P] [--bandwidth B] [--latency L]\n"        \
    "                        [--packet SIZE] [--gamma S_PER_BYTE] --algo ALGO --size S[,S...] [--json] [--links]\n" \
    "                        [--eager-limit SIZE|inf] [--handshake none|rtt] [--overhead TIME] [--segment SIZE|none]\n" \
    "       arsim sweep CONFIG --out DIR [--jobs N] [--resume] [--shard I/N] [--mpi] [--set KEY=VALUE]...\n" \
    "       arsim sweep --merge DIR... --out DIR\n"                                                      \
    "       arsim plot RESULTS... --out DIR\n"                                                           \
    "       arsim calibrate MEASUREMENTS.json [--out CALIBRATION.yaml]\n"                                \
    "       arsim compare MEASUREMENTS.json --calibration CALIBRATION.yaml [--json FILE] [--plot DIR]\n"  \
    "       arsim check CONFIG [--set KEY=VALUE]...\n"                                                   \
    "       arsim import-profile TRACE.json --model NAME [--out FILE] [--batch B] [--gpu KEY]\n"          \
    "       arsim list models|gpus|topologies|algorithms|policies [--json]\n"

/* Prints "arsim: <msg>" and returns 2 (usage / bad input). */
static int bad(char *msg)
{
    fprintf(stderr, "%s\n", msg);
    g_free(msg);
    return 2;
}

static int parse_sizes(const char *arg, GArray *sizes, char **err)
{
    gchar **parts = g_strsplit(arg, ",", -1);
    int rc = 0;
    for (int i = 0; parts[i]; i++) {
        uint64_t b;
        const char *why;
        if (!units_parse_bytes(parts[i], &b, &why)) {
            *err = g_strdup_printf("--size: '%s': %s", parts[i], why);
            rc = 2;
            break;
        }
        g_array_append_val(sizes, b);
    }
    g_strfreev(parts);
    if (rc == 0 && sizes->len == 0) {
        *err = g_strdup("--size: no sizes; expected --size S[,S...] such as 1KB,1MB");
        rc = 2;
    }
    return rc;
}

/* The option getopt_long just rejected ('?'), as the user wrote it (up to
 * any '='): a long option, or the short option optopt. */
static char *rejected_option(char **argv, const struct option *opts)
{
    const char *a = argv[optind - 1];
    size_t n = strcspn(a, "=");
    if (g_str_has_prefix(a, "--") && optopt == 0)
        return g_strndup(a, n);
    for (const struct option *o = opts; o->name && g_str_has_prefix(a, "--"); o++)
        if (o->val == optopt && n - 2 <= strlen(o->name) && strncmp(a + 2, o->name, n - 2) == 0)
            return g_strndup(a, n);
    return g_strdup_printf("-%c", optopt);
}

/* getopt_long's ':' (a missing value) or '?' (an unknown option) as the
 * one-line error; returns 2. `expected` lists the command's options. */
static int option_error(int c, char **argv, const struct option *opts, const char *expected, char **err)
{
    if (c == ':') {
        *err = g_strdup_printf("%s: missing value; expected %s VALUE", argv[optind - 1], argv[optind - 1]);
    } else {
        char *opt = rejected_option(argv, opts);
        *err = g_strdup_printf("%s: unknown option (or a value it does not take); expected %s", opt, expected);
        g_free(opt);
    }
    return 2;
}

/* Output file i (names[i] its flag, paths[i] its value) must be creatable
 * without touching anything else: a non-empty name, not a directory, in an
 * existing directory, and none of paths[0..i-1] (the input, the outputs
 * before it). Checked before anything runs, so bad input never leaves a
 * partial output. */
static int check_out_path(const char *const *names, const char *const *paths, int i, char **err)
{
    const char *flag = names[i], *path = paths[i];
    char *dir = g_path_get_dirname(path);
    bool dir_ok = g_file_test(dir, G_FILE_TEST_IS_DIR);
    if (!*path)
        *err = g_strdup_printf("%s: empty file name; expected %s FILE", flag, flag);
    else if (g_file_test(path, G_FILE_TEST_IS_DIR))
        *err = g_strdup_printf("%s: '%s' is a directory; expected a file name", flag, path);
    else if (!dir_ok)
        *err = g_strdup_printf("%s: directory '%s' does not exist; expected a file in an existing directory", flag,
                               dir);
    for (int j = 0; !*err && j < i; j++)
        if (paths[j] && strcmp(paths[j], path) == 0)
            *err = g_strdup_printf("%s: '%s' is also given as %s; expected a file of its own", flag, path, names[j]);
    g_free(dir);
    return *err ? 2 : 0;
}

/* The verdict of a units_parse_* call on a flag's value: 0, or 2 with
 * "--flag: 'value': *why" in *err. why is passed by address because the
 * order in which a call's arguments are evaluated is unspecified. */
static int unit_opt(const char *flag, const char *value, bool parsed, const char *const *why, char **err)
{
    if (parsed)
        return 0;
    *err = g_strdup_printf("%s: '%s': %s", flag, value, *why);   /* *why read after the parse ran */
    return 2;
}

static int parse_int_opt(const char *flag, const char *arg, int min, int max, int *out, char **err)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v < min || v > max) {
        *err = g_strdup_printf("%s: '%s' is not an integer from %d to %d; expected such an integer", flag, arg,
                               min, max);
        return 2;
    }
    *out = (int)v;
    return 0;
}

static int cmd_collective(int argc, char **argv)
{
    static const struct option opts[] = {
        {"topology", required_argument, 0, 't'}, {"ranks", required_argument, 0, 'p'},
        {"bandwidth", required_argument, 0, 'b'}, {"latency", required_argument, 0, 'l'},
        {"packet", required_argument, 0, 'k'},    {"gamma", required_argument, 0, 'g'},
        {"algo", required_argument, 0, 'a'},      {"size", required_argument, 0, 's'},
        {"inter", required_argument, 0, 'i'},     {"gpus-per-node", required_argument, 0, 'G'},
        {"elem-bytes", required_argument, 0, 'e'}, {"json", no_argument, 0, 'j'},
        {"links", no_argument, 0, 'K'},           {"eager-limit", required_argument, 0, 'E'},
        {"handshake", required_argument, 0, 'H'}, {"overhead", required_argument, 0, 'O'},
        {"segment", required_argument, 0, 'S'},
        {0, 0, 0, 0}};
    CmdCollOpts o = {.elem_bytes = 1, .sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t))};
    coll_params_init(&o.prm);
    protocol_init(&o.proto);
    bool have_algo = false;
    char *err = NULL;
    int rc = 0, c, ival;
    const char *why;
    optind = 1;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            o.topology = optarg;
            if (!*optarg) {
                err = g_strdup("--topology: empty name; expected a topology file or a name in topologies/");
                rc = 2;
            }
            break;
        case 'p': rc = parse_int_opt("--ranks", optarg, 1, 1 << 20, &o.ranks, &err); break;
        case 'G': rc = parse_int_opt("--gpus-per-node", optarg, 1, 1 << 16, &o.prm.gpus_per_node, &err); break;
        case 'e':
            rc = parse_int_opt("--elem-bytes", optarg, 1, 1 << 20, &ival, &err);
            o.elem_bytes = (uint32_t)ival;
            break;
        case 'b':
            o.set_bw = true;
            rc = unit_opt("--bandwidth", optarg, units_parse_rate(optarg, &o.link.bw_Bps, &why), &why, &err);
            break;
        case 'l':
            o.set_lat = true;
            rc = unit_opt("--latency", optarg, units_parse_time(optarg, &o.link.latency_s, &why), &why, &err);
            break;
        case 'k':
            o.set_packet = true;
            if (strcmp(optarg, "message") == 0) {
                o.packet = 0;
            } else if ((rc = unit_opt("--packet", optarg, units_parse_bytes(optarg, &o.packet, &why), &why, &err))) {
                break;
            } else if (o.packet == 0) {
                err = g_strdup_printf("--packet: '%s': packet size must be positive; expected a size such as 64KiB "
                                      "or message", optarg);
                rc = 2;
            }
            break;
        case 'g':
            rc = unit_opt("--gamma", optarg, units_parse_nonneg(optarg, &o.gamma, &why), &why, &err);
            break;
        case 'a':
        case 'i': {
            CollAlgo a;
            if (!coll_algo_parse(optarg, &a) || (c == 'i' && a == COLL_HIERARCHICAL)) {
                err = g_strdup_printf("--%s: unknown algorithm '%s'; expected ring, butterfly, rabenseifner, tree, "
                                      "hierarchical or torus2d", c == 'a' ? "algo" : "inter", optarg);
                rc = 2;
            } else if (c == 'a') {
                o.algo = a;
                have_algo = true;
            } else {
                o.prm.inter = a;
            }
            break;
        }
        case 's': rc = parse_sizes(optarg, o.sizes, &err); break;
        case 'j': o.json = true; break;
        case 'K': o.links = true; break;
        case 'E':
            o.set_eager = true;
            rc = unit_opt("--eager-limit", optarg, protocol_parse_eager_limit(optarg, &o.proto.eager_limit, &why),
                          &why, &err);
            break;
        case 'H':
            o.set_handshake = true;
            if (!protocol_handshake_parse(optarg, &o.proto.handshake)) {
                err = g_strdup_printf("--handshake: unknown handshake '%s'; expected none (data leaves when the "
                                      "receive is posted) or rtt (request-to-send, clear-to-send)", optarg);
                rc = 2;
            }
            break;
        case 'O':
            o.set_overhead = true;
            rc = unit_opt("--overhead", optarg, protocol_parse_overhead(optarg, &o.proto.overhead_s, &why), &why,
                          &err);
            break;
        case 'S':
            o.set_segment = true;
            rc = unit_opt("--segment", optarg, protocol_parse_segment(optarg, &o.proto.segment_bytes, &why), &why,
                          &err);
            break;
        default:
            rc = option_error(c, argv, opts, "one of --topology --ranks --bandwidth --latency --packet --gamma --algo "
                              "--size --inter --gpus-per-node --elem-bytes --json --links --eager-limit --handshake "
                              "--overhead --segment", &err);
            break;
        }
    }
    if (rc == 0 && optind < argc) {
        err = g_strdup_printf("%s: unexpected argument; expected options only", argv[optind]);
        rc = 2;
    }
    if (rc == 0 && !have_algo) {
        err = g_strdup("--algo: missing; expected --algo ring|butterfly|rabenseifner|tree|hierarchical|torus2d");
        rc = 2;
    }
    if (rc == 0 && o.sizes->len == 0) {
        err = g_strdup("--size: missing; expected --size S[,S...] such as 1KB,1MB");
        rc = 2;
    }
    if (rc == 0)
        rc = cmdcoll_run(&o, stdout, &err);
    g_array_free(o.sizes, TRUE);
    return rc == 0 ? 0 : err ? bad(err) : rc;
}

/* `run` and `check` share their option parsing; check takes --set only. */
static int cmd_run(int argc, char **argv, bool check)
{
    static const struct option opts[] = {
        {"set", required_argument, 0, 'S'},   {"json", required_argument, 0, 'j'},
        {"csv", required_argument, 0, 'c'},   {"trace", required_argument, 0, 't'},
        {"plot", required_argument, 0, 'P'},  {"layers", no_argument, 0, 'L'},
        {"trace-policy", required_argument, 0, 'p'}, {"trace-batch", required_argument, 0, 'b'},
        {0, 0, 0, 0}};
    CmdRunOpts o = {0};
    GPtrArray *sets = g_ptr_array_new();
    char *err = NULL;
    int rc = 0, c;
    optind = 1;
    opterr = 0;
    int li = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":", opts, &li)) != -1) {
        if (check && c != 'S' && c != ':' && c != '?') {
            err = g_strdup_printf("--%s: not an option of check; expected arsim check CONFIG [--set KEY=VALUE]...",
                                  opts[li].name);
            rc = 2;
            break;
        }
        switch (c) {
        case 'S': g_ptr_array_add(sets, optarg); break;
        case 'j': o.json = optarg; break;
        case 'c': o.csv = optarg; break;
        case 't': o.trace = optarg; break;
        case 'P': o.plot = optarg; break;
        case 'L': o.layers = true; break;
        case 'p': o.trace_policy = optarg; break;
        case 'b': rc = parse_int_opt("--trace-batch", optarg, 1, 1 << 20, &o.trace_batch, &err); break;
        default:
            rc = option_error(c, argv, opts, "--set --json --csv --trace --plot --layers --trace-policy --trace-batch",
                              &err);
            break;
        }
    }
    if (rc == 0 && (optind != argc - 1 || !*argv[optind])) {
        if (optind + 1 < argc)
            err = g_strdup_printf("%s: unexpected argument '%s'; expected exactly one CONFIG file", argv[0],
                                  argv[optind + 1]);
        else
            err = g_strdup_printf("%s: %s CONFIG file; expected arsim %s CONFIG [options]", argv[0],
                                  optind < argc ? "empty name for the" : "no", argv[0]);
        rc = 2;
    }
    if (rc == 0 && !o.trace && !o.plot && (o.trace_policy || o.trace_batch)) {
        err = g_strdup_printf("%s: given without --trace or --plot; expected --trace FILE or --plot DIR with it",
                              o.trace_policy ? "--trace-policy" : "--trace-batch");
        rc = 2;
    }
    const char *const out_flags[] = {"CONFIG", "--json", "--csv", "--trace"};
    const char *const out_paths[] = {rc == 0 ? argv[optind] : NULL, o.json, o.csv, o.trace};
    for (int i = 1; rc == 0 && i < 4; i++)
        if (out_paths[i])
            rc = check_out_path(out_flags, out_paths, i, &err);
    g_ptr_array_add(sets, NULL);
    if (rc == 0) {
        o.config = argv[optind];
        o.sets = sets;
        rc = check ? cmdrun_check(o.config, sets, stdout, &err) : cmdrun_run(&o, stdout, &err);
    }
    g_ptr_array_free(sets, TRUE);
    if (rc && err) {
        fprintf(stderr, "%s\n", err);
        g_free(err);
    }
    return rc;
}

static int cmd_list(int argc, char **argv)
{
    bool json = argc > 2 && strcmp(argv[2], "--json") == 0;
    if (argc < 2 || argc > 3 || (argc == 3 && !json))
        return bad(g_strdup_printf("list: %s; expected arsim list models|gpus|topologies|algorithms|policies [--json]",
                                   argc < 2 ? "no category" : "unexpected arguments"));
    char *err = NULL;
    int rc = cmdlist_run(argv[1], json, stdout, &err);
    return rc && err ? bad(err) : rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return bad(g_strdup("arsim: no command; expected arsim run|collective|check|list|... (see arsim --help)"));
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(ARSIM_USAGE, stdout);
        return 0;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "collective") == 0)
        return cmd_collective(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0 || strcmp(cmd, "check") == 0)
        return cmd_run(argc - 1, argv + 1, strcmp(cmd, "check") == 0);
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 1, argv + 1);
    if (strcmp(cmd, "import-profile") == 0)
        return cmdimport_main(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0)
        return sweep_main(argc - 1, argv + 1);
    if (strcmp(cmd, "calibrate") == 0)
        return cmdcalib_main(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return cmdcompare_main(argc - 1, argv + 1);
    if (strcmp(cmd, "plot") == 0)
        return plot_main(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command; expected run, collective, sweep, plot, calibrate, compare, check, "
            "import-profile or list\n", cmd);
    return 2;
}
