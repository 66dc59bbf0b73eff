#include "ws_sub.h"

#include "fb_err.h"
#include "fb_log.h"
#include "fb_redfish.h"
#include "journal.h"

#include <string.h>

/* Per fill: how many ring messages we look at (a narrow filter must not
 * turn one callback into a scan of the whole ring), and how many journal
 * records we decode (replay is slower; others must get a turn). */
#define RING_SCAN_MAX 8192
#define JOURNAL_CHUNK_MAX 512

void fb_ws_sub_init(struct fb_ws_sub *s, const struct fb_filter *f, uint64_t head_id)
{
	memset(s, 0, sizeof(*s));
	s->filter = *f;
	if (f->has_since) {
		s->next_id = f->since == UINT64_MAX ? UINT64_MAX : f->since + 1;
		s->state = FB_WS_SUB_CATCHUP;
	} else {
		s->next_id = head_id + 1;
		s->state = FB_WS_SUB_LIVE;
	}
}

void fb_ws_sub_release(struct fb_ws_sub *s)
{
	if (s->reader)
		fb_journal_reader_close(s->reader);
	s->reader = NULL;
	fb_rf_filter_free(s->rf);
	s->rf = NULL;
}

int fb_ws_sub_check_lag(struct fb_ws_sub *s, const struct fb_ws_src *src)
{
	if (s->state != FB_WS_SUB_LIVE)
		return 0;
	uint64_t lag = fb_ws_sub_lag(s, src->head_id);
	uint64_t oldest = fb_ws_ring_oldest_id(src->ring);
	if (lag <= src->queue_events && !(lag && s->next_id < oldest))
		return 0;
	fb_ws_sub_overflow(s, src->head_id);
	return 1;
}

void fb_ws_sub_overflow(struct fb_ws_sub *s, uint64_t head_id)
{
	s->state = FB_WS_SUB_OVERFLOWED;
	s->missed = fb_ws_sub_lag(s, head_id);
	s->resume_since = s->next_id - 1;
}

/* Tell the subscriber that [next_id, first_available) is gone and move on. */
static int skip_gap(struct fb_ws_sub *s, uint64_t first_available, struct fb_buf *out)
{
	int rc = s->kind == FB_WS_SUB_SSE
			 ? fb_sse_render_missed_frame(out, first_available - s->next_id, first_available - 1)
			 : fb_ws_render_missed_frame(out, first_available - s->next_id, first_available - 1);
	if (rc)
		return rc;
	s->sent++;
	s->next_id = first_available;
	return 0;
}

static int match_event(const struct fb_ws_sub *s, const struct fb_event *ev, const char *fabric)
{
	if (!fb_filter_quiet_ok(&s->filter, fb_event_quiet(ev)))
		return 0;
	if (s->kind == FB_WS_SUB_SSE) {
		char origin[FB_REDFISH_ORIGIN_MAX];
		struct fb_rf_attrs a;
		fb_ws_event_rf_attrs(ev, fabric, origin, &a);
		return fb_rf_filter_match(s->rf, &a);
	}
	struct fb_redfish_class cls;
	fb_redfish_classify(ev, &cls);
	char origin[FB_REDFISH_ORIGIN_MAX];
	const char *o = NULL;
	if (fb_filter_wants_origin(&s->filter) &&
	    fb_redfish_origin(ev, fabric, origin, sizeof(origin)) >= 0)
		o = origin;
	return fb_filter_match(&s->filter, cls.message_id, cls.severity, o);
}

/* Replay from the journal up to the record before the ring's oldest (or the
 * head when the ring is empty). */
static int fill_journal(struct fb_ws_sub *s, const struct fb_ws_src *src, struct fb_buf *out,
			size_t budget, int *more)
{
	uint64_t oldest = fb_ws_ring_oldest_id(src->ring);
	uint64_t limit = oldest ? oldest - 1 : src->head_id;
	if (!src->journal_dir)
		return skip_gap(s, limit + 1, out);
	if (!s->reader) {
		int rc = fb_journal_reader_open(src->journal_dir, s->next_id - 1, &s->reader);
		if (rc < 0) {
			fb_log_warn("ws %s: cannot open journal %s for replay after %llu: %s", s->peer,
				    src->journal_dir, (unsigned long long)(s->next_id - 1),
				    fb_strerror(rc));
			return rc;
		}
	}
	for (int n = 0; n < JOURNAL_CHUNK_MAX && out->len < budget; n++) {
		uint64_t id;
		struct fb_event ev;
		int rc = fb_journal_reader_next(s->reader, limit, &id, &ev);
		if (rc == FB_EGONE) {
			rc = skip_gap(s, fb_journal_reader_gap(s->reader), out);
			if (rc)
				return rc;
			continue;
		}
		if (rc < 0) {
			fb_log_warn("ws %s: journal replay from %s failed at EventId %llu: %s", s->peer,
				    src->journal_dir, (unsigned long long)s->next_id, fb_strerror(rc));
			return rc;
		}
		if (rc == 0) {
			/* Everything up to limit is read. Ids the journal does not
			 * have (no record was kept) are reported, not waited for. */
			fb_journal_reader_close(s->reader);
			s->reader = NULL;
			if (s->next_id <= limit)
				return skip_gap(s, limit + 1, out);
			*more = oldest != 0;
			return 0;
		}
		if (id < s->next_id)
			continue;
		s->next_id = id + 1;
		if (!match_event(s, &ev, src->default_fabric))
			continue;
		rc = s->kind == FB_WS_SUB_SSE ? fb_sse_render_frame(out, &ev, id, src->default_fabric)
					      : fb_ws_render_frame(out, &ev, id, src->default_fabric);
		if (rc)
			return rc;
		s->sent++;
		s->replayed++;
	}
	*more = 1;
	return 0;
}

/* One frame for a WebSocket subscriber: pointed at (iov) or copied. */
static int put_frame(const struct fb_ws_msg *m, struct fb_buf *out, struct fb_ws_iov *iov)
{
	if (!iov)
		return fb_buf_put(out, fb_ws_msg_frame(m), m->frame_len);
	if (iov->id)
		iov->id[iov->n] = m->event_id;
	iov->v[iov->n++] = (struct iovec){ (void *)fb_ws_msg_frame(m), m->frame_len };
	iov->bytes += m->frame_len;
	return 0;
}

static void fill_ring(struct fb_ws_sub *s, const struct fb_ws_src *src, struct fb_buf *out,
		      size_t budget, int *more, struct fb_ws_iov *iov)
{
	const struct fb_ws_ring *r = src->ring;
	uint64_t seq = fb_ws_ring_find(r, s->next_id);
	int scanned = 0;
	for (; seq < r->head; seq++) {
		if ((iov ? iov->bytes >= iov->budget || iov->n == iov->max : out->len >= budget) ||
		    scanned++ == RING_SCAN_MAX) {
			*more = 1;
			break;
		}
		struct fb_ws_msg *m = fb_ws_ring_at(r, seq);
		s->next_id = m->event_id + 1;
		if (!fb_filter_quiet_ok(&s->filter, m->quiet))
			continue;
		/* fb_buf_put can only fail on ENOMEM; the message is then
		 * lost for this subscriber alone and the lag check catches up */
		if (s->kind == FB_WS_SUB_SSE) {
			if ((!s->rf || fb_rf_filter_match(s->rf, fb_ws_msg_rf(m))) && fb_ws_msg_put_sse(m, out) == 0)
				s->sent++;
			continue;
		}
		if (!fb_filter_match(&s->filter, m->message_id, m->severity, fb_ws_msg_origin(m)))
			continue;
		if (put_frame(m, out, iov) == 0)
			s->sent++;
	}
	if (seq == r->head && src->head_id >= s->next_id)
		s->next_id = src->head_id + 1;
}

/* Nothing left to send: a subscriber that asked for since=<head>, or read
 * the journal up to the head, is live now, not when the next event comes. */
static void caught_up(struct fb_ws_sub *s)
{
	if (s->state != FB_WS_SUB_CATCHUP)
		return;
	if (s->reader) {
		fb_journal_reader_close(s->reader);
		s->reader = NULL;
	}
	s->state = FB_WS_SUB_LIVE;
}

int fb_ws_sub_fill(struct fb_ws_sub *s, const struct fb_ws_src *src, struct fb_buf *out,
		   size_t budget, int *more, struct fb_ws_iov *iov)
{
	*more = 0;
	if (s->state >= FB_WS_SUB_OVERFLOWED)
		return 0;
	if (s->next_id > src->head_id) {
		caught_up(s);
		return 0;
	}
	uint64_t oldest = fb_ws_ring_oldest_id(src->ring);
	if (!oldest || s->next_id < oldest) {
		if (s->state == FB_WS_SUB_LIVE && oldest) {
			/* fell out of the ring (only when ring_events < queue_events) */
			fb_ws_sub_check_lag(s, src);
			return 0;
		}
		s->state = FB_WS_SUB_CATCHUP;
		int rc = fill_journal(s, src, out, budget, more);
		if (!rc && s->next_id > src->head_id)
			caught_up(s);
		return rc;
	}
	if (s->reader) {
		fb_journal_reader_close(s->reader);
		s->reader = NULL;
	}
	fill_ring(s, src, out, budget, more, s->kind == FB_WS_SUB_WS ? iov : NULL);
	if (s->state == FB_WS_SUB_CATCHUP && fb_ws_sub_lag(s, src->head_id) <= src->queue_events)
		s->state = FB_WS_SUB_LIVE;
	return 0;
}

void fb_ws_sub_unsend(struct fb_ws_sub *s, const struct fb_ws_src *src, const struct fb_ws_iov *iov,
		      int first)
{
	if (first >= iov->n)
		return;
	s->next_id = iov->id[first];
	s->sent -= (uint64_t)(iov->n - first);
	/* the fill may have made it live on the strength of frames it did not
	 * get: it is live again once the ring has them out (fill_ring) */
	if (s->state == FB_WS_SUB_LIVE && fb_ws_sub_lag(s, src->head_id) > src->queue_events)
		s->state = FB_WS_SUB_CATCHUP;
}
