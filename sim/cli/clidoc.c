/* clidoc — the overview help, the man page and the bash completion, all
 * written from the commands' tables; see clidoc.h. */
#include "cli/clidoc.h"
#include "coll/coll.h"
#include "io/datapath.h"
#include "io/version.h"
#include "train/model.h"

#include <string.h>

#define ABOUT                                                                                                 \
    "arsim simulates gradient synchronization in data-parallel training: per-layer GPU compute, links with "  \
    "latency and bandwidth, NIC queues and contention in an event engine, the collective schedules of arsim "  \
    "list algorithms and NCCL's algorithms and protocols on GPU nodes, under the overlap policies of arsim "   \
    "list policies (DDP, layer-wise, priority, FSDP and ZeRO), with what overlap costs on a GPU and each "     \
    "GPU's memory. It reports a table, JSON, CSV, Chrome traces and gnuplot figures."

#define EXIT_STATUS                                                                                           \
    "0 success; 2 bad input or usage: one line on stderr, file:line:col: what is wrong; what is expected (or " \
    "--flag: ... for an option), and no output file created or changed; 1 anything else."

#define UNITS                                                                                                 \
    "Sizes: a bare number is bytes, KB/MB/GB powers of 10, KiB/MiB/GiB powers of 2. Rates: Mbps/Gbps/Tbps, " \
    "Mb/s/Gb/s/Tb/s or Mbit/s/Gbit/s (bits/s: 400Gb/s), MB/s/GB/s (bytes/s: 450GB/s), inf. Times: ns, us, ms, s (a bare 0 is allowed)."

/* The search path in words (io/datapath.h), naming the installed directory. */
static char *search_text(void)
{
    return g_strdup_printf("A file named by a relative path or a name (a CONFIG, a model, GPU file, topology or "
                           "calibration a config names, a --topology, the gnuplot scripts of plots/) is looked for, "
                           "first match wins, in: 1. the directory of the config that names it; 2. $ARSIM_DATA "
                           "($ARSIM_HOME, its older name, when ARSIM_DATA is unset); 3. the working directory; "
                           "4. the checkout an uninstalled arsim was built in (found from its own executable); "
                           "5. %s, where make install puts models/, topologies/, configs/ and plots/.",
                           datapath_installed());
}

/* The man page's EXAMPLES: what each shows, and the command. */
static const char *const examples[][2] = {
    {"The default scenario's table, one row per batch and policy",
     "arsim run configs/default.yaml"},
    {"One batch, per sync unit, with a Perfetto trace of priority + auto",
     "arsim run configs/default.yaml --set batch=64 --layers --trace vgg16.trace.json --trace-policy priority-auto"},
    {"A cluster of 16 nodes x 8 H100, from a shipped scenario",
     "arsim run configs/resnet50-64gpu.yaml --set cluster.nodes=16 --set gpu=h100 --set "
     "cluster.link.bandwidth=400Gbps"},
    {"Validate a scenario without running it", "arsim check my-cluster.yaml"},
    {"One all-reduce per size on 16 ranks", "arsim collective --ranks 16 --bandwidth 10Gbps --algo ring --size "
                                            "1KB,1MB,64MB"},
    {"A sweep on two threads, and its figures",
     "arsim sweep configs/sweep-thesis.yaml --out thesis --jobs 2\narsim plot thesis/results.jsonl --out "
     "thesis/plots"},
    {"Fit a calibration to measured collectives and check it",
     "arsim calibrate meas.json --out calib.yaml\narsim compare meas.json --calibration calib.yaml"},
    {"A measured model from a PyTorch profiler trace",
     "arsim import-profile step.trace.json --model vgg16 --out my-vgg16.yaml"},
};

/* "run CONFIG": a command and its arguments. */
static char *cmd_line(const CliCmd *c)
{
    return g_strdup_printf("%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
}

/* Writes text wrapped to 79 columns. */
static void wrap(FILE *out, const char *text)
{
    GString *g = g_string_new(NULL);
    cli_wrap(g, text, 0, 0, 79);
    fputs(g->str, out);
    g_string_free(g, TRUE);
}

void clidoc_help(FILE *out, const CliCmd *const *cmds, int n)
{
    fprintf(out, "usage: arsim COMMAND [OPTION...] [ARGUMENT...]\n"
                 "       arsim help [COMMAND] | --help | --version\n\n");
    wrap(out, ABOUT);
    fprintf(out, "\nCommands:\n");
    for (int i = 0; i < n; i++) {
        GString *g = g_string_new(NULL);
        g_string_append_printf(g, "  %-15s", cmds[i]->name);
        cli_wrap(g, cmds[i]->summary, 17, 18, 79);
        fputs(g->str, out);
        g_string_free(g, TRUE);
    }
    fputc('\n', out);
    wrap(out, "`arsim COMMAND --help` (or `arsim help COMMAND`) lists the command's options, each with its value, "
              "unit and default; `man arsim` has them all (before `make install`: `./arsim --man | man -l -`, and "
              "`./arsim --man-scenario | man -l -` for the scenario file).");
    fputc('\n', out);
    wrap(out, UNITS);
    fputc('\n', out);
    char *search = search_text();
    wrap(out, search);
    g_free(search);
    fputc('\n', out);
    wrap(out, "Exit status: " EXIT_STATUS);
}

/* Appends text in groff: backslashes and dashes escaped, and a line that
 * would start with a control character guarded. */
static void man_text(FILE *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", out);
        else if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s, out);
    }
}

static void man_option(FILE *out, const CliOpt *o)
{
    fputs(".TP\n\\fB", out);
    man_text(out, "--");
    man_text(out, o->name);
    fputs("\\fR", out);
    const char *v = cli_opt_value(o);
    if (v) {
        fputs(" \\fI", out);
        man_text(out, v);
        fputs("\\fR", out);
    }
    fputc('\n', out);
    char *text = cli_opt_text(o);
    man_text(out, text);
    fputs(".\n", out);
    g_free(text);
}

void clidoc_man(FILE *out, const CliCmd *const *cmds, int n)
{
    fprintf(out, ".\\\" arsim(1). Generated by `arsim --man` from arsim's option tables; do not edit.\n"
                 ".TH ARSIM 1 \"\" \"arsim %s\" \"User Commands\"\n"
                 ".SH NAME\narsim \\- a discrete\\-event simulator of gradient synchronization in data\\-parallel "
                 "training\n"
                 ".SH SYNOPSIS\n.B arsim\n.I COMMAND\n.RI [ OPTION ...]\n.RI [ ARGUMENT ...]\n.br\n"
                 ".B arsim help\n.RI [ COMMAND ]\n.br\n.B arsim \\-\\-help\n.br\n.B arsim \\-\\-version\n"
                 ".SH DESCRIPTION\n", ARSIM_VERSION);
    man_text(out, ABOUT);
    fputs("\n.PP\n", out);
    man_text(out, UNITS);
    fputs("\n.SH COMMANDS\n", out);
    for (int i = 0; i < n; i++) {
        const CliCmd *c = cmds[i];
        char *line = cmd_line(c);
        fputs(".SS \"arsim ", out);
        man_text(out, line);
        fputs("\"\n", out);
        g_free(line);
        char *summary = g_strdup_printf("%c%s.", g_ascii_toupper(c->summary[0]), c->summary + 1);
        man_text(out, summary);
        fputc('\n', out);
        g_free(summary);
        if (c->about) {
            fputs(".PP\n", out);
            man_text(out, c->about);
            fputc('\n', out);
        }
        for (const CliOpt *o = c->opts; o->name; o++)
            man_option(out, o);
        fputs(".TP\n\\fB\\-\\-help\\fR, \\fB\\-h\\fR\nShow the command's options and exit.\n", out);
    }
    fputs(".SH EXAMPLES\n", out);
    for (size_t i = 0; i < G_N_ELEMENTS(examples); i++) {
        fputs(".PP\n", out);
        man_text(out, examples[i][0]);
        fputs(":\n.RS\n.nf\n", out);
        man_text(out, examples[i][1]);
        fputs("\n.fi\n.RE\n", out);
    }
    char *search = search_text();
    fputs(".SH ENVIRONMENT\n.TP\n.B ARSIM_DATA\nA data directory, searched after the directory of the config "
          "that names a file and before the working directory.\n.TP\n.B ARSIM_HOME\nThe older name of ARSIM_DATA, "
          "read when ARSIM_DATA is unset.\n.SH FILES\n.TP\n.I ", out);
    man_text(out, datapath_installed());
    fputs("\nThe shipped models/, topologies/, configs/ and plots/ (gnuplot scripts), installed by make "
          "install.\n.TP\n.I ", out);
    man_text(out, datapath_installed());
    fputs("/configs/default.yaml\nThe default scenario: VGG-16 on 8 V100s over 10 Gbit/s Ethernet; its format "
          "is\n.BR arsim\\-scenario (5).\n.PP\n", out);
    man_text(out, search);
    fputs("\n.SH \"EXIT STATUS\"\n", out);
    man_text(out, EXIT_STATUS);
    fputs("\n.SH \"SEE ALSO\"\n.BR arsim\\-scenario (5),\n.BR gnuplot (1),\n.BR mpirun (1)\n", out);
    g_free(search);
}

/* What `--set KEY=VALUE` completes: the names of `arsim list CATEGORY`
 * for the values of these keys (a leading * matches any prefix). */
static const char *const set_keys[][2] = {
    {"model", "models"},         {"gpu", "gpus"},
    {"cluster.topology", "topologies"}, {"*.overlap", "policies"},
    {"*.algorithm", "algorithms"}, {"*.inter", "algorithms"},
};

static const char bash_head[] =
    "# bash completion for arsim(1). Generated by `arsim --bash-completion` from arsim's\n"
    "# option tables; do not edit.\n\n"
    "# _arsim_names BIN CATEGORY WORD: the names `arsim list CATEGORY --names` prints.\n"
    "_arsim_names() {\n"
    "    local IFS=$'\\n'\n"
    "    COMPREPLY+=($(compgen -W \"$(\"$1\" list \"$2\" --names 2>/dev/null)\" -- \"$3\"))\n"
    "}\n\n"
    "# _arsim_files WORD [-d]: file (or directory) names.\n"
    "_arsim_files() {\n"
    "    local IFS=$'\\n'\n"
    "    COMPREPLY+=($(compgen ${2:--f} -- \"$1\"))\n"
    "    compopt -o filenames 2>/dev/null\n"
    "}\n\n"
    "# _arsim_set BIN WORD: --set KEY=VALUE, the names a KEY takes.\n"
    "_arsim_set() {\n"
    "    local key=${2%%=*} val=${2#*=} cat=\"\" pre=\"\" IFS=$'\\n'\n"
    "    [[ $2 == *=* ]] || return 0\n"
    "    case $key in\n";

static const char bash_main[] =
    "    [[ $COMP_WORDBREAKS == *=* ]] || pre=$key=\n"
    "    COMPREPLY+=($(compgen -P \"$pre\" -W \"$(\"$1\" list \"$cat\" --names 2>/dev/null)\" -- \"$val\"))\n"
    "}\n\n"
    "_arsim() {\n"
    "    # the words as the shell splits them ('=' kept inside a word)\n"
    "    local line=${COMP_LINE:0:COMP_POINT} bin=${COMP_WORDS[0]} cmd=\"\" w\n"
    "    local cur=${line##*[[:space:]]} rest prev\n"
    "    rest=${line%\"$cur\"}; rest=${rest%\"${rest##*[![:space:]]}\"}; prev=${rest##*[[:space:]]}\n"
    "    read -r -a w <<<\"$rest\"\n"
    "    [[ ${#w[@]} -gt 1 ]] && cmd=${w[1]}\n"
    "    COMPREPLY=()\n"
    "    case $cmd in\n";

/* The case branch of one command: its options' values, then its options
 * or its arguments. */
static void bash_cmd(FILE *out, const CliCmd *c)
{
    fprintf(out, "    %s)\n        case $prev in\n", c->name);
    for (const CliOpt *o = c->opts; o->name; o++) {
        if (o->kind == CLI_FLAG)
            continue;
        fprintf(out, "        --%s) ", o->name);
        if (o->names && strcmp(o->names, "settings") == 0)
            fputs("_arsim_set \"$bin\" \"$cur\"", out);
        else if (o->names)
            fprintf(out, "_arsim_names \"$bin\" %s \"$cur\"", o->names);
        if (o->names && o->kind == CLI_IN)
            fputs("; ", out);
        if (o->words)
            fprintf(out, "COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))", o->words);
        else if (o->kind == CLI_IN || o->kind == CLI_OUT)
            fputs("_arsim_files \"$cur\"", out);
        else if (o->kind == CLI_DIR)
            fputs("_arsim_files \"$cur\" -d", out);
        else if (!o->names)
            fputs(":", out);
        fputs("; return ;;\n", out);
    }
    fputs("        esac\n        if [[ $cur == -* ]]; then\n            COMPREPLY=($(compgen -W \"", out);
    for (const CliOpt *o = c->opts; o->name; o++)
        fprintf(out, "--%s ", o->name);
    fputs("--help\" -- \"$cur\"))\n", out);
    if (c->arg_words)
        fprintf(out, "        else\n            COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n", c->arg_words);
    else if (c->args)
        fputs("        else\n            _arsim_files \"$cur\"\n", out);
    fputs("        fi ;;\n", out);
}

void clidoc_bash(FILE *out, const CliCmd *const *cmds, int n)
{
    fputs(bash_head, out);
    for (size_t i = 0; i < G_N_ELEMENTS(set_keys); i++)
        fprintf(out, "    %s) cat=%s ;;\n", set_keys[i][0], set_keys[i][1]);
    fputs("    *) return 0 ;;\n    esac\n", out);
    fputs(bash_main, out);
    GString *names = g_string_new(NULL);
    for (int i = 0; i < n; i++) {
        bash_cmd(out, cmds[i]);
        g_string_append_printf(names, "%s ", cmds[i]->name);
    }
    fprintf(out, "    help)\n        [[ ${#w[@]} -eq 2 ]] && COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n",
            names->str);
    fprintf(out, "    \"\")\n        COMPREPLY=($(compgen -W \"%shelp --help --version\" -- \"$cur\")) ;;\n"
                 "    esac\n}\ncomplete -F _arsim arsim\n", names->str);
    g_string_free(names, TRUE);
}

/* arsim-scenario(5): every top-level key of a scenario file (the reader's
 * list is train/scenario.c's SCENARIO_KEYS; tests/cli/docs.sh checks that
 * each one is here), then the cluster's and a policy's keys. */
static const char *const scenario_keys[][2] = {
    {"name", "A string; default: the model's name."},
    {"description", "A string."},
    {"model", "Required. A name in models/ (arsim list models) or a path, relative to this file first."},
    {"gpu", "A key of the GPU file (arsim list gpus); default v100."},
    {"gpus_file", "A GPU file: a path relative to this file, or a bare name in models/ (gpus-llm, gpus-llm-cudnn: the kernels of an LLM step at their measured rates); a node cluster's GPU comes from it too; default models/gpus.yaml."},
    {"precision", "fp32 (4-byte gradients, CUDA cores), tf32 (4 bytes, TF32 tensor rate), fp16 or bf16 (2 bytes, "
                  "tensor-core rate); default fp32."},
    {"batch", "Required. The per-GPU batch, or a list of them (each 1 to 2^20)."},
    {"cluster", "Required. The cluster, a map: see CLUSTER."},
    {"policies", "Required. A non-empty list of policies to compare: see POLICIES."},
    {"baseline", "The policy whose iteration time the speed-ups divide; default the first policy."},
    {"iterations", "{warmup: 0..1000, measured: 1..1000}; default 2 and 3. Results are averaged over the measured "
                   "iterations, after the warm-up ones."},
    {"compute", "{backward_ratio, update_bytes_per_param}: backward time as a multiple of forward (default 2) and "
                "the optimizer's memory traffic per parameter in bytes (default 12)."},
    {"comm", "{streams: 1..64, gamma: seconds per byte, interference: 0..10, slowdown: 0..10, overlap: bool, "
             "channels: 0..sms-1, gradient_precision}: collectives in flight at once (default 1); the reduction cost "
             "(default 3 / GPU memory bandwidth); compute's slow-down while a sync runs and a sync's while compute "
             "runs (defaults: the GPU's; given, they override the overlap mechanism); overlap: the GPU's overlap "
             "mechanism and DDP's own costs set the rates (default true); channels: SMs a sync holds (default: an "
             "NCCL call its tuner's channels, any other sync 8; given: every sync, NCCL's too); "
             "the all-reduced gradients' type (default: precision's)."},
    {"variation", "{dist: normal | lognormal | none, cv: 0..10, per: layer | iteration | gpu, seed, jitter: TIME}: "
                  "random compute times per rank, and ranks issuing each collective up to jitter apart."},
    {"stragglers", "A list of {ranks: [...], slowdown: 0.001..1000, from_iteration}: ranks whose compute is "
                   "slower by that factor."},
    {"faults", "A list of {link: A->B | {a, b}, at: TIME, until: TIME, bandwidth: RATE | latency: TIME | down: "
               "true}: a link degraded or down for a while."},
    {"background", "A list of {pattern: permutation | all-to-all | incast, hosts: [...] | fraction, load, message: "
                   "SIZE, seed}: other jobs' traffic on the network."},
};

static const char *const scenario_sub[][2] = {
    {"CLUSTER",
     "topology: a kind (star, ring, torus2d, fat-tree) or a topology file. nodes: default the file's hosts, else 8. "
     "gpus_per_node: above 1 builds a hierarchical cluster, one NIC per node shared by its GPUs. intra: {bandwidth, "
     "latency, burst, protocol}, the GPUs' links inside a node (default 150GB/s and 1us). calibration: a file "
     "written by arsim calibrate. The network's overrides: link: {bandwidth, latency, burst, peak}, switch_latency, "
     "packet (message or a size), k and oversubscription (fat-tree), x and y (torus2d), protocol (how MPI sends: "
     "eager_limit, handshake, overhead, segment and the fitted queues)."},
    {"POLICIES",
     "name: required, unique. overlap: none | ddp | layer | priority | fsdp | fsdp2 (default layer). algorithm: "
     "@ALGORITHMS@ | hybrid | auto | nccl (default ring; nccl on a cluster of GPU "
     "nodes, cluster: {node: NAME}, where hybrid maps butterfly and tree onto NCCL's Tree, the others onto Ring). "
     "nccl: {algo: ring | tree | nvls | nvlstree, proto: ll | ll128 | simple, channels: 1..64}, any case: forces "
     "NCCL's choice as NCCL_ALGO and NCCL_PROTO do. inter: hierarchical's algorithm "
     "between nodes (default ring). bucket and first_bucket: ddp's bucket limits (25MiB, 1MiB). ddp_layout: rebuilt "
     "(default) | initial. ddp_launch: ready (default: each bucket as it fills) | after_backward (all of them once "
     "the backward ends: no overlap). partition: priority's piece size (4MiB). fusion: layer and priority fuse adjacent small "
     "layers up to this size (off). hybrid: {@KINDS@: ALGO, threshold: SIZE}. overrides: {LAYER: ALGO}, per layer "
     "of the model. checkpoint: none | selective | full (blocks' activation checkpointing). fsdp and fsdp2: "
     "sharding: full_shard | shard_grad_op | hybrid_shard | no_shard (all but no_shard take algorithm ring or "
     "nccl only, and no hybrid or overrides); "
     "wrap: block | {min_params: N}; reduce_precision: fp32 | tf32 | fp16 | bf16 (the element the "
     "reduce-scatters and all-reduces move; default the gradient precision). fsdp only: backward_prefetch: "
     "backward_pre | backward_post | none; "
     "forward_prefetch, limit_all_gathers: true | false. fsdp2 only: reshard_after_forward: true | false | N; "
     "reshard_last_unit: true | false (false: the last unit stays gathered from its forward to its backward, "
     "as torchtitan's last block)."},
    {"UNITS", UNITS " An unknown key anywhere is an error: one line, file:line:col: what is wrong; what is "
                    "expected, exit status 2."},
};

void clidoc_man_scenario(FILE *out)
{
    fprintf(out, ".\\\" arsim-scenario(5). Generated by `arsim --man-scenario`; do not edit.\n"
                 ".TH ARSIM-SCENARIO 5 \"\" \"arsim %s\" \"File Formats\"\n"
                 ".SH NAME\narsim\\-scenario \\- the scenario file of arsim run, check and sweep\n"
                 ".SH SYNOPSIS\n.B arsim run\n.I SCENARIO.yaml\n.RB [ \\-\\-set\n.IR KEY = VALUE ]...\n"
                 ".SH DESCRIPTION\n", ARSIM_VERSION);
    man_text(out, "A scenario is a YAML map naming a model, a GPU, batch sizes, a cluster and the policies to "
                  "compare. --set KEY=VALUE changes any key by its dotted path (cluster.nodes=32, batch=[32,64], "
                  "policies.0.bucket=50MiB), VALUE read as YAML. A file with a sweep: section is a sweep: its "
                  "axes are key paths with lists of values, run by arsim sweep.");
    fputs("\n.SH KEYS\n", out);
    for (size_t i = 0; i < G_N_ELEMENTS(scenario_keys); i++) {
        fprintf(out, ".TP\n\\fB%s\\fR\n", scenario_keys[i][0]);
        man_text(out, scenario_keys[i][1]);
        fputc('\n', out);
    }
    char *algos = coll_algo_list(false, " | ", " | ");   /* the algorithm table's names, not a copy */
    char *kinds = model_kind_list(", ", ", ");           /* the layer kinds' names, likewise */
    for (size_t i = 0; i < G_N_ELEMENTS(scenario_sub); i++) {
        fprintf(out, ".SH %s\n", scenario_sub[i][0]);
        char **parts = g_strsplit(scenario_sub[i][1], "@ALGORITHMS@", -1);
        char *text = g_strjoinv(algos, parts);
        g_strfreev(parts);
        parts = g_strsplit(text, "@KINDS@", -1);
        g_free(text);
        text = g_strjoinv(kinds, parts);
        man_text(out, text);
        g_free(text);
        g_strfreev(parts);
        fputc('\n', out);
    }
    fputs(".SH EXAMPLE\n.nf\n", out);
    man_text(out, "name: vgg16-thesis\nmodel: vgg16\ngpu: v100\nbatch: [16, 32, 64, 128]\ncluster:\n  topology: star\n"
                  "  nodes: 8\n  link: {bandwidth: 10Gbps, latency: 25us}\npolicies:\n"
                  "  - {name: pytorch-ddp, overlap: ddp, algorithm: ring}\n"
                  "  - {name: thesis, overlap: layer, algorithm: hybrid}\nbaseline: pytorch-ddp");
    fputs("\n.fi\n.SH FILES\n.TP\n.I ", out);
    man_text(out, datapath_installed());
    fputs("/configs\nThe shipped scenarios and sweeps.\n.SH \"SEE ALSO\"\n.BR arsim (1)\n", out);
    g_free(kinds);
    g_free(algos);
}
