/* fb_ws_client.c - the resuming /ws/events subscriber of fb_ws_client.h.
 *
 * Two threads, one hand-over:
 *   - the lws thread owns the connection: connect, reassemble, read the
 *     EventId (a scan of the envelope's "Id", no JSON parse), drop
 *     duplicates, append each message to `in`, stop reading at max_queued;
 *   - the owner's loop takes `in` whole (a buffer swap under the mutex) and
 *     runs the callbacks from its own copy, at most DELIVER_BATCH per wakeup
 *     so that the rest of its loop keeps its turn.
 * Wakeups: event_active on the owner's base (lws thread -> owner) and
 * lws_cancel_service (owner -> lws thread, to resume reading). Both sides
 * write each flag under the mutex, so no wakeup is lost.
 *
 * The resume point `pos` is the newest EventId queued: what is queued will
 * be delivered, so a reconnect never needs to see it again.
 *
 * Direct delivery (opts.direct) skips the hand-over: hand() runs on_message
 * on the lws thread from lws's receive buffer, and service_main calls
 * on_drained after each service pass that delivered something.
 */
#include "fb_ws_client.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_event_scan.h"
#include "fb_http.h"
#include "fb_log.h"
#include "fb_time.h"

#include <event2/event.h>
#include <jansson.h>
#include <libwebsockets.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WSC_MAX_MSG (1u << 20)
#define WSC_RX_BUF (256u * 1024)   /* one read(2) takes ~500 events of a burst */
#define WSC_DELIVER_BATCH 1024
#define WSC_STATUS_TIMEOUT_MS 2000
#define WSC_STATUS_MAX (16u << 20)
#define WSC_STABLE_MS 1000     /* a connection this old resets the back-off */
#define WSC_KEEP_BUF (4u << 20) /* larger hand-over buffers are freed once empty */

enum { REC_MSG = 1, REC_UP, REC_DOWN };

/* One queued record: this header, len bytes, a NUL, padding to 8. */
struct rec {
	uint32_t kind;
	uint32_t len;
	uint64_t id;
};

struct fb_wsc {
	/* set at start, read-only after */
	char *host, *query;
	uint16_t port;
	char url[300];         /* ws://host:port/ws/events, for every log line */
	char hosthdr[280];
	const struct fb_http_auth *auth; /* not owned; NULL: plain, no token */
	int min_ms, max_ms;
	size_t max_queued;
	struct event_base *base;
	void (*on_message)(void *arg, const char *json, size_t len, uint64_t event_id);
	void (*on_state)(void *arg, int connected, const char *why);
	void (*on_drained)(void *arg);
	void *arg;
	int direct;
	struct lws_context *ctx;
	lws_retry_bo_t retry;
	pthread_t thread;
	int thread_started;
	atomic_int stop;
	struct event *wake;    /* on the owner's base */

	/* lws thread only (and the owner after the thread has ended) */
	struct lws *wsi;
	int attempt_live, established, got_msg, resume_now, need_head;
	int reported;          /* last state given to on_state: -1 none, 0, 1 */
	int have_pos;
	int drained_due;       /* direct: messages delivered in this service pass */
	uint64_t pos;          /* newest EventId queued: the resume point */
	struct fb_buf msg;     /* reassembly of a fragmented message */
	int assembling;
	struct fb_buf path;
	char close_why[160];
	int backoff_ms;
	int64_t est_ms;
	unsigned fail_streak;
	lws_sorted_usec_list_t sul;

	/* the hand-over, under mu */
	pthread_mutex_t mu;
	struct fb_buf in;
	size_t queued;         /* messages in `in` plus those not yet delivered from work */
	int wake_pending, paused, resume_rx;

	/* owner only */
	struct fb_buf work;
	size_t work_off;
	int delivering, free_pending;

	/* any thread */
	_Atomic uint64_t last_id, st_delivered, st_notices, st_dups, st_connects, st_oversized,
		st_pauses, st_queued_max;
	atomic_int st_connected;
};

/* ---- the hand-over ------------------------------------------------------ */

static size_t rec_size(size_t len) { return (sizeof(struct rec) + len + 1 + 7) & ~(size_t)7; }

/* lws thread: queue one record and wake the owner. 0, or -ENOMEM. */
static int push(struct fb_wsc *c, uint32_t kind, uint64_t id, const void *p, size_t len)
{
	static const uint8_t zeros[8];
	struct rec h = { kind, (uint32_t)len, id };
	size_t pad = rec_size(len) - sizeof(h) - len;
	int wake = 0, pause = 0, rc;

	pthread_mutex_lock(&c->mu);
	rc = fb_buf_reserve(&c->in, rec_size(len));
	if (!rc) {
		fb_buf_put(&c->in, &h, sizeof(h));
		if (len)
			fb_buf_put(&c->in, p, len);
		fb_buf_put(&c->in, zeros, pad);
		if (kind == REC_MSG) {
			c->queued++;
			if (c->queued > atomic_load_explicit(&c->st_queued_max, memory_order_relaxed))
				atomic_store_explicit(&c->st_queued_max, c->queued, memory_order_relaxed);
			if (c->queued >= c->max_queued && !c->paused && c->wsi)
				c->paused = pause = 1;
		}
		wake = !c->wake_pending;
		c->wake_pending = 1;
	}
	pthread_mutex_unlock(&c->mu);
	if (pause) {
		atomic_fetch_add_explicit(&c->st_pauses, 1, memory_order_relaxed);
		fb_log_debug("%s: %zu messages wait for the owner; pausing reads", c->url, c->max_queued);
		lws_rx_flow_control(c->wsi, 0);
	}
	if (wake)
		event_active(c->wake, EV_READ, 0);
	return rc;
}

/* Owner: n messages delivered (one lock per batch, not per message);
 * resume reading at half the limit. */
static void msgs_done(struct fb_wsc *c, size_t n)
{
	int kick = 0;
	if (!n)
		return;
	pthread_mutex_lock(&c->mu);
	c->queued -= n;
	if (c->paused && !c->resume_rx && c->queued <= c->max_queued / 2)
		c->resume_rx = kick = 1;
	pthread_mutex_unlock(&c->mu);
	if (kick)
		lws_cancel_service(c->ctx);
}

/* lws thread, on the cancel-pipe wakeup. */
static void maybe_resume_rx(struct fb_wsc *c)
{
	pthread_mutex_lock(&c->mu);
	int resume = c->resume_rx && c->paused;
	c->resume_rx = 0;
	if (resume)
		c->paused = 0;
	pthread_mutex_unlock(&c->mu);
	if (resume && c->wsi) {
		fb_log_debug("%s: the owner caught up; reading again", c->url);
		lws_rx_flow_control(c->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
}

static void wsc_free(struct fb_wsc *c);

/* Owner's loop: take what the lws thread queued and run the callbacks. */
static void deliver(evutil_socket_t fd, short what, void *arg)
{
	struct fb_wsc *c = arg;
	int n = 0;
	(void)fd;
	(void)what;
	c->delivering = 1;
	while (n < WSC_DELIVER_BATCH && !c->free_pending) {
		if (c->work_off == c->work.len) {
			if (c->work.cap > WSC_KEEP_BUF) /* do not keep a burst's memory */
				fb_buf_free(&c->work);
			fb_buf_reset(&c->work);
			c->work_off = 0;
			pthread_mutex_lock(&c->mu);
			struct fb_buf t = c->in;
			c->in = c->work;
			c->work = t;
			c->wake_pending = 0;
			pthread_mutex_unlock(&c->mu);
			if (!c->work.len)
				break;
		}
		struct rec h;
		memcpy(&h, c->work.data + c->work_off, sizeof(h));
		const char *p = (const char *)c->work.data + c->work_off + sizeof(h);
		c->work_off += rec_size(h.len);
		if (h.kind == REC_MSG) {
			c->on_message(c->arg, p, h.len, h.id);
			if (h.id)
				atomic_store(&c->last_id, h.id);
			atomic_fetch_add_explicit(&c->st_delivered, 1, memory_order_relaxed);
			if (c->free_pending) /* fb_wsc_stop() in the callback: the thread is gone */
				break;
			n++;
		} else if (c->on_state) {
			c->on_state(c->arg, h.kind == REC_UP, p);
		}
	}
	c->delivering = 0;
	if (c->free_pending) {
		wsc_free(c);
		return;
	}
	msgs_done(c, (size_t)n);
	if (n == WSC_DELIVER_BATCH) /* more may wait: after the loop's other events */
		event_active(c->wake, EV_READ, 0);
}

/* ---- the lws thread: messages ------------------------------------------- */

/* One message for the owner: queued, or (direct) handed over right here.
 * 0, or -ENOMEM. */
static int hand(struct fb_wsc *c, uint64_t id, const char *p, size_t len)
{
	if (!c->direct)
		return push(c, REC_MSG, id, p, len);
	if (atomic_load_explicit(&c->stop, memory_order_relaxed))
		return 0; /* fb_wsc_stop promised no more callbacks */
	c->on_message(c->arg, p, len, id);
	if (id)
		atomic_store_explicit(&c->last_id, id, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->st_delivered, 1, memory_order_relaxed);
	c->drained_due = 1;
	return 0;
}

/* A whole message. -1 closes the connection. */
static int on_whole(struct fb_wsc *c, const char *p, size_t len)
{
	uint64_t id = 0;
	c->got_msg = 1;
	if (!len)
		return 0;
	struct fb_event_missed m;
	/* A notice's Id is "missed-N", no number: a numbered event needs no
	 * search of its whole text for the notice's MessageId. */
	int have_id = fb_event_scan_id(p, len, &id);
	if (!have_id && fb_event_scan_missed(p, len, &m)) {
		atomic_fetch_add_explicit(&c->st_notices, 1, memory_order_relaxed);
		if (hand(c, 0, p, len))
			goto nomem;
		if (m.have_resume && (!c->have_pos || m.resume_since > c->pos)) {
			c->pos = m.resume_since;
			c->have_pos = 1;
		}
		fb_log_warn("%s: missed notice: %" PRIu64 " events missed (this subscriber fell behind); "
			    "resuming with since=%" PRIu64, c->url, m.missed, c->pos);
		snprintf(c->close_why, sizeof(c->close_why), "missed notice");
		c->resume_now = 1;
		return -1;
	}
	if (have_id && c->have_pos && id <= c->pos) {
		if (!atomic_fetch_add_explicit(&c->st_dups, 1, memory_order_relaxed))
			fb_log_info("%s: dropping EventId %" PRIu64 ", already queued up to %" PRIu64
				    " (counted, logged once)", c->url, id, c->pos);
		return 0;
	}
	if (hand(c, have_id ? id : 0, p, len))
		goto nomem;
	if (have_id) {
		c->pos = id;
		c->have_pos = 1;
	}
	return 0;
nomem:
	fb_log_err("%s: out of memory queueing a message after EventId %" PRIu64 "; reconnecting",
		   c->url, c->pos);
	snprintf(c->close_why, sizeof(c->close_why), "out of memory");
	return -1;
}

/* A frame or part of one; whole messages skip the reassembly buffer. */
static int on_rx(struct fb_wsc *c, struct lws *wsi, const char *in, size_t len)
{
	int final = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
	if (!c->assembling && final && len <= WSC_MAX_MSG)
		return on_whole(c, in, len);
	if (c->msg.len + len > WSC_MAX_MSG) {
		atomic_fetch_add_explicit(&c->st_oversized, 1, memory_order_relaxed);
		fb_log_err("%s: message after EventId %" PRIu64 " exceeds %u bytes; closing the "
			   "connection", c->url, c->pos, WSC_MAX_MSG);
		snprintf(c->close_why, sizeof(c->close_why), "message over %u bytes", WSC_MAX_MSG);
		return -1;
	}
	if (fb_buf_put(&c->msg, in, len)) {
		snprintf(c->close_why, sizeof(c->close_why), "out of memory");
		return -1;
	}
	c->assembling = 1;
	if (!final)
		return 0;
	int rc = on_whole(c, (const char *)c->msg.data, c->msg.len);
	fb_buf_reset(&c->msg);
	c->assembling = 0;
	return rc;
}

/* ---- the lws thread: connections ---------------------------------------- */

static void connect_now(struct fb_wsc *c);

static void on_timer(lws_sorted_usec_list_t *sul)
{
	struct fb_wsc *c = lws_container_of(sul, struct fb_wsc, sul);
	if (!atomic_load(&c->stop))
		connect_now(c);
}

/* "since=N", or "live" before the position is known (lws thread). */
static const char *pos_text(const struct fb_wsc *c, char *buf, size_t n)
{
	if (!c->have_pos)
		return "live (no position yet)";
	snprintf(buf, n, "since=%" PRIu64, c->pos);
	return buf;
}

static void report(struct fb_wsc *c, int up, const char *why)
{
	if (c->reported == up)
		return;
	c->reported = up;
	atomic_store(&c->st_connected, up);
	push(c, up ? REC_UP : REC_DOWN, 0, why, strlen(why)); /* out of memory: the log has it */
}

/* The attempt failed or the open connection ended: come back later. */
static void lost(struct fb_wsc *c, const char *why)
{
	int was_open = c->established, delay;
	char text[300], pb[40];
	if (!c->attempt_live)
		return;
	c->attempt_live = c->established = c->assembling = 0;
	c->wsi = NULL;
	fb_buf_reset(&c->msg);
	if (atomic_load(&c->stop))
		return;
	if (was_open && (c->got_msg || fb_time_ms() - c->est_ms >= WSC_STABLE_MS))
		c->backoff_ms = c->min_ms;
	delay = c->backoff_ms;
	c->backoff_ms = c->backoff_ms > c->max_ms / 2 ? c->max_ms : 2 * c->backoff_ms;
	if (c->resume_now) {
		c->resume_now = 0;
		delay = c->min_ms;
	}
	snprintf(text, sizeof(text), "%s: %s", was_open ? "connection lost" : "cannot connect", why);
	/* a long outage: the first failures, then about one line a minute */
	if (was_open || ++c->fail_streak <= 3 || c->fail_streak % 12 == 0)
		fb_log_warn("%s: %s; reconnecting in %d ms with %s", c->url, text, delay,
			    pos_text(c, pb, sizeof(pb)));
	report(c, 0, text);
	lws_sul_schedule(c->ctx, 0, &c->sul, on_timer, (lws_usec_t)delay * 1000);
}

/* from_now: the broker's head EventId, so that even the first connection
 * has a position to resume from. 0, or <0 to retry later (why set). */
static int learn_head(struct fb_wsc *c, char *why, size_t whysz)
{
	struct fb_http_resp r;
	char err[256];
	int rc = fb_http_request_as(c->auth ? &c->auth->client : NULL, c->host, c->port, "GET",
				    "/status", NULL, NULL, 0, WSC_STATUS_TIMEOUT_MS, WSC_STATUS_MAX, &r,
				    err, sizeof(err));
	if (rc < 0) {
		snprintf(why, whysz, "GET /status for the head EventId: %s", err);
		return rc;
	}
	json_t *root = r.status == 200 ? json_loadb((const char *)r.body.data, r.body.len, 0, NULL) : NULL;
	json_t *head = json_object_get(json_object_get(root, "websocket"), "head_id");
	c->need_head = 0;
	if (json_is_integer(head) && json_integer_value(head) >= 0) {
		c->pos = (uint64_t)json_integer_value(head);
		c->have_pos = 1;
		fb_log_info("%s: from now: the broker's head is EventId %" PRIu64, c->url, c->pos);
	} else {
		fb_log_warn("%s: from now: GET /status gave no websocket.head_id (HTTP %d); subscribing "
			    "live, so events published during a reconnect before the first event are "
			    "not replayed", c->url, r.status);
	}
	json_decref(root);
	fb_http_resp_free(&r);
	return 0;
}

static void connect_now(struct fb_wsc *c)
{
	struct lws_client_connect_info ci;
	char why[300];
	c->attempt_live = 1;
	c->close_why[0] = '\0';
	if (c->need_head && learn_head(c, why, sizeof(why)) < 0) {
		lost(c, why);
		return;
	}
	fb_buf_reset(&c->path);
	int rc = fb_buf_puts(&c->path, "/ws/events");
	if (!rc && c->have_pos)
		rc = fb_buf_printf(&c->path, "?since=%" PRIu64, c->pos);
	if (!rc && c->query)
		rc = fb_buf_printf(&c->path, "%c%s", c->have_pos ? '&' : '?', c->query);
	if (rc || fb_buf_put_u8(&c->path, 0)) {
		lost(c, "out of memory");
		return;
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = c->ctx;
	ci.address = c->host;
	ci.port = c->port;
	ci.path = (const char *)c->path.data;
	ci.host = c->hosthdr;
	ci.origin = c->hosthdr;
	ci.ietf_version_or_minus_one = -1;
	if (c->auth && c->auth->tls) {
		ci.ssl_connection = LCCSCF_USE_SSL; /* chain and host name checked */
		ci.alpn = "http/1.1";
	}
	fb_log_debug("%s: connecting (%s)", c->url, (const char *)c->path.data);
	if (!lws_client_connect_via_info(&ci))
		lost(c, "could not start the connection"); /* a no-op if lws reported it */
}

static void on_established(struct fb_wsc *c, struct lws *wsi)
{
	char text[200], pb[40];
	c->wsi = wsi;
	c->established = 1;
	c->got_msg = 0;
	c->est_ms = fb_time_ms();
	c->fail_streak = 0;
	uint64_t n = atomic_fetch_add(&c->st_connects, 1);
	snprintf(text, sizeof(text), "%s with %s", n ? "reconnected" : "connected",
		 pos_text(c, pb, sizeof(pb)));
	fb_log_info("%s: %s", c->url, text);
	/* A new connection starts reading; pause it at once if the owner is
	 * still behind. */
	pthread_mutex_lock(&c->mu);
	int pause = c->queued >= c->max_queued;
	c->paused = pause;
	c->resume_rx = 0;
	pthread_mutex_unlock(&c->mu);
	if (pause)
		lws_rx_flow_control(wsi, 0);
	report(c, 1, text);
}

void fb_wsc_close_text(const void *payload, size_t len, char *out, size_t outsz)
{
	/* a payload shorter than the 2-byte code has neither (r.err) */
	struct fb_rd r;
	fb_rd_init(&r, payload, len);
	unsigned code = fb_rd_u16(&r);
	size_t n = fb_rd_left(&r) > 100 ? 100 : fb_rd_left(&r);
	const uint8_t *txt = n ? fb_rd_take(&r, n) : NULL;
	if (r.err)
		snprintf(out, outsz, "closed by the broker");
	else
		snprintf(out, outsz, "closed by the broker, code %u%s%.*s", code, n ? ": " : "", (int)n,
			 txt ? (const char *)txt : "");
}

static int wsc_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			size_t len)
{
	struct fb_wsc *c = lws_context_user(lws_get_context(wsi));
	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		on_established(c, wsi);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		return on_rx(c, wsi, in, len);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		fb_wsc_close_text(in, len, c->close_why, sizeof(c->close_why));
		return 0;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
		char why[200];
		int status = wsi ? (int)lws_http_client_http_response(wsi) : 0;
		snprintf(why, sizeof(why), "%.*s", in ? (int)(len > 150 ? 150 : len) : 0,
			 in ? (const char *)in : "");
		if (!why[0])
			snprintf(why, sizeof(why), "connection failed");
		if (status > 0 && status != 101)
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " (HTTP %d)", status);
		lost(c, why);
		return 0;
	}
	case LWS_CALLBACK_CLIENT_CLOSED:
		lost(c, c->close_why[0] ? c->close_why : "connection closed");
		return 0;
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: { /* in: char ** cursor, len: room */
		if (!c->auth || !c->auth->token[0])
			return 0;
		char v[FB_HTTP_TOKEN_MAX + 8];
		int n = snprintf(v, sizeof(v), "Bearer %s", c->auth->token);
		int rc = lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
						      (const unsigned char *)v, n,
						      (unsigned char **)in, *(unsigned char **)in + len);
		memset(v, 0, sizeof(v));
		return rc ? -1 : 0;
	}
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (c)
			maybe_resume_rx(c);
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols wsc_protocols[] = {
	{ "fabricbus-events-client", wsc_callback, 0, WSC_RX_BUF, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void *service_main(void *arg)
{
	struct fb_wsc *c = arg;
	connect_now(c);
	while (!atomic_load(&c->stop)) {
		if (lws_service(c->ctx, 0) < 0) {
			fb_log_err("%s: libwebsockets service failed; the subscriber stops", c->url);
			break;
		}
		if (c->drained_due && c->on_drained) {
			c->drained_due = 0;
			c->on_drained(c->arg);
		}
	}
	return NULL;
}

static void lws_emit(int level, const char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	fb_log(level & LLL_ERR ? FB_LOG_ERR : FB_LOG_WARN, "lws: %.*s", (int)n, line);
}

/* ---- the public API ----------------------------------------------------- */

/* Query characters a URL may carry as they are (RFC 3986 query). */
static int query_ok(const char *q, char *err, size_t errsz)
{
	for (const char *s = q; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("-._~%!$&'()*+,;=:@/?", *s))) {
			return fb_err_set(err, errsz, 0,
					  "query \"%s\": character 0x%02x must be percent-encoded", q,
					  (unsigned char)*s);
		}
	for (const char *s = q; s; s = strchr(s, '&'), s = s ? s + 1 : NULL)
		if (strncmp(s, "since=", 6) == 0 || strcmp(s, "since") == 0 || strncmp(s, "since&", 6) == 0)
			return fb_err_set(err, errsz, 0,
					  "query \"%s\": since is set by the client (use the since option)", q);
	return 1;
}

static void wsc_free(struct fb_wsc *c)
{
	if (c->wake)
		event_free(c->wake);
	fb_buf_free(&c->in);
	fb_buf_free(&c->work);
	fb_buf_free(&c->msg);
	fb_buf_free(&c->path);
	pthread_mutex_destroy(&c->mu);
	free(c->host);
	free(c->query);
	free(c);
}

struct fb_wsc *fb_wsc_start(const struct fb_wsc_opts *o, char *err, size_t errsz)
{
	char dummy[8];
	if (!err || !errsz) {
		err = dummy;
		errsz = sizeof(dummy);
	}
	err[0] = '\0';
	if (!o || !o->host || !*o->host || strlen(o->host) > 255 || strpbrk(o->host, " /?#@") ||
	    !o->port || !o->base || !o->on_message || o->reconnect_min_ms < 0 ||
	    o->reconnect_max_ms < 0) {
		fb_err_set(err, errsz, -EINVAL,
			   "ws client: bad options (host, port, base and on_message are required)");
		return NULL;
	}
	const char *q = o->query;
	while (q && (*q == '?' || *q == '&'))
		q++;
	if (q && !*q)
		q = NULL;
	if (q && !query_ok(q, err, errsz))
		return NULL;

	struct fb_wsc *c = calloc(1, sizeof(*c));
	if (!c) {
		fb_err_set(err, errsz, -ENOMEM, "ws client: out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->host = strdup(o->host);
	c->query = q ? strdup(q) : NULL;
	c->port = o->port;
	c->base = o->base;
	c->on_message = o->on_message;
	c->on_state = o->on_state;
	c->direct = o->direct;
	c->on_drained = o->direct ? o->on_drained : NULL;
	c->arg = o->arg;
	c->auth = o->auth;
	c->max_queued = o->max_queued ? o->max_queued : 4096;
	c->min_ms = o->reconnect_min_ms ? o->reconnect_min_ms : 100;
	c->max_ms = o->reconnect_max_ms ? o->reconnect_max_ms : 5000;
	if (c->max_ms < c->min_ms)
		c->max_ms = c->min_ms;
	c->backoff_ms = c->min_ms;
	c->reported = -1;
	c->have_pos = o->since || !o->from_now;
	c->pos = o->since;
	c->need_head = !c->have_pos;
	atomic_init(&c->last_id, o->since);
	snprintf(c->hosthdr, sizeof(c->hosthdr), strchr(o->host, ':') ? "[%s]:%u" : "%s:%u", o->host,
		 (unsigned)o->port);
	snprintf(c->url, sizeof(c->url), "%s://%s/ws/events", fb_http_auth_scheme(o->auth, 1),
		 c->hosthdr);
	c->wake = event_new(o->base, -1, 0, deliver, c);
	if (!c->host || (q && !c->query) || !c->wake) {
		fb_err_set(err, errsz, -ENOMEM, "%s: out of memory", c->url);
		wsc_free(c);
		return NULL;
	}

	lws_set_log_level(LLL_ERR, lws_emit); /* process-wide; connection errors are ours to log */
	/* The broker pings every WsPingInterval (30 s); a broker host that
	 * vanishes without a FIN is noticed by our own pings. */
	c->retry = (lws_retry_bo_t){ .secs_since_valid_ping = 30, .secs_since_valid_hangup = 75 };
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = wsc_protocols;
	info.gid = -1;
	info.uid = -1;
	info.user = c;
	info.pt_serv_buf_size = WSC_RX_BUF;
	info.fd_limit_per_thread = 16; /* one connection and lws's own pipe */
	info.retry_and_idle_policy = &c->retry;
	info.options = LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
	if (c->auth && c->auth->tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.client_ssl_ca_filepath = c->auth->tls_ca;
	}
	c->ctx = lws_create_context(&info);
	if (!c->ctx) {
		fb_err_set(err, errsz, -EIO, "%s: cannot create the libwebsockets context", c->url);
		wsc_free(c);
		return NULL;
	}
	/* before the thread owns have_pos and pos */
	char pb[40];
	fb_log_info("%s: subscribing (%s%s%s)", c->url,
		    c->have_pos ? pos_text(c, pb, sizeof(pb)) : "from now", c->query ? ", " : "",
		    c->query ? c->query : "");
	int rc = pthread_create(&c->thread, NULL, service_main, c);
	if (rc) {
		fb_err_set(err, errsz, -rc,
			   "%s: cannot start the WebSocket thread: %s", c->url, strerror(rc));
		lws_context_destroy(c->ctx);
		wsc_free(c);
		return NULL;
	}
	c->thread_started = 1;
	return c;
}

uint64_t fb_wsc_last_id(const struct fb_wsc *c)
{
	return atomic_load(&((struct fb_wsc *)c)->last_id);
}

void fb_wsc_get_stats(const struct fb_wsc *cc, struct fb_wsc_stats *st)
{
	struct fb_wsc *c = (struct fb_wsc *)cc; /* the mutex and atomics, nothing else */
	memset(st, 0, sizeof(*st));
	st->delivered = atomic_load(&c->st_delivered);
	st->notices = atomic_load(&c->st_notices);
	st->duplicates = atomic_load(&c->st_dups);
	st->connects = atomic_load(&c->st_connects);
	st->reconnects = st->connects ? st->connects - 1 : 0;
	st->oversized = atomic_load(&c->st_oversized);
	st->rx_pauses = atomic_load(&c->st_pauses);
	st->queued_max = atomic_load(&c->st_queued_max);
	st->connected = atomic_load(&c->st_connected);
	pthread_mutex_lock(&c->mu);
	st->queued = c->queued;
	pthread_mutex_unlock(&c->mu);
}

void fb_wsc_stop(struct fb_wsc *c)
{
	if (!c || c->free_pending)
		return;
	atomic_store(&c->stop, 1);
	if (c->thread_started) {
		lws_cancel_service(c->ctx);
		pthread_join(c->thread, NULL);
	}
	lws_sul_cancel(&c->sul);
	lws_context_destroy(c->ctx); /* CLIENT_CLOSED runs here; lost() sees stop */
	c->ctx = NULL;
	fb_log_info("%s: stopped after %" PRIu64 " messages (last EventId %" PRIu64 ")", c->url,
		    (uint64_t)atomic_load(&c->st_delivered), (uint64_t)atomic_load(&c->last_id));
	if (c->delivering) {
		c->free_pending = 1; /* deliver() frees once the callback returns */
		return;
	}
	wsc_free(c);
}
