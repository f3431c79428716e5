/* sweep — `arsim sweep` option parsing and `arsim check` for sweeps; see
 * sweep.h. */
#include "sweep/sweep.h"
#include "sweep/sweepexec.h"
#include "sweep/sweepmpi.h"
#include "sweep/sweepout.h"
#include "sweep/sweepsim.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SWEEP_USAGE                                                                                  \
    "expected arsim sweep CONFIG --out DIR [--jobs N] [--resume] [--shard I/N] [--mpi] [--set KEY=VALUE]... " \
    "or arsim sweep --merge DIR... --out DIR"

static int usage(char *msg)
{
    fprintf(stderr, "%s\n", msg);
    g_free(msg);
    return 2;
}

int sweep_check(const char *file, char **sets, FILE *out, char **err)
{
    SweepDef *d = sweepexp_load(file, sets, err);
    if (!d)
        return 2;
    int rc = 0;
    if (!sweepexec_validate(d, sweepsim_runner(), (int)g_get_num_processors(), err)) {
        rc = 2;
    } else {
        fprintf(out, "%s: ok: %" G_GUINT64_FORMAT " scenario%s", file, d->count, d->count == 1 ? "" : "s");
        for (guint g = 0; g < d->groups->len; g++) {
            GString *names = g_string_new(NULL);
            int members = 0;
            for (guint a = 0; a < d->axes->len; a++) {
                const SweepAxis *ax = g_ptr_array_index(d->axes, a);
                if (ax->group == (int)g) {
                    g_string_append_printf(names, "%s%s", members ? ", " : "", ax->path);
                    members++;
                }
            }
            fprintf(out, "%s%s%s%s (%d)", g ? " x " : ", axes ", members > 1 ? "zip(" : "", names->str,
                    members > 1 ? ")" : "", g_array_index(d->groups, int, g));
            g_string_free(names, TRUE);
        }
        fputc('\n', out);
    }
    sweepexp_free(d);
    return rc;
}

/* "I/N" with 0 <= I < N. */
static bool parse_shard(const char *arg, int *i, int *n)
{
    char *end;
    long a = strtol(arg, &end, 10);
    if (end == arg || *end != '/')
        return false;
    const char *b = end + 1;
    long c = strtol(b, &end, 10);
    if (end == b || *end || a < 0 || c < 1 || a >= c || c > 1000000)
        return false;
    *i = (int)a;
    *n = (int)c;
    return true;
}

int sweep_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},  {"jobs", required_argument, 0, 'j'},
        {"resume", no_argument, 0, 'r'},     {"shard", required_argument, 0, 's'},
        {"mpi", no_argument, 0, 'm'},        {"merge", no_argument, 0, 'M'},
        {"set", required_argument, 0, 'S'},  {0, 0, 0, 0}};
    SweepOpts o = {.jobs = (int)g_get_num_processors(), .log = stderr, .tty = isatty(2)};
    bool mpi = false, merge = false, jobs_set = false;
    GPtrArray *sets = g_ptr_array_new();
    char *msg = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while (!msg && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o': o.out = optarg; break;
        case 'j': {
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 4096)
                msg = g_strdup_printf("--jobs: '%s' is not a count of threads; expected an integer from 1 to 4096",
                                      optarg);
            o.jobs = (int)v;
            jobs_set = true;
            break;
        }
        case 'r': o.resume = true; break;
        case 's':
            if (!parse_shard(optarg, &o.shard_i, &o.shard_n))
                msg = g_strdup_printf("--shard: '%s' is not a share; expected I/N with 0 <= I < N, such as 0/4",
                                      optarg);
            break;
        case 'm': mpi = true; break;
        case 'M': merge = true; break;
        case 'S': g_ptr_array_add(sets, optarg); break;
        case ':':
            msg = g_strdup_printf("%s: missing value; %s", argv[optind - 1], SWEEP_USAGE);
            break;
        default:
            msg = g_strdup_printf("%s: unknown option; %s", argv[optind - 1], SWEEP_USAGE);
            break;
        }
    }
    g_ptr_array_add(sets, NULL);
    int npos = argc - optind;
    if (!msg && !o.out)
        msg = g_strdup_printf("--out: missing; %s", SWEEP_USAGE);
    else if (!msg && merge && (npos < 1 || mpi || o.resume || o.shard_n || jobs_set || sets->len > 1))
        msg = g_strdup_printf("--merge: %s; expected arsim sweep --merge DIR... --out DIR",
                              npos < 1 ? "no directories" : "takes no other option");
    else if (!msg && !merge && npos != 1)
        msg = g_strdup_printf("%s; %s", npos ? "more than one CONFIG" : "no CONFIG", SWEEP_USAGE);
    if (msg) {
        g_ptr_array_free(sets, TRUE);
        return usage(msg);
    }
    char *err = NULL;
    int rc;
    o.sets = sets->len > 1 ? (char **)sets->pdata : NULL;
    if (merge) {
        rc = sweepout_merge(argv + optind, npos, o.out, stderr, &err);
    } else if (mpi) {
        rc = sweepmpi_run(argv[optind], o.sets, sweepsim_runner(), &o, &err);
    } else {
        SweepDef *d = sweepexp_load(argv[optind], o.sets, &err);
        rc = d ? sweepexec_run(d, sweepsim_runner(), &o, &err) : 2;
        sweepexp_free(d);
    }
    g_ptr_array_free(sets, TRUE);
    if (rc && err)
        fprintf(stderr, "%s\n", err);
    g_free(err);
    return rc;
}
