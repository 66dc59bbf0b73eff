/* broker.h - the fabricbusd context, owned by the libevent loop thread.
 *
 * The path of one event: ingest.c reads an EVENTS frame from an agent,
 * drops duplicates by (agent id, seq), gives the event the next EventId,
 * appends it to the journal buffer and to the pending batch. commit.c, run
 * once all readable connections have been served, writes the journal, syncs
 * it per JournalSync, acks every agent whose events are now durable and hands
 * the batch to the sinks (ws_server.c). Nothing is acked or published before
 * it is durable.
 */
#ifndef FB_BROKER_H
#define FB_BROKER_H

#include "agent_table.h"
#include "batch.h"
#include "config.h"

#include <event2/event.h>
#include <event2/listener.h>
#include <stdint.h>

struct fb_journal;
struct fb_ws;
struct fb_kafka;
struct fb_conn;
struct fb_inventory;
struct fb_fabric_map;
struct fb_listener;

#define FB_BATCH_CAP 4096
#define FB_PENDING_BATCHES_MAX 64 /* commit inline past this many full batches */

struct fb_broker_stats {
	uint64_t events;        /* accepted and journaled */
	uint64_t duplicates;    /* dropped by (agent id, seq) */
	uint64_t frames;
	uint64_t bytes_in;
	uint64_t rejected;      /* connections closed for protocol errors */
	uint64_t commits;
	uint64_t connections;   /* accepted since start */
};

struct fb_broker {
	struct event_base *base;
	const struct fb_config *cfg;
	struct fb_journal *journal;
	struct fb_ws *ws;
	struct fb_kafka *kafka;   /* NULL unless KafkaBrokers is set */
	struct fb_agent_table *agents;
	struct fb_inventory *inventory; /* port GUID/MAC -> node (inventory.h) */
	struct fb_fabric_map *fabric_map; /* topology + jobs, /fabric/map (fabric_map.h) */
	struct fb_listener *listener;      /* agents (ingest.c) */
	struct fb_listener *http_listener; /* HTTP/WebSocket, handed to lws (accept.c) */
	/* Descriptors: the soft RLIMIT_NOFILE and what each listener may hold
	 * open, so that neither can starve the other or the journal (accept.c). */
	uint64_t fd_limit, fd_agents, fd_http;
	struct event *commit_ev;  /* low priority: runs after all reads */
	struct event *sync_timer; /* JournalSync=interval */
	struct event *tick_ev;    /* 1 s housekeeping */

	/* Appended to the journal buffer but not committed yet. */
	struct fb_batch *pending[FB_PENDING_BATCHES_MAX];
	unsigned n_pending;
	/* Written (and maybe synced) but waiting for the interval sync. */
	int unsynced;
	struct fb_agent **dirty; /* agents to ack at the next commit */
	size_t n_dirty, cap_dirty;

	uint64_t last_event_id;  /* last EventId assigned */
	uint64_t committed_id;   /* last EventId durable and published */
	uint64_t epoch;          /* identifies this journal, sent in HELLO_ACK */
	uint64_t start_ns;

	struct fb_conn *conns;   /* doubly linked list of agent connections */
	size_t n_conns;
	struct fb_broker_stats st;
	int exit_code;           /* set when the loop must stop on a fatal error */
};

/* ingest.c */
int fb_ingest_listen(struct fb_broker *b);
/* Agents served at once: MaxAgents or the descriptor budget, the smaller. */
uint64_t fb_ingest_agent_limit(const struct fb_broker *b);
void fb_ingest_close_all(struct fb_broker *b, uint16_t code, const char *why);
/* Free every connection now (shutdown, after the loop has stopped). */
void fb_ingest_free_all(struct fb_broker *b);
/* Heartbeats out and idle agents dropped; called from the 1 s tick. */
void fb_ingest_tick(struct fb_broker *b, uint64_t now_ns);
/* Send the cumulative ack to an agent's live connection. */
void fb_ingest_send_ack(struct fb_conn *c, uint64_t seq);
/* "ip:port" of a connection, for logs and status. */
const char *fb_conn_peer(const struct fb_conn *c);

/* accept.c */
/* Raise the descriptor limit, split it between the listeners, and start the
 * HTTP/WebSocket listener that hands connections to the lws thread. */
int fb_accept_http_listen(struct fb_broker *b);
void fb_accept_http_close(struct fb_broker *b);

/* commit.c */
int fb_commit_init(struct fb_broker *b);
void fb_commit_fini(struct fb_broker *b);
/* A record slot in the pending batch for the next event (NULL on ENOMEM). */
struct fb_record *fb_commit_slot(struct fb_broker *b);
/* Mark that a is owed an ack at the next commit, and schedule it. */
void fb_commit_mark(struct fb_broker *b, struct fb_agent *a);
/* Write, sync per policy, ack and publish now. Returns 0 or a fatal error
 * (the journal could not be written: the broker stops rather than ack). */
int fb_commit_now(struct fb_broker *b);
/* Stop the loop because the journal failed. */
void fb_broker_fatal(struct fb_broker *b, const char *what, int err);

#endif
