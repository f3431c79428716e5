/* cmdcalib — `arsim calibrate`; see cmdcalib.h. */
#include "cli/cmdcalib.h"
#include "calib/calrun.h"
#include "io/calfile.h"
#include "io/fileio.h"
#include "report/reportcalib.h"
#include "report/reportmeas.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    bool pingpong, ring;     /* which cases fit the inter class */
} CalibFit;

typedef struct {
    const char *meas;        /* MEASUREMENTS.json; the first argument */
    char *out;               /* --out FILE or NULL (stdout) */
    CalibFit fit;            /* --fit */
    bool no_burst;           /* --no-burst: plain α + nβ */
    bool no_peak;            /* --no-peak: the burst's credit passes at once */
    bool no_protocol;        /* --no-protocol: no eager limit, handshake or overhead */
    bool free_beta;          /* --free-beta: β free even where it strays from the large sizes' slope */
    bool no_ring_beta;       /* --no-ring-beta: β not held at the largest rings' slope */
    char *protocol;          /* --protocol FILE: the inter protocol taken from that calibration, or NULL */
    GPtrArray *args;         /* the arguments: MEASUREMENTS.json */
} CalibOpts;

/* --fit pingpong,ring (either or both). */
static bool parse_fit(void *field, const CliOpt *opt, const char *value, char **err)
{
    CalibFit *f = field;
    *f = (CalibFit){false, false};
    gchar **parts = g_strsplit(value, ",", -1);
    for (int i = 0; parts[i] && !*err; i++) {
        if (strcmp(parts[i], "pingpong") == 0)
            f->pingpong = true;
        else if (strcmp(parts[i], "ring") == 0)
            f->ring = true;
        else
            *err = g_strdup_printf("--%s: unknown '%s'; expected pingpong, ring or pingpong,ring", opt->name,
                                   parts[i]);
    }
    g_strfreev(parts);
    if (!*err && !f->pingpong && !f->ring)
        *err = g_strdup_printf("--%s: empty; expected pingpong, ring or pingpong,ring", opt->name);
    return !*err;
}

static int run(void *opts, char **err)
{
    CalibOpts *o = opts;
    o->meas = o->args->pdata[0];
    if (o->protocol && o->no_protocol) {
        *err = g_strdup("--protocol: given with --no-protocol; expected one of the two");
        return 2;
    }
    MeasFile *m = reportmeas_load(o->meas, err);
    if (!m)
        return 2;
    CalRunOpts ro = {
        .fit_pingpong = o->fit.pingpong,
        .fit_ring = o->fit.ring,
        .flags = (o->no_burst ? CALFIT_NO_BURST : 0) | (o->no_protocol ? CALFIT_NO_PROTOCOL : 0) |
                 (o->free_beta ? CALFIT_FREE_BETA : 0) | (o->no_peak ? CALFIT_NO_PEAK : 0) |
                 (o->no_ring_beta ? CALFIT_NO_RING_BETA : 0),
        .protocol_path = o->protocol,
        .source = o->meas,
    };
    CalRun r;
    int rc = calrun_fit(m, &ro, &r, err);
    /* --out -: the calibration alone on standard output, no report. */
    bool alone = fileio_is_stdout(o->out);
    if (rc == 0) {
        if (!alone) {
            char *table = reportcalib_text(m, &r);
            fputs(table, stdout);
            g_free(table);
        }
        if (o->out) {
            if (!calfile_write(o->out, &r.cal, err))
                rc = 1;
            else if (!alone)
                printf("\nwrote %s\n", o->out);
        } else {
            char *text = calfile_format(&r.cal);
            printf("\n%s", text);
            g_free(text);
        }
    }
    calrun_clear(&r);
    calmeas_free(m);
    return rc;
}

static const CliOpt opts[] = {
    {"out", CLI_OUT, offsetof(CalibOpts, out),
     .help = "write the calibration YAML to FILE (atomically; with -, it alone, without the tables)", .note = "after the table, on stdout"},
    {"fit", CLI_CUSTOM, offsetof(CalibOpts, fit),
     .help = "the cases that fit the inter-node class: ping-pong, ring all-reduce or both", .value = "pingpong,ring",
     .unit = "pingpong, ring or pingpong,ring", .deflt = "pingpong,ring", .words = "pingpong ring pingpong,ring",
     .parse = parse_fit},
    {"no-burst", CLI_FLAG, offsetof(CalibOpts, no_burst),
     .help = "fit the plain alpha + n beta model, without the burst term"},
    {"no-peak", CLI_FLAG, offsetof(CalibOpts, no_peak),
     .help = "let the burst's credit pass at once: no peak rate (by default one is fitted where it cuts the squared "
             "error to 2/3: a shaper's credit passing at the rate a host copies into it)"},
    {"no-protocol", CLI_FLAG, offsetof(CalibOpts, no_protocol),
     .help = "fit no protocol: no eager limit, handshake or per-message overhead (eager_limit inf)"},
    {"protocol", CLI_IN, offsetof(CalibOpts, protocol),
     .help = "take the inter protocol from this calibration instead of fitting it (its eager limit, handshake and "
             "ack, control queues, request payload and duplex; alpha, beta, the burst and the overhead are fitted "
             "under them): a protocol belongs to the MPI library and its transport, so fit it where a handshake "
             "shows; the host queue belongs to the hosts and is fitted here too where ring cases of 3 ranks or "
             "more allow"},
    {"free-beta", CLI_FLAG, offsetof(CalibOpts, free_beta),
     .help = "leave beta free even where it strays more than 10 % from the large messages' slope"},
    {"no-ring-beta", CLI_FLAG, offsetof(CalibOpts, no_ring_beta),
     .help = "do not hold beta at the slope of the largest ring all-reduces (those of at least 1/4 of the largest "
             "ring's message, 2 sizes or more; held there by default: a collective keeps every link busy both "
             "ways); fit it with the ping-pong, free within 10 % of the large messages' slope"},
    {NULL},
};

const CliCmd cmdcalib_cli = {
    .name = "calibrate",
    .summary = "fit alpha, beta, gamma and the protocol per link class to measured collectives",
    .about = "MEASUREMENTS.json: the measurements file of validate/mpibench. Prints the fit, R2 and every point's "
             "residual, and writes the calibration a scenario's cluster.calibration reads.",
    .args = "MEASUREMENTS.json",
    .arg_what = "MEASUREMENTS.json file",
    .min_args = 1,
    .max_args = 1,
    .args_field = offsetof(CalibOpts, args),
    .opts = opts,
    .main = cmdcalib_main,
};

int cmdcalib_main(int argc, char **argv)
{
    CalibOpts o = {0};
    return cli_main(&cmdcalib_cli, argc, argv, &o, run);
}
