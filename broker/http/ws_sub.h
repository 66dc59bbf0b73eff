/* ws_sub.h - one WebSocket subscriber's position, and filling its next write.
 *
 * A subscriber is a cursor (next_id, the next EventId it should get) and a
 * filter. Each time its socket is writeable the server asks for the next
 * chunk of frames: from the ring when next_id is still held there, else from
 * the journal (replay), a bounded chunk at a time so one replaying client
 * cannot starve the others.
 *
 * States:
 *   catching up  - replaying, or behind the ring's queue bound; no lag limit
 *                  (it reads the journal at its own pace, costing no memory);
 *   live         - within queue_events of the head; the server does not
 *                  render further ahead while its socket drains, and
 *                  overflows it (the "missed" notice, then a close) once its
 *                  socket stops draining (ws_server.c).
 *
 * No lws here: the server owns sockets, this owns positions. Lws thread only.
 */
#ifndef FB_WS_SUB_H
#define FB_WS_SUB_H

#include "fb_buf.h"
#include "filter.h"
#include "rf_auth_reload.h"
#include "rf_filter.h"
#include "ws_ring.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct fb_journal_reader;

/* Where a subscriber's frames come from (shared by all subscribers). */
struct fb_ws_src {
	struct fb_ws_ring *ring;
	const char *journal_dir;    /* NULL: no replay beyond the ring */
	const char *default_fabric;
	uint64_t head_id;           /* newest committed EventId known */
	size_t queue_events;
};

enum fb_ws_sub_state {
	FB_WS_SUB_CATCHUP = 0,
	FB_WS_SUB_LIVE,
	FB_WS_SUB_OVERFLOWED, /* notice not sent yet */
	FB_WS_SUB_CLOSING,    /* notice sent; close on the next writeable */
};

/* How a subscriber's events are framed and filtered. */
enum fb_ws_sub_kind {
	FB_WS_SUB_WS = 0, /* WebSocket text frames; struct fb_filter (filter.h) */
	FB_WS_SUB_SSE,    /* Redfish SSE events; $filter (rf_filter.h) */
};

struct fb_ws_sub {
	struct fb_ws_sub *prev, *next; /* the server's list */
	void *wsi;                     /* struct lws *, opaque here */
	char peer[64];                 /* "ip:port" for logs and /status */
	enum fb_ws_sub_kind kind;
	struct fb_filter filter;       /* FB_WS_SUB_WS */
	struct fb_rf_filter *rf;       /* FB_WS_SUB_SSE: owned; NULL = everything */
	char live_id[32];              /* FB_WS_SUB_SSE: its EventDestination Id, or "" */
	uint64_t wrote_ns;             /* FB_WS_SUB_SSE: last write (heartbeats) */
	int heartbeat_due, close_asked; /* FB_WS_SUB_SSE */
	uint64_t next_id;
	enum fb_ws_sub_state state;
	uint64_t missed;               /* for the overflow notice */
	uint64_t resume_since;
	struct fb_journal_reader *reader; /* open while replaying */
	uint64_t sent;                 /* messages written (events and notices) */
	uint64_t replayed;             /* of which from the journal */
	uint64_t drained_ns;           /* last time its socket took all we wrote */
	int at_bound;                  /* live and queue_events behind: holds rendering */
	uint64_t slow_demotions;       /* times it read too slowly and went to catch-up */
	struct fb_rf_cred cred;        /* what authenticated it (rf_auth_reload.h) */
	int revoked;                   /* that was revoked: close it (reason said) */
};

/* Position a new subscriber: since=N -> next_id N+1, else the live head.
 * The kind is FB_WS_SUB_WS; an SSE stream sets kind and rf afterwards. */
void fb_ws_sub_init(struct fb_ws_sub *s, const struct fb_filter *f, uint64_t head_id);
void fb_ws_sub_release(struct fb_ws_sub *s); /* closes the reader, frees rf */

static inline uint64_t fb_ws_sub_lag(const struct fb_ws_sub *s, uint64_t head_id)
{
	return head_id >= s->next_id ? head_id - s->next_id + 1 : 0;
}

/* 1 if a live subscriber just fell too far behind (call once per batch);
 * it is then FB_WS_SUB_OVERFLOWED with missed/resume_since set. */
int fb_ws_sub_check_lag(struct fb_ws_sub *s, const struct fb_ws_src *src);

/* Cut a live subscriber off: FB_WS_SUB_OVERFLOWED with missed/resume_since
 * set against head_id. */
void fb_ws_sub_overflow(struct fb_ws_sub *s, uint64_t head_id);

/* Ring frames pointed at instead of copied (fb_ws_sub_fill): valid until
 * the ring next changes, so the caller hands them to the kernel at once.
 * They are bounded by budget (bytes) and max (frames), not by the fill's
 * budget for copies: pointing costs no memory, so one sendmsg can take far
 * more than a copy should hold. id[i] (optional) is v[i]'s EventId, for
 * fb_ws_sub_unsend. */
struct fb_ws_iov {
	struct iovec *v;
	int n, max;
	size_t bytes;
	size_t budget;
	uint64_t *id;
};

/* Append whole frames for s to out until out->len reaches budget (at least
 * one frame if any is due). *more is set when more is ready right now.
 * With iov (a WebSocket subscriber), frames from the ring are not copied
 * but appended to iov, up to iov->budget bytes;
 * journal replay and notices still go to out, and a fill puts frames in
 * one of the two only. Returns 0 or a negative error (a journal failure:
 * close the subscriber). */
int fb_ws_sub_fill(struct fb_ws_sub *s, const struct fb_ws_src *src, struct fb_buf *out,
		   size_t budget, int *more, struct fb_ws_iov *iov);

/* The socket took iov's frames before first only (iov->id set): s goes back
 * to iov->id[first], to be written from the ring again (or the journal, if
 * the ring moved past it) when its socket drains. Nothing is copied or held
 * for it meanwhile. Its lag is no more than before the fill that made iov. */
void fb_ws_sub_unsend(struct fb_ws_sub *s, const struct fb_ws_src *src, const struct fb_ws_iov *iov,
		      int first);

#endif
