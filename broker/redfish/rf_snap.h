/* rf_snap.h - the tree's snapshot as its builders and its reader see it
 * (internal to rf_tree.c and rf_build.c): entries sorted by their key, the
 * percent-decoded path, as lws hands request paths over. */
#ifndef FB_RF_SNAP_H
#define FB_RF_SNAP_H

#include "fb_buf.h"
#include "rf_etag.h"

#include <stdatomic.h>
#include <stddef.h>

struct entry {
	char *path;
	char *body;
	size_t len;
	const char *type;  /* schema, for Link; NULL for raw files */
	const char *ctype; /* NULL: JSON */
	char etag[FB_RF_ETAG_MAX];
};

struct snap {
	atomic_uint refs;
	struct entry *e; /* ents.data */
	size_t n;
	struct fb_buf ents;
};

struct fb_rf_service;

struct fb_rf_build {
	const struct fb_rf_service *svc;
	struct snap *s;
};

/* What one rebuild reads: copies the builder owns, taken on the loop. */
/* A new empty snapshot (one reference), or NULL. */
struct snap *fb_rf_snap_new(void);
void fb_rf_snap_unref(struct snap *s);
/* Bytes of bodies and paths (what a snapshot costs, roughly). */
size_t fb_rf_snap_bytes(const struct snap *s);
/* Sort the entries by key (before publishing). */
void fb_rf_snap_sort(struct snap *s);
/* The entry at key (a decoded path), or NULL. */
const struct entry *fb_rf_snap_find(const struct snap *s, const char *key);
/* path percent-decoded (malloc'd), or NULL. */
char *fb_rf_path_decode(const char *path);

#endif
