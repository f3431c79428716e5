/* mpibench — measures what arsim simulates, with real MPI: ping-pong
 * (α, β per link class), a pairwise exchange with one rank late (the
 * rendezvous handshake queueing behind data), local reduction (γ) and
 * all-reduce, both the MPI library's and arsim's own schedules
 * (coll_build() from the core library) run over point-to-point with every
 * rank's result checked.
 *
 *   mpirun -np P [mpirun options] validate/mpibench MODE [options]
 *
 * Every argument is checked before MPI_Init; bad input prints one line
 * `mpibench: --flag: what is wrong; what is expected` (on rank 0 only when
 * launched by mpirun) and exits 2. The measurements file (--out) is
 * written by rank 0 at the end, via FILE.tmp and a rename, so a run that
 * dies or times out leaves no complete-looking file. Exit status: 0 all
 * cases ran and every checked result was right; 1 a result was wrong or
 * the file could not be written (the file is still written in the first
 * case, with "verified": false); 2 bad input; 3 a case timed out.
 */
#include "mbjson.h"
#include "mbmodes.h"
#include "mbwait.h"
#include "io/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* True when this process should print start-up errors: not launched by a
 * process manager, or launched as rank 0 (so P ranks do not print P lines). */
static bool speaks_before_init(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < G_N_ELEMENTS(vars); i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return strcmp(v, "0") == 0;
    }
    return true;
}

static void usage(FILE *f)
{
    fputs("usage: mpirun -np P [mpirun options] mpibench MODE [options]\nmodes:\n", f);
    for (const MbmodesMode *m = mbmodes_table; m->name; m++)
        fprintf(f, "  %-10s %s\n", m->name, m->summary);
    fputs("options:\n"
          "  --out FILE            write the measurements JSON (schema arsim-measurements/1)\n"
          "  --sizes LIST          comma-separated sizes such as 4KiB,1MiB (vectors: multiples of 8 B)\n"
          "  --delays LIST         exchange: the late rank's delays, times such as 0,50us,2ms (default 2ms)\n"
          "  --pairs one|all       exchange: the first pair on two hosts, or ranks 2j and 2j+1 all at once\n"
          "  --late second|first|both\n"
          "                        exchange: which rank of a pair starts late, its higher (default), its lower,\n"
          "                        or each late case both ways\n"
          "  --algo LIST           allreduce: mpi,ring,butterfly,rabenseifner,tree,hierarchical,torus2d\n"
          "                        (default: all but torus2d)\n"
          "  --mpi-call C          allreduce: how algo mpi calls the library: allreduce (MPI_Allreduce,\n"
          "                        the default) or iallreduce (MPI_Iallreduce, waited for as --poll says)\n"
          "  --inter ALGO          hierarchical: inter-node algorithm (default ring)\n"
          "  --gpus-per-node G     hierarchical: ranks per node (default: ranks per host)\n"
          "  --config FILE         iteration: the arsim scenario to replay (its world = the MPI world)\n"
          "  --policy NAME         iteration: one of the scenario's policies\n"
          "  --batch B             iteration: per-rank batch (default: the scenario's first)\n"
          "  --scale F             iteration: multiply every compute time by F (default 1)\n"
          "  --iterations W,M      iteration: warm-up and measured iterations (default: the scenario's)\n"
          "  --set KEY=VALUE       iteration: override a scenario key, as arsim run --set (repeatable)\n"
          "  --poll T              wait by testing every T and sleeping in between (default 0:\n"
          "                        MPI_Waitall, which busy-polls); 20us suits ranks > cores\n"
          "  --warmup N            unmeasured repetitions per case (default 1)\n"
          "  --min-reps N          measured repetitions at least (default 5)\n"
          "  --max-reps N          measured repetitions at most (default 50)\n"
          "  --tol F               stop once the median moves less than F (default 0.02)\n"
          "  --min-time T          measure each case at least T before it may stop (default 0);\n"
          "                        many repetitions of a fast case keep a tail out of the median\n"
          "  --case-time T         no new repetition after T in a case (default 30s)\n"
          "  --timeout T           a case running longer ends the run, exit 3 (default 600s)\n"
          "  --quiet               no per-case lines on stdout\n", f);
}

/* The --out file must be creatable: its directory exists and is writable,
 * and it is not a directory itself. Nothing is created now. */
static bool check_out(const char *path, char *msg, size_t n)
{
    struct stat st;
    if (!*path) {
        snprintf(msg, n, "--out: empty file name; expected a file path");
        return false;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(msg, n, "--out: '%s' is a directory; expected a file path", path);
        return false;
    }
    char *dir = g_path_get_dirname(path);
    bool ok = access(dir, W_OK | X_OK) == 0;
    if (!ok)
        snprintf(msg, n, "--out: directory '%s' is not writable (%s); expected an existing writable directory",
                 dir, strerror(errno));
    g_free(dir);
    return ok;
}

/* One common option; 1 consumed, 0 not common, -1 bad (msg set). */
static int parse_common(MbmodesOpts *o, const char *flag, const char *val, char *msg, size_t n)
{
    const char *why = NULL;
    MbcaseRule *r = &o->rule;
    if (strcmp(flag, "--out") == 0) {
        o->out = val;
        return 1;
    }
    if (strcmp(flag, "--sizes") == 0) {
        if (o->sizes)
            g_array_free(o->sizes, TRUE);
        o->sizes = g_array_new(FALSE, FALSE, sizeof(guint64));
        gchar **parts = g_strsplit(val, ",", -1);
        for (gchar **p = parts; *p; p++) {
            uint64_t b;
            if (!units_parse_bytes(*p, &b, &why)) {
                snprintf(msg, n, "--sizes: '%s': %s", *p, why);
                g_strfreev(parts);
                return -1;
            }
            g_array_append_val(o->sizes, b);
        }
        g_strfreev(parts);
        if (o->sizes->len == 0) {
            snprintf(msg, n, "--sizes: empty list; expected comma-separated sizes such as 4KiB,1MiB");
            return -1;
        }
        return 1;
    }
    struct {
        const char *flag;
        int *dst;
        int lo, hi;
    } ints[] = {{"--warmup", &r->warmup, 0, 1000}, {"--min-reps", &r->min_reps, 1, 100000},
                {"--max-reps", &r->max_reps, 1, 100000}};
    for (size_t i = 0; i < G_N_ELEMENTS(ints); i++)
        if (strcmp(flag, ints[i].flag) == 0) {
            long v;
            if (!mbcase_parse_count(val, ints[i].lo, ints[i].hi, &v)) {
                snprintf(msg, n, "%s: '%s' is not a count; expected an integer from %d to %d", flag, val,
                         ints[i].lo, ints[i].hi);
                return -1;
            }
            *ints[i].dst = (int)v;
            return 1;
        }
    if (strcmp(flag, "--tol") == 0) {
        double t;
        if (!units_parse_nonneg(val, &t, &why) || t <= 0 || t >= 1) {
            snprintf(msg, n, "--tol: '%s' is not a tolerance; expected a fraction above 0 and below 1 such as 0.02",
                     val);
            return -1;
        }
        r->tol = t;
        return 1;
    }
    if (strcmp(flag, "--poll") == 0) {
        double t;
        if (!units_parse_time(val, &t, &why) || t > 0.1) {
            snprintf(msg, n, "--poll: '%s' is not a poll interval; expected a time from 0 (busy wait) to 100ms such as 20us",
                     val);
            return -1;
        }
        r->poll_s = t;
        return 1;
    }
    /* Times up to a day; zero_ok: 0 is a value (no minimum), else a time must be above 0. */
    static const char *const above0 = "time out of range; expected a time above 0 and at most 86400s such as 30s";
    struct {
        const char *flag;
        double *dst;
        bool zero_ok;
        const char *range;
    } times[] = {{"--min-time", &r->min_time_s, true, "time out of range; expected a time from 0 to 86400s such as 1s"},
                 {"--case-time", &r->case_time_s, false, above0},
                 {"--timeout", &r->timeout_s, false, above0}};
    for (size_t i = 0; i < G_N_ELEMENTS(times); i++)
        if (strcmp(flag, times[i].flag) == 0) {
            double t;
            if (!units_parse_time(val, &t, &why) || (t <= 0 && !times[i].zero_ok) || t > 86400) {
                snprintf(msg, n, "%s: '%s': %s", flag, val, why ? why : times[i].range);
                return -1;
            }
            *times[i].dst = t;
            return 1;
        }
    return 0;
}

/* Parses and checks argv into o; false with msg on bad input. */
static bool parse_args(int argc, char **argv, MbmodesOpts *o, const MbmodesMode **mode, char *msg, size_t n)
{
    if (argc < 2 || argv[1][0] == '-') {
        snprintf(msg, n, "%s: missing mode; expected pingpong, exchange, reduce, allreduce, iteration or all first",
                 argc < 2 ? "MODE" : argv[1]);
        return false;
    }
    *mode = mbmodes_find(argv[1]);
    if (!*mode) {
        snprintf(msg, n, "%s: unknown mode; expected pingpong, exchange, reduce, allreduce, iteration or all", argv[1]);
        return false;
    }
    o->mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (strncmp(flag, "--", 2) != 0) {
            snprintf(msg, n, "%s: unexpected argument; expected options of the form --flag VALUE", flag);
            return false;
        }
        if (i + 1 >= argc) {
            snprintf(msg, n, "%s: missing value; expected %s VALUE", flag, flag);
            return false;
        }
        const char *val = argv[++i];
        int rc = parse_common(o, flag, val, msg, n);
        if (rc < 0)
            return false;
        if (rc > 0)
            continue;
        const char *why = NULL;
        rc = (*mode)->parse_opt ? (*mode)->parse_opt(o, flag, val, &why) : 0;
        if (rc < 0) {
            snprintf(msg, n, "%s: '%s': %s", flag, val, why);
            return false;
        }
        if (rc == 0) {
            snprintf(msg, n, "%s: not an option of mode %s; expected one listed by mpibench --help", flag,
                     o->mode);
            return false;
        }
    }
    const MbcaseRule *r = &o->rule;
    if (r->max_reps < r->min_reps) {
        snprintf(msg, n, "--max-reps: %d is below --min-reps %d; expected max-reps >= min-reps", r->max_reps,
                 r->min_reps);
        return false;
    }
    if (r->min_time_s >= r->case_time_s) {
        snprintf(msg, n, "--min-time: %g s is not below --case-time %g s; expected a minimum below the soft budget",
                 r->min_time_s, r->case_time_s);
        return false;
    }
    if (r->timeout_s <= r->case_time_s) {
        snprintf(msg, n, "--timeout: %g s is not above --case-time %g s; expected a hard limit above the soft one",
                 r->timeout_s, r->case_time_s);
        return false;
    }
    if (o->out && !check_out(o->out, msg, n))
        return false;
    return !(*mode)->check || (*mode)->check(o, msg, n);
}

/* The library's version string, first line only. */
static char *library_version(void)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    MPI_Get_library_version(buf, &len);
    char *nl = strpbrk(buf, "\r\n");
    if (nl)
        *nl = '\0';
    return g_strstrip(g_strdup(buf));
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)   /* --help anywhere, as `mpibench exchange --help` */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
    MbmodesOpts opt;
    mbmodes_opts_init(&opt);
    const MbmodesMode *mode = NULL;
    char msg[512];
    if (!parse_args(argc, argv, &opt, &mode, msg, sizeof msg)) {
        if (speaks_before_init())
            fprintf(stderr, "mpibench: %s\n", msg);
        mbmodes_opts_clear(&opt);
        return 2;
    }

    char date[32];
    mbjson_now_iso8601(date, sizeof date);
    MPI_Init(&argc, &argv);
    mbwait_setup(opt.rule.poll_s);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MbcaseWatchdog wd;
    if (!mbcase_watchdog_init(&wd, rank) && rank == 0)
        fprintf(stderr, "mpibench: warning: no per-case timeout (timer_create: %s)\n", strerror(errno));
    MbmodesCtx ctx;
    mbmodes_ctx_init(&ctx, &opt, MPI_COMM_WORLD, &wd);
    if (rank == 0 && !opt.quiet) {
        printf("mpibench %s: %d ranks on %u hosts\n", opt.mode, ctx.p, ctx.host_names->len);
        fflush(stdout);
    }

    mode->run(&ctx);

    if (ctx.bad_input) {
        mbmodes_ctx_clear(&ctx);
        mbcase_watchdog_free(&wd);
        mbmodes_opts_clear(&opt);
        MPI_Finalize();
        return 2;
    }
    int status = ctx.all_verified ? 0 : 1;
    if (!ctx.all_verified && rank == 0)
        fprintf(stderr, "mpibench: some all-reduce results were wrong (\"verified\": false in the output)\n");
    if (rank == 0 && opt.out) {
        char *lib = library_version(), *command = g_strjoinv(" ", argv + 1), *err = NULL, *cwd = g_get_current_dir();
        int major = 0, minor = 0;
        MPI_Get_version(&major, &minor);
        char std[16];
        snprintf(std, sizeof std, "%d.%d", major, minor);
        MbjsonEnv env = {.ranks = ctx.p, .hosts = (int)ctx.host_names->len, .ranks_per_host = ctx.ranks_per_host,
                         .consecutive = ctx.consecutive, .mpi_library = lib, .mpi_standard = std, .date = date,
                         .command = command, .host_names = ctx.host_names,
                         .poll_s = opt.rule.poll_s, .cwd = cwd};
        if (!mbjson_write(opt.out, &env, ctx.cases, &err)) {
            fprintf(stderr, "mpibench: %s\n", err);
            status = 1;
        }
        g_free(err);
        g_free(lib);
        g_free(command);
        g_free(cwd);
    }
    mbmodes_ctx_clear(&ctx);
    mbcase_watchdog_free(&wd);
    mbmodes_opts_clear(&opt);
    MPI_Finalize();
    return status;
}
