/* ncclforce — what an NCCL call forces of the tuner's choice, as
 * NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS do (a header of its
 * own so that policies name it without the engine's headers). */
#ifndef ARSIM_NCCLFORCE_H
#define ARSIM_NCCLFORCE_H

/* {-1, -1, 0}: the tuner's choice of each. */
typedef struct {
    int algo;                /* NcclAlgo (coll/nccl.h), or -1 */
    int proto;               /* NcclProto, or -1 */
    int channels;            /* 1..64, or 0 */
} NcclForce;

#define NCCL_FORCE_NONE ((NcclForce){-1, -1, 0})

#endif
