/* collturn — the turns of protocol.duplex half (io/protocol.h): per
 * ordered pair of hosts, the rendezvous data in flight from one to the
 * other, and the senders waiting to go the other way until it has all
 * arrived. The executor (coll/collexec.c) owns one table per collective;
 * senders are opaque ids (its lanes). */
#ifndef ARSIM_COLLTURN_H
#define ARSIM_COLLTURN_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct CollTurns CollTurns;

CollTurns *collturn_new(void);
void collturn_free(CollTurns *t);   /* NULL: nothing */

/* Whether data from host a to host b must wait: data from b to a is in
 * flight. If so, sender `id` is queued to go when that has all arrived. */
bool collturn_wait(CollTurns *t, int32_t a, int32_t b, uint64_t id);
/* Data from a to b enters the network. */
void collturn_add(CollTurns *t, int32_t a, int32_t b);
/* Data from a to b (counted by collturn_add) arrived. When none of that
 * direction is left in flight, the ids waiting to go from b to a are
 * appended to `ready` (uint64_t), in the order they waited, and forgotten. */
void collturn_delivered(CollTurns *t, int32_t a, int32_t b, GArray *ready);

#endif
