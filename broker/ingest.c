/* ingest.c - the agent listener: accept, HELLO, EVENTS, heartbeats.
 *
 * One struct fb_conn per TCP connection. Frames are taken off the input
 * buffer only when whole (fb_frame_peek), and every body is decoded through
 * the checked reader in proto/. A protocol error is answered with an ERROR
 * frame, a log line naming the peer and the agent, and a close.
 */
#include "broker.h"

#include "fb_err.h"
#include "fb_log.h"
#include "fabric_map.h"
#include "fb_wire.h"
#include "inventory.h"
#include "journal.h"
#include "listener.h"
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

enum conn_state { CONN_AWAIT_HELLO, CONN_READY, CONN_CLOSING };

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
};

const char *fb_conn_peer(const struct fb_conn *c) { return c->peer; }

static const char *agent_name(const struct fb_conn *c)
{
	return c->agent ? c->agent->id : "(before HELLO)";
}

static void conn_free(struct fb_conn *c)
{
	struct fb_broker *b = c->b;
	if (c->agent && c->agent->conn == c)
		c->agent->conn = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		b->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	b->n_conns--;
	bufferevent_free(c->bev);
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
	if (c->state != CONN_READY || seq <= c->acked_sent)
		return;
	uint8_t buf[FB_FRAME_HDR_LEN + 8];
	struct fb_buf f = { buf, 0, sizeof(buf) };
	/* Fits the stack buffer: header + u64, so no allocation happens. */
	if (fb_wire_put_ack(&f, seq) == 0)
		bufferevent_write(c->bev, f.data, f.len);
	c->acked_sent = seq;
}

void fb_ingest_durable(struct fb_broker *b, struct fb_agent *a, uint64_t seq)
{
	(void)b;
	if (a->conn)
		send_ack(a->conn, seq);
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
		} else {
			c->last_rx_ns = now; /* not their silence: we did not read */
			bufferevent_enable(c->bev, EV_READ);
		}
	}
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
	struct fb_agent *a = fb_agent_get(b->agents, h.agent_id);
	if (!a) {
		conn_reject(c, FB_WERR_INTERNAL, "out of memory");
		return;
	}
	if (a->conn) {
		fb_log_info("agent %s: new connection from %s replaces %s", a->id, c->peer,
			    fb_conn_peer(a->conn));
		conn_reject(a->conn, FB_WERR_REPLACED, "replaced by a newer connection from %s", c->peer);
	}
	if (h.last_acked > a->stored_seq) {
		/* The agent saw acks for more than the journal holds: the journal
		 * was removed or lost its tail to a power cut. Continue the
		 * sequence from the agent's word and say what was lost. */
		if (a->stored_seq)
			fb_log_warn("agent %s: says seq %llu was acked but the journal holds only up to "
				    "%llu; seqs %llu..%llu are lost (journal removed or cut by a power loss?)",
				    a->id, (unsigned long long)h.last_acked,
				    (unsigned long long)a->stored_seq,
				    (unsigned long long)a->stored_seq + 1, (unsigned long long)h.last_acked);
		a->stored_seq = a->durable_seq = h.last_acked;
	}
	a->conn = c;
	c->agent = a;
	c->state = CONN_READY;
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
	fb_log_info("agent %s connected from %s (protocol %u, last acked %llu, broker has %llu)", a->id,
		    c->peer, h.version, (unsigned long long)h.last_acked,
		    (unsigned long long)a->stored_seq);
}

/* Accept one decoded event: dedup, number, journal, batch. */
static int accept_event(struct fb_conn *c, struct fb_record *slot, const uint8_t *raw, size_t raw_len)
{
	struct fb_broker *b = c->b;
	struct fb_agent *a = c->agent;
	if (slot->ev.seq <= a->stored_seq) {
		a->duplicates++;
		b->st.duplicates++;
		return 0;
	}
	if (slot->ev.seq > a->stored_seq + 1 && a->stored_seq) {
		a->gaps += slot->ev.seq - a->stored_seq - 1;
		fb_log_warn("agent %s: sequence jumps from %llu to %llu (%llu events the agent never sent)",
			    a->id, (unsigned long long)a->stored_seq, (unsigned long long)slot->ev.seq,
			    (unsigned long long)(slot->ev.seq - a->stored_seq - 1));
	}
	slot->event_id = b->last_event_id + 1;
	/* A switch-side event learns its node from the inventory; the agent's
	 * bytes no longer say what every sink must see, so re-encode. */
	if (fb_inventory_enrich(b->inventory, &slot->ev)) {
		raw = NULL;
		raw_len = 0;
	}
	/* Likewise the jobs registered on its node (Oem.Fabricbus.Jobs). */
	if (fb_fabric_map_enrich(b->fabric_map, &slot->ev)) {
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
	a->events++;
	b->st.events++;
	return 1;
}

static void handle_events(struct fb_conn *c, const uint8_t *body, size_t len)
{
	struct fb_broker *b = c->b;
	struct fb_events_reader r;
	int rc = fb_events_open(&r, body, len);
	if (rc) {
		conn_reject(c, FB_WERR_MALFORMED, "bad EVENTS frame: %s", fb_strerror(rc));
		return;
	}
	for (;;) {
		struct fb_record *slot = fb_commit_slot(b);
		if (!slot) {
			conn_reject(c, FB_WERR_INTERNAL, "out of memory");
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
			conn_reject(c, FB_WERR_MALFORMED, "event %u of %u in EVENTS frame: %s", r.index + 1,
				    r.count, fb_strerror(rc));
			break;
		}
		rc = accept_event(c, slot, raw, raw_len);
		if (rc < 0) {
			fb_broker_fatal(b, "journal append", rc);
			return;
		}
		if (rc == 1)
			b->pending[b->n_pending - 1]->n++;
	}
	c->agent->last_seen_ns = c->last_rx_ns;
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

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct fb_conn *c = arg;
	struct fb_broker *b = c->b;
	struct evbuffer *in = bufferevent_get_input(bev);
	c->last_rx_ns = fb_now_ns();
	while (c->state != CONN_CLOSING && b->exit_code == 0) {
		size_t avail = evbuffer_get_length(in);
		if (avail == 0)
			return;
		size_t peek = avail < FB_FRAME_HDR_LEN ? avail : FB_FRAME_HDR_LEN;
		const uint8_t *p = evbuffer_pullup(in, (ssize_t)peek);
		struct fb_frame_hdr h = { 0, 0, 0 };
		int rc = fb_frame_peek(p, avail, (uint32_t)b->cfg->max_frame, &h);
		if (rc == FB_EAGAIN)
			return;
		if (rc == FB_EVERSION) {
			conn_reject(c, FB_WERR_VERSION, "protocol version %u not supported (broker speaks %u)",
				    h.version, FB_PROTO_VERSION);
			return;
		}
		if (rc == FB_ETOOBIG) {
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
	}
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct fb_conn *c = arg;
	if (what & BEV_EVENT_EOF)
		fb_log_info("agent %s from %s disconnected", agent_name(c), c->peer);
	else if (what & BEV_EVENT_ERROR)
		fb_log_warn("agent %s from %s: connection error: %s", agent_name(c), c->peer,
			    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	conn_free(c);
}

/* Past the descriptor budget the listener holds (new agents wait in the
 * backlog and are taken as connections close); past MaxAgents it refuses
 * with ERROR BUSY, so the agent backs off instead of hanging. */
static void accept_cb(void *arg, evutil_socket_t fd, const char *peer)
{
	struct fb_broker *b = arg;
	struct fb_conn *c = calloc(1, sizeof(*c));
	struct bufferevent *bev = bufferevent_socket_new(b->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c || !bev) {
		fb_listener_refused(b->listener, peer, "out of memory");
		free(c);
		if (bev)
			bufferevent_free(bev);
		else
			evutil_closesocket(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->b = b;
	c->bev = bev;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->last_rx_ns = c->last_hb_ns = fb_now_ns();
	c->next = b->conns;
	if (b->conns)
		b->conns->prev = c;
	b->conns = c;
	b->n_conns++;
	bufferevent_priority_set(bev, 0);
	bufferevent_setcb(bev, conn_read_cb, NULL, conn_event_cb, c);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	if (b->n_conns > b->cfg->max_agents) {
		char why[96];
		snprintf(why, sizeof(why), "MaxAgents=%llu reached; retry later",
			 (unsigned long long)b->cfg->max_agents);
		fb_listener_refused(b->listener, peer, why);
		conn_reject(c, FB_WERR_BUSY, "%s", why); /* logged above, rate-limited */
		return;
	}
	b->st.connections++;
	if (b->n_conns >= b->fd_agents)
		fb_listener_hold(b->listener, 1);
	fb_log_debug("agent connection from %s", peer);
}

uint64_t fb_ingest_agent_limit(const struct fb_broker *b)
{
	return b->fd_agents < b->cfg->max_agents ? b->fd_agents : b->cfg->max_agents;
}

int fb_ingest_listen(struct fb_broker *b)
{
	int rc = fb_listener_open(b->base, "AgentListen", "agent listener", b->cfg->agent_host,
				  b->cfg->agent_port, accept_cb, b, &b->listener);
	if (rc)
		return rc;
	fb_log_info("listening for agents on %s:%d (at most %llu at once: %s)", b->cfg->agent_host,
		    b->cfg->agent_port, (unsigned long long)fb_ingest_agent_limit(b),
		    b->fd_agents < b->cfg->max_agents ? "the descriptor limit" : "MaxAgents");
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
	struct fb_conn *c = b->conns;
	while (c) {
		struct fb_conn *next = c->next;
		if (c->state != CONN_CLOSING && !b->held && now_ns - c->last_rx_ns > 3 * hb_ns) {
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
}

void fb_ingest_free_all(struct fb_broker *b)
{
	while (b->conns)
		conn_free(b->conns);
}
