/* shardcopy — FSDP2's per-parameter copies; see shardcopy.h. */
#include "train/shardcopy.h"

int shardcopy_bytes_per_param(const SyncUnit *su, int gather, int elem_bytes, int reduce_bytes)
{
    if (su->copy_params == 0)
        return 0;
    if (su->coll == COLL_OP_ALLGATHER)
        return gather > 1 ? 2 * elem_bytes : SHARDCOPY_MASTER_BYTES + elem_bytes;
    if (su->coll == COLL_OP_REDUCE_SCATTER)
        return elem_bytes + reduce_bytes;
    return 0;
}
