/* batch.h - a batch of committed events, shared read-only by every sink.
 *
 * The ingest path builds one batch per journal commit and hands a reference
 * to each sink (the WebSocket thread, root cause, OFMF). The batch is
 * immutable once published; the last fb_batch_unref() frees it, on whichever
 * thread that happens.
 *
 * Records are packed: the fixed fields, then the counters that are set, then
 * each string's bytes without padding (~150-250 bytes for a port event
 * instead of the ~1 KB of a struct fb_event). Why: the loop writes every
 * record and another thread reads it, so each cache line of it crosses
 * between cores; a decoded event touched ~12 of its 15 lines, a packed one
 * 2-4 (the decoder's stores into fresh batch lines were 12% of the broker's
 * CPU). The loop decodes into a record it reuses (hot in its cache) and
 * packs it with fb_batch_add; a reader unpacks into its own with
 * fb_batch_get.
 */
#ifndef FB_BATCH_H
#define FB_BATCH_H

#include "fb_event.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fb_record {
	uint64_t event_id; /* broker-wide, strictly increasing */
	struct fb_event ev;
};

/* The most bytes one packed record takes (every string at its maximum,
 * every counter): a batch with this much room left can take one more. */
#define FB_BATCH_RECORD_MAX                                                                        \
	(96 + FB_COUNTERS_MAX * sizeof(struct fb_counter) + FB_AGENT_ID_MAX + FB_FABRIC_MAX +     \
	 4 * FB_NAME_MAX + FB_ADDR_MAX + FB_TEXT_MAX + FB_JOBS_MAX)

struct fb_batch {
	atomic_uint refs;
	size_t n;        /* records */
	size_t cap;      /* at most this many */
	size_t used;     /* bytes of data[] taken */
	size_t size;     /* bytes of data[] */
	/* Bit k set: a record of kind k (kinds past 63 set bit 63), so that an
	 * output that cares for a few kinds skips a batch without reading its
	 * records (storm.c). Kept by fb_batch_add. */
	uint64_t kinds;
	uint32_t *off;   /* off[i]: where record i starts in data[] (cap of them) */
	_Alignas(8) unsigned char data[];
};

/* The kinds bit of kind k in fb_batch.kinds. */
static inline uint64_t fb_batch_kind_bit(unsigned k) { return 1ull << (k < 63 ? k : 63); }

/* A batch with room for cap records of up to 256 bytes (port events; it
 * takes fewer larger ones) and one reference. NULL on ENOMEM. */
struct fb_batch *fb_batch_new(size_t cap);
void fb_batch_ref(struct fb_batch *b);
/* Drop a reference; the last one frees b, or keeps it (up to 4 of them)
 * for the next fb_batch_new of the same cap. */
void fb_batch_unref(struct fb_batch *b);
/* Free the kept batches (at exit, once no thread makes batches). */
void fb_batch_spares_free(void);

/* 1 if b can take one more record of any size. */
static inline int fb_batch_room(const struct fb_batch *b)
{
	return b->n < b->cap && b->size - b->used >= FB_BATCH_RECORD_MAX;
}

/* Pack r into b as its next record (the caller checked fb_batch_room). A
 * string without its NUL within its field (never one the decoder or
 * fb_event_check passed) is cut to the field's size - 1. */
void fb_batch_add(struct fb_batch *b, const struct fb_record *r);

/* Record i's EventId (reads only the record's first line). */
static inline uint64_t fb_batch_id(const struct fb_batch *b, size_t i)
{
	uint64_t id;
	memcpy(&id, b->data + b->off[i], sizeof(id));
	return id;
}

/* Unpack record i into *out (the caller's, reused from one record to the
 * next) and return &out->ev. Every string of out->ev ends with its NUL;
 * the bytes after it are unspecified (a short string is copied as a block
 * of 32 bytes, see batch.c). */
const struct fb_event *fb_batch_get(const struct fb_batch *b, size_t i, struct fb_record *out);

#endif
