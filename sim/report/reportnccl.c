/* reportnccl — NCCL rows; see reportnccl.h. */
#include "report/reportnccl.h"
#include "report/report.h"
#include "report/reportcoll.h"

#include <cJSON.h>

void reportnccl_table(FILE *out, const char *cluster, const ReportNcclRow *rows, size_t n)
{
    fprintf(out, "# %s\n", cluster);
    fprintf(out, "%14s %-13s %6s %-8s %-6s %4s %12s %12s %12s %12s %12s %10s\n", "size(B)", "op", "ranks", "algo",
            "proto", "ch", "time(us)", "tuner(us)", "algbw(GB/s)", "busbw(GB/s)", "tuner busbw", "events");
    for (size_t i = 0; i < n; i++) {
        const ReportNcclRow *r = &rows[i];
        fprintf(out, "%14" G_GUINT64_FORMAT " %-13s %6d %-8s %-6s %4d %12.3f %12.3f %12.4f %12.4f %12.4f %10"
                G_GUINT64_FORMAT "\n", (guint64)r->bytes, nccl_op_name(r->op), r->ranks,
                nccl_algo_name(r->choice.algo), nccl_proto_name(r->choice.proto), r->choice.channels, r->time_s * 1e6,
                r->choice.time_s * 1e6, r->algbw_Bps / 1e9, r->busbw_Bps / 1e9, r->tuner_busbw_Bps / 1e9,
                (guint64)r->events);
    }
}

void reportnccl_json(FILE *out, const char *cluster, const char *built, const ReportNcclRow *rows, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const ReportNcclRow *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "algorithm", "nccl");
        cJSON_AddStringToObject(o, "cluster", cluster);
        cJSON_AddStringToObject(o, "cluster_built", built);
        cJSON_AddStringToObject(o, "op", nccl_op_name(r->op));
        cJSON_AddNumberToObject(o, "ranks", r->ranks);
        cJSON_AddNumberToObject(o, "nodes", r->nodes);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddStringToObject(o, "nccl_algo", nccl_algo_name(r->choice.algo));
        cJSON_AddStringToObject(o, "nccl_proto", nccl_proto_name(r->choice.proto));
        cJSON_AddStringToObject(o, "nccl_release", nccl_release_name(r->release));
        cJSON_AddNumberToObject(o, "channels", r->choice.channels);
        cJSON_AddNumberToObject(o, "threads", r->choice.threads);
        cJSON_AddNumberToObject(o, "time_s", r->time_s);
        cJSON_AddNumberToObject(o, "tuner_time_s", r->choice.time_s);
        cJSON_AddNumberToObject(o, "algbw_Bps", r->algbw_Bps);
        cJSON_AddNumberToObject(o, "busbw_Bps", r->busbw_Bps);
        cJSON_AddNumberToObject(o, "tuner_busbw_Bps", r->tuner_busbw_Bps);
        cJSON_AddNumberToObject(o, "events", (double)r->events);
        cJSON_AddNumberToObject(o, "messages", (double)r->msgs);
        cJSON_AddItemToArray(arr, o);
    }
    report_print_json(out, arr);
    cJSON_Delete(arr);
}

void reportnccl_csv(FILE *out, const ReportNcclRow *rows, size_t n)
{
    fputs(REPORTCOLL_CSV_HEADER, out);
    for (size_t i = 0; i < n; i++) {
        const ReportNcclRow *r = &rows[i];
        char a[REPORT_NUM_MAX], b[REPORT_NUM_MAX], c[REPORT_NUM_MAX], d[REPORT_NUM_MAX], e[REPORT_NUM_MAX];
        fprintf(out, "nccl,%d,%" G_GUINT64_FORMAT ",%s,%s,%s,%" G_GUINT64_FORMAT ",,,,,%s,%d,%s,%s,%d,%d,%s,%s,%s\n",
                r->ranks, (guint64)r->bytes, report_num(a, r->time_s), report_num(b, r->algbw_Bps),
                report_num(c, r->busbw_Bps), (guint64)r->events, nccl_op_name(r->op), r->nodes,
                nccl_algo_name(r->choice.algo), nccl_proto_name(r->choice.proto), r->choice.channels,
                r->choice.threads, report_num(d, r->choice.time_s), report_num(e, r->tuner_busbw_Bps),
                nccl_release_name(r->release));
    }
}
