/* trainsel — the algorithm of each sync unit: fixed, the thesis's hybrid
 * rule (layer kind -> algorithm, optional size threshold), per-layer
 * overrides, or `auto` (the lowest predicted all-reduce time on this
 * cluster, with the overlap window shown in the reason); on GPU nodes
 * NCCL's calls among them (train/trainnccl.h). */
#ifndef ARSIM_TRAINSEL_H
#define ARSIM_TRAINSEL_H

#include "coll/commcost.h"
#include "coll/commnccl.h"
#include "train/scenario.h"

/* Fills units[i].algo, .nccl and .reason. nccl: the cluster's NCCL memo
 * (GPU nodes; NULL elsewhere): units of a policy that uses NCCL
 * (trainnccl_used) go through it, each unit's choice filled from it.
 * False + *err if an algorithm does not fit the cluster or NCCL cannot
 * run a unit. */
bool trainsel_select(const Scenario *s, const Policy *p, GArray *units, CommCost *cost, CommNccl *nccl, int batch,
                     char **err);

#endif
