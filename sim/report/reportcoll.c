/* reportcoll — the table and JSON of `arsim collective`; see reportcoll.h. */
#include "report/reportcoll.h"
#include "report/report.h"
#include "io/units.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

static const char *node_name(const Topo *t, int node)
{
    return g_ptr_array_index(t->node_names, node);
}

/* Link ids that carried bytes, busiest (longest busy) first, ties by id. */
static GArray *busy_links(const Topo *t, const NetLinkStats *ls)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint l = 0; l < t->links->len; l++)
        if (ls[l].bytes > 0)
            g_array_append_val(ids, l);
    for (guint i = 1; i < ids->len; i++) {   /* insertion sort: stable and deterministic */
        guint v = g_array_index(ids, guint, i), j = i;
        while (j > 0 && ls[g_array_index(ids, guint, j - 1)].busy_ps < ls[v].busy_ps) {
            g_array_index(ids, guint, j) = g_array_index(ids, guint, j - 1);
            j--;
        }
        g_array_index(ids, guint, j) = v;
    }
    return ids;
}

static void links_table(FILE *out, const Topo *t, const ReportCollRow *r)
{
    GArray *ids = busy_links(t, r->links);
    uint64_t total = 0;
    for (guint i = 0; i < ids->len; i++)
        total += r->links[g_array_index(ids, guint, i)].bytes;
    fprintf(out, "    %-24s %14s %12s %8s %12s %6s\n", "link", "bytes", "busy(us)", "util(%)", "peak(B)", "peak#");
    for (guint i = 0; i < ids->len && i < 8; i++) {
        guint l = g_array_index(ids, guint, i);
        const TopoLink *tl = &g_array_index(t->links, TopoLink, l);
        const NetLinkStats *s = &r->links[l];
        char name[64];
        snprintf(name, sizeof name, "%s->%s", node_name(t, tl->from), node_name(t, tl->to));
        fprintf(out, "    %-24s %14" G_GUINT64_FORMAT " %12.3f %8.1f %12" G_GUINT64_FORMAT " %6u\n", name,
                (guint64)s->bytes, s->busy_ps / 1e6, r->time_s > 0 ? 100.0 * s->busy_ps / 1e12 / r->time_s : 0,
                (guint64)s->peak_bytes, s->peak_msgs);
    }
    fprintf(out, "    %u links carried %" G_GUINT64_FORMAT " bytes in all\n", ids->len, (guint64)total);
    g_array_free(ids, TRUE);
}

/* The columns of the table: header, least width (a column widens to its
 * widest cell, so no value runs into the next), left-aligned or not. */
static const struct {
    const char *head;
    int width;
    bool left;
} coll_cols[] = {
    {"size(B)", 14, false}, {"algorithm", 12, true}, {"ranks", 6, false}, {"time(us)", 12, false},
    {"algbw(GB/s)", 12, false}, {"busbw(GB/s)", 12, false}, {"events", 10, false}, {"min(us)", 12, false},
    {"max(us)", 12, false},
};
#define COLL_NCOLS ((int)G_N_ELEMENTS(coll_cols))

/* Row r's cells (g_free each). */
static void coll_cells(const ReportCollRow *r, char *cell[COLL_NCOLS])
{
    cell[0] = g_strdup_printf("%" G_GUINT64_FORMAT, (guint64)r->bytes);
    cell[1] = g_strdup(coll_algo_name(r->algo));
    cell[2] = g_strdup_printf("%d", r->ranks);
    cell[3] = g_strdup_printf("%.3f", r->time_s * 1e6);
    cell[4] = g_strdup_printf("%.4f", r->algbw_Bps / 1e9);
    cell[5] = g_strdup_printf("%.4f", r->busbw_Bps / 1e9);
    cell[6] = g_strdup_printf("%" G_GUINT64_FORMAT, (guint64)r->events);
    cell[7] = g_strdup_printf("%.3f", r->time_min_s * 1e6);
    cell[8] = g_strdup_printf("%.3f", r->time_max_s * 1e6);
}

/* One line of the first ncols cells, each in its column's width. */
static void coll_line(FILE *out, char *const *cell, const int *width, int ncols)
{
    for (int c = 0; c < ncols; c++)
        fprintf(out, coll_cols[c].left ? "%s%-*s" : "%s%*s", c ? " " : "", width[c], cell[c]);
    fputc('\n', out);
}

void report_coll_table(FILE *out, const Topo *t, const ReportCollRow *rows, size_t n)
{
    bool skewed = n > 0 && rows[0].trials > 0;
    int ncols = skewed ? COLL_NCOLS : COLL_NCOLS - 2, width[COLL_NCOLS];
    if (skewed)
        fprintf(out, "ranks issue up to %.3f us apart (uniform draws); time: the median of %d trials, from the first "
                "rank's issue to the last rank's end\n", rows[0].skew_s * 1e6, rows[0].trials);
    char **cells = g_new(char *, (n + 1) * COLL_NCOLS);
    for (int c = 0; c < COLL_NCOLS; c++) {
        cells[c] = g_strdup(coll_cols[c].head);
        width[c] = coll_cols[c].width;
    }
    for (size_t i = 0; i < n; i++)
        coll_cells(&rows[i], cells + (i + 1) * COLL_NCOLS);
    for (size_t k = 0; k < (n + 1) * COLL_NCOLS; k++)
        width[k % COLL_NCOLS] = MAX(width[k % COLL_NCOLS], (int)strlen(cells[k]));
    coll_line(out, cells, width, ncols);
    for (size_t i = 0; i < n; i++) {
        coll_line(out, cells + (i + 1) * COLL_NCOLS, width, ncols);
        if (rows[i].links)
            links_table(out, t, &rows[i]);
    }
    for (size_t k = 0; k < (n + 1) * COLL_NCOLS; k++)
        g_free(cells[k]);
    g_free(cells);
}


void report_coll_json(FILE *out, const Topo *t, const ReportCollRow *rows, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const ReportCollRow *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "algorithm", coll_algo_name(r->algo));
        cJSON_AddNumberToObject(o, "ranks", r->ranks);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddNumberToObject(o, "time_s", r->time_s);
        cJSON_AddNumberToObject(o, "algbw_Bps", r->algbw_Bps);
        cJSON_AddNumberToObject(o, "busbw_Bps", r->busbw_Bps);
        cJSON_AddNumberToObject(o, "events", (double)r->events);
        cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
        if (r->trials > 0) {
            cJSON_AddNumberToObject(o, "skew_s", r->skew_s);
            cJSON_AddNumberToObject(o, "trials", r->trials);
            cJSON_AddNumberToObject(o, "time_min_s", r->time_min_s);
            cJSON_AddNumberToObject(o, "time_max_s", r->time_max_s);
        }
        if (r->links) {
            cJSON *la = cJSON_AddArrayToObject(o, "links");
            GArray *ids = busy_links(t, r->links);
            for (guint i = 0; i < ids->len; i++) {
                guint l = g_array_index(ids, guint, i);
                const TopoLink *tl = &g_array_index(t->links, TopoLink, l);
                const NetLinkStats *s = &r->links[l];
                cJSON *x = cJSON_CreateObject();
                cJSON_AddNumberToObject(x, "link", l);
                cJSON_AddStringToObject(x, "from", node_name(t, tl->from));
                cJSON_AddStringToObject(x, "to", node_name(t, tl->to));
                cJSON_AddNumberToObject(x, "bytes", (double)s->bytes);
                cJSON_AddNumberToObject(x, "messages", (double)s->msgs);
                cJSON_AddNumberToObject(x, "busy_s", s->busy_ps / 1e12);
                cJSON_AddNumberToObject(x, "utilization", r->time_s > 0 ? s->busy_ps / 1e12 / r->time_s : 0);
                cJSON_AddNumberToObject(x, "peak_bytes", (double)s->peak_bytes);
                cJSON_AddNumberToObject(x, "peak_messages", s->peak_msgs);
                cJSON_AddItemToArray(la, x);
            }
            g_array_free(ids, TRUE);
        }
        cJSON_AddItemToArray(arr, o);
    }
    report_print_json(out, arr);
    cJSON_Delete(arr);
}

void report_coll_csv(FILE *out, const ReportCollRow *rows, size_t n)
{
    fputs(REPORTCOLL_CSV_HEADER, out);
    for (size_t i = 0; i < n; i++) {
        const ReportCollRow *r = &rows[i];
        char a[REPORT_NUM_MAX], b[REPORT_NUM_MAX], c[REPORT_NUM_MAX];
        fprintf(out, "%s,%d,%" G_GUINT64_FORMAT ",%s,%s,%s,%" G_GUINT64_FORMAT, coll_algo_name(r->algo), r->ranks,
                (guint64)r->bytes, report_num(a, r->time_s), report_num(b, r->algbw_Bps), report_num(c, r->busbw_Bps),
                (guint64)r->events);
        if (r->trials > 0)
            fprintf(out, ",%s,%d,%s,%s", report_num(a, r->skew_s), r->trials, report_num(b, r->time_min_s),
                    report_num(c, r->time_max_s));
        else
            fputs(",,,,", out);
        fputs(",,,,,,,,,\n", out);   /* op .. nccl_release: an NCCL call's */
    }
}
