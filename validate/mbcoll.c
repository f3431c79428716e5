/* mbcoll — an arsim schedule over MPI point-to-point (see mbcoll.h). */
#include "mbcoll.h"

#include "mbwait.h"

#include <string.h>

enum { MBCOLL_TAG = 7301 };   /* the one tag schedule messages use */

/* f(r, i): an integer in [0, 65535] that mixes rank and index, so a block
 * sent to the wrong place or reduced twice changes the sum. */
static double input_value(int rank, uint64_t i)
{
    uint64_t x = i * UINT64_C(2654435761) + (uint64_t)rank * UINT64_C(40503) + 17;
    x ^= x >> 29;
    return (double)(x & 0xffff);
}

void mbcoll_fill(double *v, uint64_t count, int rank)
{
    for (uint64_t i = 0; i < count; i++)
        v[i] = input_value(rank, i);
}

void mbcoll_expect(double *v, uint64_t count, int p)
{
    memset(v, 0, sizeof *v * count);
    for (int r = 0; r < p; r++)
        for (uint64_t i = 0; i < count; i++)
            v[i] += input_value(r, i);
}

void mbcoll_add(double *restrict dst, const double *restrict src, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        dst[i] += src[i];
}

uint64_t mbcoll_scratch(const CollSchedule *s, int rank)
{
    const GArray *steps = s->steps[rank];
    uint64_t most = 0;
    for (guint k = 0; k < steps->len; k++) {
        const CollStep *st = &g_array_index(steps, CollStep, k);
        if (st->recv_peer >= 0 && st->recv_len > most)
            most = st->recv_len;
    }
    return most;
}

void mbcoll_exec(const CollSchedule *s, int rank, double *data, double *tmp, MPI_Comm comm, double poll_s)
{
    const GArray *steps = s->steps[rank];
    for (guint k = 0; k < steps->len; k++) {
        const CollStep *st = &g_array_index(steps, CollStep, k);
        MPI_Request req[2];
        int nreq = 0;
        if (st->recv_peer >= 0)
            MPI_Irecv(tmp, (int)st->recv_len, MPI_DOUBLE, st->recv_peer, MBCOLL_TAG, comm, &req[nreq++]);
        if (st->send_peer >= 0)
            MPI_Isend(data + st->send_off, (int)st->send_len, MPI_DOUBLE, st->send_peer, MBCOLL_TAG, comm,
                      &req[nreq++]);
        mbwait_all(nreq, req, poll_s);
        if (st->recv_peer < 0)
            continue;
        if (st->reduce)
            mbcoll_add(data + st->recv_off, tmp, st->recv_len);
        else
            memcpy(data + st->recv_off, tmp, sizeof *tmp * st->recv_len);
    }
}

uint64_t mbcoll_mismatch(const double *a, const double *b, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        if (a[i] != b[i])
            return i;
    return count;
}
