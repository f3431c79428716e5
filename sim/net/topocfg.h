/* topocfg — a TopoSpec from a YAML topology (a file in topologies/ or an
 * inline mapping in a scenario's cluster section). Every key is checked;
 * errors carry file:line:col. */
#ifndef ARSIM_TOPOCFG_H
#define ARSIM_TOPOCFG_H

#include "io/cfg.h"
#include "net/topo.h"

/* Fills spec (already initialised with topo_spec_init or defaults) from
 * map, which must hold a topology description; `extra_known` lists keys
 * the caller reads itself (comma-separated, may be NULL) so they are not
 * reported as unknown. */
bool topocfg_read(CfgNode *map, TopoSpec *spec, const char *extra_known, char **err);

/* Reads only the network overrides a scenario's cluster may carry (link,
 * switch_latency, packet, k, oversubscription, x, y, protocol) into spec;
 * link is refused on a graph, whose links are its file's. */
bool topocfg_overrides(CfgNode *map, TopoSpec *spec, char **err);

/* Reads a {bandwidth, latency, burst} link mapping into cls (keys optional). */
bool topocfg_link(CfgNode *n, TopoLinkClass *cls, const char *what, char **err);
/* Reads a hierarchical topology's `intra` mapping: the link class into
 * spec->intra and, when it has one, its `protocol` into
 * spec->intra_protocol (starting from spec->protocol). */
bool topocfg_intra(CfgNode *n, TopoSpec *spec, char **err);

/* Makes spec, a flat network whose hosts are nodes, the network of a
 * hierarchical cluster: nodes of g GPUs (g > 1) on intra links, joined by
 * spec (which becomes its inter network, link and protocol as they were);
 * spec->hosts becomes the GPUs, hosts x g. */
void topocfg_nodes(TopoSpec *spec, int g, TopoLinkClass intra);

/* Loads a topology file (a kind name resolves to topologies/<name>.yaml)
 * and checks that it builds (topo_new) as written. */
bool topocfg_load(const char *name_or_path, TopoSpec *spec, char **err);

/* topo_new with the error placed at node n when the spec is rejected; if
 * n is a topology mapping, at the key the complaint is about. */
Topo *topocfg_build(const TopoSpec *spec, const CfgNode *n, char **err);

#endif
