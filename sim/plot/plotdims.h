/* plotdims — the dimensions of a set of result rows and how figures
 * split them. A dimension is a sweep axis (by its values' text) or a row
 * field (model, gpu, topology, nodes, gpus_per_node, world, bandwidth,
 * batch, node, cluster). A field that some varying axis determines
 * (cluster.nodes -> world) is covered by that axis and not counted twice. Axes that change
 * the policy set (policies..., baseline) are never dimensions: policies
 * are the lines of every figure. An axis on one policy's key
 * (policies.N.KEY: sharding, backward_prefetch, wrap...) that varies
 * splits policy N into a line per value, labelled "... KEY=VALUE".
 *
 * A figure with x dimension X groups the rows by every varying dimension
 * that X does not determine; each group is one image.
 */
#ifndef ARSIM_PLOTDIMS_H
#define ARSIM_PLOTDIMS_H

#include "report/reportplot.h"

typedef struct {
    char *label;             /* axis path or field name; owned */
    bool numeric;            /* values sort as numbers (batch, nodes, world...) */
    bool field;              /* a row field, not a sweep axis */
    GPtrArray *vals;         /* char*: the value text of each row (index = row); owned */
    GPtrArray *order;        /* char*: distinct values in display order; owned */
    bool varying;            /* more than one distinct value */
    bool covered;            /* a field some varying axis determines */
} PlotDim;

typedef struct {
    const PlotData *pd;      /* the rows (sorted by id, batch; see plotdims_new); borrowed */
    GArray *rows;            /* guint row indices into pd->rows in display order */
    GPtrArray *dims;         /* PlotDim*; owned */
    GPtrArray *policies;     /* char* policy labels "name (overlap, algorithm)" (+ " KEY=VALUE" per varying
                              * policies.N.KEY axis), first-appearance order; owned */
    GPtrArray *row_policy;   /* per row (by pd index): char* its label; owned */
    GPtrArray *row_axes;     /* per row: char* " KEY=VALUE" of its policy's varying policies.N.KEY axes, or "";
                              * owned */
    int batch_dim, world_dim, model_dim; /* indices into dims */
} PlotDims;

/* One image's rows. */
typedef struct {
    char *label;             /* "cluster.nodes=8, batch=32" of the grouping values ("" for one group); owned */
    GArray *rows;            /* guint pd row indices, display order */
} PlotGroup;

PlotDims *plotdims_new(const PlotData *pd);
void plotdims_free(PlotDims *d);

/* True when the value of dim a determines the value of dim b on every row. */
bool plotdims_determines(const PlotDims *d, int a, int b);

/* Groups for a figure whose varying x dimensions are xs[0..nx) (dims
 * they determine are not grouped on). GPtrArray of PlotGroup*. */
GPtrArray *plotdims_groups(const PlotDims *d, const int *xs, int nx);
void plotdims_group_free(PlotGroup *g);

/* Index of v in dims[dim]->order. */
int plotdims_rank(const PlotDims *d, int dim, const char *v);

/* "VGG16, 8 x v100 GPUs (8 nodes x 1), star 10 Gbps" from what is constant
 * over the group's rows; a cluster of GPU nodes by its name instead of
 * its shape and network ("ResNet50, 128 x h100 GPUs, 16 x dgx-h100,
 * rail-optimized fat-tree"; "dgx-h100 nodes, rail-optimized fat-tree"
 * where the node count varies) (g_free). */
char *plotdims_title(const PlotDims *d, const PlotGroup *g);

#endif
