/* simrng — the simulation's random numbers.
 *
 * Counter-based: a draw is a pure function of a seed and the numbers that
 * name it (rank, iteration, task; a flow and its message; a route's hop),
 * mixed by splitmix64's finalizer. There is no generator state, so a draw
 * does not depend on which events ran before it: every policy of a
 * scenario sees the same draws (common random numbers), at any --jobs and
 * in any event order. This is the only source of randomness a run may
 * use; seeds come from the input (a scenario's `seed` keys) or
 * SIM_DEFAULT_SEED. */
#ifndef ARSIM_SIMRNG_H
#define ARSIM_SIMRNG_H

#include <stdint.h>

/* The golden-ratio increment of splitmix64: keys a stream by a small
 * integer (key + i * SIMRNG_GOLDEN). */
#define SIMRNG_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* splitmix64's output function of z: a well-mixed 64-bit hash. */
uint64_t simrng_mix(uint64_t z);

/* The uniform draw in (0, 1] (53 bits) named by (seed, a, b, k). */
double simrng_uniform(uint64_t seed, int64_t a, int64_t b, uint64_t k);

#endif
