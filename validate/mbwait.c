/* mbwait — busy or sleeping waits for MPI requests (see mbwait.h). */
#include "mbwait.h"

#include <sys/prctl.h>
#include <time.h>

void mbwait_setup(double poll_s)
{
    if (poll_s > 0)
        prctl(PR_SET_TIMERSLACK, 1000UL);   /* 1 us instead of the default 50 us */
}

/* poll_s as a nanosleep interval (poll_s > 0). */
static struct timespec pause_of(double poll_s)
{
    return (struct timespec){.tv_sec = (time_t)poll_s, .tv_nsec = (long)((poll_s - (double)(time_t)poll_s) * 1e9)};
}

void mbwait_all(int n, MPI_Request *req, double poll_s)
{
    if (poll_s <= 0) {
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        return;
    }
    struct timespec pause = pause_of(poll_s);
    int done = 0;
    for (;;) {
        MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (done)
            return;
        nanosleep(&pause, NULL);
    }
}

void mbwait_barrier(MPI_Comm comm, double poll_s)
{
    if (poll_s <= 0) {
        MPI_Barrier(comm);
        return;
    }
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    mbwait_all(1, &req, poll_s);
}

void mbwait_until(double t, double poll_s)
{
    struct timespec pause = pause_of(poll_s > 0 ? poll_s : 0);
    while (MPI_Wtime() < t)
        if (poll_s > 0)
            nanosleep(&pause, NULL);
}
