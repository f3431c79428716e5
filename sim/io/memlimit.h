/* memlimit — the memory bound of a run (--max-memory, by default the
 * machine's available memory) and the one line that refuses a run whose
 * estimate is above it. The estimates themselves come from the layers that
 * own the memory (collexec_mem_estimate, trainmem_estimate); a refusal is
 * bad input (exit 2), decided before anything is allocated. */
#ifndef ARSIM_MEMLIMIT_H
#define ARSIM_MEMLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MemAvailable of /proc/meminfo in bytes; false when it cannot be read. */
bool memlimit_available(uint64_t *bytes);

/* The bound to use: `given` (bytes, > 0) if set, else the available
 * memory, else UINT64_MAX (no bound known). */
uint64_t memlimit_resolve(uint64_t given);

/* An estimate for people, as the refusal writes it: MiB below 10 GiB,
 * else GiB, one decimal ("20.1 MiB"). */
void memlimit_fmt(char *buf, size_t n, uint64_t bytes);

/* NULL when need <= limit; else (g_free) the one line "--max-memory:
 * <what> needs about N of memory (estimate), above the limit of L ...;
 * expected <change>, or a larger --max-memory". */
char *memlimit_refusal(const char *what, uint64_t need, uint64_t limit, const char *change);

#endif
