/* fabric_render.h - render the fabric map's tables into a snapshot
 * (internal to the fabric map: fabric_map.c calls it).
 *
 * The JSON (docs/fabric-map.md) and its index (struct fb_fabric_frag, in
 * fabric_map.h) are written in one pass. The tables are only read; the
 * returned snapshot holds no pointer into them.
 *
 * Threads: fb_fabric_render_take reads the loop's tables, so it runs on the
 * loop; the input it returns is immutable and shares nothing with them, so
 * fb_fabric_render_in may run on any thread (fabric_map.c's renderer), one
 * thread at a time per input.
 */
#ifndef FB_FABRIC_RENDER_H
#define FB_FABRIC_RENDER_H

#include "fabric_map.h"

#include <stddef.h>
#include <stdint.h>

struct fb_inventory;
struct fb_jobs;
struct fb_fabric_render_in;

/* Loop only: a copy of what the map of inv, topo and jobs shows, named
 * fabric, or NULL on -ENOMEM. Cheap next to rendering it: the jobs are
 * copied as flat text, the topology as arrays. */
struct fb_fabric_render_in *fb_fabric_render_take(const struct fb_inventory *inv,
						  const struct fb_topology *topo,
						  const struct fb_jobs *jobs, const char *fabric,
						  uint64_t last_event_id);
/* Any thread: the map of in as a snapshot (as fb_fabric_render). */
struct fb_fabric_snap *fb_fabric_render_in(const struct fb_fabric_render_in *in, size_t *nodes);
void fb_fabric_render_in_free(struct fb_fabric_render_in *in);

/* The map of inv, topo and jobs, named fabric, as a snapshot with its index
 * (one reference, the caller's: drop it with fb_fabric_snap_unref, which
 * frees the buffers allocated here). Sets *nodes to the nodes rendered.
 * NULL on -ENOMEM (*nodes untouched). Loop only: take and render in one. */
struct fb_fabric_snap *fb_fabric_render(const struct fb_inventory *inv, const struct fb_topology *topo,
					const struct fb_jobs *jobs, const char *fabric,
					uint64_t last_event_id, size_t *nodes);

#endif
