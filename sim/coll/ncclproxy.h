/* ncclproxy — NCCL's proxy threads as serializing queues: one thread a
 * GPU (a host), each doing one operation at a time at a fixed cost. It
 * knows nothing of topology, channels or NCCL's schedules: a caller asks
 * for an operation on host h at time t and is told when it ends.
 *
 * What it stands for (NCCL v2.21.5-1, docs/dev/references-nccl.md, "The
 * proxy thread"): every network send and receive of every channel of a
 * GPU is progressed by that GPU's one proxy thread, one op after another
 * (progressOps); ncclsim.c asks for one operation on the sending GPU's
 * thread before a network slice leaves (its isend) and one on the
 * receiving GPU's after the network delivered it (the test that sees it
 * done and hands it to the GPU).
 *
 * Contract: operations on one host run in the order they are asked for,
 * each starting at max(t, the end of the one before) and ending op_ps
 * later; hosts are independent. With op_ps = 0 an operation ends when it
 * is asked for (the caller may then skip the queue altogether).
 */
#ifndef ARSIM_NCCLPROXY_H
#define ARSIM_NCCLPROXY_H

#include "engine/engine.h"

#include <stdint.h>

typedef struct NcclProxy NcclProxy;

/* nhosts threads, idle, each operation op_ps long; sim (borrowed,
 * outlives it) adds the times (sim_add: an overflow fails its run). */
NcclProxy *ncclproxy_new(Sim *sim, int nhosts, simtime_t op_ps);
void ncclproxy_free(NcclProxy *p);

/* An operation asked for at t on host h (0 <= h < nhosts, t no earlier
 * than any t asked before on h): when it ends, ps. */
simtime_t ncclproxy_take(NcclProxy *p, int h, simtime_t t);

/* Operations done so far on host h. */
uint64_t ncclproxy_ops(const NcclProxy *p, int h);

#endif
