/* simrng — the simulation's counter-based random numbers; see simrng.h. */
#include "engine/simrng.h"

uint64_t simrng_mix(uint64_t z)
{
    z += SIMRNG_GOLDEN;
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

double simrng_uniform(uint64_t seed, int64_t a, int64_t b, uint64_t k)
{
    uint64_t h = simrng_mix(seed);
    h = simrng_mix(h ^ (uint64_t)(uint32_t)a);
    h = simrng_mix(h ^ (uint64_t)(uint32_t)b);
    h = simrng_mix(h ^ k);
    return ((double)(h >> 11) + 1.0) / 9007199254740992.0;   /* (0, 1]: 53 bits */
}
