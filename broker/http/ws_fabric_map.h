/* ws_fabric_map.h - the body of GET /fabric/map: the whole snapshot, or
 * only the nodes ?nodes=<hostlist> names and their switches.
 *
 * A body holds a reference to the snapshot it was built from (most of its
 * bytes are the snapshot's) and is owned by whoever built it until
 * fb_ws_map_body_free. ws_fabric.c builds one per GET and streams it with
 * fb_ws_map_body_read; nothing here calls lws, so any thread may use it.
 */
#ifndef FB_WS_FABRIC_MAP_H
#define FB_WS_FABRIC_MAP_H

#include <stddef.h>

struct fb_fabric_snap;
struct fb_ws_map_body;

/* Nodes one ?nodes= may name (as many as a job registration). */
#define FB_WS_MAP_NODES_MAX 65536
/* Names listed in "Missing" at most ("MissingCount" has them all). */
#define FB_WS_MAP_MISSING_MAX 1000

/* The body of GET /fabric/map (the whole snap) or of ?nodes=expr[0..len)
 * (the nodes of expr that snap has, their switches, the others under
 * "Missing"). Takes a new reference to snap. Returns 0 with *out (free
 * with fb_ws_map_body_free), FB_EMALFORMED / FB_ETOOBIG with why
 * ("nodes: <reason>"), or -ENOMEM. Any thread; no lws call. */
int fb_ws_fabric_whole(struct fb_fabric_snap *snap, struct fb_ws_map_body **out);
int fb_ws_fabric_select(struct fb_fabric_snap *snap, const char *expr, size_t len,
			struct fb_ws_map_body **out, char *why, size_t whysz);
/* Its length in bytes, and the next up to n bytes into buf (returns how
 * many; 0 at the end). */
size_t fb_ws_map_body_len(const struct fb_ws_map_body *b);
size_t fb_ws_map_body_read(struct fb_ws_map_body *b, void *buf, size_t n);
void fb_ws_map_body_free(struct fb_ws_map_body *b);

#endif
