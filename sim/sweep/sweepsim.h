/* sweepsim — the simulator as a sweep runner (sweepexec.h): each call
 * reads its own Scenario from the tree and runs train_run_all on it, so
 * calls on different threads share nothing. */
#ifndef ARSIM_SWEEPSIM_H
#define ARSIM_SWEEPSIM_H

#include "sweep/sweepexec.h"

/* The runner: check = scenario_from_cfg; run = train_run_all rendered as
 * a JSON array of report_result_json objects (no per-layer rows). */
const SweepRunner *sweepsim_runner(void);

/* The same runner whose check also refuses a scenario whose memory
 * estimate (trainmem_check) is above *max_memory bytes; max_memory must
 * outlive the runner's use. */
SweepRunner sweepsim_runner_limited(const uint64_t *max_memory);

#endif
