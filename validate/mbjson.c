/* mbjson — the measurements file, written atomically (see mbjson.h). */
#include "mbjson.h"
#include "io/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A JSON string literal of s (quotes, backslashes, control characters). */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* The iteration mode's own keys (after "mode"). */
static void put_iteration(FILE *f, const MbcaseResult *c)
{
    fputs(", \"config\": ", f);
    put_string(f, c->config);
    fputs(", \"policy\": ", f);
    put_string(f, c->policy);
    fprintf(f, ", \"batch\": %d, \"scale\": %.9g, \"warmup\": %d, \"measured\": %d, \"sets\": [", c->batch,
            c->scale, c->warmup, c->measured);
    for (int i = 0; c->sets && c->sets[i]; i++) {
        if (i)
            fputs(", ", f);
        put_string(f, c->sets[i]);
    }
    fputs("], \"overlap\": ", f);
    put_string(f, c->overlap);
    fputs(", \"algorithm\": ", f);
    put_string(f, c->algorithm);
    fprintf(f, ", \"units\": %d, \"elem_bytes\": %d, \"compute_s\": %.9g, \"exposed_s\": %.9g", c->units,
            c->elem_bytes, c->compute_s, c->exposed_s);
}

static void put_case(FILE *f, const MbcaseResult *c)
{
    fputs("    {\"mode\": ", f);
    put_string(f, c->mode);
    if (c->config)
        put_iteration(f, c);
    if (c->klass[0]) {
        fputs(", \"class\": ", f);
        put_string(f, c->klass);
    }
    if (c->algo[0]) {
        fputs(", \"algo\": ", f);
        put_string(f, c->algo);
    }
    if (c->call[0]) {
        fputs(", \"call\": ", f);
        put_string(f, c->call);
    }
    fprintf(f, ", \"ranks\": %d, \"bytes\": %" G_GUINT64_FORMAT, c->ranks, c->bytes);
    if (c->peer_a >= 0)
        fprintf(f, ", \"peers\": [%d, %d]", c->peer_a, c->peer_b);
    if (c->pairs > 1)
        fprintf(f, ", \"pairs\": %d", c->pairs);
    if (c->delay_s >= 0)
        fprintf(f, ", \"delay_s\": %.9g", c->delay_s);
    if (c->gpus_per_node > 0)
        fprintf(f, ", \"gpus_per_node\": %d", c->gpus_per_node);
    if (c->inter[0]) {
        fputs(", \"inter\": ", f);
        put_string(f, c->inter);
    }
    fprintf(f, ", \"time_s\": %.9g, \"reps\": %d, \"min_s\": %.9g, \"max_s\": %.9g, \"measured_s\": %.9g, "
            "\"stable\": %s", c->time_s, c->reps, c->min_s, c->max_s, c->measured_s, c->stable ? "true" : "false");
    if (c->start_spread_s >= 0)
        fprintf(f, ", \"start_spread_s\": %.9g", c->start_spread_s);
    if (c->rep_s) {
        fputs(", \"reps_s\": [", f);
        for (int i = 0; i < c->reps; i++)
            fprintf(f, "%s%.6g", i ? ", " : "", c->rep_s[i]);
        fputc(']', f);
    }
    if (c->verified >= 0)
        fprintf(f, ", \"verified\": %s", c->verified ? "true" : "false");
    if (c->tcp_ok)
        fprintf(f, ", \"tcp\": {\"retrans\": %" G_GUINT64_FORMAT ", \"timeouts\": %" G_GUINT64_FORMAT
                ", \"loss_probes\": %" G_GUINT64_FORMAT ", \"slow_reps\": %d, \"slow_timeout_reps\": %d}",
                (guint64)c->tcp_retrans, (guint64)c->tcp_timeouts, (guint64)c->tcp_probes, c->slow_reps,
                c->slow_timeout_reps);
    fputc('}', f);
}

typedef struct {
    const MbjsonEnv *env;
    const GArray *cases;
} Doc;

static void put_doc(FILE *f, void *ctx)
{
    const MbjsonEnv *env = ((const Doc *)ctx)->env;
    const GArray *cases = ((const Doc *)ctx)->cases;
    fputs("{\n  \"schema\": \"arsim-measurements/1\",\n  \"env\": {", f);
    fprintf(f, "\"ranks\": %d, \"hosts\": %d, \"ranks_per_host\": %d, \"consecutive\": %s,\n    \"mpi_library\": ",
            env->ranks, env->hosts, env->ranks_per_host, env->consecutive ? "true" : "false");
    put_string(f, env->mpi_library);
    fputs(", \"mpi_standard\": ", f);
    put_string(f, env->mpi_standard);
    fputs(",\n    \"date\": ", f);
    put_string(f, env->date);
    fputs(", \"command\": ", f);
    put_string(f, env->command);
    fprintf(f, ", \"poll_s\": %.9g", env->poll_s);
    if (env->cwd) {
        fputs(", \"cwd\": ", f);
        put_string(f, env->cwd);
    }
    fputs(",\n    \"host_names\": [", f);
    for (guint i = 0; i < env->host_names->len; i++) {
        if (i)
            fputs(", ", f);
        put_string(f, g_ptr_array_index(env->host_names, i));
    }
    fputs("]},\n  \"cases\": [\n", f);
    for (guint i = 0; i < cases->len; i++) {
        put_case(f, &g_array_index(cases, MbcaseResult, i));
        fputs(i + 1 < cases->len ? ",\n" : "\n", f);
    }
    fputs("  ]\n}\n", f);
}

bool mbjson_write(const char *path, const MbjsonEnv *env, const GArray *cases, char **err)
{
    Doc doc = {env, cases};
    return fileio_write_with(path, put_doc, &doc, err);
}

void mbjson_now_iso8601(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
