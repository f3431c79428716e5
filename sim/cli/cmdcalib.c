/* cmdcalib — `arsim calibrate`; see cmdcalib.h. */
#include "cli/cmdcalib.h"
#include "io/calfile.h"
#include "calib/calfit.h"
#include "calib/calhostq.h"
#include "calib/calqueue.h"
#include "report/reportmeas.h"

#include <math.h>
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

/* The points of one class, tagged with their case index. */
static GArray *collect(const MeasFile *m, const CalibOpts *o, bool intra, bool reduce)
{
    GArray *pts = g_array_new(FALSE, TRUE, sizeof(CalPoint));
    bool one_per_host = m->ranks_per_host <= 1 || m->hosts == m->ranks;
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        CalPoint p = {.ranks = c->ranks, .bytes = c->bytes, .time_s = c->time_s, .tag = c->index};
        if (reduce && c->mode == MEAS_REDUCE)
            p.kind = CALFIT_REDUCE;
        else if (!reduce && c->mode == MEAS_PINGPONG && c->intra == intra && o->fit.pingpong)
            p.kind = CALFIT_PINGPONG;
        else if (!reduce && !intra && c->mode == MEAS_ALLREDUCE && !c->mpi && c->algo == COLL_RING && o->fit.ring &&
                 one_per_host)
            p.kind = CALFIT_RING;
        else
            continue;
        g_array_append_val(pts, p);
    }
    return pts;
}

static const MeasCase *case_of(const MeasFile *m, const CalPoint *p)
{
    return &g_array_index(m->cases, MeasCase, p->tag);
}

static void print_points(FILE *out, const MeasFile *m, const GArray *pts, const char *cls)
{
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        char *lab = calmeas_case_label(case_of(m, p));
        fprintf(out, "%-6s %5d  %-18s %6d %12" G_GUINT64_FORMAT " %14.4f %14.4f %+9.2f%%%s\n", cls, p->tag, lab,
                p->ranks, p->bytes, p->time_s * 1e3, p->pred_s * 1e3, 100 * (p->time_s - p->pred_s) / p->time_s,
                p->used ? "" : "  outlier, not fitted");
        g_free(lab);
    }
}

static void print_class(FILE *out, const char *name, const CalLinkFit *f)
{
    fprintf(out, "%-6s %10.3f %11.5f %14.2f %12.0f %10.6f %8.2f%% %7d %8d\n", name, f->alpha_s * 1e6, f->beta * 1e9,
            f->beta > 0 ? 1e-6 / f->beta : INFINITY, f->burst_bytes, f->r2, 100 * f->rms_rel, f->points, f->dropped);
}

/* The protocol line of a class: what the fit found, and where between the
 * measured message sizes the handshake's step is. */
static void print_protocol(FILE *out, const char *name, const CalLinkFit *f, const GArray *pts)
{
    double below = 0, most = 0;
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        double m = p->kind == CALFIT_RING ? (double)p->bytes / p->ranks : (double)p->bytes;
        most = fmax(most, m);
        if (m < (double)f->eager_limit)
            below = fmax(below, m);
    }
    if (f->rtt)
        fprintf(out, "protocol %s: eager_limit %" G_GUINT64_FORMAT " B (a handshake from there on; the largest "
                "eager size measured is %.0f B), handshake rtt, ack %s, overhead %.3f us, progress in_mpi (not "
                "fitted: MPI without a progress thread, as mpibench runs it, handles control messages only inside "
                "MPI calls)\n", name, (guint64)f->eager_limit, below,
                f->ack ? "rtt (a step of 4 alpha: an acknowledgement and a confirmation follow the data)"
                       : "none (a step of 2 alpha)",
                f->overhead_s * 1e6);
    else
        fprintf(out, "protocol %s: no handshake step seen up to %.0f B: eager_limit inf, handshake none; overhead 0 "
                "(alpha holds alpha + 2o: without a handshake the two cannot be told apart)\n", name, most);
}

/* The protocol line when --protocol gave it. */
static void print_given(FILE *out, const CalFile *cal)
{
    char *p = protocol_format(&cal->inter_protocol.p);
    fprintf(out, "protocol inter: from %s (not fitted here; alpha, beta, the burst and the overhead fitted under "
            "its eager limit and handshake): %s\n", cal->protocol_from, p);
    g_free(p);
}

/* The β line of a class: the largest rings' or the large sizes' slope,
 * and whether β was held there. */
static void print_beta(FILE *out, const char *name, const CalLinkFit *f, bool free_beta)
{
    if (free_beta)
        fprintf(out, "beta %s: free (--free-beta)\n", name);
    else if (isfinite(f->beta_ring)) {
        fprintf(out, "beta %s: held at the largest rings' slope, %.5f ns/B (%.2f MB/s): the rate with every link busy "
                "both ways", name, f->beta_ring * 1e9, 1e-6 / f->beta_ring);
        if (isfinite(f->beta_slope))
            fprintf(out, " (the large messages' slope: %.5f ns/B, %+.2f %%; --no-ring-beta uses it)",
                    f->beta_slope * 1e9, 100 * (f->beta_slope / f->beta_ring - 1));
        fputc('\n', out);
    } else if (!isfinite(f->beta_slope))
        fprintf(out, "beta %s: free (fewer than 2 large sizes for a slope)\n", name);
    else if (f->beta_held)
        fprintf(out, "beta %s: held at the large messages' slope, %.5f ns/B (%.2f MB/s): fitted free it strayed "
                "more than 10 %% from it\n", name, f->beta_slope * 1e9, 1e-6 / f->beta_slope);
    else
        fprintf(out, "beta %s: free, within 10 %% of the large messages' slope %.5f ns/B (%.2f MB/s)\n", name,
                f->beta_slope * 1e9, 1e-6 / f->beta_slope);
}

/* The peak line of a class with a burst: the rate its credit passes at. */
static void print_peak(FILE *out, const char *name, const CalLinkFit *f, bool no_peak)
{
    if (!(f->burst_bytes > 0))
        return;
    if (f->peak_Bps > 0)
        fprintf(out, "peak %s: the burst's credit passes at %.2f MB/s (%.3f ns/B), not at once: a message takes "
                "alpha + max(n/peak, (n - burst) beta), n/peak up to %.0f B\n", name, f->peak_Bps * 1e-6,
                1e9 / f->peak_Bps, f->burst_bytes * f->peak_Bps / (f->peak_Bps - 1 / f->beta));
    else
        fprintf(out, "peak %s: none%s (the burst's credit passes at once)\n", name,
                no_peak ? " (--no-peak)" : ": a peak rate did not cut the squared error to 2/3");
}

/* "inf" or "N B" in buf. */
static const char *queue_text(uint64_t q, char buf[32])
{
    if (q == PROTOCOL_INF)
        return "inf";
    snprintf(buf, 32, "%" G_GUINT64_FORMAT " B", (guint64)q);
    return buf;
}

/* The control queue line and the exchange cases under it. */
static void print_queue(FILE *out, const MeasFile *m, const CalFile *cal, const CalQueueFit *f)
{
    const Protocol *pr = &cal->inter_protocol.p;
    char lo[32], hi[32];
    if (f->handshake_found)
        fprintf(out, "protocol inter from the exchange cases: a late partner's messages wait from %" G_GUINT64_FORMAT
                " B on: eager_limit %" G_GUINT64_FORMAT " B, handshake rtt, overhead 0\n",
                (guint64)f->eager_limit, (guint64)f->eager_limit);
    if (pr->handshake != PROTOCOL_HANDSHAKE_RTT)
        fprintf(out, "exchange cases: no handshake there either (eager kept), ");
    else if (f->control_queue[PROTOCOL_FROM_LOWER] != f->control_queue[PROTOCOL_FROM_HIGHER])
        fprintf(out, "control_queue inter: %s from the lower rank, %s from the higher (a clear-to-send the pair's "
                "lower or higher rank sends waits behind at most that much queued data per link), ",
                queue_text(f->control_queue[PROTOCOL_FROM_LOWER], lo), queue_text(f->control_queue[PROTOCOL_FROM_HIGHER], hi));
    else if (f->control_queue[0] == PROTOCOL_INF)
        fprintf(out, "control_queue inter: inf (a clear-to-send waits behind all data queued ahead of it), ");
    else
        fprintf(out, "control_queue inter: %" G_GUINT64_FORMAT " B (a clear-to-send waits behind at most that much "
                "queued data per link), ", (guint64)f->control_queue[0]);
    if (pr->handshake == PROTOCOL_HANDSHAKE_RTT && pr->rts_payload == PROTOCOL_RTS_EAGER)
        fprintf(out, "rts_payload eager (a request-to-send carries the message's first %" G_GUINT64_FORMAT " B), ",
                (guint64)protocol_rts_bytes(pr, UINT64_MAX));
    if (pr->handshake == PROTOCOL_HANDSHAKE_RTT && pr->duplex == PROTOCOL_DUPLEX_HALF)
        fprintf(out, "duplex half (an exchange's two directions take turns however its ends start), ");
    fprintf(out, "rms.err %.2f%% over %d exchange cases:", 100 * f->rms_rel, f->points);
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        if (c->mode != MEAS_EXCHANGE || c->intra)
            continue;
        char *why = NULL;
        double t = calqueue_exchange_time(cal, c, &why);
        g_free(why);
        fprintf(out, " %" G_GUINT64_FORMAT " B %.3g ms late%s %.3f/%.3f ms", (guint64)c->bytes, c->delay_s * 1e3,
                c->late_lower ? " (lower rank)" : "", c->time_s * 1e3, t * 1e3);
    }
    fprintf(out, " (measured/fitted)\n");
}

/* The host queue line. */
static void print_host_queue(FILE *out, const CalHostQueueFit *f)
{
    char q[32];
    if (f->kept)
        fprintf(out, "host_queue inter: %s (a control message waits behind at most that much of its host's other "
                "outgoing data), rms.err %.2f%% over %d ring cases of 3 ranks or more from their start spread "
                "(%.2f%% with 0)\n", queue_text(f->host_queue, q), 100 * f->rms_rel, f->points, 100 * f->rms_rel_zero);
    else
        fprintf(out, "host_queue inter: 0 (a control message passes its host's other outgoing data; the best, %s, "
                "did not halve the rms.err of %d ring cases of 3 ranks or more: rms.err %.2f%%, %.2f%% "
                "with 0)\n", queue_text(f->host_queue, q), f->points, 100 * f->rms_rel, 100 * f->rms_rel_zero);
}

static void fill_class(CalClass *k, CalProtocol *kp, const CalLinkFit *f, bool protocol, const GArray *pts,
                       CalFile *cal)
{
    *k = (CalClass){true, f->alpha_s, f->beta, f->r2, f->points, f->burst_bytes, f->rms_rel, f->peak_Bps};
    if (protocol) {
        kp->set = true;
        protocol_init(&kp->p);
        kp->p.eager_limit = f->eager_limit;
        kp->p.handshake = f->rtt ? PROTOCOL_HANDSHAKE_RTT : PROTOCOL_HANDSHAKE_NONE;
        kp->p.ack = f->ack ? PROTOCOL_ACK_RTT : PROTOCOL_ACK_NONE;
        kp->p.overhead_s = f->overhead_s;
    }
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        g_array_append_val(cal->used, p->tag);
        if (!p->used)
            g_array_append_val(cal->outliers, p->tag);
    }
}

static gint cmp_int(gconstpointer a, gconstpointer b)
{
    return *(const int *)a - *(const int *)b;
}

/* Fits a link class; 2 with *err when its points do not make a fit. */
static int fit_class(const MeasFile *m, GArray *pts, double gamma, unsigned flags, double eager, const char *cls,
                     CalLinkFit *f, char **err)
{
    char *why = NULL;
    if (calfit_link_at(pts, gamma, flags, eager, f, &why))
        return 0;
    const MeasCase *c = case_of(m, &g_array_index(pts, CalPoint, 0));
    *err = g_strdup_printf("%s:%d:%d: too few points for the %s fit: %s (pingpong class %s%s)", m->path, c->line,
                           c->col, cls, why, cls, strcmp(cls, "inter") == 0 ? " and ring all-reduce" : "");
    g_free(why);
    return 2;
}

/* --protocol FILE into *given: a calibration with an inter protocol; 2
 * with *err otherwise. */
static int load_protocol(const CalibOpts *o, CalFile *given, char **err)
{
    calfile_clear(given);   /* calfile_load initialises it afresh */
    if (!calfile_load(o->protocol, given, err))
        return 2;
    if (!given->inter_protocol.set) {
        *err = g_strdup_printf("%s:1:1: no inter protocol; expected a calibration whose inter class has one "
                               "(arsim calibrate without --no-protocol writes it)", o->protocol);
        return 2;
    }
    return 0;
}

/* The inter protocol of cal taken from given (--protocol): its eager
 * limit, handshake, control queues, request payload and duplex; the
 * overhead stays the one fitted under them. */
static void take_protocol(CalFile *cal, const CalFile *given, const char *path)
{
    double o = cal->inter_protocol.p.overhead_s;
    cal->inter_protocol = given->inter_protocol;
    cal->inter_protocol.p.overhead_s = o;
    g_free(cal->protocol_from);
    cal->protocol_from = g_strdup(path);
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
    GArray *red = collect(m, o, false, true), *inter = collect(m, o, false, false), *intra = collect(m, o, true, false);
    CalFile cal;
    calfile_init(&cal);
    CalGammaFit gf = {0};
    CalLinkFit fi = {0}, fa = {0};
    int rc = 0;
    char *why = NULL;
    cal.has_gamma = red->len > 0 && calfit_gamma(red, &gf, &why);
    g_free(why);
    if (inter->len == 0 && intra->len == 0)
        *err = g_strdup_printf("%s:1:1: no %s%s%s cases; expected ping-pong or ring all-reduce measurements to fit "
                               "α and β", m->path, o->fit.pingpong ? "pingpong" : "",
                               o->fit.pingpong && o->fit.ring ? " or " : "",
                               o->fit.ring ? "ring all-reduce" : "");
    if (*err)
        rc = 2;
    unsigned flags = (o->no_burst ? CALFIT_NO_BURST : 0) | (o->no_protocol ? CALFIT_NO_PROTOCOL : 0) |
                     (o->free_beta ? CALFIT_FREE_BETA : 0) | (o->no_peak ? CALFIT_NO_PEAK : 0) |
                     (o->no_ring_beta ? CALFIT_NO_RING_BETA : 0);
    CalFile given;   /* --protocol's calibration */
    calfile_init(&given);
    if (rc == 0 && o->protocol)
        rc = load_protocol(o, &given, err);
    /* the fit's eager limit: NAN searches it; INFINITY (no handshake, or every message eager) fits none */
    const Protocol *gp = &given.inter_protocol.p;
    double eager = !o->protocol ? NAN
                   : gp->handshake == PROTOCOL_HANDSHAKE_RTT && gp->eager_limit != PROTOCOL_INF ? (double)gp->eager_limit
                                                                                               : INFINITY;
    if (o->protocol && gp->ack == PROTOCOL_ACK_RTT)
        flags |= CALFIT_ACK;
    if (rc == 0 && inter->len > 0)
        rc = fit_class(m, inter, gf.gamma, flags, eager, "inter", &fi, err);
    if (rc == 0 && intra->len > 0)
        rc = fit_class(m, intra, 0, flags, NAN, "intra", &fa, err);
    if (rc == 0) {
        g_free(cal.source);
        cal.source = g_strdup(o->meas);
        g_free(cal.modes);
        cal.modes = g_strdup(o->fit.pingpong && o->fit.ring ? "pingpong,ring" : o->fit.pingpong ? "pingpong" : "ring");
        g_free(cal.meas_date);
        cal.meas_date = g_strdup(m->date);
        g_free(cal.mpi_library);
        cal.mpi_library = g_strdup(m->mpi_library);
        if (inter->len > 0)
            fill_class(&cal.inter, &cal.inter_protocol, &fi, !o->no_protocol, inter, &cal);
        if (cal.inter_protocol.set && !o->protocol)   /* mpibench's MPI has no progress thread */
            cal.inter_protocol.p.progress = PROTOCOL_PROGRESS_IN_MPI;
        CalQueueFit qf = {0};
        bool queued = false;
        if (o->protocol && cal.inter.set)
            take_protocol(&cal, &given, o->protocol);
        else
            queued = calqueue_fit(m, &cal, &qf);
        CalHostQueueFit hf = {0};
        bool hosted = calhostq_fit(m, &cal, &hf);   /* the host's queue, not the library's: fitted either way */
        if (intra->len > 0)
            fill_class(&cal.intra, &cal.intra_protocol, &fa, !o->no_protocol, intra, &cal);
        if (cal.has_gamma) {
            cal.gamma = gf.gamma;
            cal.gamma_r2 = gf.r2;
            cal.gamma_points = gf.points;
            for (guint i = 0; i < red->len; i++)
                g_array_append_val(cal.used, g_array_index(red, CalPoint, i).tag);
        }
        g_array_sort(cal.used, cmp_int);
        g_array_sort(cal.outliers, cmp_int);
        printf("calibration of %s: %s; %d rank%s on %d host%s; fit %s%s%s\n\n", m->path,
               m->mpi_library[0] ? m->mpi_library : "MPI library unknown", m->ranks, m->ranks == 1 ? "" : "s",
               m->hosts, m->hosts == 1 ? "" : "s", cal.modes,
               o->no_burst ? " (no burst term)" : "", o->no_protocol ? " (no protocol)" : "");
        printf("%-6s %10s %11s %14s %12s %10s %9s %7s %8s\n", "class", "alpha(us)", "beta(ns/B)", "goodput(MB/s)",
               "burst(B)", "R2", "rms.err", "points", "outliers");
        if (cal.inter.set)
            print_class(stdout, "inter", &fi);
        if (cal.intra.set)
            print_class(stdout, "intra", &fa);
        if (cal.inter.set)
            print_beta(stdout, "inter", &fi, o->free_beta);
        if (cal.intra.set)
            print_beta(stdout, "intra", &fa, o->free_beta);
        if (cal.inter.set)
            print_peak(stdout, "inter", &fi, o->no_peak);
        if (cal.intra.set)
            print_peak(stdout, "intra", &fa, o->no_peak);
        if (cal.inter_protocol.set && o->protocol)
            print_given(stdout, &cal);
        else if (cal.inter_protocol.set)
            print_protocol(stdout, "inter", &fi, inter);
        if (cal.intra_protocol.set)
            print_protocol(stdout, "intra", &fa, intra);
        if (queued)
            print_queue(stdout, m, &cal, &qf);
        if (hosted)
            print_host_queue(stdout, &hf);
        if (cal.has_gamma)
            printf("gamma  %.4g ns/B (%.3g GB/s reduction), R2 %.6f over %d reduce cases\n", gf.gamma * 1e9,
                   gf.gamma > 0 ? 1e-9 / gf.gamma : INFINITY, gf.r2, gf.points);
        else
            printf("gamma  not measured (no reduce cases): 0 in the ring model, absent from the calibration\n");
        printf("\n%-6s %5s  %-18s %6s %12s %14s %14s %10s\n", "class", "case", "mode", "ranks", "bytes",
               "measured(ms)", "fitted(ms)", "residual");
        print_points(stdout, m, inter, "inter");
        print_points(stdout, m, intra, "intra");
        print_points(stdout, m, red, "gamma");
        if (o->out) {
            if (!calfile_write(o->out, &cal, err))
                rc = 1;
            else
                printf("\nwrote %s\n", o->out);
        } else {
            char *text = calfile_format(&cal);
            printf("\n%s", text);
            g_free(text);
        }
    }
    calfile_clear(&cal);
    calfile_clear(&given);
    g_array_free(red, TRUE);
    g_array_free(inter, TRUE);
    g_array_free(intra, TRUE);
    calmeas_free(m);
    return rc;
}

static const CliOpt opts[] = {
    {"out", CLI_OUT, offsetof(CalibOpts, out),
     .help = "write the calibration YAML to FILE (atomically)", .note = "after the table, on stdout"},
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
