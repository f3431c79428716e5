/* mbcase — repeat one case until its median is stable (see mbcase.h). */
#include "mbcase.h"

#include "mbtcp.h"
#include "mbwait.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MBCASE_SLOW 3.0   /* a repetition this many times the median so far counts as slow */

/* Timer thread: the case ran past its hard limit. Runs on its own thread,
 * so it may format; it ends the process without MPI_Finalize, which makes
 * mpirun end the whole job. */
static void watchdog_fire(union sigval sv)
{
    const MbcaseWatchdog *w = sv.sival_ptr;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "mpibench: %s: timed out after %.3g s on rank %d; aborting the run\n",
                     w->what, w->limit_s, w->rank);
    if (n > 0 && write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
        n = 0;
    _exit(3);
}

bool mbcase_watchdog_init(MbcaseWatchdog *w, int rank)
{
    memset(w, 0, sizeof *w);
    w->rank = rank;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = watchdog_fire;
    ev.sigev_value.sival_ptr = w;
    w->armed_ok = timer_create(CLOCK_MONOTONIC, &ev, &w->timer) == 0;
    return w->armed_ok;
}

void mbcase_watchdog_free(MbcaseWatchdog *w)
{
    if (w->armed_ok)
        timer_delete(w->timer);
    w->armed_ok = false;
}

static void watchdog_arm(MbcaseWatchdog *w, const char *what, double limit_s)
{
    if (!w || !w->armed_ok)
        return;
    g_strlcpy(w->what, what, sizeof w->what);
    w->limit_s = limit_s;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_value.tv_sec = (time_t)limit_s;
    its.it_value.tv_nsec = (long)((limit_s - floor(limit_s)) * 1e9);
    timer_settime(w->timer, 0, &its, NULL);
}

static void watchdog_disarm(MbcaseWatchdog *w)
{
    if (!w || !w->armed_ok)
        return;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    timer_settime(w->timer, 0, &its, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool mbcase_parse_count(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

double mbcase_median(const double *v, int n)
{
    double *c = g_memdup2(v, sizeof *v * (gsize)n);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    g_free(c);
    return m;
}

void mbcase_result_init(MbcaseResult *r, const char *mode)
{
    memset(r, 0, sizeof *r);
    g_strlcpy(r->mode, mode, sizeof r->mode);
    r->peer_a = r->peer_b = -1;
    r->delay_s = -1;
    r->start_spread_s = -1;
    r->verified = -1;
}

void mbcase_result_clear(MbcaseResult *r)
{
    g_clear_pointer(&r->rep_s, g_free);
}

/* Stable: at least min_reps ran, for at least min_time_s (measured_s: the
 * time the measured repetitions took so far), and the median of all n
 * repetitions is within tol of the median of the first n - 2. */
static bool is_stable(const MbcaseRule *rule, const double *t, int n, double measured_s)
{
    if (n < rule->min_reps || n < 3 || measured_s < rule->min_time_s)
        return false;
    double now = mbcase_median(t, n), before = mbcase_median(t, n - 2);
    return now > 0 ? fabs(now - before) <= rule->tol * now : before == 0;
}

/* The TCP counters' growth since *from, summed over the hosts of comm (one
 * leader each); out->tcp_ok only if every host could read them. */
static void tcp_total(MPI_Comm comm, bool leader, const MbTcp *from, MbcaseResult *out)
{
    MbTcp now;
    mbtcp_read(&now);
    bool ok = now.ok && from->ok;
    unsigned long long mine[4] = {0, 0, 0, ok ? 0 : 1}, sum[4];
    if (leader && ok) {
        mine[0] = now.retrans - from->retrans;
        mine[1] = now.timeouts - from->timeouts;
        mine[2] = now.probes - from->probes;
    }
    MPI_Allreduce(mine, sum, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    out->tcp_ok = sum[3] == 0;
    out->tcp_retrans = sum[0];
    out->tcp_timeouts = sum[1];
    out->tcp_probes = sum[2];
}

void mbcase_stamp(struct timespec *ts)
{
    clock_gettime(CLOCK_REALTIME, ts);
}

void mbcase_measure(const MbcaseRule *rule, MbcaseWatchdog *w, const char *what, MPI_Comm comm,
                    MbcaseRepFn fn, void *ctx, const struct timespec *stamp, MbcaseResult *out)
{
    bool leader = mbtcp_leader(comm);
    /* Stamps become seconds since rank 0's whole second at the case's start,
     * so a double keeps them to the nanosecond. */
    long long base = 0;
    if (stamp) {
        struct timespec now;
        mbcase_stamp(&now);
        base = (long long)now.tv_sec;
        MPI_Bcast(&base, 1, MPI_LONG_LONG, 0, comm);
    }
    watchdog_arm(w, what, rule->timeout_s);
    double start = MPI_Wtime();
    for (int i = 0; i < rule->warmup; i++)
        fn(ctx);
    double *t = g_new(double, rule->max_reps), *spread = stamp ? g_new(double, rule->max_reps) : NULL;
    int n = 0, slow = 0, slow_timeouts = 0;
    bool stable = false;
    MbTcp first, last;
    mbtcp_read(&first);
    last = first;
    double measured_start = MPI_Wtime(), measured = 0;
    while (n < rule->max_reps) {
        /* agreed[0]: this repetition's time; agreed[1]: time in the case;
         * agreed[2]: time since the first measured repetition began;
         * with stamps, agreed[3] and -agreed[4]: the latest and the
         * earliest start. */
        double rep = fn(ctx), now = MPI_Wtime();
        double s = stamp ? (double)((long long)stamp->tv_sec - base) + 1e-9 * (double)stamp->tv_nsec : 0;
        double mine[5] = {rep, now - start, now - measured_start, s, -s}, agreed[5];
        MPI_Request req;
        MPI_Iallreduce(mine, agreed, stamp ? 5 : 3, MPI_DOUBLE, MPI_MAX, comm, &req);
        mbwait_all(1, &req, rule->poll_s);
        if (spread)
            spread[n] = agreed[3] + agreed[4];
        t[n++] = agreed[0];
        measured = agreed[2];
        /* A slow repetition (above MBCASE_SLOW x the median so far, every rank
         * agreeing): did some host's retransmission timer fire since the
         * last look? Read only then, so fast cases pay nothing. */
        if (n > 1 && agreed[0] > MBCASE_SLOW * mbcase_median(t, n - 1)) {
            MbTcp tcp;
            mbtcp_read(&tcp);
            unsigned long long d = tcp.ok && last.ok ? tcp.timeouts - last.timeouts : 0, any;
            MPI_Allreduce(&d, &any, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
            slow++;
            slow_timeouts += any > 0;
            last = tcp;
        }
        stable = is_stable(rule, t, n, measured);
        if (stable || agreed[1] >= rule->case_time_s)
            break;
    }
    watchdog_disarm(w);
    tcp_total(comm, leader, &first, out);
    out->slow_reps = slow;
    out->slow_timeout_reps = slow_timeouts;
    out->reps = n;
    out->stable = stable;
    out->measured_s = measured;
    out->time_s = mbcase_median(t, n);
    out->start_spread_s = spread ? mbcase_median(spread, n) : -1;
    out->min_s = out->max_s = t[0];
    for (int i = 1; i < n; i++) {
        out->min_s = fmin(out->min_s, t[i]);
        out->max_s = fmax(out->max_s, t[i]);
    }
    g_free(out->rep_s);
    out->rep_s = g_renew(double, t, n);
    g_free(spread);
}
