/* mbtcp — the host's TCP trouble counters, for telling a slow repetition
 * from a lost segment: Linux's /proc/net/snmp (Tcp: RetransSegs) and
 * /proc/net/netstat (TcpExt: TCPTimeouts, a retransmission timer that
 * fired; TCPLossProbes, a tail-loss probe). Both files are per network
 * namespace, so on the emulated cluster each host (namespace) has its own.
 * Counting a host once: of the ranks that share a network namespace, only
 * the lowest reports (mbtcp_leader). */
#ifndef MBTCP_H
#define MBTCP_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    bool ok;                 /* the counters could be read */
    uint64_t retrans;        /* Tcp: RetransSegs, segments retransmitted */
    uint64_t timeouts;       /* TcpExt: TCPTimeouts, retransmission timeouts */
    uint64_t probes;         /* TcpExt: TCPLossProbes, tail-loss probes */
} MbTcp;

/* This namespace's counters now (ok false when /proc lacks them). */
void mbtcp_read(MbTcp *out);

/* Whether this rank is the lowest of comm in its network namespace.
 * Collective over comm. */
bool mbtcp_leader(MPI_Comm comm);

#endif
