/* ws_ring.h - the last N events, each serialized once as a ready-to-send
 * WebSocket text frame.
 *
 * Server-to-client frames are unmasked, so the frame bytes (header and the
 * Redfish Event JSON) are the same for every subscriber: the ring renders an
 * event once and subscribers' writes point at the frame bytes (ws_server.c:
 * no copy per subscriber on a plain connection).
 *
 * Where the bytes live: an arena of fixed-size chunks (FB_WS_RING_CHUNK, 2
 * MiB, from malloc: an mmap each, 4 KiB pages; transparent huge pages were
 * measured and cost more in zeroing than they saved in faults, see
 * chunk_new). Messages are appended in order: an event is rendered straight into the chunk being
 * filled (no scratch copy, no allocation per message), and a new chunk is
 * started when less than FB_WS_RING_HEADROOM is left in it. A chunk goes
 * back to the free list when eviction passes its last message, and is
 * reused as it is (its pages stay mapped): after the first fill, pushing an
 * event allocates nothing and touches no fresh page. Memory is therefore
 * about ring_events x (frame + origin) plus the chunk being filled and the
 * one being emptied (docs/configuration.md, peak RSS).
 *
 * A message's bytes are [WebSocket header][JSON][OriginOfCondition\0]. The
 * SSE framing of the same JSON adds "id: <EventId>\ndata: " in front, which
 * fb_ws_msg_put_sse formats when an SSE reader copies the message: nothing
 * SSE-specific is built for a bus without SSE streams.
 *
 * Pointers into messages (fb_ws_msg_frame, fb_ws_msg_origin, the iovecs of
 * ws_sub.c) are valid until the next push or clear: a push may evict the
 * oldest message and reuse its chunk, or (a document larger than the
 * headroom: none with today's field limits) move the chunk being filled. Readers hand
 * such pointers to the kernel, or copy them, before returning to the lws
 * loop, which is the only place pushes happen.
 *
 * Positions: every message gets a monotonically increasing sequence number
 * (seq); the ring holds seqs [tail, head). EventIds are expected to be
 * contiguous, but the ring stores each message's id and falls back to a
 * binary search, so gaps only cost a lookup.
 *
 * Owned by the lws thread; not thread-safe.
 */
#ifndef FB_WS_RING_H
#define FB_WS_RING_H

#include "fb_buf.h"
#include "fb_event.h"
#include "rf_filter.h"

#include <stddef.h>
#include <stdint.h>

#define FB_WS_FRAME_HDR_MAX 10

/* Arena chunk size: large against a message (~600 B) so that the headroom
 * left at a chunk's end is <1% of it, small against the ring (the slack of
 * two chunks beside the default ring, 65536 x ~700 B, is under 10%). */
#define FB_WS_RING_CHUNK ((size_t)2 << 20)
/* A message starts in the current chunk only if this much is left: more
 * than the largest message (6.8 KB: every field at its limit and escaped,
 * test_ws_ring.c) plus what the renderer reserves ahead, so a render never
 * grows or moves a chunk (a bigger one would still work: see above). */
#define FB_WS_RING_HEADROOM ((size_t)16 << 10)

/* The same JSON serves both framings: a WebSocket stream gets
 * [header][JSON], an SSE stream "id: <EventId>\ndata: " [JSON] "\n\n". */
#define FB_SSE_SUFFIX "\n\n"
#define FB_SSE_SUFFIX_LEN 2

struct fb_ws_msg {
	const uint8_t *frame;   /* [header][JSON], then the origin, in a chunk */
	uint64_t event_id;
	const char *message_id; /* static string from fb_redfish_classify */
	uint32_t frame_len;     /* WebSocket header + JSON */
	uint32_t chunk;         /* which chunk holds it (eviction frees chunks) */
	uint32_t off;           /* frame - chunk start (the chunk may move) */
	uint8_t severity;
	uint8_t quiet;          /* enum fb_quiet: default subscribers skip it */
	uint8_t rf_ready;       /* rf is filled in (else only rf.event_type is) */
	uint8_t hdr_len;        /* WebSocket header bytes before the JSON */
	struct fb_rf_attrs rf;  /* what an SSE $filter looks at: use fb_ws_msg_rf */
};

struct fb_ws_ring {
	struct fb_ws_msg *slot;
	size_t cap;
	uint64_t tail; /* oldest seq held */
	uint64_t head; /* next seq to write */
	size_t tail_slot; /* tail % cap, kept as tail moves (see fb_ws_ring_at) */
	const char *default_fabric;
	uint64_t msg_bytes; /* sum of frame_len held, for /status */
	/* the arena: chunk[i] is free (on free_ids) or holds messages; cur is
	 * the one being filled */
	struct fb_buf *chunk;
	uint32_t n_chunks, cur;
	uint32_t *free_ids;
	uint32_t n_free;
	/* FB_WS_RING_CHUNK and _HEADROOM; a test may set others before the
	 * first push */
	size_t chunk_size, headroom;
	size_t arena_bytes; /* chunk memory held (in use or free) */
};

int fb_ws_ring_init(struct fb_ws_ring *r, size_t cap, const char *default_fabric);
void fb_ws_ring_free(struct fb_ws_ring *r);
/* Drop every message (keeps the chunks for reuse). */
void fb_ws_ring_clear(struct fb_ws_ring *r);

/* Render ev as the newest message (evicting the oldest when full). */
int fb_ws_ring_push(struct fb_ws_ring *r, uint64_t event_id, const struct fb_event *ev);

static inline size_t fb_ws_ring_count(const struct fb_ws_ring *r) { return (size_t)(r->head - r->tail); }
/* The slot of seq. A seq held (or the head) is found from tail_slot with a
 * compare, not a 64-bit division: the ring is looked up ~4 times per event
 * (push, eviction, every subscriber's fill), and a division is ~15 cycles. */
static inline struct fb_ws_msg *fb_ws_ring_at(const struct fb_ws_ring *r, uint64_t seq)
{
	uint64_t d = seq - r->tail;
	if (d >= r->cap)
		return &r->slot[seq % r->cap];
	size_t i = r->tail_slot + (size_t)d;
	return &r->slot[i >= r->cap ? i - r->cap : i];
}
static inline const uint8_t *fb_ws_msg_frame(const struct fb_ws_msg *m) { return m->frame; }
/* NUL-terminated OriginOfCondition ("" when the event has none). */
static inline const char *fb_ws_msg_origin(const struct fb_ws_msg *m)
{
	return (const char *)m->frame + m->frame_len;
}

/* What an SSE $filter looks at (rf_filter.h), worked out on first use: a
 * bus with WebSocket subscribers only never pays for it. */
const struct fb_rf_attrs *fb_ws_msg_rf(struct fb_ws_msg *m);
/* Append the message as one SSE event: the id line (formatted here), the
 * JSON and the blank line. */
int fb_ws_msg_put_sse(const struct fb_ws_msg *m, struct fb_buf *out);
/* Oldest / newest EventId held; 0 when empty. */
uint64_t fb_ws_ring_oldest_id(const struct fb_ws_ring *r);
uint64_t fb_ws_ring_newest_id(const struct fb_ws_ring *r);

/* The seq of the first message with event_id >= id, or r->head if none. */
uint64_t fb_ws_ring_find(const struct fb_ws_ring *r, uint64_t id);

/* Write the header for a text frame of payload_len bytes so that it ends at
 * end (which must have FB_WS_FRAME_HDR_MAX bytes before it). Returns the
 * header length. */
size_t fb_ws_frame_header(uint8_t *end, uint64_t payload_len);

/* Append ev rendered as one complete text frame to out. */
int fb_ws_render_frame(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
		       const char *default_fabric);
/* Append the "missed" notice as one complete text frame to out. */
int fb_ws_render_missed_frame(struct fb_buf *out, uint64_t missed, uint64_t resume_since);

/* The SSE framings of the same (journal replay):
 * "id: <EventId>\ndata: <Event JSON>\n\n", and the notice with the id a
 * reconnect should resume after ("id: <resume_since>"). */
int fb_sse_render_frame(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
			const char *default_fabric);
int fb_sse_render_missed_frame(struct fb_buf *out, uint64_t missed, uint64_t resume_since);
/* The SSE attributes of an event that is not in the ring (journal replay);
 * origin must have FB_REDFISH_ORIGIN_MAX bytes and outlive a. */
void fb_ws_event_rf_attrs(const struct fb_event *ev, const char *default_fabric, char *origin,
			  struct fb_rf_attrs *a);

#endif
