/* ncclforce — what an NCCL call forces of the tuner's choice, as
 * NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS do, and the NCCL
 * release it runs as (a header of its own so that policies name it
 * without the engine's headers). */
#ifndef ARSIM_NCCLFORCE_H
#define ARSIM_NCCLFORCE_H

/* {-1, -1, 0, 0}: the tuner's choice of each, as NCCL 2.21 makes it. */
typedef struct {
    int algo;                /* NcclAlgo (coll/nccl.h), or -1 */
    int proto;               /* NcclProto, or -1 */
    int channels;            /* 1..64, or 0 */
    int release;             /* NcclRelease (coll/nccl.h) the tuner and the run follow; 0: 2.21 */
} NcclForce;

#define NCCL_FORCE_NONE ((NcclForce){-1, -1, 0, 0})

#endif
