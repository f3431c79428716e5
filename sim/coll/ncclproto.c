/* ncclproto — NCCL's protocol sizes: a chunk's data bytes, the slices
 * and slots of a connection, the wire bytes of LL, LL128 and Simple; see
 * ncclproto.h. Sizes cite NCCL v2.21.5-1 (docs/dev/references-nccl.md). */
#include "coll/ncclproto.h"

#define NS_STEPS 8                  /* NCCL_STEPS (device.h) */
#define NS_SIMPLE_BUFF (1u << 22)   /* DEFAULT_BUFFSIZE (init.cc) */
#define NS_LL_BUFF (8u * 512 * 8 * 16)        /* DEFAULT_LL_BUFFSIZE */
#define NS_LL128_BUFF (120u * 640 * 8 * 8)    /* DEFAULT_LL128_BUFFSIZE */
#define NS_NVLS_CHUNK (128u << 10)  /* NCCL_NVLS_CHUNKSIZE's default */

uint64_t ncclproto_chunk_bytes(NcclAlgo a, NcclProto p, NcclOp op)
{
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE)
        return NS_NVLS_CHUNK;
    int steps = ncclproto_slices_per_chunk(a, p, op) == 2 ? NS_STEPS / 2 : 1;   /* Ring Simple's chunkSteps */
    if (p == NCCL_PROTO_LL)
        return NS_LL_BUFF / NS_STEPS * steps / 2;
    if (p == NCCL_PROTO_LL128)
        return (uint64_t)NS_LL128_BUFF / NS_STEPS * steps / 16 * 15;
    return (uint64_t)NS_SIMPLE_BUFF / NS_STEPS * steps;
}

int ncclproto_slices_per_chunk(NcclAlgo a, NcclProto p, NcclOp op)
{
    return p == NCCL_PROTO_SIMPLE && a == NCCL_ALGO_RING && op != NCCL_OP_BROADCAST ? 2 : 1;
}

int ncclproto_window(NcclAlgo a, NcclProto p, NcclOp op)
{
    return NS_STEPS / ncclproto_slices_per_chunk(a, p, op);
}

uint64_t ncclproto_wire_bytes(NcclProto p, uint64_t data)
{
    return p == NCCL_PROTO_LL ? 2 * data : p == NCCL_PROTO_LL128 ? (data * 16 + 14) / 15 : data;
}
