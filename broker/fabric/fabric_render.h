/* fabric_render.h - render the fabric map's tables into a snapshot
 * (internal to the fabric map: fabric_map.c calls it, on the loop).
 *
 * The JSON (docs/fabric-map.md) and its index (struct fb_fabric_frag, in
 * fabric_map.h) are written in one pass. The tables are only read; the
 * returned snapshot holds no pointer into them.
 */
#ifndef FB_FABRIC_RENDER_H
#define FB_FABRIC_RENDER_H

#include "fabric_map.h"

#include <stddef.h>
#include <stdint.h>

struct fb_inventory;

/* The map of inv, topo and jobs, named fabric, as a snapshot with its index
 * (one reference, the caller's: drop it with fb_fabric_snap_unref, which
 * frees the buffers allocated here). Sets *nodes to the nodes rendered.
 * NULL on -ENOMEM (*nodes untouched). Loop only. */
struct fb_fabric_snap *fb_fabric_render(const struct fb_inventory *inv, const struct fb_topology *topo,
					const struct fb_jobs *jobs, const char *fabric,
					uint64_t last_event_id, size_t *nodes);

#endif
