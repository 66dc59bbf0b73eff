/* fb_session.c - the agent side of the agent protocol (see fb_session.h).
 *
 * The unacked events live in one ring of struct fb_event. The ring is split
 * in three by two counters: [0, sent) went out on the current connection,
 * [sent, count) wait for the next flush. An ACK drops from the front; a
 * reconnect sets sent back to 0 so everything the broker lacks goes again.
 * Once numbered, ring entries carry consecutive seqs, so "drop up to seq S"
 * is arithmetic, not a search.
 *
 * libevent writes with writev(), so a broker that closes mid-write raises
 * SIGPIPE: programs using a session ignore SIGPIPE (the CLI does).
 */
#include "fb_session.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_tls_client.h"
#include "fb_wire.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define OUT_HIGH (4u << 20)   /* stop encoding above this much queued output */
#define OUT_LOW (1u << 20)    /* resume (write callback) below this */
#define RX_MAX_BODY FB_FRAME_MAX_DEFAULT
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define DEFAULT_MAX_UNACKED 16384
#define DEFAULT_BATCH 512
#define DEFAULT_HB_MS 5000

enum sess_state { ST_IDLE, ST_CONNECTING, ST_HELLO, ST_READY, ST_BACKOFF };

struct fb_session {
	struct event_base *base;
	char host[256];
	int port;
	char agent_id[FB_AGENT_ID_MAX];
	size_t cap, batch;
	int hb_ms;

	struct fb_event *ring; /* cap slots, oldest at head */
	size_t head, count, sent;
	int numbered;       /* a HELLO_ACK has fixed the numbering */
	uint64_t next_seq;  /* seq of the next submitted event, once numbered */
	uint64_t acked;     /* broker's cumulative ack */
	uint64_t hi_sent;   /* highest seq ever written to a socket */

	enum sess_state state;
	struct bufferevent *bev;
	unsigned attempt;   /* rotates through resolved addresses */
	int backoff_ms;
	int penalty;        /* last drop was the broker refusing us: keep backing off */
	uint32_t max_frame, broker_hb_ms;
	uint64_t epoch;
	int have_epoch;

	struct event *flush_ev, *hb_ev, *retry_ev;
	int flush_scheduled;
	struct fb_buf out;  /* reused encode buffer */

	fb_session_ack_cb ack_cb;
	fb_session_err_cb err_cb;
	void *cb_arg;
	struct fb_session_stats st;

	SSL_CTX *tls;       /* NULL: plain TCP */

	struct event *drain_ev;          /* the drain's deadline */
	fb_session_drained_cb drain_cb;  /* set while a drain is under way */
	void *drain_arg;
};

static void connect_now(struct fb_session *s);

static struct fb_event *slot(struct fb_session *s, size_t i)
{
	size_t j = s->head + i;
	if (j >= s->cap)
		j -= s->cap;
	return &s->ring[j];
}

/* Every failure goes to the caller's err callback, or to the log. */
static void report(struct fb_session *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(struct fb_session *s, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->err_cb)
		s->err_cb(s->cb_arg, code, msg);
	else
		fb_log_warn("%s", msg);
}

static void drop_front(struct fb_session *s, size_t n)
{
	s->head += n;
	if (s->head >= s->cap)
		s->head -= s->cap;
	s->count -= n;
	s->sent = s->sent > n ? s->sent - n : 0;
	s->st.acked += n;
}

/* End a drain under way (if any) and tell its caller what is left. */
static void drain_end(struct fb_session *s)
{
	fb_session_drained_cb cb = s->drain_cb;
	if (!cb)
		return;
	s->drain_cb = NULL;
	event_del(s->drain_ev);
	cb(s->drain_arg, s->count);
}

static void drain_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain_end(arg);
}

/* The broker holds everything up to seq: forget it and tell the caller. */
static void ack_upto(struct fb_session *s, uint64_t seq)
{
	if (s->count && s->numbered) {
		uint64_t first = slot(s, 0)->seq;
		if (seq >= first) {
			uint64_t n = seq - first + 1;
			drop_front(s, n > s->count ? s->count : (size_t)n);
		}
	}
	if (seq > s->acked) {
		s->acked = seq;
		if (s->ack_cb)
			s->ack_cb(s->cb_arg, seq);
	}
	if (s->drain_cb && s->count == 0)
		drain_end(s);
}

/* why == NULL: the cause was already reported. */
static void disconnect(struct fb_session *s, int code, const char *why)
{
	if (s->bev) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	if (s->state == ST_READY)
		s->st.reconnects++;
	s->st.connected = 0;
	s->sent = 0;
	s->state = ST_BACKOFF;
	evtimer_del(s->hb_ev);
	if (why)
		report(s, code, "broker %s:%d: %s; retrying in %d ms", s->host, s->port, why,
		       s->backoff_ms);
	struct timeval tv = { s->backoff_ms / 1000, (s->backoff_ms % 1000) * 1000 };
	evtimer_add(s->retry_ev, &tv);
	s->backoff_ms = s->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : s->backoff_ms * 2;
}

static int write_out(struct fb_session *s)
{
	int rc = evbuffer_add(bufferevent_get_output(s->bev), s->out.data, s->out.len);
	fb_buf_reset(&s->out);
	return rc ? -ENOMEM : 0;
}

/* One EVENTS frame from ring[sent..], bounded by batch and max_frame. */
static int encode_frame(struct fb_session *s)
{
	struct fb_events_writer w;
	size_t start = s->out.len;
	int rc = fb_events_begin(&w, &s->out);
	while (!rc && s->sent < s->count && w.count < s->batch) {
		size_t before = s->out.len;
		const struct fb_event *ev = slot(s, s->sent);
		rc = fb_events_add(&w, ev);
		if (rc)
			break;
		if (s->out.len - start - FB_FRAME_HDR_LEN > s->max_frame && w.count > 1) {
			s->out.len = before; /* over the broker's limit: next frame */
			w.count--;
			break;
		}
		if (ev->seq <= s->hi_sent)
			s->st.resent++;
		else
			s->hi_sent = ev->seq;
		s->sent++;
	}
	rc = rc ? rc : fb_events_end(&w);
	if (!rc)
		s->st.sent_frames++;
	return rc;
}

/* Encode whatever is unsent, until the socket's queue is deep enough. */
static void pump(struct fb_session *s)
{
	if (s->state != ST_READY)
		return;
	struct evbuffer *o = bufferevent_get_output(s->bev);
	while (s->sent < s->count && evbuffer_get_length(o) + s->out.len < OUT_HIGH) {
		int rc = encode_frame(s);
		if (!rc && s->out.len >= 256 * 1024)
			rc = write_out(s);
		if (rc) {
			fb_buf_reset(&s->out);
			disconnect(s, rc, "cannot encode events");
			return;
		}
	}
	if (s->out.len && write_out(s) != 0)
		disconnect(s, -ENOMEM, "out of memory queueing events");
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_session *s = arg;
	s->flush_scheduled = 0;
	pump(s);
}

static void send_frame_buf(struct fb_session *s, int rc)
{
	if (rc) {
		fb_buf_reset(&s->out);
		disconnect(s, rc, "cannot encode frame");
		return;
	}
	if (write_out(s))
		disconnect(s, -ENOMEM, "out of memory");
}

#define HB_MIN_MS 100u
#define HB_MAX_MS 3600000u

static void hb_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_session *s = arg;
	if (s->state == ST_READY)
		send_frame_buf(s, fb_wire_put_heartbeat(&s->out, fb_now_ns()));
}

static void on_hello_ack(struct fb_session *s, const struct fb_hello_ack *a)
{
	uint64_t l = a->last_seq;
	s->max_frame = a->max_frame ? a->max_frame : FB_FRAME_MAX_DEFAULT;
	if (s->max_frame > FB_FRAME_MAX_LIMIT)
		s->max_frame = FB_FRAME_MAX_LIMIT;
	if (s->have_epoch && a->broker_epoch != s->epoch)
		fb_log_warn("broker %s:%d: epoch changed (%llu -> %llu): its journal was recreated",
			    s->host, s->port, (unsigned long long)s->epoch,
			    (unsigned long long)a->broker_epoch);
	s->epoch = a->broker_epoch;
	s->have_epoch = 1;
	if (!s->numbered) {
		/* First HELLO_ACK of the process: continue the broker's sequence. */
		s->numbered = 1;
		s->next_seq = l + 1;
		s->hi_sent = l; /* "everything <= l is known to the broker" */
		for (size_t i = 0; i < s->count; i++)
			slot(s, i)->seq = s->next_seq++;
	} else if (l > s->hi_sent) {
		/* The broker holds seqs we never sent: another agent with our id,
		 * or a journal from elsewhere. Ours <= l are taken as acked; events
		 * never sent get fresh numbers after l so nothing is lost. */
		fb_log_warn("agent %s: broker %s:%d holds seq %llu but we sent only up to %llu; "
			    "is another agent using this id? treating <= %llu as acked",
			    s->agent_id, s->host, s->port, (unsigned long long)l,
			    (unsigned long long)s->hi_sent, (unsigned long long)l);
		size_t keep = 0;
		while (keep < s->count && slot(s, s->count - 1 - keep)->seq > s->hi_sent)
			keep++;
		drop_front(s, s->count - keep);
		s->next_seq = l + 1;
		for (size_t i = 0; i < s->count; i++)
			slot(s, i)->seq = s->next_seq++;
	} else if (l < s->acked) {
		/* The broker does not adopt our word for what it lost (a forged
		 * HELLO could say the same): continue from what it holds. */
		fb_log_warn("agent %s: broker %s:%d holds only up to seq %llu but had acked %llu; "
			    "events in between are lost on the broker side; the %zu unacked events "
			    "are numbered again from %llu",
			    s->agent_id, s->host, s->port, (unsigned long long)l,
			    (unsigned long long)s->acked, s->count, (unsigned long long)l + 1);
		s->next_seq = l + 1;
		for (size_t i = 0; i < s->count; i++)
			slot(s, i)->seq = s->next_seq++;
		s->hi_sent = l;
		s->acked = l;
	}
	s->sent = 0;
	s->state = ST_READY;
	s->st.connected = 1;
	if (!s->penalty)
		s->backoff_ms = BACKOFF_MIN_MS;
	s->broker_hb_ms = a->heartbeat_ms ? a->heartbeat_ms : DEFAULT_HB_MS;
	/* fabricbusd allows 100 ms .. 1 h (HeartbeatInterval); a value past
	 * INT_MAX made the timers below negative, which libevent aborts on
	 * (found by fuzz_session). */
	if (s->broker_hb_ms < HB_MIN_MS)
		s->broker_hb_ms = HB_MIN_MS;
	if (s->broker_hb_ms > HB_MAX_MS)
		s->broker_hb_ms = HB_MAX_MS;
	/* Silence for 3x the broker's heartbeat means the connection is dead. */
	uint64_t to = 3ull * s->broker_hb_ms;
	struct timeval rd = { (time_t)(to / 1000), (suseconds_t)(to % 1000) * 1000 };
	bufferevent_set_timeouts(s->bev, &rd, NULL);
	int hb = s->hb_ms < (int)s->broker_hb_ms ? s->hb_ms : (int)s->broker_hb_ms;
	struct timeval hv = { hb / 1000, (hb % 1000) * 1000 };
	evtimer_add(s->hb_ev, &hv);
	ack_upto(s, l);
	pump(s);
}

/* One frame from the broker; returns -1 if the connection was dropped. */
static int dispatch(struct fb_session *s, const struct fb_frame_hdr *h, const uint8_t *body)
{
	struct fb_hello_ack ha;
	struct fb_error_msg em;
	uint64_t v;
	int rc = FB_EPROTO;
	switch (h->type) {
	case FB_FRAME_HELLO_ACK:
		if (s->state != ST_HELLO)
			break;
		rc = fb_wire_parse_hello_ack(body, h->body_len, &ha);
		if (!rc)
			on_hello_ack(s, &ha);
		break;
	case FB_FRAME_ACK:
		if (s->state != ST_READY)
			break;
		rc = fb_wire_parse_ack(body, h->body_len, &v);
		if (!rc && s->numbered && v >= s->next_seq)
			rc = FB_EPROTO; /* acks what we never numbered */
		if (!rc) {
			if (v > s->acked)
				s->penalty = 0;
			ack_upto(s, v);
		}
		break;
	case FB_FRAME_HEARTBEAT:
		rc = fb_wire_parse_heartbeat(body, h->body_len, &v);
		break;
	case FB_FRAME_ERROR:
		rc = fb_wire_parse_error(body, h->body_len, &em);
		if (rc)
			break;
		/* A refusal that will repeat must not become a reconnect loop. */
		if (em.code != FB_WERR_SHUTDOWN)
			s->penalty = 1;
		if (em.code == FB_WERR_REPLACED || em.code == FB_WERR_FORBIDDEN)
			s->backoff_ms = BACKOFF_MAX_MS;
		report(s, em.code, "broker %s:%d sent ERROR %u: %s", s->host, s->port,
		       (unsigned)em.code, em.text);
		disconnect(s, em.code, NULL);
		return -1;
	default:
		break;
	}
	if (rc) {
		char why[128];
		snprintf(why, sizeof(why), "bad frame type %u from broker: %s", (unsigned)h->type,
			 fb_strerror(rc));
		fb_log_warn("agent %s: broker %s:%d: %s", s->agent_id, s->host, s->port, why);
		disconnect(s, rc, why);
		return -1;
	}
	return 0;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct fb_session *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	while (s->bev == bev) {
		size_t len = evbuffer_get_length(in);
		if (len < FB_FRAME_HDR_LEN)
			return;
		struct fb_frame_hdr h;
		const uint8_t *p = evbuffer_pullup(in, FB_FRAME_HDR_LEN);
		int rc = fb_frame_peek(p, FB_FRAME_HDR_LEN, RX_MAX_BODY, &h);
		if (rc && rc != FB_EAGAIN) {
			fb_log_warn("agent %s: malformed frame from broker %s:%d: %s", s->agent_id,
				    s->host, s->port, fb_strerror(rc));
			disconnect(s, rc, "malformed frame from broker");
			return;
		}
		size_t flen = FB_FRAME_HDR_LEN + (size_t)h.body_len;
		if (len < flen)
			return;
		p = evbuffer_pullup(in, (ev_ssize_t)flen);
		if (!p || fb_frame_peek(p, flen, RX_MAX_BODY, &h) != 0) {
			disconnect(s, -ENOMEM, "cannot read frame");
			return;
		}
		/* dispatch may drop the connection (or a callback may): then the
		 * input buffer is no longer ours to touch. */
		if (dispatch(s, &h, p + FB_FRAME_HDR_LEN) < 0 || s->bev != bev)
			return;
		evbuffer_drain(in, flen);
	}
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	pump(arg);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct fb_session *s = arg;
	if (what & BEV_EVENT_CONNECTED) {
		/* Clear the connect timeout; the HELLO_ACK wait has its own. */
		struct timeval rd = { (3 * s->hb_ms) / 1000, ((3 * s->hb_ms) % 1000) * 1000 };
		bufferevent_set_timeouts(bev, &rd, NULL);
		struct fb_hello h = { .version = FB_PROTO_VERSION, .last_acked = s->acked };
		memcpy(h.agent_id, s->agent_id, sizeof(h.agent_id));
		s->state = ST_HELLO;
		send_frame_buf(s, fb_wire_put_hello(&s->out, &h));
		return;
	}
	char why[160];
	int code = -ECONNRESET;
	if (what & BEV_EVENT_TIMEOUT) {
		code = -ETIMEDOUT;
		snprintf(why, sizeof(why), "%s",
			 s->state == ST_CONNECTING ? "connect timed out"
			 : s->state == ST_HELLO	   ? "no HELLO_ACK in time"
						   : "no heartbeat from broker in time");
	} else if (what & BEV_EVENT_EOF) {
		snprintf(why, sizeof(why), "connection closed by broker");
	} else {
		int e = evutil_socket_geterror(bufferevent_getfd(bev));
		unsigned long te = s->tls ? bufferevent_get_openssl_error(bev) : 0;
		code = e ? -e : -ECONNRESET;
		if (te) {
			char r[120];
			fb_tls_client_error(te, r, sizeof(r));
			snprintf(why, sizeof(why), "TLS: %s", r);
			code = -EPROTO;
		} else if (s->tls && s->state != ST_READY) {
			/* TLS 1.3: the broker checks our certificate after our side of
			 * the handshake is done, and answers a bad one with a close. */
			snprintf(why, sizeof(why), "%s during TLS set-up (did the broker refuse our "
				 "certificate? see its log)", e ? strerror(e) : "connection error");
		} else {
			snprintf(why, sizeof(why), "%s", e ? strerror(e) : "connection error");
		}
	}
	disconnect(s, code, why);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	connect_now(arg);
}

static void connect_now(struct fb_session *s)
{
	char portstr[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	snprintf(portstr, sizeof(portstr), "%d", s->port);
	s->state = ST_CONNECTING;
	/* Blocking resolve: agents name the broker by address or a local name. */
	int gai = getaddrinfo(s->host, portstr, &hints, &res);
	if (gai != 0) {
		char why[160];
		snprintf(why, sizeof(why), "cannot resolve: %s", gai_strerror(gai));
		disconnect(s, -EHOSTUNREACH, why);
		return;
	}
	unsigned n = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		n++;
	struct addrinfo *ai = res;
	for (unsigned i = s->attempt++ % n; i > 0; i--)
		ai = ai->ai_next;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		disconnect(s, -e, strerror(e));
		return;
	}
	if (s->tls) {
		/* libevent's TLS bufferevent connects its own socket (the handshake
		 * follows the connect): TCP_NODELAY is set on it below. */
		close(fd);
		fd = -1;
		SSL *ssl = fb_tls_client_ssl(s->tls, s->host);
		s->bev = ssl ? bufferevent_openssl_socket_new(s->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
							      BEV_OPT_CLOSE_ON_FREE)
			     : NULL;
		if (!s->bev && ssl)
			SSL_free(ssl);
		if (s->bev)
			bufferevent_openssl_set_allow_dirty_shutdown(s->bev, 1);
	} else {
		s->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	}
	if (!s->bev) {
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		disconnect(s, -ENOMEM, "cannot create bufferevent");
		return;
	}
	bufferevent_setcb(s->bev, read_cb, write_cb, event_cb, s);
	bufferevent_setwatermark(s->bev, EV_WRITE, OUT_LOW, 0);
	int cto = 3 * s->hb_ms < 5000 ? 3 * s->hb_ms : 5000;
	struct timeval tv = { cto / 1000, (cto % 1000) * 1000 };
	bufferevent_set_timeouts(s->bev, &tv, &tv);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	int rc = bufferevent_socket_connect(s->bev, ai->ai_addr, (int)ai->ai_addrlen);
	int e = errno;
	freeaddrinfo(res);
	if (rc == 0 && s->tls)
		setsockopt(bufferevent_getfd(s->bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (rc != 0)
		disconnect(s, -e, e ? strerror(e) : "connect failed");
}

int fb_session_new(struct event_base *base, const struct fb_session_opts *o,
		   struct fb_session **out)
{
	*out = NULL;
	if (!base || !o || !o->host || !o->agent_id || o->port < 1 || o->port > 65535 ||
	    !fb_agent_id_valid(o->agent_id) || strlen(o->host) >= 256 ||
	    o->max_unacked > SIZE_MAX / sizeof(struct fb_event))
		return FB_ECONFIG;
	struct fb_session *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base = base;
	snprintf(s->host, sizeof(s->host), "%s", o->host);
	snprintf(s->agent_id, sizeof(s->agent_id), "%s", o->agent_id);
	s->port = o->port;
	s->cap = o->max_unacked ? o->max_unacked : DEFAULT_MAX_UNACKED;
	s->batch = o->batch_events ? o->batch_events : DEFAULT_BATCH;
	s->hb_ms = o->heartbeat_ms > 0 ? o->heartbeat_ms : DEFAULT_HB_MS;
	s->backoff_ms = BACKOFF_MIN_MS;
	s->max_frame = FB_FRAME_MAX_DEFAULT;
	if (o->tls_ca || o->tls_cert || o->tls_key) {
		char err[512];
		int rc = fb_tls_client_ctx(o->tls_ca, o->tls_cert, o->tls_key, &s->tls, err, sizeof(err));
		if (rc) {
			fb_log_err("agent %s: %s", o->agent_id, err);
			free(s);
			return rc;
		}
	}
	/* Pages of the ring are touched only as the window fills. */
	s->ring = malloc(s->cap * sizeof(*s->ring));
	s->flush_ev = event_new(base, -1, 0, flush_cb, s);
	s->hb_ev = event_new(base, -1, EV_PERSIST, hb_cb, s);
	s->retry_ev = evtimer_new(base, retry_cb, s);
	if (!s->ring || !s->flush_ev || !s->hb_ev || !s->retry_ev) {
		fb_session_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void fb_session_set_callbacks(struct fb_session *s, fb_session_ack_cb ack,
			      fb_session_err_cb err, void *arg)
{
	s->ack_cb = ack;
	s->err_cb = err;
	s->cb_arg = arg;
}

int fb_session_start(struct fb_session *s)
{
	if (s->state != ST_IDLE)
		return FB_EPROTO;
	connect_now(s);
	return 0;
}

int fb_session_submit(struct fb_session *s, const struct fb_event *ev)
{
	if (s->count == s->cap)
		return FB_EFULL;
	struct fb_event *e = slot(s, s->count);
	*e = *ev;
	e->seq = s->numbered ? s->next_seq : 1;
	const char *why;
	/* Refuse here what the broker would refuse, or one bad event would
	 * poison every reconnect. */
	if (fb_event_check(e, &why) != 0)
		return FB_EMALFORMED;
	if (s->numbered)
		s->next_seq++;
	else
		e->seq = 0;
	if (!e->ts_ns)
		e->ts_ns = fb_now_ns();
	s->count++;
	s->st.submitted++;
	if (s->state == ST_READY) {
		if (s->count - s->sent >= s->batch)
			pump(s); /* a full frame is ready: no reason to wait */
		else if (!s->flush_scheduled) {
			s->flush_scheduled = 1;
			event_active(s->flush_ev, 0, 0);
		}
	}
	return 0;
}

void fb_session_flush(struct fb_session *s)
{
	pump(s);
}

void fb_session_get_stats(const struct fb_session *s, struct fb_session_stats *st)
{
	*st = s->st;
	st->last_acked_seq = s->acked;
	st->unacked = s->count;
}

int fb_session_drain(struct fb_session *s, int wait_ms, fb_session_drained_cb done, void *arg)
{
	if (!s->drain_ev && !(s->drain_ev = evtimer_new(s->base, drain_deadline_cb, s)))
		return -ENOMEM;
	s->drain_cb = done;
	s->drain_arg = arg;
	fb_session_flush(s);
	if (s->count == 0) {
		drain_end(s);
		return 0;
	}
	struct timeval tv = { wait_ms / 1000, (wait_ms % 1000) * 1000 };
	evtimer_add(s->drain_ev, &tv);
	return 0;
}

void fb_session_free(struct fb_session *s)
{
	if (!s)
		return;
	if (s->drain_ev)
		event_free(s->drain_ev);
	if (s->bev)
		bufferevent_free(s->bev);
	if (s->flush_ev)
		event_free(s->flush_ev);
	if (s->hb_ev)
		event_free(s->hb_ev);
	if (s->retry_ev)
		event_free(s->retry_ev);
	fb_buf_free(&s->out);
	free(s->ring);
	fb_tls_client_ctx_free(s->tls);
	free(s);
}

void fb_session_default_agent_id(const char *prefix, char *out, size_t outsz)
{
	char h[256] = "localhost";
	if (gethostname(h, sizeof(h) - 1) != 0 || !h[0])
		snprintf(h, sizeof(h), "localhost");
	h[sizeof(h) - 1] = '\0';
	for (char *c = h; *c; c++)
		if (!strchr("._:@-", *c) && !(*c >= 'a' && *c <= 'z') &&
		    !(*c >= 'A' && *c <= 'Z') && !(*c >= '0' && *c <= '9'))
			*c = '-';
	size_t room = FB_AGENT_ID_MAX - 2 - strlen(prefix); /* '@' and the NUL */
	snprintf(out, outsz, "%s@%.*s", prefix, (int)room, h);
}
