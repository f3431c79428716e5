/* trainsel — the algorithm of each sync unit: fixed, the thesis's hybrid
 * rule (layer kind -> algorithm, optional size threshold), per-layer
 * overrides, or `auto` (the lowest predicted all-reduce time on this
 * cluster, with the overlap window shown in the reason). */
#ifndef ARSIM_TRAINSEL_H
#define ARSIM_TRAINSEL_H

#include "coll/commcost.h"
#include "train/scenario.h"

/* Fills units[i].algo and .reason. False + *err if an algorithm does not
 * fit the cluster. */
bool trainsel_select(const Scenario *s, const Policy *p, GArray *units, CommCost *cost, int batch, char **err);

#endif
