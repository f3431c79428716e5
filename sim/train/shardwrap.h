/* shardwrap — FSDP's wrapping units: which of a model's layers FSDP
 * gathers, and reduce-scatters, as one flat parameter. Pure functions of
 * the model and the rule; the rules are docs/explanation/sharding.md's. */
#ifndef ARSIM_SHARDWRAP_H
#define ARSIM_SHARDWRAP_H

#include "train/model.h"

typedef struct {
    GArray *layers;      /* guint layer indices in the model, ascending (forward order); owned */
    uint64_t params;     /* parameters of those layers, in elements */
    bool root;           /* the outermost unit: every layer no other unit holds */
} ShardUnit;

/* The length of the block prefix of a layer name: the name up to the
 * first dot-separated component that is a decimal number, that component
 * included ("layers.3" of "layers.3.attention", "layer1.0" of
 * "layer1.0.conv1"); 0 when no component is a number (no block). */
size_t shardwrap_block_len(const char *name);

/* The blocks of m (layers with the same block prefix), in order of their
 * first layer; root false. Empty when no layer has a block prefix. */
GArray *shardwrap_blocks(const Model *m);

/* The wrapping units of m. Unit 0 is always the root (it may hold no
 * layer); the others follow in forward order of their first layer.
 * min_params == 0 (`wrap: block`): one unit per block, the root holding
 * the layers outside blocks. min_params > 0 (`wrap: {min_params: N}`):
 * layers in forward order go into an open unit that closes as soon as it
 * holds >= min_params parameters; the layers after the last closed unit
 * go to the root. Every layer is in exactly one unit. */
GArray *shardwrap_units(const Model *m, uint64_t min_params);

void shardwrap_free(GArray *units);

#endif
