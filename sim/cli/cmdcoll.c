/* cmdcoll — `arsim collective`; see cmdcoll.h. */
#include "cli/cmdcoll.h"
#include "coll/collexec.h"
#include "report/reportcoll.h"
#include "net/topocfg.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cmdcoll_run(const CmdCollOpts *o, FILE *out, char **err)
{
    TopoSpec spec;
    topo_spec_init(&spec);
    if (o->topology) {
        if (!topocfg_load(o->topology, &spec, err)) {
            topo_spec_clear(&spec);
            return 2;
        }
    } else {
        spec.kind = TOPO_STAR;
        spec.hosts = o->ranks > 0 ? o->ranks : 8;
    }
    if (o->set_bw)
        spec.link.bw_Bps = o->link.bw_Bps;
    if (o->set_lat)
        spec.link.latency_s = o->link.latency_s;
    if (o->set_packet)
        spec.packet_bytes = o->packet;
    Protocol *classes[] = {&spec.protocol, spec.intra_protocol_set ? &spec.intra_protocol : NULL};
    for (size_t i = 0; i < G_N_ELEMENTS(classes); i++) {
        if (!classes[i])
            continue;
        if (o->set_eager)
            classes[i]->eager_limit = o->proto.eager_limit;
        if (o->set_handshake)
            classes[i]->handshake = o->proto.handshake;
        if (o->set_overhead)
            classes[i]->overhead_s = o->proto.overhead_s;
        if (o->set_segment)
            classes[i]->segment_bytes = o->proto.segment_bytes;
    }
    char *why = NULL;
    Topo *t = topo_new(&spec, &why);
    topo_spec_clear(&spec);
    if (!t) {
        *err = g_strdup_printf("%s: %s", o->topology ? o->topology : "--ranks", why);
        g_free(why);
        return 2;
    }
    int p = o->ranks > 0 ? o->ranks : t->nhosts;
    if (p > t->nhosts) {
        *err = g_strdup_printf("--ranks: %d ranks but the topology has %d hosts; expected at most %d", p,
                               t->nhosts, t->nhosts);
        topo_free(t);
        return 2;
    }
    CollParams prm = o->prm;
    if (o->algo == COLL_HIERARCHICAL && prm.gpus_per_node <= 1)
        prm.gpus_per_node = t->gpus_per_node;
    if (o->algo == COLL_TORUS2D && prm.torus_x == 0 && t->torus_x * t->torus_y == p) {
        prm.torus_x = t->torus_x;
        prm.torus_y = t->torus_y;
    }
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(ReportCollRow));
    int rc = 0;
    for (guint i = 0; i < o->sizes->len; i++) {
        ReportCollRow r = {.algo = o->algo, .ranks = p, .bytes = g_array_index(o->sizes, uint64_t, i)};
        double w0 = wall_now();
        if (o->links)
            r.links = g_new0(NetLinkStats, t->links->len);
        r.time_s = collexec_time_links(t, o->algo, &prm, p, r.bytes, o->elem_bytes, o->gamma, &r.events, r.links, &why);
        r.wall_s = wall_now() - w0;
        if (r.time_s < 0) {
            g_free(r.links);
            if (strstr(why, "overflow") || strstr(why, "2^6"))
                *err = g_strdup_printf("--size: %s; expected a smaller --size, a faster --bandwidth or a smaller "
                                       "--gamma", why);
            else if (strstr(why, "; expected") && g_str_has_prefix(why, coll_algo_name(o->algo)))
                *err = g_strdup_printf("--algo: %s", why);
            else if (strstr(why, "; expected"))
                *err = g_strdup_printf("--algo: %s: %s", coll_algo_name(o->algo), why);
            else
                *err = g_strdup_printf("--algo: %s: %s; expected parameters that fit the algorithm",
                                       coll_algo_name(o->algo), why);
            g_free(why);
            rc = 2;
            break;
        }
        r.algbw_Bps = r.time_s > 0 ? (double)r.bytes / r.time_s : 0;
        r.busbw_Bps = p > 1 ? r.algbw_Bps * 2.0 * (p - 1) / p : 0;
        g_array_append_val(rows, r);
    }
    if (rc == 0) {
        if (o->json)
            report_coll_json(out, t, (const ReportCollRow *)rows->data, rows->len);
        else
            report_coll_table(out, t, (const ReportCollRow *)rows->data, rows->len);
    }
    for (guint i = 0; i < rows->len; i++)
        g_free(g_array_index(rows, ReportCollRow, i).links);
    g_array_free(rows, TRUE);
    topo_free(t);
    return rc;
}
