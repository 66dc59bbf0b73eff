/* rf_res.h - the builders of the resource tree (loop thread, called by
 * fb_rf_tree_rebuild). Each adds its resources to b; inputs are read-only.
 * map: the fabric map snapshot parsed (docs/fabric-map.md), or NULL;
 * topo: the loop's topology (peers); ctrs: the port counters (rf_ctr.h). */
#ifndef FB_RF_RES_H
#define FB_RF_RES_H

#include "rf_tree.h"

#include <jansson.h>

struct fb_topology;
struct fb_rf_ctrs;

/* /redfish/v1 (ServiceRoot), /redfish/v1/odata, /redfish/v1/$metadata. */
int fb_rf_res_root(struct fb_rf_build *b);
/* Fabrics, Switches, Ports, Metrics, Endpoints. */
int fb_rf_res_fabric(struct fb_rf_build *b, const json_t *map, const struct fb_topology *topo,
		     const struct fb_rf_ctrs *ctrs);
/* The Endpoint of a node port of the map (its "Ports" member) into out. */
int fb_rf_endpoint_path(char *out, size_t sz, const char *ib_fabric, const char *node,
			const json_t *port);
/* Systems/{node} and their NetworkInterfaces. */
int fb_rf_res_systems(struct fb_rf_build *b, const json_t *map);
/* AggregationService and its ConnectionMethods. */
int fb_rf_res_aggregation(struct fb_rf_build *b);
/* Registries, and the registry and JSON schema files. */
int fb_rf_res_registries(struct fb_rf_build *b);

#endif
