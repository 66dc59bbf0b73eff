/* ofmf_origins.h - what fabricbusd owes the OFMF core and what the core
 * holds: the origins waiting for a ResourceCreated (oldest first, each with a
 * not-before time), and the set of origins announced or known to be held by
 * the core (from our AggregationSource's ResourcesAccessed), so that none is
 * announced twice: each ResourceCreated is a whole crawl. Pure; owned by the
 * registration (ofmf_reg.c).
 */
#ifndef FB_OFMF_ORIGINS_H
#define FB_OFMF_ORIGINS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct fb_ofmf_origin {
	char *path;
	uint64_t due; /* not before: our tree shows it, or a retry's wait */
};

struct fb_ofmf_origins {
	struct fb_ofmf_origin *q; /* the queue, q[0] next */
	size_t n, max;
	char **known;             /* sorted */
	size_t n_known, cap_known;
};

void fb_ofmf_origins_init(struct fb_ofmf_origins *o, size_t max);
void fb_ofmf_origins_fini(struct fb_ofmf_origins *o);

/* Queue path (copied) at the front or the back. 0, or -1 when the queue is
 * full or memory is short. */
int fb_ofmf_origins_push(struct fb_ofmf_origins *o, const char *path, int front, uint64_t due);
/* Drop q[0] (n > 0). */
void fb_ofmf_origins_pop(struct fb_ofmf_origins *o);

/* 1 when path waits in the queue. */
int fb_ofmf_origins_queued(const struct fb_ofmf_origins *o, const char *path);
int fb_ofmf_origins_known(const struct fb_ofmf_origins *o, const char *path);
/* 0, or -1 when memory is short (it is then announced again later). */
int fb_ofmf_origins_remember(struct fb_ofmf_origins *o, const char *path);
/* A new core holds nothing of ours. */
void fb_ofmf_origins_forget(struct fb_ofmf_origins *o);

/* ResourcesAccessed (bare paths, as the reference core lists them, or
 * {"@odata.id": ...}) is held by the core: remember it and drop it from the
 * queue, all but keep (the fabric, queued on purpose to learn what is new).
 * Returns 1 when q[0] was dropped. */
int fb_ofmf_origins_learn(struct fb_ofmf_origins *o, json_t *accessed, const char *keep);

#endif
