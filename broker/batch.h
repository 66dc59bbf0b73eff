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

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct fb_record {
	uint64_t event_id; /* broker-wide, strictly increasing */
	struct fb_event ev;
};

struct fb_batch {
	atomic_uint refs;
	size_t n;
	size_t cap;
	/* Bit k set: a record of kind k (kinds past 63 set bit 63), so that an
	 * output that cares for a few kinds skips a batch without reading its
	 * records (storm.c). Kept by fb_batch_add. */
	uint64_t kinds;
	struct fb_record rec[];
};

/* The kinds bit of kind k in fb_batch.kinds. */
static inline uint64_t fb_batch_kind_bit(unsigned k) { return 1ull << (k < 63 ? k : 63); }

/* rec[n] (the slot the caller filled) is now part of the batch. */
static inline void fb_batch_add(struct fb_batch *b)
{
	b->kinds |= fb_batch_kind_bit(b->rec[b->n].ev.kind);
	b->n++;
}

/* A batch with room for cap records and one reference. NULL on ENOMEM. */
struct fb_batch *fb_batch_new(size_t cap);
void fb_batch_ref(struct fb_batch *b);
void fb_batch_unref(struct fb_batch *b);

#endif
