/* fb_ws_client.h - a resuming subscriber of ws[s]://host:port/ws/events for a
 * program whose state lives on a libevent loop (through fb_source.h: adapters/slurm,
 * adapters/pmix, fabricbus tail).
 *
 * Threads. libwebsockets runs its own client context on its own thread
 * (Debian's lws 4.1.6 has no libevent support). Complete messages are queued
 * (a mutex-protected buffer) and the owner's loop is woken with event_active:
 * on_message and on_state run ON THE OWNER'S LOOP THREAD, never concurrently.
 * The owner must therefore have called evthread_use_pthreads() BEFORE creating
 * its event_base, as agents/ib/main.c does; libevent cannot check this.
 * All fb_wsc_* calls are made on the owner's thread.
 *
 * Direct delivery (opts.direct, for a single-purpose reader such as
 * fabricbus tail): on_message runs ON THE LWS THREAD, straight from
 * libwebsockets' receive buffer: no queue, no copy, no wakeup per batch
 * (the hand-over cost tail a quarter of its replay speed). on_state still
 * runs on the owner's loop. on_message then must touch only what the
 * owner's loop does not (or atomics), and must not call fb_wsc_stop; it
 * is never concurrent with itself, and none follows fb_wsc_stop. Reads
 * never pause (nothing queues), so max_queued does not apply.
 *
 * Nothing lost, nothing duplicated. Every connection asks for
 * ?since=<the newest EventId queued so far>, so a lost connection or a broker
 * restart (even kill -9: the broker acks only journaled events) replays
 * exactly what is missing from the broker's journal. A message whose EventId
 * is not above the newest queued one is dropped and counted. A missed notice
 * (Fabricbus.1.0.SubscriberEventsMissed, see proto/fb_redfish.h) is delivered
 * like a message (event_id 0), then the client reconnects from its
 * ResumeSince (or the newest queued EventId, whichever is larger), which
 * replays the missed events.
 *
 * from_now: the first connection first reads the broker's head EventId from
 * GET /status and subscribes with since=<head>; from then on the position is
 * known, so a reconnect before the first event loses nothing either. A broker
 * too old to report the head gets a plain live subscription (logged).
 *
 * Limits: a message over 1 MiB ends the connection with a logged error, and
 * the client reconnects. Past max_queued undelivered messages the lws thread
 * stops reading (lws_rx_flow_control) until the owner has delivered half of
 * them; the broker then sees a slow subscriber, and if it falls more than the
 * broker's WsQueueEvents behind it gets a missed notice and resumes from the
 * journal, so a slow owner still loses nothing.
 *
 * Logging goes through fb_log (proto/util/fb_log.h) and names the URL.
 */
#ifndef FB_WS_CLIENT_H
#define FB_WS_CLIENT_H

#include "fb_http_auth.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

struct fb_wsc_opts {
	const char *host; uint16_t port;
	const char *query;       /* extra query parameters, e.g. "severity=Warning", or NULL;
	                          * percent-encoded by the caller, no "since" (ours) */
	uint64_t since;          /* resume: first connection asks ?since=<since>, i.e. events
	                          * with EventId > since from the journal, then live; 0 and
	                          * from_now set: live only (see from_now above) */
	int from_now;            /* ignored when since > 0 */
	struct event_base *base; /* the owner's loop: callbacks run there */
	/* One complete message (a Redfish Event document, or a missed notice) with
	 * the EventId it carries (0 if none). The text is valid only during the call. */
	void (*on_message)(void *arg, const char *json, size_t len, uint64_t event_id);
	/* Connection state changes, for logging and health: connected=1 when the
	 * upgrade succeeded, 0 when lost (why says what happened). May be NULL. */
	void (*on_state)(void *arg, int connected, const char *why);
	void *arg;
	/* A bearer token and HTTPS (fb_http_auth.h): wss:// with the broker's
	 * certificate checked, "Authorization: Bearer" on the upgrade and on
	 * GET /status. NULL: ws://, no token. Must outlive the client. */
	const struct fb_http_auth *auth;
	size_t max_queued;       /* 0: 4096. Past it the lws thread stops reading
	                          * (lws_rx_flow_control) until the owner catches up */
	int reconnect_min_ms, reconnect_max_ms; /* 0: 100 and 5000 */
	int direct;              /* on_message on the lws thread (see Direct delivery) */
	/* direct only, may be NULL: on the lws thread after each read of the
	 * socket that delivered messages (the owner flushes its output there). */
	void (*on_drained)(void *arg);
};

struct fb_wsc;

/* Copies what it needs from o (strings included) and starts the thread; the
 * first connection is made from it. Returns NULL with a one-line reason in err
 * for bad options or when lws or the thread cannot be set up; a broker that is
 * not reachable yet is not an error (the client keeps trying). */
struct fb_wsc *fb_wsc_start(const struct fb_wsc_opts *o, char *err, size_t errsz);

/* The newest EventId handed to on_message (o->since before any). */
uint64_t fb_wsc_last_id(const struct fb_wsc *c);

struct fb_wsc_stats {
	uint64_t delivered;      /* on_message calls, notices included */
	uint64_t notices;        /* missed notices received */
	uint64_t duplicates;     /* dropped: EventId not above the newest queued */
	uint64_t connects;       /* upgrades that succeeded */
	uint64_t reconnects;     /* of those, after the first */
	uint64_t oversized;      /* connections ended by a message over 1 MiB */
	uint64_t rx_pauses;      /* times reading stopped at max_queued */
	uint64_t queued;         /* messages waiting for the owner now */
	uint64_t queued_max;     /* the most that ever waited */
	int connected;
};

/* A snapshot of the counters; any thread. */
void fb_wsc_get_stats(const struct fb_wsc *c, struct fb_wsc_stats *st);

/* The broker's close frame (payload: an optional big-endian close code, then
 * optional reason text, untrusted) as "closed by the broker, code N: text",
 * the text cut at 100 bytes. Pure (tests/fuzz/fuzz_event_scan.c runs it). */
void fb_wsc_close_text(const void *payload, size_t len, char *out, size_t outsz);

/* Stop the thread, drop queued messages, free. Safe with NULL. May be called
 * from inside on_message or on_state: no callback follows, and the memory is
 * released when that callback returns. */
void fb_wsc_stop(struct fb_wsc *c);

#endif
