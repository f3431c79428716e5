/* netfault — degraded and failed links: the scenario key `faults`, read
 * against a topology, and their effect on a running Net.
 *
 *   faults: [{link: NAME | {a: NODE, b: NODE}, at: TIME,
 *             bandwidth: RATE | latency: TIME | down: true, until: TIME}]
 *
 * NAME is a directed link as `arsim collective --links` prints it
 * ("h3->sw0"); {a, b} is the cable between two nodes, both directions. A
 * slow NIC is a slow host link. From `at` (default 0) until `until`
 * (default: the end of the run) the link has the bandwidth or latency
 * given (a message already on it keeps its times), or is down: a message
 * sent while a link of its route is down takes the shortest path over the
 * links that are up instead (breadth-first over link ids, so the choice
 * is deterministic; a fat-tree has such paths). Faults on one link apply
 * in list order, the last active one winning. A down link whose loss
 * leaves some host without a path to another (a star's host link), with
 * the other down links of overlapping time, is an error at its position:
 * the run would hang, not slow down.
 */
#ifndef ARSIM_NETFAULT_H
#define ARSIM_NETFAULT_H

#include "io/cfg.h"
#include "net/net.h"

typedef enum { NETFAULT_BANDWIDTH, NETFAULT_LATENCY, NETFAULT_DOWN } NetFaultKind;

typedef struct {
    uint32_t link[2];        /* directed link ids */
    int nlinks;              /* 1 (a NAME) or 2 ({a, b}: both directions) */
    NetFaultKind kind;
    double bw_Bps;           /* NETFAULT_BANDWIDTH: bytes per second, > 0 */
    double latency_s;        /* NETFAULT_LATENCY: seconds, >= 0 */
    double at_s;             /* when it begins, s, >= 0 */
    double until_s;          /* when it ends, s, > at_s (INFINITY: never) */
} NetFault;

/* Appends the faults of `list` (a sequence; NULL or null: none) to out
 * (NetFault), their links looked up in t. False and *err at the position
 * of a bad entry (unknown link, impossible time or rate, a down link that
 * cuts a host off). */
bool netfault_read(CfgNode *list, const Topo *t, GArray *out, char **err);

typedef struct NetFaults NetFaults;

/* Schedules the faults (NetFault, borrowed; outlives the result) on net
 * over t from sim->now on: rates and latencies change at their times, and
 * routes crossing a down link are replaced (net_set_router). Free it
 * after the run, with the Net still alive or already freed. */
NetFaults *netfault_start(Sim *sim, Net *net, Topo *t, const GArray *faults);
void netfault_free(NetFaults *f);

#endif
