#include "rf_res.h"
int fb_rf_res_fabric(struct fb_rf_build *b, const json_t *map, const struct fb_topology *topo,
		     const struct fb_rf_ctrs *ctrs)
{ (void)b; (void)map; (void)topo; (void)ctrs; return 0; }
int fb_rf_res_systems(struct fb_rf_build *b, const json_t *map) { (void)b; (void)map; return 0; }
int fb_rf_res_aggregation(struct fb_rf_build *b) { (void)b; return 0; }
int fb_rf_res_registries(struct fb_rf_build *b) { (void)b; return 0; }
