/* calrun — a whole calibration from a measurements file; see calrun.h. */
#include "calib/calrun.h"

#include <math.h>
#include <string.h>

/* The classes of points a calibration fits. */
typedef enum {
    CLASS_INTER,             /* ping-pong inter and ring all-reduce: the inter link class */
    CLASS_INTRA,             /* ping-pong intra: the intra link class */
    CLASS_REDUCE,            /* reduce: γ */
} PointClass;

/* The points of one class, tagged with their case index. */
static GArray *collect(const MeasFile *m, const CalRunOpts *o, PointClass cls)
{
    bool intra = cls == CLASS_INTRA, reduce = cls == CLASS_REDUCE;
    GArray *pts = g_array_new(FALSE, TRUE, sizeof(CalPoint));
    bool one_per_host = m->ranks_per_host <= 1 || m->hosts == m->ranks;
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        CalPoint p = {.ranks = c->ranks, .bytes = c->bytes, .time_s = c->time_s, .tag = c->index};
        if (reduce && c->mode == MEAS_REDUCE)
            p.kind = CALFIT_REDUCE;
        else if (!reduce && c->mode == MEAS_PINGPONG && c->intra == intra && o->fit_pingpong)
            p.kind = CALFIT_PINGPONG;
        else if (!reduce && !intra && c->mode == MEAS_ALLREDUCE && !c->mpi && c->algo == COLL_RING && o->fit_ring &&
                 one_per_host)
            p.kind = CALFIT_RING;
        else
            continue;
        g_array_append_val(pts, p);
    }
    return pts;
}

/* A fitted link class (and, unless no_protocol, its protocol) into *k and
 * *kp; every point's case into cal->used, the dropped ones into
 * cal->outliers. */
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
    const MeasCase *c = &g_array_index(m->cases, MeasCase, g_array_index(pts, CalPoint, 0).tag);
    *err = g_strdup_printf("%s:%d:%d: too few points for the %s fit: %s (pingpong class %s%s)", m->path, c->line,
                           c->col, cls, why, cls, strcmp(cls, "inter") == 0 ? " and ring all-reduce" : "");
    g_free(why);
    return 2;
}

/* The calibration at path into *given: one with an inter protocol; 2 with
 * *err otherwise. */
static int load_protocol(const char *path, CalFile *given, char **err)
{
    calfile_clear(given);   /* calfile_load initialises it afresh */
    if (!calfile_load(path, given, err))
        return 2;
    if (!given->inter_protocol.set) {
        *err = g_strdup_printf("%s:1:1: no inter protocol; expected a calibration whose inter class has one "
                               "(arsim calibrate without --no-protocol writes it)", path);
        return 2;
    }
    return 0;
}

/* The inter protocol of cal taken from given: its eager limit, handshake,
 * control queues, request payload and duplex; the overhead stays the one
 * fitted under them. */
static void take_protocol(CalFile *cal, const CalFile *given, const char *path)
{
    double o = cal->inter_protocol.p.overhead_s;
    cal->inter_protocol = given->inter_protocol;
    cal->inter_protocol.p.overhead_s = o;
    g_free(cal->protocol_from);
    cal->protocol_from = g_strdup(path);
}

/* The eager limit the inter fit runs under: NAN searches it; INFINITY
 * (the given protocol has no handshake, or sends every message eagerly)
 * fits none. */
static double given_eager(const CalRunOpts *o, const Protocol *gp)
{
    if (!o->protocol_path)
        return NAN;
    return gp->handshake == PROTOCOL_HANDSHAKE_RTT && gp->eager_limit != PROTOCOL_INF ? (double)gp->eager_limit
                                                                                       : INFINITY;
}

static void set_str(char **dst, const char *src)
{
    g_free(*dst);
    *dst = g_strdup(src);
}

/* The calibration from the fits: its provenance, classes, protocols,
 * queues and γ, cal.used and cal.outliers sorted. */
static void assemble(const MeasFile *m, const CalFile *given, CalRun *r)
{
    const CalRunOpts *o = &r->opts;
    CalFile *cal = &r->cal;
    bool protocol = !(o->flags & CALFIT_NO_PROTOCOL);
    set_str(&cal->source, o->source);
    set_str(&cal->modes, calrun_modes(o));
    set_str(&cal->meas_date, m->date);
    set_str(&cal->mpi_library, m->mpi_library);
    if (r->inter->len > 0)
        fill_class(&cal->inter, &cal->inter_protocol, &r->inter_fit, protocol, r->inter, cal);
    if (cal->inter_protocol.set && !o->protocol_path)   /* mpibench's MPI has no progress thread */
        cal->inter_protocol.p.progress = PROTOCOL_PROGRESS_IN_MPI;
    if (o->protocol_path && cal->inter.set)
        take_protocol(cal, given, o->protocol_path);
    else
        r->queued = calqueue_fit(m, cal, &r->queue);
    r->hosted = calhostq_fit(m, cal, &r->host);   /* the host's queue, not the library's: fitted either way */
    if (r->intra->len > 0)
        fill_class(&cal->intra, &cal->intra_protocol, &r->intra_fit, protocol, r->intra, cal);
    if (cal->has_gamma) {
        cal->gamma = r->gamma.gamma;
        cal->gamma_r2 = r->gamma.r2;
        cal->gamma_points = r->gamma.points;
        for (guint i = 0; i < r->reduce->len; i++)
            g_array_append_val(cal->used, g_array_index(r->reduce, CalPoint, i).tag);
    }
    g_array_sort(cal->used, cmp_int);
    g_array_sort(cal->outliers, cmp_int);
}

const char *calrun_modes(const CalRunOpts *o)
{
    return o->fit_pingpong && o->fit_ring ? "pingpong,ring" : o->fit_pingpong ? "pingpong" : "ring";
}

int calrun_fit(const MeasFile *m, const CalRunOpts *o, CalRun *out, char **err)
{
    *out = (CalRun){.opts = *o};
    calfile_init(&out->cal);
    out->reduce = collect(m, o, CLASS_REDUCE);
    out->inter = collect(m, o, CLASS_INTER);
    out->intra = collect(m, o, CLASS_INTRA);
    char *why = NULL;
    out->cal.has_gamma = out->reduce->len > 0 && calfit_gamma(out->reduce, &out->gamma, &why);
    g_free(why);
    if (out->inter->len == 0 && out->intra->len == 0) {
        *err = g_strdup_printf("%s:1:1: no %s%s%s cases; expected ping-pong or ring all-reduce measurements to fit "
                               "α and β", m->path, o->fit_pingpong ? "pingpong" : "",
                               o->fit_pingpong && o->fit_ring ? " or " : "", o->fit_ring ? "ring all-reduce" : "");
        return 2;
    }
    CalFile given;
    calfile_init(&given);
    unsigned flags = o->flags;
    int rc = o->protocol_path ? load_protocol(o->protocol_path, &given, err) : 0;
    const Protocol *gp = &given.inter_protocol.p;
    if (o->protocol_path && gp->ack == PROTOCOL_ACK_RTT)
        flags |= CALFIT_ACK;
    if (rc == 0 && out->inter->len > 0)
        rc = fit_class(m, out->inter, out->gamma.gamma, flags, given_eager(o, gp), "inter", &out->inter_fit, err);
    if (rc == 0 && out->intra->len > 0)
        rc = fit_class(m, out->intra, 0, flags, NAN, "intra", &out->intra_fit, err);
    if (rc == 0)
        assemble(m, &given, out);
    calfile_clear(&given);
    return rc;
}

void calrun_clear(CalRun *r)
{
    calfile_clear(&r->cal);
    if (r->reduce)
        g_array_free(r->reduce, TRUE);
    if (r->inter)
        g_array_free(r->inter, TRUE);
    if (r->intra)
        g_array_free(r->intra, TRUE);
    *r = (CalRun){0};
}
