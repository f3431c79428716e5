/* netrec — the delivery record the network suites share: net_send's
 * callback stores the clock at delivery under the message id passed as
 * its data (an int below NETREC_MAX). Header-only, static functions. */
#ifndef ARSIM_NETREC_H
#define ARSIM_NETREC_H

#include "net/net.h"

#define NETREC_MAX 256

/* Delivery times, indexed by the message id passed as data. */
typedef struct {
    Sim *sim;                   /* the clock read at delivery */
    simtime_t t[NETREC_MAX];    /* ps; delivery time of message i */
    int n;                      /* deliveries so far */
} Rec;

/* NetDeliverFn: ctx is a Rec, data the message id (GINT_TO_POINTER). */
static inline void on_deliver(void *ctx, void *data)
{
    Rec *r = ctx;
    r->t[GPOINTER_TO_INT(data)] = r->sim->now;
    r->n++;
}

#endif
