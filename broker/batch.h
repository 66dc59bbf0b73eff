/* batch.h - a batch of committed events, shared read-only by every sink.
 *
 * The ingest path builds one batch per journal commit and hands a reference
 * to each sink (WebSocket thread today; Kafka, SSE and push later). The batch
 * is immutable once published; the last fb_batch_unref() frees it, on
 * whichever thread that happens.
 */
#ifndef FB_BATCH_H
#define FB_BATCH_H

#include "fb_event.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct fb_record {
	uint64_t event_id; /* broker-wide, strictly increasing */
	struct fb_event ev;
};

struct fb_batch_pool;

struct fb_batch {
	atomic_uint refs;
	size_t n;
	size_t cap;
	struct fb_batch_pool *pool; /* where the last unref puts it back, or NULL */
	struct fb_record rec[];
};

/* Released batches kept for reuse. A batch is FB_BATCH_CAP records of
 * ~1 KB: a fresh malloc of that size is fresh pages, and filling them cost
 * the loop a page fault every ~4 events (5% of the broker's CPU in
 * bench_broker.sh). The pool keeps up to FB_BATCH_POOL_MAX warm; the last
 * unref (any thread: the WebSocket thread usually) returns a batch under
 * the mutex, once per batch, not per event. The pool must outlive every
 * batch taken from it. */
#define FB_BATCH_POOL_MAX 8
struct fb_batch_pool {
	pthread_mutex_t mu;
	struct fb_batch *free[FB_BATCH_POOL_MAX];
	unsigned n;
	size_t cap; /* records per batch */
};

/* A batch with room for cap records and one reference. NULL on ENOMEM. */
struct fb_batch *fb_batch_new(size_t cap);
void fb_batch_ref(struct fb_batch *b);
void fb_batch_unref(struct fb_batch *b);

/* 0 or -errno. */
int fb_batch_pool_init(struct fb_batch_pool *p, size_t cap);
/* A batch of p->cap records with one reference, from the pool or new;
 * NULL on ENOMEM. Its last unref returns it to p. */
struct fb_batch *fb_batch_get(struct fb_batch_pool *p);
/* Frees the pooled batches: after the last batch is back. */
void fb_batch_pool_fini(struct fb_batch_pool *p);

#endif
