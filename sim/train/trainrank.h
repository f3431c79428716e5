/* trainrank — the per-rank training simulation: every rank runs its own
 * compute stream (its task times scaled by trainvar's factors), and a sync
 * unit's all-reduce starts on a rank when that rank issued it, live on
 * the one shared network (collexec's deferred start), so skew between
 * ranks, stragglers and a busy or faulty network are simulated rather
 * than assumed away. train.c hands a run here when the scenario varies
 * (trainrank_needed); otherwise one stream stands for every rank and the
 * idle-network memo is exact. The dependency rules are trainplan's, one
 * walk per rank; a unit is done for every rank when its collective ended
 * (its last rank's last step). */
#ifndef ARSIM_TRAINRANK_H
#define ARSIM_TRAINRANK_H

#include "train/train.h"

/* Whether s needs the per-rank engine (something differs between ranks,
 * iterations or in the network). */
bool trainrank_needed(const Scenario *s);

/* As train_run_ex, on the per-rank engine: a unit that every rank issues
 * at one instant on an idle network (no other collective, no message in
 * flight, no faults or background, comm.streams 1) takes the memo's
 * duration, exact there (docs/dev/design.md §7.8); every other runs live, as
 * all do with force_live. */
bool trainrank_run(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                   char **err);

#endif
