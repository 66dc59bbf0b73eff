/* ib_worker.h - the MAD thread: discovery, then a PortInfo poll every
 * interval and a PerfMgt counters round every counters interval, and a
 * bounded queue of fb_events to the libevent loop.
 *
 * The thread owns the MAD port and the topology; the loop owns the session.
 * They share only the queue (a mutex-protected ring of event values) and a
 * wake-up (event_active on the loop's base, which needs
 * evthread_use_pthreads() before the base is created).
 *
 * If the loop falls behind and the ring is full, the thread waits at most
 * QUEUE_WAIT_MS for room, then drops the event and counts it: MAD timing
 * never depends on the broker.
 */
#ifndef IB_WORKER_H
#define IB_WORKER_H

#include "fb_event.h"
#include "fb_http.h"
#include "ib_counters.h"
#include "ib_flap.h"

#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>

struct ib_worker_cfg {
	const char *ca;             /* NULL: first CA */
	int ca_port;                /* 0: first active */
	int timeout_ms;             /* per MAD attempt */
	int retries;
	unsigned interval_ms;
	unsigned unreachable_after;
	const char *fabric;
	const char *switches;       /* "all" or comma list of node descriptions */
	unsigned shard_i, shard_n;
	struct ib_ctr_cfg ctr;      /* counters round; ctr.interval_ms 0: none */
	struct ib_flap_cfg flap;
	int traps;                  /* subscribe to SA traps 64/65/128 (--no-traps: 0) */
	/* Resync (ib_resync.h) against GET /fabric/map at this HTTP address
	 * after discovery and on ib_worker_resync(); map_host NULL: none. */
	const char *map_host;
	const struct fb_http_client *map_client; /* token and TLS for it (NULL: plain) */
	int map_port;
	const char *agent_id;
	/* Each PortInfo poll round's duration in seconds (fb_metrics.h; NULL: none). */
	struct fb_metric *poll_seconds;
};

struct ib_worker;
struct fb_metric;

/* Called on the loop thread from the wake-up, once per queued event. */
typedef void (*ib_worker_deliver_fn)(void *arg, const struct fb_event *ev);
/* Called on the loop thread once if the thread gives up (cannot open the port). */
typedef void (*ib_worker_fatal_fn)(void *arg);

/* cfg (and its strings) must outlive the worker. */
int ib_worker_start(struct event_base *base, const struct ib_worker_cfg *cfg,
		    ib_worker_deliver_fn deliver, ib_worker_fatal_fn fatal, void *arg,
		    struct ib_worker **out);
/* Stop the thread (waits for at most one MAD timeout) and deliver what is
 * still queued. */
void ib_worker_stop(struct ib_worker *w);
uint64_t ib_worker_dropped(struct ib_worker *w);
/* Any thread: resync against the broker's map again at the next poll (the
 * session reconnected: the broker may have lost what we told it). */
void ib_worker_resync(struct ib_worker *w);
void ib_worker_free(struct ib_worker *w);

/* --once: on the calling thread, discover, poll once, and write the topology
 * of the assigned switches as JSON lines (topology events) to out. Returns
 * 0, or 1 when the port cannot be opened or nothing was found. */
int ib_worker_once(const struct ib_worker_cfg *cfg, const char *agent_id, FILE *out);

/* --measure N: on the calling thread, discover, then time N full polls
 * (PortInfo of every port, then PortCounters when ctr.interval_ms > 0) of the
 * assigned switches, after one unmeasured warm-up poll, and write
 * "name: value unit" lines (poll_ms_median, poll_ms_p99, ...) to out. Events
 * are discarded. Returns 0, or 1 as ib_worker_once. */
int ib_worker_measure(const struct ib_worker_cfg *cfg, unsigned n, FILE *out);

#endif
