/* units — parsing and printing of sizes, rates and times; see units.h. */
#include "io/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *suffix;  /* exact, case-sensitive unit text */
    double factor;       /* multiplier to the base unit */
} Unit;

/* Splits s into a finite non-negative number and a trimmed suffix. */
static bool split_number(const char *s, double *num, const char **suffix)
{
    if (!s)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-' || *s == '+' || *s == '\0')
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0)
        return false;
    /* strtod accepts "inf", "nan" and hex: only plain decimals count here */
    for (const char *p = s; p < end; p++)
        if (!(isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '-' || *p == '+'))
            return false;
    while (isspace((unsigned char)*end))
        end++;
    *num = v;
    *suffix = end;
    return true;
}

static bool suffix_is(const char *suffix, const char *unit)
{
    size_t n = strlen(unit);
    if (strncmp(suffix, unit, n) != 0)
        return false;
    for (const char *p = suffix + n; *p; p++)
        if (!isspace((unsigned char)*p))
            return false;
    return true;
}

static bool lookup(const Unit *units, const char *suffix, double *factor)
{
    for (const Unit *u = units; u->suffix; u++)
        if (suffix_is(suffix, u->suffix)) {
            *factor = u->factor;
            return true;
        }
    return false;
}

bool units_parse_bytes(const char *s, uint64_t *out, const char **why)
{
    static const Unit units[] = {
        {"", 1}, {"B", 1}, {"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
        {NULL, 0}};
    double v, f;
    const char *suf;
    if (!split_number(s, &v, &suf) || !lookup(units, suf, &f)) {
        *why = "not a size; expected a non-negative byte count such as 4096, 64KiB or 1MB";
        return false;
    }
    double b = v * f;
    if (b >= 18446744073709551615.0) {
        *why = "size overflows 64 bits; expected at most 16 EiB";
        return false;
    }
    if (b != floor(b)) {
        *why = "size is not a whole number of bytes; expected an integer byte count";
        return false;
    }
    *out = (uint64_t)b;
    return true;
}

bool units_parse_rate(const char *s, double *out, const char **why)
{
    /* bits: bps, bit/s, b/s (a lower-case b); bytes: B/s (upper-case B) */
    static const Unit units[] = {
        {"bps", 1.0 / 8}, {"Kbps", 1e3 / 8}, {"kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
        {"Tbps", 1e12 / 8}, {"bit/s", 1.0 / 8}, {"Kbit/s", 1e3 / 8}, {"kbit/s", 1e3 / 8}, {"Mbit/s", 1e6 / 8},
        {"Gbit/s", 1e9 / 8}, {"Tbit/s", 1e12 / 8}, {"b/s", 1.0 / 8}, {"Kb/s", 1e3 / 8}, {"kb/s", 1e3 / 8},
        {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8}, {"B/s", 1}, {"KB/s", 1e3}, {"kB/s", 1e3},
        {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12}, {NULL, 0}};
    const char *p = s;
    while (p && isspace((unsigned char)*p))
        p++;
    if (p && (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinite") == 0)) {
        *out = INFINITY;
        return true;
    }
    double v, f;
    const char *suf;
    if (!split_number(s, &v, &suf) || !lookup(units, suf, &f)) {
        *why = "not a rate; expected a positive rate with a unit such as 400Gb/s, 10Gbps, 100Mbit/s, 450GB/s "
               "(bytes) or inf";
        return false;
    }
    if (v <= 0) {
        *why = "rate must be positive; expected a rate above 0 such as 10Gbps";
        return false;
    }
    *out = v * f;
    if (!isfinite(*out)) {
        *why = "rate overflows; expected a finite rate or inf";
        return false;
    }
    return true;
}

bool units_parse_time(const char *s, double *out, const char **why)
{
    static const Unit units[] = {
        {"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {NULL, 0}};
    double v, f;
    const char *suf;
    if (!split_number(s, &v, &suf)) {
        *why = "not a time; expected a non-negative time such as 5us, 1.5ms or 0";
        return false;
    }
    if (*suf == '\0' && v == 0) {
        *out = 0;
        return true;
    }
    if (!lookup(units, suf, &f)) {
        *why = "not a time; expected a non-negative time with a unit (ns, us, ms, s) such as 5us";
        return false;
    }
    *out = v * f;
    if (*out > 1.8e7) {
        *why = "time overflows the simulated clock; expected at most 1.8e7 s";
        return false;
    }
    return true;
}

bool units_parse_nonneg(const char *s, double *out, const char **why)
{
    double v;
    const char *suf;
    if (!split_number(s, &v, &suf) || *suf) {
        *why = "not a number; expected a finite non-negative number";
        return false;
    }
    *out = v;
    return true;
}

void units_fmt_bytes(char *buf, size_t n, uint64_t b)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 6 && fmod(v, 1024) == 0) {
        v /= 1024;
        i++;
    }
    if (v >= 10240 && i < 6) {
        while (v >= 1024 && i < 6) {
            v /= 1024;
            i++;
        }
        snprintf(buf, n, "%.2f %s", v, names[i]);
    } else {
        snprintf(buf, n, "%.0f %s", v, names[i]);
    }
}

void units_fmt_rate(char *buf, size_t n, double Bps)
{
    if (isinf(Bps)) {
        snprintf(buf, n, "inf");
        return;
    }
    double bits = Bps * 8;
    if (bits >= 1e12)
        snprintf(buf, n, "%g Tb/s", bits / 1e12);
    else if (bits >= 1e9)
        snprintf(buf, n, "%g Gb/s", bits / 1e9);
    else if (bits >= 1e6)
        snprintf(buf, n, "%g Mb/s", bits / 1e6);
    else
        snprintf(buf, n, "%g b/s", bits);
}

void units_fmt_time(char *buf, size_t n, double s)
{
    if (s >= 1)
        snprintf(buf, n, "%.4g s", s);
    else if (s >= 1e-3)
        snprintf(buf, n, "%.4g ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, n, "%.4g us", s * 1e6);
    else
        snprintf(buf, n, "%.4g ns", s * 1e9);
}
