/* rf_tree.h - the Redfish resource tree, served from an immutable snapshot.
 *
 * The loop owns what the tree shows (topology, inventory, jobs through the
 * fabric map; the port counters learned here). fb_rf_tree_refresh(), on the
 * loop's 100 ms tick, copies it when any of it changed (at most once per
 * FB_RF_TREE_MIN_MS) and the tree's builder thread rebuilds the whole tree
 * from the copy, off the loop (10000 nodes: ~0.7 s): every resource is rendered once, with
 * its ETag, into a snapshot sorted by path, and published by reference
 * (after a rebuild that took T, the next waits at least 9 T). A
 * GET on the lws thread is a binary search in the newest snapshot and a
 * copy of bytes: it never waits for the loop, never sees half an update.
 *
 * Builders (rf_res_*.c) add resources through struct fb_rf_build.
 */
#ifndef FB_RF_TREE_H
#define FB_RF_TREE_H

#include "fb_event.h"
#include "rf_route.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FB_RF_TREE_MIN_MS 500

struct fb_rf_service;
struct fb_rf_tree;
struct fb_rf_build;

int fb_rf_tree_new(struct fb_rf_service *svc, struct fb_rf_tree **out);
void fb_rf_tree_free(struct fb_rf_tree *t);

/* Loop: an accepted (or recovered) event; keeps port counters. */
void fb_rf_tree_learn(struct fb_rf_tree *t, const struct fb_event *ev);
/* Loop: rebuild and publish if something changed (handed to the builder
 * thread once it runs). 1 if it did (or handed it over), 0, -ENOMEM. */
int fb_rf_tree_refresh(struct fb_rf_tree *t, uint64_t last_event_id);
struct fb_rf_tree_stats {
	uint64_t rebuilds;
	uint64_t last_ms;   /* the last rebuild took */
	size_t resources;   /* in the published snapshot */
	size_t bytes;       /* their bodies and paths */
};
/* Any thread. */
void fb_rf_tree_get_stats(struct fb_rf_tree *t, struct fb_rf_tree_stats *st);
/* Loop, once: from now on fb_rf_tree_refresh only copies what a rebuild
 * reads (the topology, the counters, a reference to the map's snapshot)
 * and a thread of the tree's own builds and publishes it; without it
 * (tests) refresh builds in place. 0 or a negative error. */
int fb_rf_tree_start_builder(struct fb_rf_tree *t);
/* Loop or tests: rebuild and publish now. */
int fb_rf_tree_rebuild(struct fb_rf_tree *t, uint64_t last_event_id);

/* Route callbacks (lws thread): the resource at the request's path. */
int fb_rf_tree_exists(struct fb_rf_ctx *c);
int fb_rf_tree_get(struct fb_rf_ctx *c);
/* Any thread: the body of the resource at path -- an @odata.id or an
 * OriginOfCondition, percent-encoded as they are -- in the newest snapshot
 * (malloc'd copy), or NULL. For tests and other modules (the ofmf
 * announcer, IncludeOriginOfCondition). */
char *fb_rf_tree_body(struct fb_rf_tree *t, const char *path);

/* ---- for the builders ---- */

/* Add obj (stolen) at path (copied), typed schema (e.g. "Port"; for the
 * Link header). Adds "@odata.id" = path if absent. 0 or -ENOMEM. */
int fb_rf_build_add(struct fb_rf_build *b, const char *path, const char *type, json_t *obj);
/* A raw body with its content type (static) at path. */
int fb_rf_build_add_raw(struct fb_rf_build *b, const char *path, const char *ctype, const char *body,
			size_t len);
/* The service being built for. */
const struct fb_rf_service *fb_rf_build_service(const struct fb_rf_build *b);
/* A collection resource of members (paths, stolen array of strings). */
int fb_rf_build_collection(struct fb_rf_build *b, const char *path, const char *type,
			   const char *name, json_t *member_paths);
/* Append "/" + seg to path (size sz), percent-encoding what is not an
 * unreserved URI character, as OriginOfCondition does (proto/fb_redfish.c).
 * 0, or FB_ETOOBIG (path unchanged). */
int fb_rf_path_append(char *path, size_t sz, const char *seg);
/* out = base + suffix (base may be out). 0, or FB_ETOOBIG with out "". */
int fb_rf_path_cat(char *out, size_t sz, const char *base, const char *suffix);
/* out = sw + "/Ports/" + port. */
int fb_rf_path_port(char *out, size_t sz, const char *sw, unsigned port);
/* {"@odata.id": path} (new reference). */
json_t *fb_rf_ref(const char *path);

#endif
