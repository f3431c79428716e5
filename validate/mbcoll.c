/* mbcoll — an arsim schedule over MPI point-to-point (see mbcoll.h). */
#include "mbcoll.h"

#include "mbwait.h"

#include <string.h>

enum { MBCOLL_TAG = 7301 };   /* the one tag mbcoll_exec's messages use */

/* f(r, i): an integer in [0, 65535] that mixes rank and index, so a block
 * sent to the wrong place or reduced twice changes the sum. */
static uint32_t input_bits(int rank, uint64_t i)
{
    uint64_t x = i * UINT64_C(2654435761) + (uint64_t)rank * UINT64_C(40503) + 17;
    x ^= x >> 29;
    return (uint32_t)(x & 0xffff);
}

static double input_value(int rank, uint64_t i)
{
    return (double)input_bits(rank, i);
}

size_t mbcoll_elem_size(MbcollElem e)
{
    return e == MBCOLL_F64 ? 8 : e == MBCOLL_F32 ? 4 : 2;
}

static MPI_Datatype elem_type(MbcollElem e)
{
    return e == MBCOLL_F64 ? MPI_DOUBLE : e == MBCOLL_F32 ? MPI_FLOAT : MPI_UINT16_T;
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

void mbcoll_fill_elem(void *v, MbcollElem e, uint64_t count, int rank, uint64_t first)
{
    if (e == MBCOLL_F64) {
        double *d = v;
        for (uint64_t i = 0; i < count; i++)
            d[i] = input_value(rank, first + i);
    } else if (e == MBCOLL_F32) {
        float *f = v;
        for (uint64_t i = 0; i < count; i++)
            f[i] = (float)(input_bits(rank, first + i) & 0xff);
    } else {
        uint16_t *u = v;
        for (uint64_t i = 0; i < count; i++)
            u[i] = (uint16_t)input_bits(rank, first + i);
    }
}

uint64_t mbcoll_check_elem(const void *v, MbcollElem e, uint64_t count, int p, uint64_t first)
{
    for (uint64_t i = 0; i < count; i++) {
        uint64_t sum = 0;
        for (int r = 0; r < p; r++)
            sum += e == MBCOLL_F32 ? (input_bits(r, first + i) & 0xff) : input_bits(r, first + i);
        bool ok = e == MBCOLL_F64   ? ((const double *)v)[i] == (double)sum
                  : e == MBCOLL_F32 ? ((const float *)v)[i] == (float)sum
                                    : ((const uint16_t *)v)[i] == (uint16_t)sum;
        if (!ok)
            return i;
    }
    return count;
}

void mbcoll_add(double *restrict dst, const double *restrict src, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        dst[i] += src[i];
}

static void add_f32(float *restrict dst, const float *restrict src, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        dst[i] += src[i];
}

static void add_u16(uint16_t *restrict dst, const uint16_t *restrict src, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        dst[i] = (uint16_t)(dst[i] + src[i]);
}

uint64_t mbcoll_scratch(const CollSchedule *s, int rank)
{
    uint64_t most = 0;
    uint32_t n = coll_nsteps(s, rank);
    for (uint32_t k = 0; k < n; k++) {
        CollStep st;
        coll_step(s, rank, k, &st);
        if (st.recv_peer >= 0 && st.recv_len > most)
            most = st.recv_len;
    }
    return most;
}

/* Posts step st's receive (into tmp) and send (from data); returns the
 * number of requests in req. */
static int step_post(const CollStep *st, MbcollElem e, char *data, char *tmp, MPI_Comm comm, int tag,
                     MPI_Request req[2])
{
    int n = 0;
    size_t es = mbcoll_elem_size(e);
    if (st->recv_peer >= 0)
        MPI_Irecv(tmp, (int)st->recv_len, elem_type(e), st->recv_peer, tag, comm, &req[n++]);
    if (st->send_peer >= 0)
        MPI_Isend(data + st->send_off * es, (int)st->send_len, elem_type(e), st->send_peer, tag, comm, &req[n++]);
    return n;
}

/* Both of step st's requests completed: reduce or copy what arrived. */
static void step_apply(const CollStep *st, MbcollElem e, char *data, const char *tmp)
{
    if (st->recv_peer < 0)
        return;
    size_t es = mbcoll_elem_size(e);
    char *dst = data + st->recv_off * es;
    if (!st->reduce)
        memcpy(dst, tmp, es * st->recv_len);
    else if (e == MBCOLL_F64)
        mbcoll_add((double *)(void *)dst, (const double *)(const void *)tmp, st->recv_len);
    else if (e == MBCOLL_F32)
        add_f32((float *)(void *)dst, (const float *)(const void *)tmp, st->recv_len);
    else
        add_u16((uint16_t *)(void *)dst, (const uint16_t *)(const void *)tmp, st->recv_len);
}

void mbcoll_exec(const CollSchedule *s, int rank, double *data, double *tmp, MPI_Comm comm, double poll_s)
{
    uint32_t n = coll_nsteps(s, rank);
    for (uint32_t k = 0; k < n; k++) {
        CollStep step;
        const CollStep *st = &step;
        coll_step(s, rank, k, &step);
        MPI_Request req[2];
        int nreq = step_post(st, MBCOLL_F64, (char *)data, (char *)tmp, comm, MBCOLL_TAG, req);
        mbwait_all(nreq, req, poll_s);
        step_apply(st, MBCOLL_F64, (char *)data, (const char *)tmp);
    }
}

uint64_t mbcoll_mismatch(const double *a, const double *b, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        if (a[i] != b[i])
            return i;
    return count;
}

/* The step in flight, fetched from the schedule into r->cur. */
static const CollStep *run_step(MbcollRun *r)
{
    coll_step(r->s, r->rank, r->step, &r->cur);
    return &r->cur;
}

void mbcoll_run_start(MbcollRun *r, const CollSchedule *s, int rank, MbcollElem e, void *data, void *tmp,
                      MPI_Comm comm, int tag)
{
    *r = (MbcollRun){.s = s, .rank = rank, .elem = e, .data = data, .tmp = tmp, .comm = comm, .tag = tag};
    r->nsteps = coll_nsteps(s, rank);
    if (r->nsteps > 0)
        r->nreq = step_post(run_step(r), e, r->data, r->tmp, comm, tag, r->req);
}

bool mbcoll_run_progress(MbcollRun *r)
{
    unsigned n = r->nsteps;
    while (r->step < n) {
        int done = 1;
        if (r->nreq > 0)
            MPI_Testall(r->nreq, r->req, &done, MPI_STATUSES_IGNORE);
        if (!done)
            return false;
        step_apply(run_step(r), r->elem, r->data, r->tmp);
        r->nreq = 0;
        if (++r->step < n)
            r->nreq = step_post(run_step(r), r->elem, r->data, r->tmp, r->comm, r->tag, r->req);
    }
    return true;
}
