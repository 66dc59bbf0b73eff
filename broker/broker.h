/* broker.h - the fabricbusd context, owned by the libevent loop thread.
 *
 * The path of one event: ingest.c reads an EVENTS frame from an agent,
 * drops duplicates by (agent id, seq), gives the event the next EventId,
 * appends it to the journal buffer and to the pending batch. commit.c, run
 * once all readable connections have been served, writes the journal, syncs
 * it per JournalSync, tells ingest which agents are durable up to where (the
 * acks; through b->durable, so commit does not call ingest) and hands the
 * batch to every registered output (output.h: the WebSocket server, Kafka).
 * Nothing is acked or published before it is durable.
 */
#ifndef FB_BROKER_H
#define FB_BROKER_H

#include "agent_table.h"
#include "batch.h"
#include "config.h"
#include "output.h"
#include "quiet.h"

#include <event2/event.h>
#include <event2/listener.h>
#include <stdint.h>
#include <time.h>

struct fb_journal;
struct fb_jworker;
struct fb_commit_ack;
struct fb_ws;
struct fb_kafka;
struct fb_push;
struct fb_ofmf;
struct fb_ofmf_push;
struct fb_conn;
struct fb_inventory;
struct fb_fabric_map;
struct fb_storm;
struct fb_flapctl;
struct fb_ratectl;
struct fb_dedupctl;
struct fb_listener;
struct fb_agent_tls;
struct fb_peer_count;

#define FB_BATCH_CAP 4096
/* Commit inline past this many full batches: bounds the events one commit
 * hands to the outputs (16 x 4096 packed records: ~8-20 MB for port events,
 * at most 16 x 1 MiB batches; see the peak RSS formula in
 * docs/configuration.md). */
#define FB_PENDING_BATCHES_MAX 16

/* Why agents are not read (fb_broker.held). */
#define FB_HOLD_OUTPUT 1  /* an output is over its bound */
#define FB_HOLD_JOURNAL 2 /* the journal cannot be written (disk full): commit.c */

struct fb_broker_stats {
	uint64_t events;        /* accepted and journaled */
	uint64_t duplicates;    /* dropped by (agent id, seq) */
	uint64_t frames;
	uint64_t bytes_in;
	uint64_t rejected;      /* connections closed for protocol errors */
	uint64_t commits;
	uint64_t connections;   /* accepted since start */
	/* The agent port's guards (ingest.c, docs/security.md). */
	uint64_t in_use;        /* HELLOs refused: the id had a live session, no proof */
	uint64_t takeovers;     /* live sessions replaced by a certificate for the id */
	uint64_t seq_refused;   /* events refused: seq more than MaxSeqGap ahead */
	uint64_t claims_refused;/* HELLOs whose last_acked was above what the broker holds */
	uint64_t gaps;          /* seqs skipped within MaxSeqGap */
	uint64_t forbidden;     /* HELLOs refused: the certificate may not use the id, or no TLS */
	uint64_t tls_failed;    /* TLS handshakes that failed (bad, expired, missing cert) */
	uint64_t hello_timeouts;/* connections closed without HELLO within HelloTimeout */
	uint64_t per_addr_refused; /* over MaxAgentsPerAddress */
	uint64_t expired;       /* agent ids expired from memory (AgentIdleExpiry) */
};

struct fb_rf_service;

struct fb_broker {
	struct event_base *base;
	const struct fb_config *cfg;
	struct fb_journal *journal;
	struct fb_ws *ws;         /* registered in outputs; kept for shutdown */
	struct fb_rf_service *redfish; /* the Redfish service (served by ws's thread) */
	struct fb_kafka *kafka;   /* NULL unless KafkaBrokers is set; also in outputs */
	struct fb_push *push;     /* Redfish subscriptions and push delivery; also in outputs */
	struct fb_ofmf *ofmf;     /* OFMF registration, NULL unless OfmfCore; also in outputs */
	struct fb_ofmf_push *ofmf_io; /* its HTTP client and subscription, over push */
	struct fb_outputs outputs; /* called with every durable batch (output.h) */
	struct fb_quiets quiets;   /* may make an agent's event quiet before it is journaled (quiet.h) */
	/* Called by commit for each agent whose events just became durable
	 * (set by main to ingest's ack sender). */
	void (*durable)(struct fb_broker *b, struct fb_agent *a, uint64_t seq);
	/* Called with 1 when an output is over its bound, 0 when all are ready
	 * again (set by main to fb_ingest_hold). */
	void (*hold_agents)(struct fb_broker *b, int hold);
	int held;                 /* agents are held: FB_HOLD_* bits (see hold_agents) */
	struct event *resume_ev;  /* activated (any thread) when outputs are ready again */
	struct fb_agent_table *agents;
	struct fb_inventory *inventory; /* port GUID/MAC -> node (inventory.h) */
	struct fb_fabric_map *fabric_map; /* topology + jobs, /fabric/map (fabric_map.h) */
	struct fb_storm *storm;   /* root cause, an output (storm.h) */
	struct fb_flapctl *flapctl; /* flap control, a quiet stage (flapctl.h) */
	struct fb_ratectl *ratectl; /* rate limits, a quiet stage; NULL when off (ratectl.h) */
	struct fb_dedupctl *dedupctl; /* de-duplication, a quiet stage; NULL when off (dedupctl.h) */
	struct fb_listener *listener;      /* agents (ingest.c) */
	struct fb_agent_tls *agent_tls;    /* NULL unless AgentTls is optional or required */
	struct fb_peer_count *peer_count;  /* agent connections per source address */
	struct fb_listener *http_listener; /* HTTP/WebSocket, handed to lws (accept.c) */
	/* Descriptors: the soft RLIMIT_NOFILE and what each listener may hold
	 * open, so that neither can starve the other or the journal (accept.c). */
	uint64_t fd_limit, fd_agents, fd_http;
	unsigned http_refusals_pending; /* over-limit TLS sockets awaiting their alert (accept.c) */
	struct event *commit_ev;  /* low priority: runs after all reads */
	struct event *turn_ev;    /* same priority, after it: agents' read budgets renew (ingest.c) */
	struct event *sync_timer; /* JournalSync=interval */
	struct event *tick_ev;    /* 1 s housekeeping */
	struct event *journal_retry; /* while the journal is stalled (commit.c) */

	/* Appended to the journal buffer but not committed yet. */
	struct fb_batch *pending[FB_PENDING_BATCHES_MAX];
	unsigned n_pending;
	/* The next event is decoded and processed here, then packed into the
	 * last pending batch (batch.h: the record stays in this thread's cache). */
	struct fb_record slot;
	/* Written (and maybe synced) but waiting for the interval sync. */
	int unsynced;
	struct fb_agent **dirty; /* agents to ack at the next commit */
	size_t n_dirty, cap_dirty;
	/* The journal's sync thread and the job it runs (commit.c). All loop
	 * only; the thread touches only the journal's write side. */
	struct fb_jworker *jworker;
	struct event *jdone_ev;   /* activated by the sync thread: a job is done */
	unsigned n_inflight;      /* pending[0, n_inflight) are the job's: sealed */
	struct fb_commit_ack *acks; /* the job's acks: (agent, seq) made durable by it */
	size_t n_acks, cap_acks;
	int job_release;          /* the job acks and publishes when done */
	uint64_t job_last_id;     /* the last EventId the job makes durable */
	int sync_due;             /* JournalSync=interval: the timer asked for a sync */
	int retain_due;           /* retention asked for while a job was in flight */

	uint64_t last_event_id;  /* last EventId assigned */
	uint64_t committed_id;   /* last EventId durable and published */
	uint64_t epoch;          /* identifies this journal, sent in HELLO_ACK */
	uint64_t start_ns;

	struct fb_conn *conns;   /* doubly linked list of agent connections */
	size_t n_conns;
	struct fb_broker_stats st;
	struct fb_metrics *metrics;          /* GET /metrics registry (fb_metrics.h) */
	struct fb_broker_metrics *bmetrics;  /* the loop's series in it (metrics.h) */
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
/* Agent a is durable up to seq: send the cumulative ack to its live
 * connection (the b->durable callback). */
void fb_ingest_durable(struct fb_broker *b, struct fb_agent *a, uint64_t seq);
/* Stop (hold=1) or resume (0) reading agent sockets: backpressure from an
 * output that fell behind. Heartbeats still go out; silence is not counted
 * against agents while held. */
void fb_ingest_hold(struct fb_broker *b, int hold);
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
/* The record to fill with the next event (b->slot), once the last pending
 * batch has room for it (NULL on ENOMEM, or when the pending batches are
 * full and the journal is stalled). */
struct fb_record *fb_commit_slot(struct fb_broker *b);
/* The slot fb_commit_slot gave is filled: pack it into the pending batch. */
void fb_commit_add(struct fb_broker *b);
/* Mark that a is owed an ack at the next commit, and schedule it. */
void fb_commit_mark(struct fb_broker *b, struct fb_agent *a);
/* Apply journal retention now, or after the job in flight. */
void fb_commit_retain(struct fb_broker *b, time_t now);
/* Write, sync per policy, ack and publish now (waiting for the sync thread's
 * job in flight first). Returns 0, or an error: the
 * journal is stalled (disk full: nothing acked, retried every second, agents
 * held) or broken (the broker stops rather than ack). */
int fb_commit_now(struct fb_broker *b);
/* 1 while the journal is stalled and nothing is acked. */
int fb_commit_stalled(const struct fb_broker *b);
/* Resume reading agents; safe from any thread (an output's `ready`). */
void fb_commit_outputs_ready(void *broker);
/* emit.c */
/* Commit one event of the broker's own (agent "fabricbusd", the next seq;
 * ts_ns now if 0) like an agent's: EventId (in *event_id), journal, every
 * output after the next commit. Loop only, never from inside an output's
 * call (it appends to the batch being published). 0 or negative errno. */
int fb_broker_emit(struct fb_broker *b, struct fb_event *ev, uint64_t *event_id);

/* Stop the loop because the journal failed. */
void fb_broker_fatal(struct fb_broker *b, const char *what, int err);

#endif
