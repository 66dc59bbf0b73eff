/* ingest.c - the agent listener: accept, TLS, HELLO, EVENTS, heartbeats.
 *
 * One struct fb_conn per TCP connection. Frames are taken off the input
 * buffer only when whole (fb_frame_peek), and every body is decoded through
 * the checked reader in proto/. A protocol error is answered with an ERROR
 * frame, a log line naming the peer and the agent, and a close.
 *
 * The guards (docs/security.md): a HELLO for an agent id with a live session
 * is refused unless the new connection's certificate proves the id (then it
 * takes over and the old one is told REPLACED); HELLO's last_acked is never
 * adopted; an event more than MaxSeqGap above the stored seq is refused and
 * never journaled; before HELLO a frame may be at most FB_HELLO_FRAME_MAX
 * bytes and HELLO must come within HelloTimeout; MaxAgentsPerAddress caps one
 * source; each connection is served at most AgentReadBudget bytes of frames
 * before the others get their turn.
 */
#include "broker.h"

#include "fb_err.h"
#include "fb_log.h"
#include "fabric_map.h"
#include "fb_wire.h"
#include "inventory.h"
#include "journal.h"
#include "agent_tls.h"
#include "listener.h"
#include "peer_count.h"
#include "rc_event.h"
#include "rf_service.h"
#include "rf_tree.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Largest frame body before HELLO: a HELLO is at most 74 bytes, and room is
 * left for fields a later minor revision may add. An unauthenticated
 * connection never makes the broker hold more than this. */
#define FB_HELLO_FRAME_MAX 1024

enum conn_state {
	CONN_PEEK,            /* TLS configured: waiting for the first byte (TLS or plain?) */
	CONN_HANDSHAKE,       /* TLS handshake under way */
	CONN_AWAIT_HELLO,
	CONN_READY,
	CONN_ERROR_AFTER_ACK, /* a refused event: ERROR once the events before it are acked */
	CONN_CLOSING,
};

struct fb_conn {
	struct fb_broker *b;
	struct bufferevent *bev;
	struct fb_agent *agent; /* set by HELLO */
	enum conn_state state;
	uint64_t last_rx_ns;
	uint64_t last_hb_ns;
	uint64_t acked_sent;    /* last ack value written to this connection */
	char peer[64];
	struct fb_conn *prev, *next;
	uint64_t accepted_ns;
	evutil_socket_t fd;
	struct event *peek_ev;  /* CONN_PEEK */
	int tls;                /* the connection is TLS */
	int identified;         /* names hold the verified client certificate's */
	int counted;            /* counted in b->peer_count under addr */
	struct fb_ident_names names;
	char tls_why[FB_TLS_WHY_MAX];
	char addr[48];          /* peer without the port */
	uint16_t err_code;      /* CONN_ERROR_AFTER_ACK */
	char err_text[256];
	size_t turn_bytes;      /* frame bytes served in this turn (turn_cb starts the next) */
	int yielded;            /* used its AgentReadBudget: reading off until turn_cb */
};

const char *fb_conn_peer(const struct fb_conn *c) { return c->peer; }

static const char *agent_name(const struct fb_conn *c)
{
	return c->agent ? c->agent->id : "(before HELLO)";
}

static void conn_free(struct fb_conn *c)
{
	struct fb_broker *b = c->b;
	if (c->agent && c->agent->conn == c) {
		c->agent->conn = NULL;
		c->agent->last_seen_ns = fb_now_ns(); /* idle from now (AgentIdleExpiry) */
	}
	if (c->counted)
		fb_peer_count_del(b->peer_count, c->addr);
	if (c->peek_ev)
		event_free(c->peek_ev);
	if (c->prev)
		c->prev->next = c->next;
	else
		b->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	b->n_conns--;
	if (c->bev)
		bufferevent_free(c->bev);
	else
		evutil_closesocket(c->fd);
	free(c);
	if (b->listener && b->n_conns < b->fd_agents)
		fb_listener_hold(b->listener, 0); /* a descriptor is free: take the next waiting agent */
}

static void closing_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_free(arg);
}

static void deferred_free_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_free(arg);
}

/* Send ERROR and close once it is written. */
static void conn_reject(struct fb_conn *c, uint16_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void conn_reject(struct fb_conn *c, uint16_t code, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (c->state == CONN_CLOSING)
		return;
	if (!c->bev || c->state == CONN_HANDSHAKE) {
		/* Nothing can be said to it yet: close at once (from the loop). */
		if (code != FB_WERR_SHUTDOWN)
			fb_log_warn("agent connection from %s: %s; closing it", c->peer, text);
		c->state = CONN_CLOSING;
		if (c->peek_ev)
			event_del(c->peek_ev);
		if (c->bev)
			bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		struct timeval now = { 0, 0 };
		event_base_once(c->b->base, -1, EV_TIMEOUT, deferred_free_cb, c, &now);
		return;
	}
	if (code != FB_WERR_SHUTDOWN && code != FB_WERR_REPLACED && code != FB_WERR_BUSY) {
		fb_log_warn("agent %s from %s: %s; closing the connection", agent_name(c), c->peer, text);
		c->b->st.rejected++;
	}
	struct fb_buf out = FB_BUF_INIT;
	if (fb_wire_put_error(&out, code, text) == 0)
		bufferevent_write(c->bev, out.data, out.len);
	fb_buf_free(&out);
	if (c->agent && c->agent->conn == c)
		c->agent->conn = NULL;
	c->state = CONN_CLOSING;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setcb(c->bev, NULL, closing_write_cb, NULL, c);
	/* Never free here: callers still hold c. With nothing left to write,
	 * free it from the loop instead of waiting for a write callback. */
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		struct timeval now = { 0, 0 };
		event_base_once(c->b->base, -1, EV_TIMEOUT, deferred_free_cb, c, &now);
	}
}

static void conn_write(struct fb_conn *c, const struct fb_buf *f)
{
	if (bufferevent_write(c->bev, f->data, f->len) != 0)
		fb_log_warn("agent %s from %s: cannot queue %zu bytes", agent_name(c), c->peer, f->len);
}

static void send_ack(struct fb_conn *c, uint64_t seq)
{
	if ((c->state != CONN_READY && c->state != CONN_ERROR_AFTER_ACK) || seq <= c->acked_sent)
		goto after;
	uint8_t buf[FB_FRAME_HDR_LEN + 8];
	struct fb_buf f = { buf, 0, sizeof(buf) };
	/* Fits the stack buffer: header + u64, so no allocation happens. */
	if (fb_wire_put_ack(&f, seq) == 0)
		bufferevent_write(c->bev, f.data, f.len);
	c->acked_sent = seq;
after:
	/* The events before a refused one are acked: now the ERROR (PROTOCOL.md). */
	if (c->state == CONN_ERROR_AFTER_ACK && c->agent->durable_seq == c->agent->stored_seq) {
		c->state = CONN_READY; /* so that conn_reject sends it */
		conn_reject(c, c->err_code, "%s", c->err_text);
	}
}

/* An event the broker refuses ends the connection, but the valid events
 * before it in the same read are kept: the ERROR waits until they are acked,
 * so the agent learns from the ACK where to resume (PROTOCOL.md). */
static void conn_fail_after_ack(struct fb_conn *c, uint16_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void conn_fail_after_ack(struct fb_conn *c, uint16_t code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err_text, sizeof(c->err_text), fmt, ap);
	va_end(ap);
	struct fb_agent *a = c->agent;
	if (a->stored_seq == a->durable_seq) {
		send_ack(c, a->durable_seq);
		conn_reject(c, code, "%s", c->err_text);
		return;
	}
	c->err_code = code;
	c->state = CONN_ERROR_AFTER_ACK;
	bufferevent_disable(c->bev, EV_READ);
	fb_commit_mark(c->b, a);
}

void fb_ingest_durable(struct fb_broker *b, struct fb_agent *a, uint64_t seq)
{
	(void)b;
	if (a->conn)
		send_ack(a->conn, seq);
}

/* A new turn (AgentReadBudget): this runs at the commit's low priority, so
 * once no connection has anything left to read in this loop iteration and
 * the commit has run. Every connection may be served its budget again, and
 * the ones that used it up are read again. */
static void turn_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_broker *b = arg;
	for (struct fb_conn *c = b->conns; c; c = c->next) {
		c->turn_bytes = 0;
		if (!c->yielded)
			continue;
		c->yielded = 0;
		if (c->state != CONN_READY)
			continue;
		if (!b->held)
			bufferevent_enable(c->bev, EV_READ);
		bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	}
}

/* Backpressure: with EV_READ off the kernel buffers fill and the agents'
 * sends block; they keep their unacked events and carry on when read again. */
void fb_ingest_hold(struct fb_broker *b, int hold)
{
	uint64_t now = fb_now_ns();
	for (struct fb_conn *c = b->conns; c; c = c->next) {
		if (c->state != CONN_READY)
			continue;
		if (hold) {
			bufferevent_disable(c->bev, EV_READ);
		} else if (!c->yielded) {
			c->last_rx_ns = now; /* not their silence: we did not read */
			bufferevent_enable(c->bev, EV_READ);
			/* Frames already buffered raise no read event by themselves. */
			bufferevent_trigger(c->bev, EV_READ,
					    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
		}
	}
}

/* The most a connection past HELLO may hold unread (its read high
 * watermark): one frame of MaxFrameSize and a turn's AgentReadBudget. */
static size_t ready_read_max(const struct fb_broker *b)
{
	return FB_FRAME_HDR_LEN + b->cfg->max_frame + b->cfg->agent_read_budget;
}

static void handle_hello(struct fb_conn *c, const uint8_t *body, size_t len)
{
	struct fb_broker *b = c->b;
	struct fb_hello h;
	int rc = fb_wire_parse_hello(body, len, &h);
	if (rc) {
		conn_reject(c, FB_WERR_MALFORMED, "bad HELLO: %s", fb_strerror(rc));
		return;
	}
	char names[FB_IDENT_NAMES_MAX];
	if (c->identified && !fb_ident_allows(&b->cfg->agent_identity, &c->names, h.agent_id)) {
		fb_ident_names_show(&c->names, names, sizeof(names));
		b->st.forbidden++;
		conn_reject(c, FB_WERR_FORBIDDEN, "certificate %.120s may not use agent id %s "
			    "(AgentIdentity, docs/security.md)", names, h.agent_id);
		return;
	}
	/* The broker's own events (root causes, storm.c) have this id. */
	if (strcmp(h.agent_id, FB_BROKER_AGENT_ID) == 0) {
		b->st.forbidden++;
		conn_reject(c, FB_WERR_FORBIDDEN, "agent id %s is the broker's own; pick another "
			    "(--agent-id)", FB_BROKER_AGENT_ID);
		return;
	}
	struct fb_agent *a = fb_agent_get(b->agents, h.agent_id);
	if (!a) {
		conn_reject(c, FB_WERR_INTERNAL, "out of memory");
		return;
	}
	if (a->conn) {
		/* Taking over a live session needs proof of the id: a certificate.
		 * Without it, anyone who can reach the port could cut the agent off
		 * and feed events under its name. */
		if (!c->identified) {
			b->st.in_use++;
			conn_reject(c, FB_WERR_IN_USE, "agent id %s has a live session from %s; refused "
				    "(retry once it is gone; a takeover needs a client certificate)", a->id,
				    fb_conn_peer(a->conn));
			return;
		}
		fb_ident_names_show(&c->names, names, sizeof(names));
		b->st.takeovers++;
		fb_log_warn("agent %s: connection from %s (certificate %s) takes over the session from %s",
			    a->id, c->peer, names, fb_conn_peer(a->conn));
		conn_reject(a->conn, FB_WERR_REPLACED, "replaced by a newer connection from %s "
			    "with a certificate for this id", c->peer);
	}
	if (h.last_acked > a->stored_seq) {
		/* The agent says it saw acks for more than the broker holds: the
		 * journal was removed or lost its tail, or the HELLO is forged.
		 * Never adopted (one forged HELLO would cut the real agent off for
		 * good): HELLO_ACK says what the broker holds, and the agent numbers
		 * its unacked events from there. */
		b->st.claims_refused++;
		fb_log_warn("agent %s from %s: says seq %llu was acked but the broker holds only up to "
			    "%llu; not adopted (journal removed or cut, or a forged HELLO); the agent "
			    "resumes from %llu", a->id, c->peer, (unsigned long long)h.last_acked,
			    (unsigned long long)a->stored_seq, (unsigned long long)a->stored_seq + 1);
	}
	a->conn = c;
	c->agent = a;
	c->state = CONN_READY;
	if (b->held)
		bufferevent_disable(c->bev, EV_READ); /* like the others (fb_ingest_hold) */
	/* Authenticated now: a frame may be as large as MaxFrameSize. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, ready_read_max(b));
	c->acked_sent = a->durable_seq;
	struct fb_hello_ack ack = { a->durable_seq, (uint32_t)b->cfg->max_frame,
				    (uint32_t)b->cfg->heartbeat_ms, b->epoch };
	/* Events stored but not yet durable are acked by the coming commit. */
	if (a->stored_seq > a->durable_seq)
		fb_commit_mark(b, a);
	struct fb_buf out = FB_BUF_INIT;
	if (fb_wire_put_hello_ack(&out, &ack) == 0)
		conn_write(c, &out);
	fb_buf_free(&out);
	if (c->identified) {
		fb_ident_names_show(&c->names, names, sizeof(names));
		fb_log_info("agent %s connected from %s over TLS as %s (protocol %u, last acked %llu, "
			    "broker has %llu)", a->id, c->peer, names, h.version,
			    (unsigned long long)h.last_acked, (unsigned long long)a->stored_seq);
	} else {
		fb_log_info("agent %s connected from %s (protocol %u, last acked %llu, broker has %llu)",
			    a->id, c->peer, h.version, (unsigned long long)h.last_acked,
			    (unsigned long long)a->stored_seq);
	}
}

#define EVENT_SEQ_REFUSED 2

/* Accept one decoded event: dedup, bound, number, journal, batch. Returns 1
 * taken, 0 duplicate, EVENT_SEQ_REFUSED, or a journal error. now_ns: the
 * frame's arrival, read once per frame (a clock read per event was 2% of
 * the broker's CPU at full rate). */
static int accept_event(struct fb_conn *c, struct fb_record *slot, const uint8_t *raw, size_t raw_len,
			uint64_t now_ns)
{
	struct fb_broker *b = c->b;
	struct fb_agent *a = c->agent;
	if (slot->ev.seq <= a->stored_seq) {
		a->duplicates++;
		b->st.duplicates++;
		return 0;
	}
	/* A seq far ahead would make every later event of the real agent a
	 * "duplicate", and the journal would keep it so after a restart. */
	if (slot->ev.seq - a->stored_seq > b->cfg->max_seq_gap) {
		b->st.seq_refused++;
		return EVENT_SEQ_REFUSED;
	}
	if (slot->ev.seq > a->stored_seq + 1) {
		a->gaps += slot->ev.seq - a->stored_seq - 1;
		b->st.gaps += slot->ev.seq - a->stored_seq - 1;
		fb_log_warn("agent %s: sequence jumps from %llu to %llu (%llu events the agent never sent)",
			    a->id, (unsigned long long)a->stored_seq, (unsigned long long)slot->ev.seq,
			    (unsigned long long)(slot->ev.seq - a->stored_seq - 1));
	}
	slot->event_id = b->last_event_id + 1;
	/* A switch-side event learns its node from the inventory; the agent's
	 * bytes no longer say what every sink must see, so re-encode. */
	/* An Ethernet switch port's event names its host MAC from the topology
	 * first, so that the inventory can name its node. */
	int peer = fb_fabric_map_enrich_peer(b->fabric_map, &slot->ev);
	if (fb_inventory_enrich(b->inventory, &slot->ev) || peer) {
		raw = NULL;
		raw_len = 0;
	}
	/* Likewise the jobs registered on its node (Oem.Fabricbus.Jobs). */
	if (fb_fabric_map_enrich(b->fabric_map, &slot->ev)) {
		raw = NULL;
		raw_len = 0;
	}
	/* Rate limits, flap control...: quiet events are journaled with their
	 * flag, and default subscribers skip them (quiet.h). */
	if (fb_quiets_apply(&b->quiets, &slot->ev, slot->event_id, now_ns)) {
		raw = NULL;
		raw_len = 0;
	}
	int rc = fb_journal_append(b->journal, slot->event_id, &slot->ev, raw, raw_len);
	if (rc)
		return rc;
	if (fb_inventory_learn(b->inventory, &slot->ev) != 0)
		fb_log_warn("agent %s: out of memory adding port %s of node %s to the inventory",
			    a->id, slot->ev.subj.device, slot->ev.subj.node);
	fb_fabric_map_learn(b->fabric_map, &slot->ev);
	if (b->redfish)
		fb_rf_tree_learn(b->redfish->tree, &slot->ev);
	b->last_event_id++;
	a->stored_seq = slot->ev.seq;
	a->last_ts_ns = slot->ev.ts_ns;
	a->events++;
	b->st.events++;
	return 1;
}

/* How old the frame's newest event was on arrival (wall clocks, as the
 * agent stamps them): once per frame, not per event. Shown in /status. */
static void agent_lag(struct fb_agent *a, uint64_t events_before)
{
	if (a->events == events_before || !a->last_ts_ns)
		return;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	a->lag_ns = (int64_t)((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - a->last_ts_ns);
}

static void handle_events(struct fb_conn *c, const uint8_t *body, size_t len)
{
	struct fb_broker *b = c->b;
	struct fb_events_reader r;
	uint64_t before = c->agent->events;
	uint64_t now_ns = fb_now_ns();
	int rc = fb_events_open(&r, body, len);
	if (rc) {
		conn_reject(c, FB_WERR_MALFORMED, "bad EVENTS frame: %s", fb_strerror(rc));
		return;
	}
	for (;;) {
		struct fb_record *slot = fb_commit_slot(b);
		if (!slot) {
			conn_reject(c, FB_WERR_INTERNAL, "%s", fb_commit_stalled(b)
				    ? "the journal cannot be written (disk full?); send again later"
				    : "out of memory");
			return;
		}
		const uint8_t *raw;
		size_t raw_len;
		memcpy(slot->ev.agent_id, c->agent->id, sizeof(slot->ev.agent_id));
		rc = fb_events_next(&r, &slot->ev, &raw, &raw_len);
		if (rc == 0)
			break;
		if (rc < 0) {
			/* Events before this one in the frame are kept: they are
			 * valid, and the agent learns where to resume from the ack. */
			conn_fail_after_ack(c, FB_WERR_MALFORMED, "event %u of %u in EVENTS frame: %s",
					    r.index + 1, r.count, fb_strerror(rc));
			break;
		}
		uint64_t held = c->agent->stored_seq;
		rc = accept_event(c, slot, raw, raw_len, now_ns);
		if (rc < 0) {
			fb_broker_fatal(b, "journal append", rc);
			return;
		}
		if (rc == EVENT_SEQ_REFUSED) {
			conn_fail_after_ack(c, FB_WERR_SEQUENCE, "event seq %llu is more than MaxSeqGap=%llu "
					    "above seq %llu, the last the broker holds for %s; refused",
					    (unsigned long long)slot->ev.seq,
					    (unsigned long long)b->cfg->max_seq_gap,
					    (unsigned long long)held, c->agent->id);
			break;
		}
		if (rc == 1)
			fb_commit_add(b);
	}
	c->agent->last_seen_ns = c->last_rx_ns;
	agent_lag(c->agent, before);
	if (c->state != CONN_ERROR_AFTER_ACK)
		fb_commit_mark(b, c->agent);
}

static void handle_frame(struct fb_conn *c, const struct fb_frame_hdr *h, const uint8_t *body)
{
	if (c->state == CONN_AWAIT_HELLO && h->type != FB_FRAME_HELLO) {
		conn_reject(c, FB_WERR_PROTOCOL, "expected HELLO first, got frame type %u", h->type);
		return;
	}
	switch (h->type) {
	case FB_FRAME_HELLO:
		if (c->state != CONN_AWAIT_HELLO)
			conn_reject(c, FB_WERR_PROTOCOL, "second HELLO on one connection");
		else
			handle_hello(c, body, h->body_len);
		break;
	case FB_FRAME_EVENTS:
		if (c->state == CONN_READY)
			handle_events(c, body, h->body_len);
		break;
	case FB_FRAME_HEARTBEAT:
		break;
	case FB_FRAME_ERROR: {
		struct fb_error_msg e;
		if (fb_wire_parse_error(body, h->body_len, &e) == 0)
			fb_log_warn("agent %s from %s sent error %u: %s", agent_name(c), c->peer, e.code, e.text);
		conn_reject(c, FB_WERR_SHUTDOWN, "closing after agent error");
		break;
	}
	default:
		conn_reject(c, FB_WERR_PROTOCOL, "unexpected frame type %u", h->type);
	}
}

/* At most this much per direct read (conn_top_up). */
#define TOP_UP_MAX (64u << 10)

/* One readv of at most room bytes into in's free space; the bytes read. */
static size_t top_up_read(evutil_socket_t fd, struct evbuffer *in, size_t room)
{
	struct evbuffer_iovec v[2];
	int nv = evbuffer_reserve_space(in, (ev_ssize_t)room, v, 2);
	if (nv <= 0)
		return 0;
	struct iovec iov[2];
	size_t asked = 0;
	for (int i = 0; i < nv; i++) {
		size_t len = v[i].iov_len < room - asked ? v[i].iov_len : room - asked;
		iov[i] = (struct iovec){ v[i].iov_base, len };
		asked += len;
	}
	ssize_t n = readv(fd, iov, nv);
	if (n <= 0) {
		evbuffer_commit_space(in, NULL, 0);
		return 0;
	}
	/* Commit the extents the bytes landed in, each with what it got. */
	size_t left = (size_t)n;
	int used = 0;
	for (; used < nv && left; used++) {
		v[used].iov_len = left < iov[used].iov_len ? left : iov[used].iov_len;
		left -= v[used].iov_len;
	}
	if (evbuffer_commit_space(in, v, used) != 0)
		return 0; /* cannot happen: the extents are the ones reserved */
	return (size_t)n;
}

/* libevent 2.1 reads at most 4 KiB per read event (EVBUFFER_MAX_READ), so at
 * full rate every ~40 events cost a readv, an ioctl(FIONREAD) and a pass of
 * the loop (~10% of the loop thread). Once the buffered frames are handled,
 * a plain connection reads what its socket holds straight into the input
 * buffer: up to 64 KiB at a time, within its turn's budget and never past
 * the high watermark (the bound on what one connection may hold). Returns
 * the bytes read; 0 when there is nothing now or the connection is not to be
 * read (TLS, held, its turn over). EOF and errors are left to the
 * bufferevent's next read, which reports them as it always did. */
static size_t conn_top_up(struct fb_conn *c, struct evbuffer *in, size_t avail)
{
	struct fb_broker *b = c->b;
	if (c->tls || c->state != CONN_READY || b->held || c->turn_bytes >= b->cfg->agent_read_budget)
		return 0;
	size_t wm = ready_read_max(b);
	size_t room = wm > avail ? wm - avail : 0;
	room = room < TOP_UP_MAX ? room : TOP_UP_MAX;
	/* The bufferevent keeps its input's end frozen against writers other
	 * than its own read; this is that read's continuation, on the loop
	 * thread, so it opens the end for the length of it. */
	evbuffer_unfreeze(in, 0);
	size_t n = room ? top_up_read(c->fd, in, room) : 0;
	evbuffer_freeze(in, 0);
	return n;
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct fb_conn *c = arg;
	struct fb_broker *b = c->b;
	struct evbuffer *in = bufferevent_get_input(bev);
	c->last_rx_ns = fb_now_ns();
	while ((c->state == CONN_AWAIT_HELLO || c->state == CONN_READY) && b->exit_code == 0) {
		size_t avail = evbuffer_get_length(in);
		if (avail == 0 && (avail = conn_top_up(c, in, 0)) == 0)
			return;
		if (c->state == CONN_READY && b->held)
			return; /* fb_ingest_hold(0) triggers the rest */
		if (c->turn_bytes >= b->cfg->agent_read_budget && c->state == CONN_READY) {
			/* Its turn is over until the others had theirs and the
			 * commit ran (turn_cb). Serving it again at once kept the
			 * loop busy with reads, so the commit (a lower priority)
			 * waited for a full pending batch (65536 events): an agent
			 * that waits for acks (every fb_session keeps a window of
			 * unacked events) got only its window per commit, and agents
			 * that never wait took the rest (two of them left a third
			 * 26% instead of 33%). */
			c->yielded = 1;
			bufferevent_disable(bev, EV_READ);
			event_active(b->turn_ev, 0, 0);
			return;
		}
		size_t peek = avail < FB_FRAME_HDR_LEN ? avail : FB_FRAME_HDR_LEN;
		const uint8_t *p = evbuffer_pullup(in, (ssize_t)peek);
		struct fb_frame_hdr h = { 0, 0, 0 };
		int hello = c->state == CONN_AWAIT_HELLO;
		uint32_t limit = hello ? FB_HELLO_FRAME_MAX : (uint32_t)b->cfg->max_frame;
		int rc = fb_frame_peek(p, avail, limit, &h);
		if (rc == FB_EAGAIN) {
			if (conn_top_up(c, in, avail))
				continue; /* the rest of the frame may be in */
			return;
		}
		if (rc == FB_EVERSION) {
			conn_reject(c, FB_WERR_VERSION, "protocol version %u not supported (broker speaks %u)",
				    h.version, FB_PROTO_VERSION);
			return;
		}
		if (rc == FB_ETOOBIG) {
			if (hello)
				conn_reject(c, FB_WERR_TOO_BIG, "frame of %u bytes before HELLO (at most %u "
					    "until HELLO)", h.body_len, FB_HELLO_FRAME_MAX);
			else
				conn_reject(c, FB_WERR_TOO_BIG, "frame of %u bytes exceeds MaxFrameSize %llu",
					    h.body_len, (unsigned long long)b->cfg->max_frame);
			return;
		}
		if (rc) {
			conn_reject(c, FB_WERR_MALFORMED, "not a fabricbus frame (bad magic)");
			return;
		}
		size_t flen = FB_FRAME_HDR_LEN + (size_t)h.body_len;
		const uint8_t *frame = evbuffer_pullup(in, (ssize_t)flen);
		b->st.frames++;
		b->st.bytes_in += flen;
		handle_frame(c, &h, frame + FB_FRAME_HDR_LEN);
		if (c->state == CONN_CLOSING)
			return; /* freed once the ERROR frame is written */
		evbuffer_drain(in, flen);
		c->turn_bytes += flen;
	}
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct fb_conn *c = arg;
	struct fb_broker *b = c->b;
	if (c->state == CONN_HANDSHAKE && (what & BEV_EVENT_CONNECTED)) {
		/* The certificate chains to AgentTlsCa (SSL_VERIFY_FAIL_IF_NO_PEER_CERT). */
		if (fb_agent_tls_peer(bev, &c->names) != 0) {
			b->st.tls_failed++;
			conn_reject(c, FB_WERR_FORBIDDEN, "TLS without a client certificate");
			return;
		}
		c->identified = 1;
		c->state = CONN_AWAIT_HELLO;
		return;
	}
	if (c->state == CONN_HANDSHAKE) {
		char why[FB_TLS_WHY_MAX + 64];
		fb_agent_tls_failure(bev, c->tls_why, why, sizeof(why));
		b->st.tls_failed++;
		fb_log_warn("agent connection from %s: TLS handshake failed: %s; closing it", c->peer, why);
		conn_free(c);
		return;
	}
	if (what & BEV_EVENT_EOF)
		fb_log_info("agent %s from %s disconnected", agent_name(c), c->peer);
	else if (what & BEV_EVENT_ERROR)
		fb_log_warn("agent %s from %s: connection error: %s", agent_name(c), c->peer,
			    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	conn_free(c);
}

/* Plain, or TLS on a connection whose first byte was peeked. */
static int conn_start(struct fb_conn *c, int tls)
{
	struct fb_broker *b = c->b;
	c->tls = tls;
	c->bev = tls ? fb_agent_tls_accept(b->agent_tls, b->base, c->fd, c->tls_why)
		     : bufferevent_socket_new(b->base, c->fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev)
		return -ENOMEM;
	c->state = tls ? CONN_HANDSHAKE : CONN_AWAIT_HELLO;
	bufferevent_priority_set(c->bev, 0);
	/* Until HELLO, hold at most one small frame of an unknown peer. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, FB_FRAME_HDR_LEN + FB_HELLO_FRAME_MAX);
	bufferevent_setcb(c->bev, conn_read_cb, NULL, conn_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return 0;
}

/* With TLS configured, the first byte says what the client speaks: 0x16 opens
 * a TLS handshake, 'F' a plain fabricbus frame. */
static void peek_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct fb_conn *c = arg;
	struct fb_broker *b = c->b;
	uint8_t first;
	ssize_t n = recv(fd, &first, 1, MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		event_add(c->peek_ev, NULL);
		return;
	}
	if (n <= 0) {
		fb_log_debug("agent connection from %s closed before its first byte", c->peer);
		conn_free(c);
		return;
	}
	c->last_rx_ns = fb_now_ns();
	int tls = first == 0x16;
	if (conn_start(c, tls) != 0) {
		fb_log_warn("agent connection from %s: out of memory; closing it", c->peer);
		conn_free(c);
		return;
	}
	if (!tls && b->cfg->agent_tls == FB_AGENT_TLS_REQUIRED) {
		b->st.forbidden++;
		conn_reject(c, FB_WERR_FORBIDDEN, "this broker takes agents over TLS only "
			    "(AgentTls=required): give the agent --tls-cert, --tls-key and --tls-ca");
	}
}

/* Past the descriptor budget the listener holds (new agents wait in the
 * backlog and are taken as connections close); past MaxAgents it refuses
 * with ERROR BUSY, so the agent backs off instead of hanging; past
 * MaxAgentsPerAddress likewise, so that one host cannot take every slot.
 * With TLS on, a refusal is a plain close: it costs no handshake. */
static void accept_cb(void *arg, evutil_socket_t fd, const char *peer)
{
	struct fb_broker *b = arg;
	struct fb_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		fb_listener_refused(b->listener, peer, "out of memory");
		evutil_closesocket(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->b = b;
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	fb_peer_addr(peer, c->addr, sizeof(c->addr));
	c->last_rx_ns = c->last_hb_ns = c->accepted_ns = fb_now_ns();
	c->next = b->conns;
	if (b->conns)
		b->conns->prev = c;
	b->conns = c;
	b->n_conns++;
	uint64_t from_addr = fb_peer_count_add(b->peer_count, c->addr);
	c->counted = from_addr > 0;
	char why[128] = "";
	if (b->n_conns > b->cfg->max_agents) {
		snprintf(why, sizeof(why), "MaxAgents=%llu reached; retry later",
			 (unsigned long long)b->cfg->max_agents);
	} else if (!from_addr || from_addr > b->cfg->max_agents_per_addr) {
		b->st.per_addr_refused++;
		snprintf(why, sizeof(why), "MaxAgentsPerAddress=%llu connections from %s reached; retry later",
			 (unsigned long long)b->cfg->max_agents_per_addr, c->addr);
	}
	int rc = 0;
	if (b->agent_tls) {
		c->state = CONN_PEEK;
		c->peek_ev = event_new(b->base, fd, EV_READ, peek_cb, c);
		rc = c->peek_ev && event_priority_set(c->peek_ev, 0) == 0 ? event_add(c->peek_ev, NULL) : -1;
	} else {
		rc = conn_start(c, 0);
	}
	if (rc || why[0]) {
		fb_listener_refused(b->listener, peer, why[0] ? why : "out of memory");
		if (rc || b->agent_tls)
			conn_free(c);
		else
			conn_reject(c, FB_WERR_BUSY, "%s", why); /* logged above, rate-limited */
		return;
	}
	b->st.connections++;
	if (b->n_conns >= b->fd_agents)
		fb_listener_hold(b->listener, 1);
	fb_log_debug("agent connection from %s", peer);
}

static int is_loopback(const char *host)
{
	return strcmp(host, "127.0.0.1") == 0 || strncmp(host, "127.", 4) == 0 ||
	       strcmp(host, "::1") == 0 || strcmp(host, "localhost") == 0;
}

uint64_t fb_ingest_agent_limit(const struct fb_broker *b)
{
	return b->fd_agents < b->cfg->max_agents ? b->fd_agents : b->cfg->max_agents;
}

int fb_ingest_listen(struct fb_broker *b)
{
	const struct fb_config *cfg = b->cfg;
	char err[512];
	b->peer_count = fb_peer_count_new();
	if (!b->peer_count)
		return -ENOMEM;
	/* The commit's priority (commit.c), activated after it: runs after it. */
	b->turn_ev = event_new(b->base, -1, 0, turn_cb, b);
	if (!b->turn_ev || event_priority_set(b->turn_ev, 1) != 0)
		return -ENOMEM;
	int rc = fb_agent_tls_new(cfg, &b->agent_tls, err, sizeof(err));
	if (rc) {
		fb_log_err("%s", err);
		return rc;
	}
	rc = fb_listener_open(b->base, "AgentListen", "agent listener", cfg->agent_host,
			      cfg->agent_port, accept_cb, b, &b->listener);
	if (rc)
		return rc;
	static const char *const mode[] = { "plain TCP", "TLS with client certificates, or plain TCP",
					    "TLS with client certificates only" };
	fb_log_info("listening for agents on %s:%d, %s (at most %llu at once: %s)", cfg->agent_host,
		    cfg->agent_port, mode[cfg->agent_tls], (unsigned long long)fb_ingest_agent_limit(b),
		    b->fd_agents < cfg->max_agents ? "the descriptor limit" : "MaxAgents");
	if (cfg->agent_tls != FB_AGENT_TLS_REQUIRED && !is_loopback(cfg->agent_host))
		fb_log_warn("SECURITY: the agent port %s:%d takes plain TCP from the network: anyone who "
			    "can reach it can send events under any agent id not in use; set AgentTls=required "
			    "(docs/security.md)", cfg->agent_host, cfg->agent_port);
	return 0;
}

void fb_ingest_close_all(struct fb_broker *b, uint16_t code, const char *why)
{
	fb_listener_free(b->listener);
	b->listener = NULL;
	struct fb_conn *c = b->conns;
	while (c) {
		struct fb_conn *next = c->next;
		if (c->state == CONN_CLOSING)
			conn_free(c);
		else
			conn_reject(c, code, "%s", why);
		c = next;
	}
}

void fb_ingest_tick(struct fb_broker *b, uint64_t now_ns)
{
	uint64_t hb_ns = b->cfg->heartbeat_ms * 1000000ull;
	uint64_t hello_ns = b->cfg->hello_timeout_ms * 1000000ull;
	struct fb_conn *c = b->conns;
	while (c) {
		struct fb_conn *next = c->next;
		int before_hello = c->state == CONN_PEEK || c->state == CONN_HANDSHAKE ||
				   c->state == CONN_AWAIT_HELLO;
		if (before_hello && now_ns - c->accepted_ns > hello_ns) {
			/* Bytes trickling in do not count: HELLO must be complete in time. */
			b->st.hello_timeouts++;
			conn_reject(c, FB_WERR_PROTOCOL, "no HELLO within HelloTimeout=%llu ms",
				    (unsigned long long)b->cfg->hello_timeout_ms);
		} else if (c->state != CONN_CLOSING && !b->held && now_ns - c->last_rx_ns > 3 * hb_ns) {
			fb_log_warn("agent %s from %s: silent for %llu ms (3 heartbeats); dropping it",
				    agent_name(c), c->peer,
				    (unsigned long long)((now_ns - c->last_rx_ns) / 1000000));
			conn_free(c);
		} else if (c->state == CONN_READY && now_ns - c->last_hb_ns >= hb_ns) {
			struct fb_buf f = FB_BUF_INIT;
			if (fb_wire_put_heartbeat(&f, now_ns) == 0)
				conn_write(c, &f);
			fb_buf_free(&f);
			c->last_hb_ns = now_ns;
		}
		c = next;
	}
	if (b->cfg->agent_idle_expiry_s)
		b->st.expired += fb_agent_expire(b->agents, now_ns, b->cfg->agent_idle_expiry_s * 1000000000ull,
						 b->start_ns);
}

void fb_ingest_free_all(struct fb_broker *b)
{
	while (b->conns)
		conn_free(b->conns);
	if (b->turn_ev)
		event_free(b->turn_ev);
	b->turn_ev = NULL;
	fb_agent_tls_free(b->agent_tls);
	b->agent_tls = NULL;
	fb_peer_count_free(b->peer_count);
	b->peer_count = NULL;
}
