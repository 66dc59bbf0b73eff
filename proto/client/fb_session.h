/* fb_session.h - the agent side of the agent protocol, on a libevent base.
 *
 * Every agent (and `fabricbus publish`) talks to the broker through this:
 *   - connect, HELLO, and learn from HELLO_ACK where the broker is;
 *   - give each submitted event the next sequence number and keep it in a
 *     bounded buffer until the broker's cumulative ACK covers it;
 *   - on disconnect, reconnect with exponential back-off (100 ms .. 5 s) and
 *     resend everything unacked; the broker drops what it already has;
 *   - heartbeats both ways.
 * Sequence numbers: events submitted before the first HELLO_ACK of the
 * process are numbered from the broker's last_seq + 1, so a restarted agent
 * with the same id continues the broker's sequence instead of colliding.
 * A broker that holds less than it once acked (its journal was removed or
 * lost its tail) never adopts the agent's word: the unacked events are
 * numbered again from its last_seq + 1 (PROTOCOL.md, "Conversation").
 * With tls_ca set the session speaks TLS, verifies the broker's certificate
 * against tls_ca and the broker's host name or address, and presents
 * tls_cert/tls_key (docs/security.md).
 *
 * Threads: all calls on the thread that runs the event base.
 */
#ifndef FB_SESSION_H
#define FB_SESSION_H

#include "fb_event.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

struct fb_session_opts {
	const char *host;        /* broker address */
	int port;
	const char *agent_id;    /* see fb_agent_id_valid() */
	size_t max_unacked;      /* bounded buffer, in events */
	size_t batch_events;     /* events per EVENTS frame (default 512) */
	int heartbeat_ms;        /* default 5000 */
	const char *tls_ca;      /* CA of the broker's certificate; NULL: plain TCP */
	const char *tls_cert;    /* the agent's certificate (PEM), with tls_key */
	const char *tls_key;
};

struct fb_session_stats {
	uint64_t submitted, acked, sent_frames, reconnects, resent;
	uint64_t last_acked_seq;
	size_t unacked;
	int connected;
};

struct fb_session;

/* Called when the cumulative ack moves (acked_seq = new value). */
typedef void (*fb_session_ack_cb)(void *arg, uint64_t acked_seq);
/* Called on a broker ERROR frame or a connection failure, for logging. */
typedef void (*fb_session_err_cb)(void *arg, int code, const char *text);

/* FB_ECONFIG for bad options (a TLS file that does not load is logged). */
int fb_session_new(struct event_base *base, const struct fb_session_opts *o,
		   struct fb_session **out);
void fb_session_set_callbacks(struct fb_session *s, fb_session_ack_cb ack,
			      fb_session_err_cb err, void *arg);
/* Starts connecting (non-blocking). */
int fb_session_start(struct fb_session *s);
/* Copy ev into the buffer (agent_id and seq are set by the session). Returns
 * FB_EFULL when max_unacked events are outstanding: the caller waits for
 * acks (ack callback) or drops with a count, as suits it. */
int fb_session_submit(struct fb_session *s, const struct fb_event *ev);
/* Push buffered events to the socket now instead of at the end of the loop
 * iteration. */
void fb_session_flush(struct fb_session *s);
void fb_session_get_stats(const struct fb_session *s, struct fb_session_stats *st);
void fb_session_free(struct fb_session *s);

/* Called once when a drain ends: unacked is 0 when everything was acked,
 * else how many events the broker did not ack within the wait. */
typedef void (*fb_session_drained_cb)(void *arg, size_t unacked);
/* For a clean stop: push what is buffered now, and call done once every
 * event is acked or wait_ms has passed, whichever comes first (at once if
 * nothing is outstanding). Submitting more meanwhile is allowed but not
 * waited for beyond wait_ms. 0, or -ENOMEM. */
int fb_session_drain(struct fb_session *s, int wait_ms, fb_session_drained_cb done, void *arg);

/* "<prefix>@<hostname>" with the host name's characters that an agent id may
 * not hold replaced by '-', cut to fit FB_AGENT_ID_MAX: the default id of a
 * program that runs once per host, so that its restarts continue one
 * sequence at the broker. */
void fb_session_default_agent_id(const char *prefix, char *out, size_t outsz);

#endif
