/* ws_server.c - the libwebsockets context, its service thread, the publish
 * queue from the libevent loop, and the HTTP side (/status, upgrade checks).
 * The ring lives in ws_ring.c, positions and replay in ws_sub.c, query
 * parsing in ../filter.c, /fabric/map and /fabric/jobs in ws_fabric.c.
 *
 * Writes: each subscriber gets at most one write per WRITEABLE callback, of
 * whole pre-framed messages concatenated (up to WRITE_BUDGET bytes). lws
 * 4.1 sends LWS_WRITE_HTTP on a ws connection as raw bytes (the ws role's
 * write_role_protocol jumps straight to lws_issue_raw for HTTP write types),
 * so frames rendered once in the ring go out untouched. lws buffers what the
 * socket does not take and only calls WRITEABLE again once that is flushed,
 * so at most one write per subscriber is ever held in lws memory. On a
 * plain WebSocket connection the ring's frames are not even concatenated:
 * one sendmsg points at them in their slots, and only what the socket does
 * not take is copied, to lws (write_iov): at most the one frame the socket
 * took part of. The frames it took none of are not held anywhere: the
 * subscriber's position goes back to the first of them, and they are
 * written from the ring again once its socket drains. So a zero-copy write
 * can be much larger than WRITE_BUDGET (WRITE_IOV_BUDGET: fewer, larger
 * sendmsg calls) without more memory per subscriber.
 */
#include "ws_server.h"

#include "output.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_metrics.h"
#include "fb_redfish.h"
#include "ws_fabric.h"
#include "filter.h"
#include "ws_http.h"
#include "ws_metrics.h"
#include "ws_ring.h"
#include "ws_sub.h"
#include "ws_www.h"
#include "ws_auth.h"
#include "ws_tls.h"
#include "sse_stream.h"
#include "config.h"

#include <libwebsockets.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define WS_PATH "/ws/events"
#define WRITE_BUDGET (64 * 1024)
/* Writes per WRITEABLE while the socket takes them whole. Generous on
 * purpose: a subscriber is only "too slow" if its socket pushes back, not
 * because this thread spent a pass rendering (one pass renders at most
 * drain_chunk() events, ~600 KB). */
#define WRITES_PER_CALLBACK 64
/* Bytes and ring frames per write when they go out without a copy
 * (write_iov). Larger sendmsg calls cost less per byte (measured in
 * bench_broker.sh: 64 KiB -> 512 KiB cut the WebSocket thread's CPU per
 * event by ~10-15%: an eighth of the syscalls, socket locks and pushes);
 * what the socket does not take is not copied (see the top), so this costs
 * no memory. 1024 frames: the kernel's UIO_MAXIOV, ~512 KiB of the
 * benchmark's ~600-byte events. */
#define WRITE_IOV_BUDGET (512 * 1024)
#define WRITE_IOV_MAX 1024
#define OVERFLOW_CLOSE_TIMEOUT_S 30
/* Committed events waiting for this thread (each a packed record in its
 * batch, ~130-300 bytes: batch.h) before the agents are held: a few
 * commits' worth keeps this thread busy; more would only be memory
 * (docs/configuration.md, peak RSS). */
#define QUEUE_EVENTS 65536
/* A live subscriber at the lag bound holds rendering (and, through the
 * queue, the agents) only while its socket drains: once the kernel has not
 * taken a byte of its output for this long, it is cut off instead. */
#define STALL_NS (2000ull * 1000000ull)
#define BLOCKED_RECHECK_US (100 * 1000)
/* The loop may overshoot the queue bound by one commit (up to
 * FB_PENDING_BATCHES_MAX x FB_BATCH_CAP events) before it holds the agents;
 * past this the batch is refused and the ring reset (should not happen). */
#define QUEUE_OVERSHOOT_EVENTS (1u << 17)
#define HOLD_LOG_NS (10ull * 1000000000ull)

/* Per-connection data: a subscriber once upgraded, an HTTP request before. */
struct ws_pss {
	struct fb_ws_sub sub; /* first: the WebSocket callbacks take user as one */
	struct fb_ws_fabric_req req;
	void *module_conn; /* o.module's state for this connection */
};

struct fb_ws {
	/* set at start, read-only after */
	struct fb_ws_opts o;
	struct fb_ws_http_module module; /* o.module copied; zero if none */
	char *host, *journal_dir, *default_fabric;
	struct lws_context *ctx;
	pthread_t thread;
	lws_retry_bo_t retry;
	atomic_int stop;

	/* the hand-over from the libevent loop (under mu) */
	pthread_mutex_t mu;
	struct fb_batch **q;
	size_t q_n, q_cap, q_events, q_max_events;
	int q_busy;                /* said FB_OUTPUT_BUSY; o.ready owed */
	uint64_t q_holds;          /* times the agents were held */
	uint64_t slow_demotions;   /* live subscribers sent to catch-up (lws thread) */
	uint64_t demote_log_ns;
	uint64_t q_holds_logged, q_hold_log_ns;
	uint64_t q_dropped_events; /* refused because the lws thread fell behind */
	uint64_t q_dropped_last_id;
	char *status_json;
	int *adopt_q;              /* accepted sockets for the lws thread (accept.c) */
	size_t adopt_n, adopt_cap;
	char (*sse_close_q)[32];   /* SSE destinations deleted (any thread) */
	size_t sse_close_n, sse_close_cap;
	struct fb_rf_auth_files *auth_reload; /* re-read tokens/accounts (SIGHUP) */

	/* lws thread only */
	struct fb_batch **q_work; /* taken from q, rendered a chunk at a time */
	size_t q_work_cap, q_work_n, q_work_pos;
	size_t q_work_rec;         /* next record of q_work[q_work_pos] */
	struct fb_record unpacked; /* the record being rendered (batch.h) */
	_Atomic size_t q_work_events; /* taken but not rendered yet */
	uint64_t render_limit;     /* highest EventId rendering may reach now */
	int render_blocked;        /* a live subscriber at the lag bound holds it */
	lws_sorted_usec_list_t recheck; /* while blocked: stall check, resume */
	uint64_t pending_drop_id;
	struct fb_ws_ring ring;
	struct fb_ws_src src;
	struct fb_ws_sub *subs;
	uint32_t n_subs;
	uint64_t ring_resets;
	uint64_t seen_dropped;
	uint64_t sessions_ended_seen; /* o.auth->sessions.ended at the last sweep */
	struct fb_buf out;
	struct fb_ws_fabric fabric; /* /fabric/map, /fabric/jobs */
	struct fb_ws_metrics metrics; /* GET /metrics (ws_metrics.h) */
	lws_sorted_usec_list_t sse_hb; /* heartbeat comments on idle SSE streams */
	uint32_t n_sse;

	/* read by fb_ws_get_stats from any thread */
	_Atomic uint32_t st_subscribers;
	/* HTTP/WebSocket connections handed over and not yet destroyed: the
	 * loop adds at hand-over, the lws thread subtracts at WSI_DESTROY. */
	_Atomic int64_t http_open;
	_Atomic uint64_t st_sent, st_dropped, st_replayed, st_head;
};

/* ---- logging ---- */

static void lws_emit(int level, const char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	fb_log(level & LLL_ERR ? FB_LOG_ERR : FB_LOG_WARN, "lws: %.*s", (int)n, line);
}

/* Parse every "name=value" argument of the request into f. On error *why
 * names the parameter ("since: ..."). */
static int parse_query(struct lws *wsi, struct fb_filter *f, const char **why)
{
	char arg[FB_FILTER_ARG_MAX];
	fb_filter_init(f);
	for (int i = 0; i < 64; i++) {
		int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n <= 0)
			return 0;
		if (n >= (int)sizeof(arg)) {
			*why = "query: an argument is longer than 1099 bytes";
			return FB_ETOOBIG;
		}
		if (lws_hdr_copy_fragment(wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, i) < 0)
			return 0;
		if (fb_ws_auth_is_token_arg(arg)) /* credentials, checked at the upgrade */
			continue;
		int rc = fb_filter_arg(f, arg, why);
		if (rc)
			return rc;
	}
	*why = "query: more than 64 arguments";
	return FB_ETOOBIG;
}

/* ,"kind":"sse","id":...,"filter":... (the $filter text) or the ws filter */
static int sub_kind_json(const struct fb_ws_sub *s, struct fb_buf *b)
{
	if (s->kind != FB_WS_SUB_SSE) {
		int rc = fb_buf_puts(b, ",\"kind\":\"websocket\",\"filter\":");
		return rc ? rc : fb_filter_json(&s->filter, b);
	}
	int rc = fb_buf_puts(b, ",\"kind\":\"sse\",\"id\":");
	if (!rc)
		rc = fb_buf_put_json_str(b, s->live_id);
	if (!rc)
		rc = fb_buf_puts(b, ",\"filter\":");
	return rc ? rc : fb_buf_put_json_str(b, fb_rf_filter_text(s->rf));
}

static int status_json(struct fb_ws *ws, struct fb_buf *b)
{
	pthread_mutex_lock(&ws->mu);
	int rc = fb_buf_puts(b, "{\"broker\":");
	if (!rc)
		rc = fb_buf_puts(b, ws->status_json ? ws->status_json : "null");
	uint64_t qdrop = ws->q_dropped_events, holds = ws->q_holds;
	pthread_mutex_unlock(&ws->mu);
	if (!rc)
		rc = fb_buf_puts(b, ",\"websocket\":{\"subscribers\":[");
	for (struct fb_ws_sub *s = ws->subs; s && !rc; s = s->next) {
		rc = fb_buf_printf(b, "%s{\"peer\":", s == ws->subs ? "" : ",");
		if (!rc)
			rc = fb_buf_put_json_str(b, s->peer);
		if (!rc)
			rc = sub_kind_json(s, b);
		if (!rc)
			rc = fb_buf_printf(b,
					   ",\"next_id\":%llu,\"lag\":%llu,\"sent\":%llu,\"replayed\":%llu,"
					   "\"replaying\":%s,\"slow_switches\":%llu,\"state\":\"%s\"}",
					   (unsigned long long)s->next_id,
					   (unsigned long long)fb_ws_sub_lag(s, ws->src.head_id),
					   (unsigned long long)s->sent, (unsigned long long)s->replayed,
					   s->reader ? "true" : "false",
					   (unsigned long long)s->slow_demotions,
					   s->state == FB_WS_SUB_LIVE	      ? "live"
					   : s->state == FB_WS_SUB_CATCHUP ? "catching_up"
									   : "overflowed");
	}
	if (!rc)
		rc = fb_buf_printf(b,
				   "],\"sent\":%llu,\"dropped_slow\":%llu,\"replayed\":%llu,"
				   "\"head_id\":%llu,\"queue_dropped\":%llu,\"agents_held\":%llu,"
				   "\"ring_resets\":%llu,\"slow_readers_to_catchup\":%llu,"
				   "\"ring\":{\"size\":%zu,\"capacity\":%zu,\"bytes\":%llu,"
				   "\"oldest_id\":%llu}}}\n",
				   (unsigned long long)atomic_load(&ws->st_sent),
				   (unsigned long long)atomic_load(&ws->st_dropped),
				   (unsigned long long)atomic_load(&ws->st_replayed),
				   (unsigned long long)ws->src.head_id, (unsigned long long)qdrop,
				   (unsigned long long)holds, (unsigned long long)ws->ring_resets,
				   (unsigned long long)ws->slow_demotions, fb_ws_ring_count(&ws->ring),
				   ws->ring.cap, (unsigned long long)ws->ring.msg_bytes,
				   (unsigned long long)fb_ws_ring_oldest_id(&ws->ring));
	return rc;
}

/* GET /metrics: this thread's series first (it owns the subscribers),
 * then the whole registry, the loop's part as of its last 100 ms tick. */
static int metrics_reply(struct fb_ws *ws, struct lws *wsi)
{
	struct fb_ws_metrics *m = &ws->metrics;
	uint64_t sum = 0, max = 0;
	for (struct fb_ws_sub *s = ws->subs; s; s = s->next) {
		uint64_t lag = fb_ws_sub_lag(s, ws->src.head_id);
		sum += lag;
		max = lag > max ? lag : max;
	}
	fb_metric_set(m->subscribers, ws->n_subs);
	fb_metric_set(m->lag_sum, (double)sum);
	fb_metric_set(m->lag_max, (double)max);
	fb_metric_set(m->sent, (double)atomic_load(&ws->st_sent));
	fb_metric_set(m->dropped, (double)atomic_load(&ws->st_dropped));
	fb_metric_set(m->replayed, (double)atomic_load(&ws->st_replayed));
	fb_metric_set(m->ring_events, (double)fb_ws_ring_count(&ws->ring));
	fb_metric_set(m->demoted, (double)ws->slow_demotions);
	pthread_mutex_lock(&ws->mu);
	fb_metric_set(m->queue_dropped, (double)ws->q_dropped_events);
	fb_metric_set(m->held, (double)ws->q_holds);
	pthread_mutex_unlock(&ws->mu);
	struct fb_buf b = FB_BUF_INIT;
	int rc = fb_metrics_render(m->r, &b) ? -1
		 : fb_ws_http_reply(wsi, 200, FB_METRICS_CONTENT_TYPE, b.data, b.len);
	fb_buf_free(&b);
	return rc;
}

/* 401 for a read of /status or /metrics without a good login (v: enum
 * fb_rf_auth_result; a read needs no more than Login, so never 403). */
static int refuse_read(struct lws *wsi, int v)
{
	static const char e401[] =
		"{\"error\":\"unauthorized\",\"detail\":\"send Authorization: Bearer (a token of "
		"HttpTokens), Basic (an account of RedfishAccounts) or X-Auth-Token (a Redfish "
		"session); docs/security.md\"}\n";
	return fb_ws_auth_refuse(wsi, v, e401, sizeof(e401) - 1);
}

static int on_http(struct fb_ws *ws, struct lws *wsi, struct ws_pss *pss, const char *path)
{
	struct fb_ws_fabric_req *r = pss ? &pss->req : NULL;
	if (ws->o.tls == FB_AGENT_TLS_REQUIRED && !lws_is_ssl(wsi))
		return fb_ws_tls_refuse_plain(wsi, path);
	int rc = ws->module.http && pss ? ws->module.http(ws->module.arg, wsi, &pss->module_conn, path) : 1;
	if (rc != 1)
		return rc;
	rc = fb_ws_fabric_http(&ws->fabric, wsi, r, path);
	if (rc != 1)
		return rc;
	if ((rc = fb_ws_www_http(wsi, path)) != 1) {
		/* the live page and its files (ws_www.h) */
	} else if ((strcmp(path, "/status") == 0 ||
		    (strcmp(path, "/metrics") == 0 && ws->metrics.r)) &&
		   (rc = fb_ws_auth_read(ws->o.auth, wsi,
					 ws->o.anonymous_reads ||
						 (path[1] == 'm' && ws->o.public_metrics))) != 0) {
		rc = refuse_read(wsi, rc);
	} else if (strcmp(path, "/status") == 0) {
		struct fb_buf b = FB_BUF_INIT;
		rc = status_json(ws, &b) ? -1 : fb_ws_http_reply(wsi, 200, "application/json", b.data, b.len);
		fb_buf_free(&b);
	} else if (strcmp(path, "/metrics") == 0 && ws->metrics.r) {
		rc = metrics_reply(ws, wsi);
	} else if (strcmp(path, "/") == 0) {
		static const char txt[] = "fabricbus\n"
					  "  GET /status      broker and subscriber status (JSON)\n"
					  "  GET /metrics     Prometheus metrics (text format 0.0.4)\n"
					  "  GET /            this list; a browser gets the live page\n"
					  "  WS  /ws/events   Redfish Events (?since=&prefix=&severity=&origin=)\n"
					  "  GET /fabric/map  nodes, ports, switches and jobs (JSON)\n"
					  "  POST /fabric/jobs, DELETE /fabric/jobs/<id>  job registry\n";
		rc = fb_ws_http_reply(wsi, 200, "text/plain", txt, sizeof(txt) - 1);
	} else if (strcmp(path, WS_PATH) == 0) {
		rc = fb_ws_http_error(wsi, 426, "WebSocket upgrade required", NULL, NULL);
	} else {
		rc = fb_ws_http_error(wsi, 404, "not found", NULL, path);
	}
	if (rc < 0)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* Refuse a bad upgrade as plain HTTP before the 101 (>0 tells lws we answered). */
static int on_confirm_upgrade(struct fb_ws *ws, struct lws *wsi)
{
	char uri[256];
	if (ws->o.tls == FB_AGENT_TLS_REQUIRED && !lws_is_ssl(wsi))
		return fb_ws_http_error(wsi, 403, "HTTPS required", NULL,
					"this port takes wss:// only (HttpTls=required)") ? -1 : 1;
	if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 || strcmp(uri, WS_PATH) != 0)
		return fb_ws_http_error(wsi, 404, "not found", NULL, "WebSocket endpoint is " WS_PATH) ? -1 : 1;
	int v = fb_ws_auth_read_ws(ws->o.auth, wsi, ws->o.anonymous_reads);
	if (v)
		return fb_ws_http_error(wsi, 401, "unauthorized", NULL,
					"send Authorization: Bearer (a token of HttpTokens), Basic or "
					"X-Auth-Token; docs/security.md") ? -1 : 1;
	if (ws->n_subs >= ws->o.max_subscribers)
		return fb_ws_http_error(wsi, 503, "too many subscribers", NULL, "max_subscribers reached") ? -1 : 1;
	struct fb_filter f;
	const char *why = NULL;
	if (parse_query(wsi, &f, &why)) {
		char param[16];
		size_t n = strcspn(why, ":");
		snprintf(param, sizeof(param), "%.*s", (int)n, why);
		return fb_ws_http_error(wsi, 400, "bad query parameter", param, why) ? -1 : 1;
	}
	return 0;
}

static void close_with(struct lws *wsi, int status, const char *reason)
{
	lws_close_reason(wsi, (enum lws_close_status)status, (unsigned char *)reason, strlen(reason));
}

/* s (positioned, wsi and peer set) joins the fan-out. */
static void sub_attach(struct fb_ws *ws, struct fb_ws_sub *s)
{
	fb_ws_auth_cred(ws->o.auth, (struct lws *)s->wsi, &s->cred);
	/* Redfish (DSP0266 "Session termination or logout"): ending a session
	 * "shall not affect independent connections established originally by
	 * this session ... such as connections for Server-Sent Events" (the
	 * Protocol Validator's SEC_SESSION_TERMINATION_SIDE_EFFECTS). An SSE
	 * stream answers to its account only; a /ws/events stream to the
	 * session too. */
	if (s->kind == FB_WS_SUB_SSE)
		s->cred.session[0] = '\0';
	s->revoked = 0;
	s->next = ws->subs;
	if (ws->subs)
		ws->subs->prev = s;
	ws->subs = s;
	ws->n_subs++;
	atomic_store_explicit(&ws->st_subscribers, ws->n_subs, memory_order_relaxed);
	fb_log_info("%s %s: subscribed (next EventId %llu, head %llu)",
		    s->kind == FB_WS_SUB_SSE ? "sse" : "ws", s->peer, (unsigned long long)s->next_id,
		    (unsigned long long)ws->src.head_id);
	if (s->next_id <= ws->src.head_id)
		lws_callback_on_writable((struct lws *)s->wsi);
	else if (s->state == FB_WS_SUB_CATCHUP)
		s->state = FB_WS_SUB_LIVE; /* since=<head>: nothing to replay, live now */
}

static int on_established(struct fb_ws *ws, struct lws *wsi, struct fb_ws_sub *s)
{
	struct fb_filter f;
	const char *why = "query: invalid";
	int bad = parse_query(wsi, &f, &why);
	fb_ws_sub_init(s, &f, ws->src.head_id);
	s->wsi = wsi;
	s->drained_ns = fb_now_ns();
	fb_ws_peer_name(wsi, s->peer, sizeof(s->peer));
	if (bad) {
		close_with(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, why);
		s->wsi = NULL;
		return -1;
	}
	if (ws->n_subs >= ws->o.max_subscribers) {
		close_with(wsi, 1013, "too many subscribers");
		s->wsi = NULL;
		return -1;
	}
	sub_attach(ws, s);
	return 0;
}

static void on_closed(struct fb_ws *ws, struct fb_ws_sub *s)
{
	if (!s || !s->wsi)
		return;
	if (s->prev)
		s->prev->next = s->next;
	else
		ws->subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	ws->n_subs--;
	atomic_store_explicit(&ws->st_subscribers, ws->n_subs, memory_order_relaxed);
	fb_log_info("%s %s: closed after %llu messages (next EventId %llu)",
		    s->kind == FB_WS_SUB_SSE ? "sse" : "ws", s->peer, (unsigned long long)s->sent,
		    (unsigned long long)s->next_id);
	if (s->kind == FB_WS_SUB_SSE)
		ws->n_sse--;
	fb_ws_sub_release(s);
	s->wsi = NULL;
	if (ws->render_blocked) /* it may have been the one holding rendering */
		lws_cancel_service(ws->ctx);
}

static int write_out(struct fb_ws *ws, struct lws *wsi)
{
	size_t n = ws->out.len - LWS_PRE;
	if (!n)
		return 0;
	struct fb_ws_sub *s = lws_wsi_user(wsi);
	if (s && s->kind == FB_WS_SUB_SSE) {
		s->wrote_ns = fb_now_ns();
		s->heartbeat_due = 0;
	}
	/* raw: the buffer already holds complete, unmasked ws frames */
	return lws_write(wsi, ws->out.data + LWS_PRE, n, LWS_WRITE_HTTP) < 0 ? -1 : 0;
}

/* Ring frames straight from their slots, without the copy into ws->out:
 * one sendmsg. If the socket takes only part, the frame it stopped in is
 * finished through lws_write (which sends what it can and buffers the rest,
 * to go before anything else on this connection, its pings too, with
 * WRITEABLE only once it is out), and s goes back to the first frame not
 * started (fb_ws_sub_unsend). Returns 0 when all went, 1 when the socket is
 * full, -1 when the peer is gone. Plain connections only: TLS needs lws's
 * own write. */
static int write_iov(struct fb_ws *ws, struct lws *wsi, struct fb_ws_sub *s, const struct fb_ws_iov *iov)
{
	struct msghdr msg = { .msg_iov = iov->v, .msg_iovlen = (size_t)iov->n };
	ssize_t n = sendmsg(lws_get_socket_fd(wsi), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1; /* the peer is gone: lws closes it */
		n = 0;
	}
	if ((size_t)n == iov->bytes)
		return 0;
	size_t skip = (size_t)n;
	int i = 0;
	while (skip >= iov->v[i].iov_len)
		skip -= iov->v[i++].iov_len;
	fb_ws_sub_unsend(s, &ws->src, iov, skip ? i + 1 : i);
	if (!skip)
		return 1;
	ws->out.len = LWS_PRE;
	if (fb_buf_put(&ws->out, (const uint8_t *)iov->v[i].iov_base + skip, iov->v[i].iov_len - skip) ||
	    write_out(ws, wsi) < 0)
		return -1;
	return 1;
}

static void overflow(struct fb_ws *ws, struct fb_ws_sub *s, const char *why);

/* s moved on: if it was the subscriber holding rendering, render more. */
static void unblock_if_holder(struct fb_ws *ws, const struct fb_ws_sub *s, uint64_t next_before)
{
	if (ws->render_blocked && s->next_id != next_before &&
	    next_before - 1 + ws->o.queue_events <= ws->render_limit)
		lws_cancel_service(ws->ctx);
}

static int on_writeable(struct fb_ws *ws, struct lws *wsi, struct fb_ws_sub *s)
{
	if (!s->wsi)
		return -1;
	/* lws calls this only once its own buffer for s is flushed: the socket
	 * is draining. */
	s->drained_ns = fb_now_ns();
	uint64_t next_before = s->next_id;
	if (lws_partial_buffered(wsi)) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	static const uint8_t pre[LWS_PRE];
	fb_buf_reset(&ws->out);
	if (fb_buf_put(&ws->out, pre, sizeof(pre)))
		return -1;
	if (s->revoked) {
		/* an SSE stream can only end; a WebSocket says why in its close */
		if (s->kind != FB_WS_SUB_SSE)
			close_with(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
				   "credentials revoked (token or account removed); reconnect "
				   "with valid ones");
		return -1;
	}
	if (s->kind == FB_WS_SUB_SSE && (s->close_asked || s->state == FB_WS_SUB_CLOSING))
		return -1; /* its destination was deleted, or the notice is out */
	if (s->state == FB_WS_SUB_CLOSING) {
		char reason[120];
		snprintf(reason, sizeof(reason),
			 "subscriber too slow: missed %llu events, resume with since=%llu",
			 (unsigned long long)s->missed, (unsigned long long)s->resume_since);
		close_with(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, reason);
		return -1;
	}
	if (s->state == FB_WS_SUB_OVERFLOWED) {
		if (s->kind == FB_WS_SUB_SSE ? fb_sse_render_missed_frame(&ws->out, s->missed, s->resume_since)
					     : fb_ws_render_missed_frame(&ws->out, s->missed, s->resume_since))
			return -1;
		s->state = FB_WS_SUB_CLOSING;
		s->sent++;
		atomic_fetch_add_explicit(&ws->st_sent, 1, memory_order_relaxed);
		lws_callback_on_writable(wsi);
		return write_out(ws, wsi);
	}
	/* Several writes per callback while the socket takes them whole: each
	 * goes straight to send(); the first one it does not take whole ends
	 * it. A plain WebSocket connection gets ring frames without a copy. */
	struct iovec v[WRITE_IOV_MAX];
	uint64_t id[WRITE_IOV_MAX];
	struct fb_ws_iov iov = { v, 0, WRITE_IOV_MAX, 0, WRITE_IOV_BUDGET, id };
	struct fb_ws_iov *zc = s->kind == FB_WS_SUB_WS && !lws_is_ssl(wsi) ? &iov : NULL;
	for (int w = 0; w < WRITES_PER_CALLBACK; w++) {
		uint64_t sent = s->sent, replayed = s->replayed;
		int more = 0, full = 0;
		ws->out.len = LWS_PRE;
		iov.n = 0;
		iov.bytes = 0;
		int rc = fb_ws_sub_fill(s, &ws->src, &ws->out, LWS_PRE + WRITE_BUDGET, &more, zc);
		if (rc < 0) {
			if (s->kind == FB_WS_SUB_WS)
				close_with(wsi, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "journal replay failed");
			return -1;
		}
		if (w == 0 && s->heartbeat_due && ws->out.len == LWS_PRE &&
		    fb_buf_puts(&ws->out, FB_SSE_HEARTBEAT))
			return -1;
		if (write_out(ws, wsi) < 0 || (iov.n && (full = write_iov(ws, wsi, s, &iov)) < 0))
			return -1;
		/* after the write: frames the socket did not take are not sent */
		atomic_fetch_add_explicit(&ws->st_sent, s->sent - sent, memory_order_relaxed);
		atomic_fetch_add_explicit(&ws->st_replayed, s->replayed - replayed, memory_order_relaxed);
		if (s->state == FB_WS_SUB_OVERFLOWED) { /* fell out of the ring meanwhile */
			overflow(ws, s, "fell out of the ring");
			return 0;
		}
		if (full || (more && lws_partial_buffered(wsi)))
			break;
		if (!more) {
			unblock_if_holder(ws, s, next_before);
			return 0;
		}
	}
	unblock_if_holder(ws, s, next_before);
	lws_callback_on_writable(wsi);
	return 0;
}

/* ---- batches from the libevent loop ---- */

/* Cut s off (its state is FB_WS_SUB_OVERFLOWED): the notice goes out when
 * its socket takes it, then the close. why says whose fault it was. */
static void overflow(struct fb_ws *ws, struct fb_ws_sub *s, const char *why)
{
	atomic_fetch_add_explicit(&ws->st_dropped, 1, memory_order_relaxed);
	fb_log_warn("ws %s: subscriber %s, %llu events behind (WsQueueEvents %zu); "
		    "disconnecting, it can resume with since=%llu",
		    s->peer, why, (unsigned long long)s->missed, ws->o.queue_events,
		    (unsigned long long)s->resume_since);
	/* a peer that never reads never becomes writeable: do not wait forever */
	lws_set_timeout((struct lws *)s->wsi, PENDING_TIMEOUT_USER_OK, OVERFLOW_CLOSE_TIMEOUT_S);
	lws_callback_on_writable((struct lws *)s->wsi);
}

/* Render b's records from i on, at most max of them and none above
 * ws->render_limit; returns the index of the first record not rendered. */
static size_t publish_batch(struct fb_ws *ws, const struct fb_batch *b, size_t i, size_t max)
{
	if (!ws->subs) {
		/* Nobody to render for: move the head and drop the ring (it would
		 * have a hole); a subscriber that comes later and asks for these
		 * events with ?since= is served from the journal. */
		if (b->n && fb_batch_id(b, b->n - 1) > ws->src.head_id) {
			if (fb_ws_ring_oldest_id(&ws->ring))
				fb_ws_ring_clear(&ws->ring);
			ws->src.head_id = fb_batch_id(b, b->n - 1);
		}
		return b->n;
	}
	size_t end = b->n - i > max ? i + max : b->n;
	for (; i < end; i++) {
		uint64_t id = fb_batch_id(b, i);
		if (id > ws->render_limit)
			break;
		if (id <= ws->src.head_id)
			continue; /* already seen (cannot happen with a sane loop) */
		int rc = fb_ws_ring_push(&ws->ring, id, fb_batch_get(b, i, &ws->unpacked));
		if (rc)
			fb_log_err("ws: cannot render EventId %llu for subscribers: %s",
				   (unsigned long long)id, fb_strerror(rc));
		ws->src.head_id = id;
	}
	return i;
}

/* The loop refused batches while we were behind: the ring would have a
 * hole, so empty it; everyone behind the hole replays it from the journal. */
static void reset_ring(struct fb_ws *ws, uint64_t dropped_last_id)
{
	fb_log_warn("ws: the WebSocket thread fell behind and skipped events up to EventId %llu; "
		    "subscribers catch up from the journal",
		    (unsigned long long)dropped_last_id);
	for (struct fb_ws_sub *s = ws->subs; s; s = s->next)
		if (s->state == FB_WS_SUB_LIVE)
			s->state = FB_WS_SUB_CATCHUP;
	fb_ws_ring_clear(&ws->ring);
	if (dropped_last_id > ws->src.head_id)
		ws->src.head_id = dropped_last_id;
	ws->ring_resets++;
}

/* Render at most this many queued events per wakeup, then let lws run the
 * writeable callbacks before coming back: a burst from the loop must not be
 * rendered in one go and make every subscriber look too slow. 1,024 (~600
 * KB of frames) rather than 4,096 (~2.5 MB): the frames are still in this
 * core's cache when sendmsg copies them (bench_broker.sh, 3 alternating
 * pairs: broker CPU per event 3-5% lower; 512 was no better than 1,024). */
static size_t drain_chunk(const struct fb_ws *ws)
{
	size_t n = ws->o.queue_events / 4;
	return n < 64 ? 64 : n > 1024 ? 1024 : n;
}

static void take_queue(struct fb_ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	struct fb_batch **q = ws->q;
	size_t n = ws->q_n, cap = ws->q_cap;
	ws->q = ws->q_work;
	ws->q_cap = ws->q_work_cap;
	ws->q_n = 0;
	ws->q_events = 0;
	uint64_t dropped = ws->q_dropped_events, dropped_last = ws->q_dropped_last_id;
	pthread_mutex_unlock(&ws->mu);
	ws->q_work = q;
	ws->q_work_cap = cap;
	ws->q_work_n = n;
	ws->q_work_pos = 0;
	ws->q_work_rec = 0;
	size_t events = 0;
	for (size_t i = 0; i < n; i++)
		events += ws->q_work[i]->n;
	atomic_store_explicit(&ws->q_work_events, events, memory_order_relaxed);
	/* drops only happen while the queue is full, so they follow q[] */
	if (dropped != ws->seen_dropped) {
		ws->seen_dropped = dropped;
		ws->pending_drop_id = dropped_last;
	}
}

/* The kernel takes no more of s's output right now: its reader is slower
 * than we write (or gone). One whose socket is writeable is only waiting for
 * this thread: not its fault. */
static int sub_socket_full(const struct fb_ws_sub *s)
{
	struct pollfd p = { .fd = lws_get_socket_fd((struct lws *)s->wsi), .events = POLLOUT };
	return p.fd >= 0 && (poll(&p, 1, 0) == 0 || !(p.revents & POLLOUT));
}

/* Its socket has taken nothing for STALL_NS and still takes nothing. */
static int sub_stalled(const struct fb_ws_sub *s, uint64_t now)
{
	return now - s->drained_ns >= STALL_NS && sub_socket_full(s);
}

static void cut_stalled(struct fb_ws *ws, struct fb_ws_sub *s, uint64_t now)
{
	int unsent = 0;
	if (ioctl(lws_get_socket_fd((struct lws *)s->wsi), SIOCOUTQ, &unsent) != 0)
		unsent = -1;
	char why[160];
	snprintf(why, sizeof(why), "stopped reading (its socket took nothing for %llu ms, %d bytes unsent)",
		 (unsigned long long)((now - s->drained_ns) / 1000000), unsent);
	fb_ws_sub_overflow(s, ws->src.head_id);
	overflow(ws, s, why);
}

/* A live subscriber at the lag bound whose own socket is full reads slower
 * than the bus runs: it goes on at its own pace from the ring, then the
 * journal (catch-up), instead of holding rendering and, through the queue,
 * every agent. It comes back live once within queue_events (ws_sub.c). */
static void demote_slow_reader(struct fb_ws *ws, struct fb_ws_sub *s, uint64_t now)
{
	s->state = FB_WS_SUB_CATCHUP;
	s->at_bound = 0;
	s->slow_demotions++;
	ws->slow_demotions++;
	if (now - ws->demote_log_ns >= HOLD_LOG_NS) {
		fb_log_info("ws %s: reads slower than events arrive (its socket is full, %llu events "
			    "behind): served from the ring and the journal at its own pace so that it "
			    "holds no one else (%llu such switches since start)",
			    s->peer, (unsigned long long)fb_ws_sub_lag(s, ws->src.head_id),
			    (unsigned long long)ws->slow_demotions);
		ws->demote_log_ns = now;
	}
}

/* The highest EventId rendering may reach: no live subscriber whose socket
 * still drains may end up more than queue_events behind (it would be cut
 * off for this thread's slowness). Slow readers are switched to catch-up,
 * stalled ones (live or catching up) are cut off here. */
static uint64_t compute_render_limit(struct fb_ws *ws, uint64_t now)
{
	uint64_t limit = UINT64_MAX;
	for (struct fb_ws_sub *s = ws->subs; s; s = s->next) {
		if (s->state == FB_WS_SUB_CATCHUP) {
			if (s->next_id <= ws->src.head_id && sub_stalled(s, now))
				cut_stalled(ws, s, now);
			continue;
		}
		if (s->state != FB_WS_SUB_LIVE)
			continue;
		uint64_t l = s->next_id - 1 + ws->o.queue_events;
		if (l > ws->src.head_id) {
			s->at_bound = 0;
		} else if (sub_socket_full(s)) {
			demote_slow_reader(ws, s, now);
			continue;
		} else if (!s->at_bound) {
			/* the stall clock starts when it starts holding others */
			s->at_bound = 1;
			s->drained_ns = now;
		} else if (sub_stalled(s, now)) {
			cut_stalled(ws, s, now);
			continue;
		}
		if (l < limit)
			limit = l;
	}
	return limit;
}

/* Under half the bound again after saying busy: let the loop read agents. */
static void maybe_ready(struct fb_ws *ws)
{
	size_t left = atomic_load_explicit(&ws->q_work_events, memory_order_relaxed);
	pthread_mutex_lock(&ws->mu);
	int ready = ws->q_busy && ws->q_events + left <= ws->q_max_events / 2;
	if (ready)
		ws->q_busy = 0;
	pthread_mutex_unlock(&ws->mu);
	if (ready && ws->o.ready)
		ws->o.ready(ws->o.ready_arg);
}

static void recheck_cb(lws_sorted_usec_list_t *sul)
{
	struct fb_ws *ws = lws_container_of(sul, struct fb_ws, recheck);
	lws_cancel_service(ws->ctx);
}

static void drain_queue(struct fb_ws *ws)
{
	if (ws->q_work_pos == ws->q_work_n)
		take_queue(ws);
	ws->render_limit = compute_render_limit(ws, fb_now_ns());
	size_t budget = drain_chunk(ws), done = 0;
	int blocked = 0;
	while (ws->q_work_pos < ws->q_work_n && done < budget) {
		struct fb_batch *b = ws->q_work[ws->q_work_pos];
		size_t from = ws->q_work_rec;
		ws->q_work_rec = publish_batch(ws, b, from, budget - done);
		done += ws->q_work_rec - from;
		if (ws->q_work_rec < b->n) {
			blocked = fb_batch_id(b, ws->q_work_rec) > ws->render_limit;
			break;
		}
		ws->q_work[ws->q_work_pos++] = NULL;
		ws->q_work_rec = 0;
		fb_batch_unref(b);
	}
	atomic_fetch_sub_explicit(&ws->q_work_events, done, memory_order_relaxed);
	if (ws->q_work_pos == ws->q_work_n && ws->pending_drop_id) {
		reset_ring(ws, ws->pending_drop_id);
		ws->pending_drop_id = 0;
	}
	/* Batches published while we worked through q_work already spent
	 * their wakeup on this function: pick them up now, not at the next
	 * publish. */
	if (ws->q_work_pos == ws->q_work_n)
		take_queue(ws);
	ws->render_blocked = blocked;
	/* Come back after this service pass. A self-wake through the cancel
	 * pipe, not an lws timer: 4.1's timers only fire on its coarse poll
	 * timeout, which held rendering to a chunk per ~100 ms. While blocked,
	 * the holder's next write wakes us (unblock_if_holder); the timer only
	 * checks whether it stalled. */
	if (blocked)
		lws_sul_schedule(ws->ctx, 0, &ws->recheck, recheck_cb, BLOCKED_RECHECK_US);
	else if (ws->q_work_pos < ws->q_work_n)
		lws_cancel_service(ws->ctx);
	maybe_ready(ws);
	if (!done)
		return;
	atomic_store_explicit(&ws->st_head, ws->src.head_id, memory_order_relaxed);
	for (struct fb_ws_sub *s = ws->subs; s; s = s->next)
		if (s->state < FB_WS_SUB_OVERFLOWED && s->next_id <= ws->src.head_id)
			lws_callback_on_writable((struct lws *)s->wsi);
}

/* Sockets accepted by the loop (accept.c): lws adopts them here, on its own
 * thread, as HTTP connections of the default vhost. A failed adoption has
 * closed the socket already. */
static void adopt_pending(struct fb_ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	int *q = ws->adopt_q;
	size_t n = ws->adopt_n;
	ws->adopt_q = NULL;
	ws->adopt_n = ws->adopt_cap = 0;
	pthread_mutex_unlock(&ws->mu);
	struct lws_vhost *vh = lws_get_vhost_by_name(ws->ctx, "default");
	for (size_t i = 0; i < n; i++) {
		/* From here the wsi's CREATE/DESTROY callbacks count it. */
		atomic_fetch_sub_explicit(&ws->http_open, 1, memory_order_relaxed);
		if (!vh || !lws_adopt_socket_vhost(vh, q[i])) {
			if (!vh)
				close(q[i]);
			fb_log_warn("ws: could not take a new HTTP connection (out of memory?)");
		}
	}
	free(q);
}

/* ---- Redfish SSE streams (sse_stream.h): subscribers of the same fan-out ---- */

static uint64_t sse_heartbeat_ns(const struct fb_ws *ws)
{
	return (uint64_t)(ws->o.sse_heartbeat_s > 0 ? ws->o.sse_heartbeat_s : 30) * 1000000000ull;
}

/* The client hung up. lws reads nothing from an HTTP connection whose
 * response is still going, so without this a closed stream would only be
 * noticed at its next write. */
static int sse_peer_gone(const struct fb_ws_sub *s)
{
	struct pollfd p = { .fd = lws_get_socket_fd((struct lws *)s->wsi), .events = POLLRDHUP };
	return p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Every idle stream gets a comment line, so that proxies and clients with a
 * read timeout keep it open while no event matches its filter. */
static void sse_heartbeat_cb(lws_sorted_usec_list_t *sul)
{
	struct fb_ws *ws = lws_container_of(sul, struct fb_ws, sse_hb);
	uint64_t now = fb_now_ns(), every = sse_heartbeat_ns(ws);
	for (struct fb_ws_sub *s = ws->subs; s; s = s->next) {
		if (s->kind != FB_WS_SUB_SSE)
			continue;
		if (sse_peer_gone(s)) {
			s->close_asked = 1;
			lws_callback_on_writable((struct lws *)s->wsi);
		} else if (now - s->wrote_ns >= every) {
			s->heartbeat_due = 1;
			lws_callback_on_writable((struct lws *)s->wsi);
		}
	}
	/* a quarter period, at most 1 s (hung-up clients), in us */
	uint64_t next_us = every / 4000 < 1000000 ? every / 4000 : 1000000;
	if (ws->n_sse)
		lws_sul_schedule(ws->ctx, 0, &ws->sse_hb, sse_heartbeat_cb, (lws_usec_t)next_us);
}

/* The registry's close callback (rf_live.h): a DELETE of the destination,
 * on whatever thread served it. Only queue the id and wake this thread. */
void fb_ws_sse_close_requested(void *arg, const char *id)
{
	struct fb_ws *ws = arg;
	pthread_mutex_lock(&ws->mu);
	if (ws->sse_close_n == ws->sse_close_cap) {
		size_t cap = ws->sse_close_cap ? 2 * ws->sse_close_cap : 8;
		char(*q)[32] = realloc(ws->sse_close_q, cap * sizeof(*q));
		if (!q) {
			pthread_mutex_unlock(&ws->mu);
			fb_log_err("sse: out of memory: the stream of deleted destination %s stays open", id);
			return;
		}
		ws->sse_close_q = q;
		ws->sse_close_cap = cap;
	}
	snprintf(ws->sse_close_q[ws->sse_close_n++], 32, "%s", id);
	pthread_mutex_unlock(&ws->mu);
	lws_cancel_service(ws->ctx);
}

static void sse_take_closes(struct fb_ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	size_t n = ws->sse_close_n;
	char(*q)[32] = ws->sse_close_q;
	ws->sse_close_q = NULL;
	ws->sse_close_n = ws->sse_close_cap = 0;
	pthread_mutex_unlock(&ws->mu);
	for (size_t i = 0; i < n; i++)
		for (struct fb_ws_sub *s = ws->subs; s; s = s->next)
			if (s->kind == FB_WS_SUB_SSE && strcmp(s->live_id, q[i]) == 0) {
				fb_log_info("sse %s: destination %s deleted: closing the stream", s->peer,
					    s->live_id);
				s->live_id[0] = '\0'; /* the registry has dropped it already */
				s->close_asked = 1;
				lws_callback_on_writable((struct lws *)s->wsi);
			}
	free(q);
}

int fb_ws_reload_auth(struct fb_ws *ws, struct fb_rf_auth_files *f)
{
	struct fb_rf_auth_files *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *f;
	memset(f, 0, sizeof(*f));
	pthread_mutex_lock(&ws->mu);
	struct fb_rf_auth_files *old = ws->auth_reload; /* two SIGHUPs in one pass: the newer */
	ws->auth_reload = copy;
	pthread_mutex_unlock(&ws->mu);
	if (old) {
		fb_rf_auth_files_free(old);
		free(old);
	}
	lws_cancel_service(ws->ctx);
	return 0;
}

static void close_revoked(struct fb_ws *ws);

/* Swap in re-read tokens and accounts (this thread owns the auth core),
 * then close the streams whose credentials are gone. */
static void take_auth_reload(struct fb_ws *ws)
{
	pthread_mutex_lock(&ws->mu);
	struct fb_rf_auth_files *f = ws->auth_reload;
	ws->auth_reload = NULL;
	pthread_mutex_unlock(&ws->mu);
	if (!f)
		return;
	if (ws->o.auth)
		fb_rf_auth_core_swap(ws->o.auth, f);
	fb_rf_auth_files_free(f);
	free(f);
	close_revoked(ws);
}

/* Close the streams whose credentials no longer authenticate (lws thread). */
static void close_revoked(struct fb_ws *ws)
{
	if (!ws->o.auth)
		return;
	ws->sessions_ended_seen = ws->o.auth->sessions.ended;
	for (struct fb_ws_sub *s = ws->subs; s; s = s->next) {
		if (s->revoked || fb_rf_cred_live(ws->o.auth, &s->cred))
			continue;
		char who[FB_RF_USER_MAX + FB_RF_SESSION_ID_LEN + 16];
		if (s->cred.kind == FB_RF_CRED_BEARER)
			snprintf(who, sizeof(who), "a bearer token");
		else if (s->cred.session[0])
			snprintf(who, sizeof(who), "session %s of %s", s->cred.session, s->cred.user);
		else
			snprintf(who, sizeof(who), "%s", s->cred.user);
		fb_log_info("%s %s: its credentials (%s) were revoked: closing it",
			    s->kind == FB_WS_SUB_SSE ? "sse" : "ws", s->peer, who);
		s->revoked = 1;
		/* a peer that never reads never becomes writeable: do not wait */
		lws_set_timeout((struct lws *)s->wsi, PENDING_TIMEOUT_USER_OK,
				OVERFLOW_CLOSE_TIMEOUT_S);
		lws_callback_on_writable((struct lws *)s->wsi);
	}
}

int fb_ws_sse_open(struct lws *wsi, struct fb_sse_refusal *no, void **stream)
{
	struct fb_ws *ws = lws_context_user(lws_get_context(wsi));
	struct fb_ws_sub *s = lws_wsi_user(wsi);
	*stream = NULL;
	if (!s || s->wsi)
		return -1; /* not a connection of ours, or already streaming */
	if (ws->n_subs >= ws->o.max_subscribers) {
		*no = (struct fb_sse_refusal){ .status = 503, .message = "EventSubscriptionLimitExceeded" };
		snprintf(no->detail, sizeof(no->detail),
			 "%u event streams and WebSocket subscribers are open, the most this service "
			 "takes (WsMaxSubscribers)", ws->n_subs);
		return 1;
	}
	int rc = fb_sse_prepare(wsi, s, ws->src.head_id, no);
	if (rc)
		return rc;
	if (fb_sse_start(wsi)) {
		fb_ws_sub_release(s);
		return -1;
	}
	*stream = s;
	s->wsi = wsi;
	s->drained_ns = s->wrote_ns = fb_now_ns();
	fb_ws_peer_name(wsi, s->peer, sizeof(s->peer));
	if (!ws->n_sse++)
		sse_heartbeat_cb(&ws->sse_hb);
	sub_attach(ws, s);
	return 0;
}

int fb_ws_sse_writeable(struct lws *wsi, void *stream)
{
	struct fb_ws *ws = lws_context_user(lws_get_context(wsi));
	return on_writeable(ws, wsi, stream);
}

void fb_ws_sse_closed(struct lws *wsi, void *stream)
{
	struct fb_ws *ws = lws_context_user(lws_get_context(wsi));
	on_closed(ws, stream);
}

static void release_module_conn(struct fb_ws *ws, struct ws_pss *pss)
{
	if (pss && pss->module_conn) {
		ws->module.closed(ws->module.arg, pss->module_conn);
		pss->module_conn = NULL;
	}
}

/* Sessions ended on this thread since the last look (a Redfish DELETE of
 * a session, rf_session.h): close the streams opened with their tokens. */
static void sessions_check(struct fb_ws *ws)
{
	if (ws->o.auth && ws->o.auth->sessions.ended != ws->sessions_ended_seen)
		close_revoked(ws);
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct fb_ws *ws = lws_context_user(lws_get_context(wsi));
	struct fb_ws_sub *s = user;
	struct ws_pss *pss = user;
	struct fb_ws_fabric_req *r = pss ? &pss->req : NULL;
	switch (reason) {
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		adopt_pending(ws);
		sse_take_closes(ws);
		take_auth_reload(ws);
		drain_queue(ws);
		fb_ws_fabric_take_results(&ws->fabric);
		if (ws->module.wake)
			ws->module.wake(ws->module.arg);
		return 0;
	case LWS_CALLBACK_HTTP: {
		int rc = on_http(ws, wsi, pss, in ? (const char *)in : "/");
		sessions_check(ws); /* a DELETE of a Redfish session ends its streams */
		return rc;
	}
	case LWS_CALLBACK_HTTP_BODY:
		if (pss && pss->module_conn &&
		    ws->module.body(ws->module.arg, wsi, pss->module_conn, in, len) != 1)
			return 0;
		return r ? fb_ws_fabric_body(r, in, len) : 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (pss && pss->module_conn) {
			int rc = ws->module.body_done(ws->module.arg, wsi, pss->module_conn);
			sessions_check(ws);
			if (rc != 1)
				return rc;
		}
		return r ? fb_ws_fabric_body_done(&ws->fabric, wsi, r) : 0;
	case LWS_CALLBACK_HTTP_WRITEABLE: {
		int rc = pss && pss->module_conn ? ws->module.writeable(ws->module.arg, wsi, pss->module_conn) : 1;
		if (rc == 1)
			rc = r ? fb_ws_fabric_writeable(wsi, r) : 1;
		return rc != 1 ? rc : lws_callback_http_dummy(wsi, reason, user, in, len);
	}
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL: /* user is about to be freed */
	case LWS_CALLBACK_CLOSED_HTTP:
		if (r)
			fb_ws_fabric_release(&ws->fabric, r);
		release_module_conn(ws, pss); /* an SSE stream: fb_ws_sse_closed */
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return on_confirm_upgrade(ws, wsi);
	case LWS_CALLBACK_ESTABLISHED:
		return on_established(ws, wsi, s);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return on_writeable(ws, wsi, s);
	case LWS_CALLBACK_CLOSED:
		on_closed(ws, s);
		if (r)
			fb_ws_fabric_release(&ws->fabric, r);
		release_module_conn(ws, pss);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		return 0; /* subscribers have nothing to say; ignore it */
	case LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS: /* user: the SSL_CTX */
		return fb_ws_tls_setup_ctx(user);
	case LWS_CALLBACK_WSI_CREATE: /* an adopted connection; balanced by DESTROY */
		atomic_fetch_add_explicit(&ws->http_open, 1, memory_order_relaxed);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		atomic_fetch_sub_explicit(&ws->http_open, 1, memory_order_relaxed);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* ---- the service thread and the public API ---- */

static void *service_main(void *arg)
{
	struct fb_ws *ws = arg;
	while (!atomic_load(&ws->stop))
		if (lws_service(ws->ctx, 0) < 0)
			break;
	return NULL;
}

/* A request method lws 4.1.6 does not know ("FAKEMETHOD /redfish/v1"):
 * its request-line parser answers 403 by itself (lib/roles/http/parsers.c,
 * "Unknown method - dropping"), where HTTP wants 501 and Redfish 405 or
 * 501, unless the vhost has LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_
 * ACCEPT_CONFIG: then the connection becomes a raw socket bound to this
 * protocol. We answer it once (the module's response, or a bare 501),
 * half-close, and drop what else the client sends until it hangs up
 * (closing with unread input would reset the answer away) or 5 s pass. */
struct bad_pss {
	int answered;
};

static int bad_method_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
			       void *in, size_t len)
{
	struct fb_ws *ws = lws_context_user(lws_get_context(wsi));
	struct bad_pss *p = user;
	(void)in;
	(void)len;
	if (reason == LWS_CALLBACK_RAW_RX && p && !p->answered) {
		lws_callback_on_writable(wsi);
	} else if (reason == LWS_CALLBACK_RAW_WRITEABLE && p && !p->answered) {
		static const char bare[] = "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\n"
					   "Connection: close\r\n\r\n";
		unsigned char buf[LWS_PRE + 2048];
		char *out = (char *)buf + LWS_PRE;
		size_t n = ws->module.bad_method ? ws->module.bad_method(ws->module.arg, out, 2048) : 0;
		if (!n || n > 2048) {
			memcpy(out, bare, sizeof(bare) - 1);
			n = sizeof(bare) - 1;
		}
		p->answered = 1;
		if (lws_write(wsi, (unsigned char *)out, n, LWS_WRITE_RAW) < (int)n)
			return -1;
		if (!lws_partial_buffered(wsi))
			shutdown(lws_get_socket_fd(wsi), SHUT_WR);
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 5);
	}
	return 0;
}

#define BAD_METHOD_PROTOCOL "fabricbus-bad-method"

static const struct lws_protocols protocols[] = {
	{
		.name = "fabricbus-events",
		.callback = ws_callback,
		.per_session_data_size = sizeof(struct ws_pss),
		.rx_buffer_size = 1024,
		/* one write of WRITE_BUDGET goes to send() in one piece */
		.tx_packet_size = 4 * WRITE_BUDGET,
	},
	{
		.name = BAD_METHOD_PROTOCOL,
		.callback = bad_method_callback,
		.per_session_data_size = sizeof(struct bad_pss),
	},
	{ .name = NULL },
};

static void ws_free(struct fb_ws *ws)
{
	for (size_t i = 0; i < ws->q_n; i++)
		fb_batch_unref(ws->q[i]);
	for (size_t i = ws->q_work_pos; i < ws->q_work_n; i++)
		fb_batch_unref(ws->q_work[i]);
	free(ws->q);
	free(ws->q_work);
	fb_ws_ring_free(&ws->ring);
	fb_buf_free(&ws->out);
	free(ws->status_json);
	for (size_t i = 0; i < ws->adopt_n; i++)
		close(ws->adopt_q[i]);
	free(ws->adopt_q);
	free(ws->sse_close_q);
	if (ws->auth_reload)
		fb_rf_auth_files_free(ws->auth_reload);
	free(ws->auth_reload);
	free(ws->host);
	free(ws->journal_dir);
	free(ws->default_fabric);
	pthread_mutex_destroy(&ws->mu);
	free(ws);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The loop applied job operations (called with the map's lock held). */
static void wake_for_jobs(void *arg)
{
	struct fb_ws *ws = arg;
	lws_cancel_service(ws->ctx);
}

int fb_ws_start(const struct fb_ws_opts *o, uint64_t last_id, struct fb_ws **out)
{
	*out = NULL;
	if (o->port <= 0 || o->port > 65535 || !o->queue_events || !o->max_subscribers) {
		fb_log_err("ws: bad options (port %d, queue_events %zu, max_subscribers %zu)", o->port,
			   o->queue_events, o->max_subscribers);
		return FB_ECONFIG;
	}
	struct fb_ws *ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	pthread_mutex_init(&ws->mu, NULL);
	ws->o = *o;
	ws->host = dup_or_null(o->host);
	ws->journal_dir = dup_or_null(o->journal_dir);
	ws->default_fabric = strdup(o->default_fabric ? o->default_fabric : FB_REDFISH_DEFAULT_FABRIC);
	size_t ring_events = o->ring_events ? o->ring_events : o->queue_events;
	ws->q_max_events = QUEUE_EVENTS;
	if ((o->host && !ws->host) || (o->journal_dir && !ws->journal_dir) || !ws->default_fabric ||
	    fb_ws_ring_init(&ws->ring, ring_events, ws->default_fabric) ||
	    fb_buf_reserve(&ws->out, LWS_PRE + 2 * WRITE_BUDGET)) {
		ws_free(ws);
		return -ENOMEM;
	}
	ws->src = (struct fb_ws_src){ .ring = &ws->ring, .journal_dir = ws->journal_dir,
				      .default_fabric = ws->default_fabric, .head_id = last_id,
				      .queue_events = o->queue_events };
	atomic_init(&ws->st_head, last_id);

	lws_set_log_level(LLL_ERR | LLL_WARN, lws_emit);
	ws->retry = (lws_retry_bo_t){
		.secs_since_valid_ping = (uint16_t)(o->ping_interval_s > 0 ? o->ping_interval_s : 30),
		.secs_since_valid_hangup = (uint16_t)(2 * (o->ping_interval_s > 0 ? o->ping_interval_s : 30)),
	};
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	/* The loop accepts (accept.c: descriptor budget, pause at EMFILE) and
	 * hands sockets over (fb_ws_adopt); lws only serves them. */
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	info.user = ws;
	info.retry_and_idle_policy = &ws->retry;
	/* An HTTP method lws does not know goes to the raw bad-method protocol
	 * (501, Redfish error) instead of lws's own 403 (parsers.c). With TLS,
	 * ALLOW_HTTP_ON_HTTPS_LISTENER is checked first in tls-server.c, so the
	 * fallback never takes a plain request meant for on_http. */
	info.options = LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS |
		       LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG;
	info.listen_accept_role = "raw-skt";
	info.listen_accept_protocol = BAD_METHOD_PROTOCOL;
	if (o->tls != FB_AGENT_TLS_OFF) {
		/* plain requests are served too, so that on_http can redirect or
		 * refuse them with a message (ws_tls.h) instead of a reset */
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT |
				LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT |
				LWS_SERVER_OPTION_ALLOW_HTTP_ON_HTTPS_LISTENER;
		info.ssl_cert_filepath = o->tls_cert;
		info.ssl_private_key_filepath = o->tls_key;
		if (o->tls_ca && o->tls_ca[0]) {
			info.ssl_ca_filepath = o->tls_ca;
			info.options |= LWS_SERVER_OPTION_REQUIRE_VALID_OPENSSL_CLIENT_CERT;
		}
		info.alpn = "http/1.1"; /* no h2: the fan-out writes HTTP/1.1 and ws frames raw */
	}
	ws->ctx = lws_create_context(&info);
	if (!ws->ctx) {
		fb_log_err("ws: libwebsockets could not create its context (see its message above)");
		ws_free(ws);
		return -ENOMEM;
	}
	if (fb_ws_metrics_init(&ws->metrics, o->metrics)) {
		lws_context_destroy(ws->ctx);
		ws_free(ws);
		return -ENOMEM;
	}
	ws->fabric.map = o->fabric_map;
	ws->fabric.auth = o->auth;
	ws->fabric.anonymous_reads = o->anonymous_reads;
	if (ws->fabric.map)
		fb_fabric_map_set_waker(ws->fabric.map, wake_for_jobs, ws);
	if (o->module) {
		ws->module = *o->module;
		ws->module.attach(ws->module.arg, ws->ctx);
	}
	int rc = pthread_create(&ws->thread, NULL, service_main, ws);
	if (rc) {
		fb_log_err("ws: cannot start the WebSocket thread: %s", strerror(rc));
		if (ws->module.attach)
			ws->module.attach(ws->module.arg, NULL);
		if (ws->fabric.map)
			fb_fabric_map_set_waker(ws->fabric.map, NULL, NULL);
		lws_context_destroy(ws->ctx);
		ws_free(ws);
		return -rc;
	}
	static const char *const scheme[] = { "ws", "ws and wss", "wss" };
	fb_log_info("ws: serving %s://%s:%d" WS_PATH " (ring %zu events, queue %zu)",
		    scheme[o->tls >= 0 && o->tls <= 2 ? o->tls : 0], ws->host ? ws->host : "0.0.0.0",
		    o->port, ring_events, o->queue_events);
	*out = ws;
	return 0;
}

/* The broker, not a subscriber, is behind: say so, at most every 10 s. */
static void log_hold(struct fb_ws *ws, size_t backlog)
{
	uint64_t now = fb_now_ns();
	if (now - ws->q_hold_log_ns < HOLD_LOG_NS)
		return;
	fb_log_info("ws: fan-out is %zu events behind the journal (bound %zu): holding agents until "
		    "it catches up (%llu times since start); no subscriber is cut off for this",
		    backlog, ws->q_max_events, (unsigned long long)ws->q_holds);
	ws->q_hold_log_ns = now;
}

int fb_ws_committed(void *arg, struct fb_batch *b, uint64_t last_id)
{
	struct fb_ws *ws = arg;
	(void)last_id;
	if (!b->n)
		return 0;
	pthread_mutex_lock(&ws->mu);
	/* Batches already queued and not taken yet have had their wakeup: the
	 * thread takes the whole queue at once (take_queue), and takes it again
	 * before it sleeps (drain_queue). One wakeup per run of batches, not
	 * one per batch. */
	int wake = ws->q_n == 0;
	int ok = ws->q_events + b->n <= ws->q_max_events + QUEUE_OVERSHOOT_EVENTS || ws->q_n == 0;
	if (ok && ws->q_n == ws->q_cap) {
		size_t cap = ws->q_cap ? 2 * ws->q_cap : 64;
		struct fb_batch **q = realloc(ws->q, cap * sizeof(*q));
		if (q) {
			ws->q = q;
			ws->q_cap = cap;
		} else {
			ok = 0;
		}
	}
	if (ok) {
		fb_batch_ref(b);
		ws->q[ws->q_n++] = b;
		ws->q_events += b->n;
	} else {
		ws->q_dropped_events += b->n;
		ws->q_dropped_last_id = fb_batch_id(b, b->n - 1);
	}
	size_t backlog = ws->q_events + atomic_load_explicit(&ws->q_work_events, memory_order_relaxed);
	int busy = backlog >= ws->q_max_events;
	if (busy && !ws->q_busy) {
		ws->q_busy = 1;
		ws->q_holds++;
	}
	pthread_mutex_unlock(&ws->mu);
	if (wake)
		lws_cancel_service(ws->ctx);
	if (busy)
		log_hold(ws, backlog);
	return busy ? FB_OUTPUT_BUSY : 0;
}

int fb_ws_adopt(struct fb_ws *ws, int fd)
{
	pthread_mutex_lock(&ws->mu);
	if (ws->adopt_n == ws->adopt_cap) {
		size_t cap = ws->adopt_cap ? 2 * ws->adopt_cap : 16;
		int *q = realloc(ws->adopt_q, cap * sizeof(*q));
		if (!q) {
			pthread_mutex_unlock(&ws->mu);
			return -ENOMEM;
		}
		ws->adopt_q = q;
		ws->adopt_cap = cap;
	}
	ws->adopt_q[ws->adopt_n++] = fd;
	atomic_fetch_add_explicit(&ws->http_open, 1, memory_order_relaxed);
	pthread_mutex_unlock(&ws->mu);
	lws_cancel_service(ws->ctx);
	return 0;
}

uint64_t fb_ws_http_open(struct fb_ws *ws)
{
	int64_t n = atomic_load_explicit(&ws->http_open, memory_order_relaxed);
	return n > 0 ? (uint64_t)n : 0;
}

void fb_ws_set_status(struct fb_ws *ws, const char *json)
{
	char *copy = json ? strdup(json) : NULL;
	pthread_mutex_lock(&ws->mu);
	free(ws->status_json);
	ws->status_json = copy;
	pthread_mutex_unlock(&ws->mu);
}

void fb_ws_get_stats(struct fb_ws *ws, struct fb_ws_stats *st)
{
	st->subscribers = atomic_load_explicit(&ws->st_subscribers, memory_order_relaxed);
	st->messages_sent = atomic_load_explicit(&ws->st_sent, memory_order_relaxed);
	st->subscribers_dropped = atomic_load_explicit(&ws->st_dropped, memory_order_relaxed);
	st->replayed = atomic_load_explicit(&ws->st_replayed, memory_order_relaxed);
	st->head_id = atomic_load_explicit(&ws->st_head, memory_order_relaxed);
}

void fb_ws_stop(struct fb_ws *ws)
{
	if (!ws)
		return;
	if (ws->fabric.map)
		fb_fabric_map_set_waker(ws->fabric.map, NULL, NULL);
	if (ws->module.attach)
		ws->module.attach(ws->module.arg, NULL);
	atomic_store(&ws->stop, 1);
	lws_cancel_service(ws->ctx);
	pthread_join(ws->thread, NULL);
	lws_sul_cancel(&ws->recheck);
	lws_sul_cancel(&ws->sse_hb);
	lws_context_destroy(ws->ctx); /* closes subscribers: CLOSED runs here */
	ws_free(ws);
}
