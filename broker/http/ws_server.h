/* ws_server.h - WebSocket fan-out and the HTTP status page, on the
 * libwebsockets service thread.
 *
 * Debian's libwebsockets 4.1.6 has no libevent loop, so lws runs its own
 * thread. The libevent loop hands committed batches over with
 * fb_ws_committed(), the server's output (output.h) (a mutex-protected queue
 * plus lws_cancel_service()); the
 * lws thread owns everything else here: the ring of serialized messages,
 * subscribers, filters and journal replay.
 *
 * Endpoint: ws[s]://<HttpListen>/ws/events?since=<EventId>&prefix=<MessageId prefix>
 *           &severity=<OK,Warning,Critical>&origin=<OriginOfCondition prefix>
 *   - each WebSocket message is one Redfish Event JSON (fb_redfish_render);
 *   - each event is serialized once, whatever the number of subscribers;
 *   - since=N replays every event with EventId > N from the journal, then
 *     goes live; without since the subscriber starts at the live head;
 *   - rendering waits for a live subscriber queue_events behind the head
 *     while its socket drains (the queue from the loop then fills and the
 *     loop holds its agents: backpressure); one whose socket took nothing
 *     for 2 s gets the "missed" notice (fb_redfish_render_missed) and is
 *     disconnected, so it holds the others for at most that long.
 * HTTP GET /status returns {"broker": <last fb_ws_set_status JSON>,
 *   "websocket": {subscribers, per-subscriber lag, sent, dropped ...}}.
 * With a fabric map (fabric_map.h, docs/fabric-map.md):
 *   GET /fabric/map            the newest published map snapshot;
 *   POST /fabric/jobs          a job registration, parsed here, applied by
 *                              the loop, answered once it has been;
 *   DELETE /fabric/jobs/<id>   unregister (204, also if unknown).
 */
#ifndef FB_WS_SERVER_H
#define FB_WS_SERVER_H

#include "batch.h"

#include <stddef.h>
#include <stdint.h>

struct fb_fabric_map;
struct fb_metrics;
struct fb_rf_auth_core;
struct lws;
struct lws_context;

/* A module that serves more HTTP paths on this thread (the Redfish service,
 * broker/redfish/rf_service.h). ws_server.c offers it every HTTP request
 * first and keeps one slot per connection for its state. All callbacks run
 * on the lws thread; the ints are what the lws callback returns. */
struct fb_ws_http_module {
	/* LWS_CALLBACK_HTTP: 1 if path is not its own (the server goes on with
	 * /status, /fabric/...), else it answered or will. *conn is the
	 * connection's slot (NULL at first; the module owns what it puts there). */
	int (*http)(void *arg, struct lws *wsi, void **conn, const char *path);
	/* LWS_CALLBACK_HTTP_BODY(_COMPLETION): 1 if the body is not its own
	 * (an earlier request on the connection was); body's other results
	 * are ignored (a refusal is sent at completion). */
	int (*body)(void *arg, struct lws *wsi, void *conn, const void *in, size_t len);
	int (*body_done)(void *arg, struct lws *wsi, void *conn);
	/* LWS_CALLBACK_HTTP_WRITEABLE: 1 if it has nothing to write. */
	int (*writeable)(void *arg, struct lws *wsi, void *conn);
	/* The connection closes: free conn. */
	void (*closed)(void *arg, void *conn);
	/* At every wakeup of the thread (lws_cancel_service). */
	void (*wake)(void *arg);
	/* The context exists (before the thread starts), or NULL: it is about
	 * to go (the module stops waking it). */
	void (*attach)(void *arg, struct lws_context *ctx);
	/* A request whose method libwebsockets does not know (not GET, HEAD,
	 * POST, PUT, PATCH, DELETE, OPTIONS): the whole HTTP/1.1 response to
	 * send (status line, headers, body) into buf; its length, or 0 for a
	 * bare 501. NULL: a bare 501. The connection closes after it. */
	size_t (*bad_method)(void *arg, char *buf, size_t sz);
	void *arg;
};

struct fb_ws_opts {
	const char *host;           /* bind address, e.g. "127.0.0.1" or "0.0.0.0" */
	int port;
	const char *journal_dir;    /* for ?since= replay */
	const char *default_fabric; /* for OriginOfCondition */
	size_t ring_events;         /* serialized messages kept in memory */
	size_t queue_events;        /* per-subscriber lag bound before "missed" */
	int ping_interval_s;        /* WebSocket ping; dead peers dropped after 2x */
	size_t max_subscribers;
	struct fb_fabric_map *fabric_map; /* /fabric/...; NULL: those paths are 404 */
	struct fb_metrics *metrics; /* GET /metrics (ws_metrics.h); NULL: 404 */
	/* Redfish SSE streams (sse_stream.h): heartbeat comment period (0: 30 s) */
	int sse_heartbeat_s;
	/* Redfish accounts and sessions (rf_auth_core.h), used by the lws thread
	 * alone once started; NULL: no logins (writes unauthenticated). */
	struct fb_rf_auth_core *auth;
	/* Reads of /status, /fabric/map, /ws/events need a login (any role)
	 * when auth is on, unless anonymous_reads; /metrics also when
	 * public_metrics (HttpAnonymousReads, HttpPublicMetrics). */
	int anonymous_reads, public_metrics;
	/* HTTPS and wss (ws_tls.h): enum fb_agent_tls_mode (config.h), the
	 * files (checked with fb_ws_tls_check first); tls_ca "": no client
	 * certificates asked for. */
	int tls;
	const char *tls_cert, *tls_key, *tls_ca;
	const struct fb_ws_http_module *module; /* NULL: none (copied) */
	/* Called (lws thread) when the queue from the loop, after
	 * fb_ws_committed returned FB_OUTPUT_BUSY, is back under half its bound. */
	void (*ready)(void *arg);
	void *ready_arg;
};

struct fb_ws_stats {
	uint32_t subscribers;
	uint64_t messages_sent;   /* summed over subscribers */
	uint64_t subscribers_dropped; /* disconnected for lag */
	uint64_t replayed;        /* messages served from the journal */
	uint64_t head_id;         /* newest EventId received from the loop */
};

struct fb_ws;

/* Bind, create the context and start the service thread. last_id is the
 * newest committed EventId at start (replay limit until new batches arrive).
 * Returns 0, or a negative error after logging why (e.g. port in use). */
int fb_ws_start(const struct fb_ws_opts *o, uint64_t last_id, struct fb_ws **out);
/* The output (output.h): hand a committed batch to the lws thread (takes a
 * reference; thread-safe; ws is the struct fb_ws). FB_OUTPUT_BUSY when the
 * queue is over its bound: o->ready is called once it is back under. */
int fb_ws_committed(void *ws, struct fb_batch *b, uint64_t last_id);
/* Hand a socket the loop accepted to the lws thread, which serves it as an
 * HTTP/WebSocket connection (thread-safe; takes ownership of fd on 0). */
int fb_ws_adopt(struct fb_ws *ws, int fd);
/* Connections handed over and not yet closed (any thread). */
uint64_t fb_ws_http_open(struct fb_ws *ws);
/* Hand tokens and accounts re-read on the loop (SIGHUP, rf_auth_reload.h)
 * to the lws thread, which swaps them into o->auth and closes the streams
 * whose credentials they revoke. Takes *f's tables (f is left empty);
 * thread-safe. 0 or -ENOMEM (f untouched then). */
struct fb_rf_auth_files;
int fb_ws_reload_auth(struct fb_ws *ws, struct fb_rf_auth_files *f);
/* Replace the broker part of /status (copied; thread-safe). */
void fb_ws_set_status(struct fb_ws *ws, const char *json);
void fb_ws_get_stats(struct fb_ws *ws, struct fb_ws_stats *st);
/* Redfish SSE streams (lws thread; broker/redfish/rf_sse.c, the router's
 * handler of the ServerSentEventUri, auth already checked). Open: read the
 * request on wsi; 1 with *no filled when it is refused (nothing sent: the
 * router answers), 0 when the 200 text/event-stream head is out and the
 * stream (*stream) is a subscriber of the fan-out, -1 to close. Then every
 * HTTP_WRITEABLE of wsi goes to fb_ws_sse_writeable (<0 closes), and
 * fb_ws_sse_closed runs once when the connection goes. */
struct fb_sse_refusal;
int fb_ws_sse_open(struct lws *wsi, struct fb_sse_refusal *no, void **stream);
int fb_ws_sse_writeable(struct lws *wsi, void *stream);
void fb_ws_sse_closed(struct lws *wsi, void *stream);
/* Close the stream whose live_id (ws_sub.h) is id, from any thread (a
 * DELETE of its EventDestination, rf_live.h's close callback); ws is
 * lws_context_user() of the server's context. */
void fb_ws_sse_close_requested(void *ws, const char *id);
/* Close subscribers, stop and join the thread, free everything. */
void fb_ws_stop(struct fb_ws *ws);

#endif
