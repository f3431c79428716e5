/* commcost — durations of collectives on an idle cluster, memoized.
 *
 * With one collective in flight at a time (NCCL stream semantics, the
 * default), every collective of a training run starts on an empty network
 * (the previous one ended only when its last message was delivered), so
 * its duration depends only on (algorithm, elements): simulating it once
 * on the event engine and reusing the result is exact. The schedules are
 * cached too, for live runs (several collectives in flight). */
#ifndef ARSIM_COMMCOST_H
#define ARSIM_COMMCOST_H

#include "coll/coll.h"
#include "coll/collexec.h"

typedef struct CommCost CommCost;

/* t must outlive the CommCost; ranks 0..p-1 are hosts 0..p-1. */
CommCost *commcost_new(Topo *t, int p, const CollParams *prm, uint32_t elem_bytes, double gamma);
void commcost_free(CommCost *c);

/* Duration (ps) of algorithm a on `elems` elements, and the mean
 * utilization of the hosts' egress links during it (0..1). False + *err
 * when the algorithm does not fit the cluster or its simulation failed;
 * then *code (unless NULL) says why: SIM_ERR_CLOCK when the collective
 * takes more simulated time than the clock holds, else SIM_ERR_MODEL. */
bool commcost_get(CommCost *c, CollAlgo a, uint64_t elems, simtime_t *dur, double *util, SimErr *code, char **err);
/* The cached schedule of (a, elems); owned by c. */
const CollSchedule *commcost_schedule(CommCost *c, CollAlgo a, uint64_t elems, char **err);
/* The same for collective op (coll.h's CollOp); the two above are these
 * with all-reduce. */
bool commcost_get_op(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, simtime_t *dur, double *util, SimErr *code,
                     char **err);
const CollSchedule *commcost_schedule_op(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, char **err);
/* The bytes that collective serializes onto the egress links of hosts
 * 0..p-1 (every link leaving one of them), measured on its idle run (the
 * memo's; run now if it was not yet). They do not depend on what else is
 * on the network: the same messages cross the same routes, so a live run
 * of it puts the same bytes there. False + *err, *code as commcost_get. */
bool commcost_egress_op(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, double *bytes, SimErr *code, char **err);
/* The mean utilization (0..1) of the egress links of hosts 0..p-1 of t
 * when `bytes` cross them in dur ps: bytes / (their summed capacity x
 * dur); 0 when dur or the capacity is 0. commcost_get's util is this with
 * the idle run's bytes and duration. */
double commcost_util(const Topo *t, int p, double bytes, simtime_t dur);
/* Engine events spent on the memo runs so far. */
uint64_t commcost_events(const CommCost *c);

#endif
