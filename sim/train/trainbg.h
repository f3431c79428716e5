/* trainbg — other jobs' traffic: the scenario key `background`, flows
 * that share the links with the training job's collectives.
 *
 *   background: [{pattern: permutation | all-to-all | incast,
 *                 hosts: [0, 1, ...] | fraction: 0.5,
 *                 load: 0.3, message: 1MiB, seed: 1}]
 *
 * Each entry picks its hosts (the list, or a seeded `fraction` of the
 * cluster's hosts, at least two; default all) and makes each of them a
 * source: it sends `message`-byte messages with exponential gaps (a
 * Poisson stream, drawn counter-based from the seed) so that it offers
 * `load` times its host link's bandwidth. Destinations: permutation, the
 * next host of a seeded cyclic order of the hosts (a random derangement);
 * all-to-all, every other host in turn; incast, the first host, which
 * sends nothing (a host with an infinitely fast link offers nothing).
 * The streams start at time 0 and stop when the training
 * run ends (trainbg_stop); messages then in flight still arrive.
 */
#ifndef ARSIM_TRAINBG_H
#define ARSIM_TRAINBG_H

#include "io/cfg.h"
#include "net/net.h"

typedef enum { TRAINBG_PERMUTATION, TRAINBG_ALL_TO_ALL, TRAINBG_INCAST } TrainBgPattern;

typedef struct {
    TrainBgPattern pattern;
    GArray *hosts;           /* int hosts in the order the pattern uses; owned; >= 2 */
    double load;             /* offered load per source, as a fraction of its host link's rate, (0, 1] */
    uint64_t message;        /* bytes per message, >= 1 */
    uint64_t seed;           /* the draws' seed */
} TrainBgFlow;

/* Appends the entries of `list` (NULL or null: none) to out (TrainBgFlow,
 * with its clear function set by trainbg_flows_new) for a cluster of
 * `hosts` hosts. */
bool trainbg_read(CfgNode *list, int hosts, GArray *out, char **err);
/* An empty GArray of TrainBgFlow that frees their hosts. */
GArray *trainbg_flows_new(void);

typedef struct TrainBg TrainBg;

/* Starts the flows (borrowed; they outlive the result) on net over t now;
 * t's hosts are GPUs, gpus_per_node (>= 1) of them a node, and a source
 * offers its load against its node's NIC (its first link when 1). */
TrainBg *trainbg_start(Sim *sim, Net *net, Topo *t, int gpus_per_node, const GArray *flows);
/* No new message from now on. */
void trainbg_stop(TrainBg *b);
/* Messages the background sent so far. */
uint64_t trainbg_messages(const TrainBg *b);
void trainbg_free(TrainBg *b);

#endif
