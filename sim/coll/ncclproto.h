/* ncclproto — NCCL's protocol sizes, as one NCCL release sets them
 * (v2.21.5-1: device.h's NCCL_STEPS, init.cc's buffer sizes, enqueue.cc's
 * chunk rules): pure functions of algorithm, protocol and collective, for
 * the executor (ncclsim) to cut its data into chunks and slices. */
#ifndef ARSIM_NCCLPROTO_H
#define ARSIM_NCCLPROTO_H

#include "coll/nccl.h"

#include <stdint.h>

/* The data bytes of one chunk (NCCL's chunkSize before the per-size
 * reductions) and the slots of a connection, for algo x proto x op. */
uint64_t ncclproto_chunk_bytes(NcclAlgo a, NcclProto p, NcclOp op);
int ncclproto_slices_per_chunk(NcclAlgo a, NcclProto p, NcclOp op);
int ncclproto_window(NcclAlgo a, NcclProto p, NcclOp op);
/* Wire bytes for `data` bytes of protocol p. */
uint64_t ncclproto_wire_bytes(NcclProto p, uint64_t data);

#endif
