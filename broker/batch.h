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
	struct fb_record rec[];
};

/* A batch with room for cap records and one reference. NULL on ENOMEM. */
struct fb_batch *fb_batch_new(size_t cap);
void fb_batch_ref(struct fb_batch *b);
void fb_batch_unref(struct fb_batch *b);

#endif
