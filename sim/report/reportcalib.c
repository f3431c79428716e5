/* reportcalib — the tables of `arsim calibrate`; see reportcalib.h. */
#include "report/reportcalib.h"

#include <math.h>
#include <stdio.h>

static const MeasCase *case_of(const MeasFile *m, const CalPoint *p)
{
    return &g_array_index(m->cases, MeasCase, p->tag);
}

/* The residual rows of one class's points. */
static void print_points(GString *out, const MeasFile *m, const GArray *pts, const char *cls)
{
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        char *lab = calmeas_case_label(case_of(m, p));
        g_string_append_printf(out, "%-6s %5d  %-18s %6d %12" G_GUINT64_FORMAT " %14.4f %14.4f %+9.2f%%%s\n",
                               cls, p->tag, lab, p->ranks, p->bytes, p->time_s * 1e3, p->pred_s * 1e3,
                               100 * (p->time_s - p->pred_s) / p->time_s, p->used ? "" : "  outlier, not fitted");
        g_free(lab);
    }
}

/* The fit table's row of a class. */
static void print_class(GString *out, const char *name, const CalLinkFit *f)
{
    g_string_append_printf(out, "%-6s %10.3f %11.5f %14.2f %12.0f %10.6f %8.2f%% %7d %8d\n", name,
                           f->alpha_s * 1e6, f->beta * 1e9, f->beta > 0 ? 1e-6 / f->beta : INFINITY,
                           f->burst_bytes, f->r2, 100 * f->rms_rel, f->points, f->dropped);
}

/* The protocol line of a class: what the fit found, and where between the
 * measured message sizes the handshake's step is. */
static void print_protocol(GString *out, const char *name, const CalLinkFit *f, const GArray *pts)
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
        g_string_append_printf(out,
            "protocol %s: eager_limit %" G_GUINT64_FORMAT " B (a handshake from there on; the largest eager size "
            "measured is %.0f B), handshake rtt, ack %s, overhead %.3f us, progress in_mpi (not fitted: MPI "
            "without a progress thread, as mpibench runs it, handles control messages only inside MPI calls)\n",
            name, (guint64)f->eager_limit, below,
            f->ack ? "rtt (a step of 4 alpha: an acknowledgement and a confirmation follow the data)"
                   : "none (a step of 2 alpha)",
            f->overhead_s * 1e6);
    else
        g_string_append_printf(out,
            "protocol %s: no handshake step seen up to %.0f B: eager_limit inf, handshake none; overhead 0 "
            "(alpha holds alpha + 2o: without a handshake the two cannot be told apart)\n", name, most);
}

/* The protocol line when --protocol gave it. */
static void print_given(GString *out, const CalFile *cal)
{
    char *p = protocol_format(&cal->inter_protocol.p);
    g_string_append_printf(out,
        "protocol inter: from %s (not fitted here; alpha, beta, the burst and the overhead fitted under its eager "
        "limit and handshake): %s\n", cal->protocol_from, p);
    g_free(p);
}

/* The β line of a class: the largest rings' or the large sizes' slope,
 * and whether β was held there. */
static void print_beta(GString *out, const char *name, const CalLinkFit *f, bool free_beta)
{
    if (free_beta)
        g_string_append_printf(out, "beta %s: free (--free-beta)\n", name);
    else if (isfinite(f->beta_ring)) {
        g_string_append_printf(out,
            "beta %s: held at the largest rings' slope, %.5f ns/B (%.2f MB/s): the rate with every link busy both "
            "ways", name, f->beta_ring * 1e9, 1e-6 / f->beta_ring);
        if (isfinite(f->beta_slope))
            g_string_append_printf(out, " (the large messages' slope: %.5f ns/B, %+.2f %%; --no-ring-beta uses it)",
                                   f->beta_slope * 1e9, 100 * (f->beta_slope / f->beta_ring - 1));
        g_string_append_c(out, '\n');
    } else if (!isfinite(f->beta_slope))
        g_string_append_printf(out, "beta %s: free (fewer than 2 large sizes for a slope)\n", name);
    else if (f->beta_held)
        g_string_append_printf(out,
            "beta %s: held at the large messages' slope, %.5f ns/B (%.2f MB/s): fitted free it strayed more than "
            "10 %% from it\n", name, f->beta_slope * 1e9, 1e-6 / f->beta_slope);
    else
        g_string_append_printf(out,
            "beta %s: free, within 10 %% of the large messages' slope %.5f ns/B (%.2f MB/s)\n", name,
            f->beta_slope * 1e9, 1e-6 / f->beta_slope);
}

/* The peak line of a class with a burst: the rate its credit passes at. */
static void print_peak(GString *out, const char *name, const CalLinkFit *f, bool no_peak)
{
    if (!(f->burst_bytes > 0))
        return;
    if (f->peak_Bps > 0)
        g_string_append_printf(out,
            "peak %s: the burst's credit passes at %.2f MB/s (%.3f ns/B), not at once: a message takes alpha + "
            "max(n/peak, (n - burst) beta), n/peak up to %.0f B\n", name, f->peak_Bps * 1e-6, 1e9 / f->peak_Bps,
            f->burst_bytes * f->peak_Bps / (f->peak_Bps - 1 / f->beta));
    else
        g_string_append_printf(out, "peak %s: none%s (the burst's credit passes at once)\n", name,
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

/* The control queue's settings: the handshake the exchange cases showed,
 * the queue of each end, the request's payload, the duplex. */
static void print_control_queue(GString *out, const Protocol *pr, const CalQueueFit *f)
{
    char lo[32], hi[32];
    if (f->handshake_found)
        g_string_append_printf(out,
            "protocol inter from the exchange cases: a late partner's messages wait from %" G_GUINT64_FORMAT
            " B on: eager_limit %" G_GUINT64_FORMAT " B, handshake rtt, overhead 0\n",
            (guint64)f->eager_limit, (guint64)f->eager_limit);
    if (pr->handshake != PROTOCOL_HANDSHAKE_RTT)
        g_string_append(out, "exchange cases: no handshake there either (eager kept), ");
    else if (f->control_queue[PROTOCOL_FROM_LOWER] != f->control_queue[PROTOCOL_FROM_HIGHER])
        g_string_append_printf(out,
            "control_queue inter: %s from the lower rank, %s from the higher (a clear-to-send the pair's lower or "
            "higher rank sends waits behind at most that much queued data per link), ",
            queue_text(f->control_queue[PROTOCOL_FROM_LOWER], lo),
            queue_text(f->control_queue[PROTOCOL_FROM_HIGHER], hi));
    else if (f->control_queue[0] == PROTOCOL_INF)
        g_string_append(out,
            "control_queue inter: inf (a clear-to-send waits behind all data queued ahead of it), ");
    else
        g_string_append_printf(out,
            "control_queue inter: %" G_GUINT64_FORMAT " B (a clear-to-send waits behind at most that much queued "
            "data per link), ", (guint64)f->control_queue[0]);
    if (pr->handshake == PROTOCOL_HANDSHAKE_RTT && pr->rts_payload == PROTOCOL_RTS_EAGER)
        g_string_append_printf(out,
            "rts_payload eager (a request-to-send carries the message's first %" G_GUINT64_FORMAT " B), ",
            (guint64)protocol_rts_bytes(pr, UINT64_MAX));
    if (pr->handshake == PROTOCOL_HANDSHAKE_RTT && pr->duplex == PROTOCOL_DUPLEX_HALF)
        g_string_append(out, "duplex half (an exchange's two directions take turns however its ends start), ");
}

/* The control queue line and the exchange cases under it. */
static void print_queue(GString *out, const MeasFile *m, const CalFile *cal, const CalQueueFit *f)
{
    print_control_queue(out, &cal->inter_protocol.p, f);
    g_string_append_printf(out, "rms.err %.2f%% over %d exchange cases:", 100 * f->rms_rel, f->points);
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        if (c->mode != MEAS_EXCHANGE || c->intra)
            continue;
        char *why = NULL;
        double t = calqueue_exchange_time(cal, c, &why);
        g_free(why);
        g_string_append_printf(out, " %" G_GUINT64_FORMAT " B %.3g ms late%s %.3f/%.3f ms", (guint64)c->bytes,
                               c->delay_s * 1e3, c->late_lower ? " (lower rank)" : "", c->time_s * 1e3, t * 1e3);
    }
    g_string_append(out, " (measured/fitted)\n");
}

/* The host queue line. */
static void print_host_queue(GString *out, const CalHostQueueFit *f)
{
    char q[32];
    if (f->kept)
        g_string_append_printf(out,
            "host_queue inter: %s (a control message waits behind at most that much of its host's other outgoing "
            "data), rms.err %.2f%% over %d ring cases of 3 ranks or more from their start spread (%.2f%% with 0)\n",
            queue_text(f->host_queue, q), 100 * f->rms_rel, f->points, 100 * f->rms_rel_zero);
    else
        g_string_append_printf(out,
            "host_queue inter: 0 (a control message passes its host's other outgoing data; the best, %s, did not "
            "halve the rms.err of %d ring cases of 3 ranks or more: rms.err %.2f%%, %.2f%% with 0)\n",
            queue_text(f->host_queue, q), f->points, 100 * f->rms_rel, 100 * f->rms_rel_zero);
}

/* The header line and the fit table's column titles. */
static void header(GString *out, const MeasFile *m, const CalRun *r)
{
    unsigned flags = r->opts.flags;
    g_string_append_printf(out, "calibration of %s: %s; %d rank%s on %d host%s; fit %s%s%s\n\n", m->path,
                           m->mpi_library[0] ? m->mpi_library : "MPI library unknown", m->ranks,
                           m->ranks == 1 ? "" : "s", m->hosts, m->hosts == 1 ? "" : "s", r->cal.modes,
                           flags & CALFIT_NO_BURST ? " (no burst term)" : "",
                           flags & CALFIT_NO_PROTOCOL ? " (no protocol)" : "");
    g_string_append_printf(out, "%-6s %10s %11s %14s %12s %10s %9s %7s %8s\n", "class", "alpha(us)", "beta(ns/B)",
                           "goodput(MB/s)", "burst(B)", "R2", "rms.err", "points", "outliers");
}

/* The fit table's rows and the lines of each setting, in a fixed order:
 * classes, β, peak, protocol, queues, γ. */
static void settings(GString *out, const MeasFile *m, const CalRun *r)
{
    const CalFile *cal = &r->cal;
    bool free_beta = r->opts.flags & CALFIT_FREE_BETA, no_peak = r->opts.flags & CALFIT_NO_PEAK;
    if (cal->inter.set)
        print_class(out, "inter", &r->inter_fit);
    if (cal->intra.set)
        print_class(out, "intra", &r->intra_fit);
    if (cal->inter.set)
        print_beta(out, "inter", &r->inter_fit, free_beta);
    if (cal->intra.set)
        print_beta(out, "intra", &r->intra_fit, free_beta);
    if (cal->inter.set)
        print_peak(out, "inter", &r->inter_fit, no_peak);
    if (cal->intra.set)
        print_peak(out, "intra", &r->intra_fit, no_peak);
    if (cal->inter_protocol.set && r->opts.protocol_path)
        print_given(out, cal);
    else if (cal->inter_protocol.set)
        print_protocol(out, "inter", &r->inter_fit, r->inter);
    if (cal->intra_protocol.set)
        print_protocol(out, "intra", &r->intra_fit, r->intra);
    if (r->queued)
        print_queue(out, m, cal, &r->queue);
    if (r->hosted)
        print_host_queue(out, &r->host);
    const CalGammaFit *gf = &r->gamma;
    if (cal->has_gamma)
        g_string_append_printf(out, "gamma  %.4g ns/B (%.3g GB/s reduction), R2 %.6f over %d reduce cases\n",
                               gf->gamma * 1e9, gf->gamma > 0 ? 1e-9 / gf->gamma : INFINITY, gf->r2, gf->points);
    else
        g_string_append(out, "gamma  not measured (no reduce cases): 0 in the ring model, absent from the "
                             "calibration\n");
}

char *reportcalib_text(const MeasFile *m, const CalRun *r)
{
    GString *out = g_string_new(NULL);
    header(out, m, r);
    settings(out, m, r);
    g_string_append_printf(out, "\n%-6s %5s  %-18s %6s %12s %14s %14s %10s\n", "class", "case", "mode", "ranks",
                           "bytes", "measured(ms)", "fitted(ms)", "residual");
    print_points(out, m, r->inter, "inter");
    print_points(out, m, r->intra, "intra");
    print_points(out, m, r->reduce, "gamma");
    return g_string_free(out, FALSE);
}
