/* units — sizes, rates and times with units (docs/dev/design.md §13.2), and
 * the bound on counts.
 *
 * Sizes: a bare number is bytes; KB (kB)/MB/GB/TB are powers of 10 and
 * KiB/MiB/GiB/TiB powers of 2 (B accepted). Rates in bits per second
 * (powers of 10): bps, Kbps (kbps), Mbps, Gbps, Tbps; b/s, Kb/s, Mb/s,
 * Gb/s, Tb/s (a lower-case b is a bit); bit/s, Kbit/s, Mbit/s, Gbit/s,
 * Tbit/s. In bytes per second: B/s, KB/s (kB/s), MB/s, GB/s, TB/s (an
 * upper-case B is a byte: 450GB/s is 3.6Tb/s). `inf` is an infinitely
 * fast link. Times: ns, us,
 * ms, s (a bare 0 is allowed). Every parser returns false and sets *why to
 * a static "what is wrong; what is expected" text on bad input; it never
 * accepts trailing garbage, negative values, NaN or values that overflow.
 */
#ifndef ARSIM_UNITS_H
#define ARSIM_UNITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* The largest count an input may give: ranks, hosts, nodes, a batch,
 * bytes per element (2^20, so products of two counts stay far inside
 * 64 bits). */
#define UNITS_COUNT_MAX (1 << 20)

bool units_parse_bytes(const char *s, uint64_t *out, const char **why);
/* Out: bytes per second, > 0 (INFINITY for `inf`). */
bool units_parse_rate(const char *s, double *out, const char **why);
/* Out: seconds, >= 0. */
bool units_parse_time(const char *s, double *out, const char **why);
/* Out: a finite double, >= 0. */
bool units_parse_nonneg(const char *s, double *out, const char **why);

/* Human-readable forms for tables: "64 MiB", "10 Gb/s" (a link's rate in
 * bits, as links are sold), "12.3 us". */
void units_fmt_bytes(char *buf, size_t n, uint64_t bytes);
void units_fmt_rate(char *buf, size_t n, double bytes_per_s);
void units_fmt_time(char *buf, size_t n, double seconds);

#endif
