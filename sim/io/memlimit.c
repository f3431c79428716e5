/* memlimit — /proc/meminfo and the refusal line; see memlimit.h. */
#include "io/memlimit.h"

#include <glib.h>
#include <stdio.h>

bool memlimit_available(uint64_t *bytes)
{
    gchar *text = NULL;
    if (!g_file_get_contents("/proc/meminfo", &text, NULL, NULL))
        return false;
    bool ok = false;
    gchar **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] && !ok; i++) {
        unsigned long long kib;
        if (sscanf(lines[i], "MemAvailable: %llu kB", &kib) == 1) {
            *bytes = (uint64_t)kib * 1024;
            ok = true;
        }
    }
    g_strfreev(lines);
    g_free(text);
    return ok;
}

uint64_t memlimit_resolve(uint64_t given)
{
    uint64_t avail;
    if (given > 0)
        return given;
    return memlimit_available(&avail) ? avail : UINT64_MAX;
}

void memlimit_fmt(char *buf, size_t n, uint64_t b)
{
    double mib = (double)b / 1048576.0;
    if (mib < 10240)
        g_snprintf(buf, n, "%.1f MiB", mib);
    else
        g_snprintf(buf, n, "%.1f GiB", mib / 1024);
}

char *memlimit_refusal(const char *what, uint64_t need, uint64_t limit, const char *change)
{
    if (need <= limit)
        return NULL;
    char n[32], l[32];
    memlimit_fmt(n, sizeof n, need);
    memlimit_fmt(l, sizeof l, limit);
    return g_strdup_printf("--max-memory: %s needs about %s of memory (estimate), above the limit of %s "
                           "(--max-memory; default: the available memory); expected %s, or a larger --max-memory",
                           what, n, l, change);
}
