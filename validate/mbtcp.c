/* mbtcp — TCP retransmission counters of this network namespace; see mbtcp.h. */
#include "mbtcp.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The value of field `key` in the `prefix` table of a /proc/net file: a
 * header line "Prefix: name name ..." followed by a line of numbers. */
static bool proc_field(const char *path, const char *prefix, const char *key, uint64_t *out)
{
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return false;
    bool found = false;
    gchar **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] && lines[i + 1] && !found; i++) {
        if (!g_str_has_prefix(lines[i], prefix) || !g_str_has_prefix(lines[i + 1], prefix))
            continue;
        gchar **names = g_strsplit_set(lines[i], " ", -1), **vals = g_strsplit_set(lines[i + 1], " ", -1);
        for (int k = 1; names[k] && vals[k] && !found; k++)
            if (strcmp(names[k], key) == 0) {
                *out = g_ascii_strtoull(vals[k], NULL, 10);
                found = true;
            }
        g_strfreev(names);
        g_strfreev(vals);
    }
    g_strfreev(lines);
    g_free(text);
    return found;
}

void mbtcp_read(MbTcp *out)
{
    memset(out, 0, sizeof *out);
    out->ok = proc_field("/proc/net/snmp", "Tcp:", "RetransSegs", &out->retrans) &&
              proc_field("/proc/net/netstat", "TcpExt:", "TCPTimeouts", &out->timeouts);
    if (out->ok && !proc_field("/proc/net/netstat", "TcpExt:", "TCPLossProbes", &out->probes))
        out->probes = 0;
}

bool mbtcp_leader(MPI_Comm comm)
{
    struct stat st;
    unsigned long long mine = stat("/proc/self/ns/net", &st) == 0 ? (unsigned long long)st.st_ino : 0;
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    unsigned long long *all = g_new(unsigned long long, p);
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, comm);
    bool leader = true;
    for (int r = 0; r < rank && leader; r++)
        leader = all[r] != mine;
    g_free(all);
    return leader;
}
