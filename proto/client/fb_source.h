/* fb_source.h - one resuming event source: the events after EventId N, from
 * the broker's WebSocket or from a Kafka consumer group, handed one at a time
 * to on_event ON THE OWNER'S LIBEVENT LOOP (the Slurm and PMIx adapters), or
 * with `direct` on the WebSocket client's thread (fabricbus tail).
 *
 *   websocket  ws[s]://host:port/ws/events?since=N (fb_ws_client.h does the
 *              resuming). EventIds arrive in order, so the newest one handed
 *              over is the resume point; a missed notice comes as EventId 0.
 *   kafka      a member of consumer group `group` reading `topics`
 *              (fb_kafka_consumer.h), polled from the loop by a short timer.
 *              Kafka keeps order per partition only, so the resume point is
 *              the group's committed offsets, and `since` stays fixed: an
 *              event at or below it predates the owner and is skipped; a
 *              message at or below the partition's offset in the owner's
 *              record (kafka_pos, saved with the owner's state) was handled
 *              and saved before a crash that came before its commit, and is
 *              skipped too. An offset is committed only after sync() said
 *              every event it covers has its effects saved; a sync that
 *              fails makes the consumer stop committing: it is closed and
 *              made again (backoff from retry_ms to 60 s).
 *
 * Owner's order: evthread_use_pthreads() before its event_base (the
 * WebSocket client's thread wakes the loop), then fb_source_start.
 */
#ifndef FB_SOURCE_H
#define FB_SOURCE_H

#include "fb_http_auth.h"
#include "fb_kafka_consumer.h"
#include "fb_ws_client.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

enum fb_source_kind { FB_SOURCE_WEBSOCKET, FB_SOURCE_KAFKA };

/* The owner's record of one Kafka partition (kept in its state file): the
 * offset last handled, and the broker epoch and EventId it carried, so that
 * a topic deleted and made again is told from a redelivery. */
struct fb_source_kpos {
	int64_t *offset;
	uint64_t *event_id;
	char *broker;
	size_t broker_size;
};

struct fb_source_opts {
	enum fb_source_kind kind;
	struct event_base *base;      /* the owner's loop: every callback runs there */
	uint64_t since;               /* events after this EventId; 0: from now (a first
	                               * start: the broker's head, or the group's newest) */
	/* websocket */
	int since_zero;               /* since 0 means "from EventId 1" (the whole journal),
	                               * not "from now" (fabricbus tail --since 0) */
	const char *host;
	uint16_t port;
	const struct fb_http_auth *auth; /* NULL: ws://, no token; must outlive the source */
	const char *query;            /* more /ws/events arguments ("quiet=1"); NULL: none;
	                               * must outlive the source */
	int reconnect_min_ms, reconnect_max_ms; /* back-off; 0: fb_ws_client's 100 and 5000 */
	/* Direct delivery (fb_ws_client.h): on_event runs on the WebSocket
	 * client's thread, straight from its receive buffer, and on_drained (may
	 * be NULL) there after each socket read that delivered events; on_state
	 * stays on the loop. For a reader whose on_event shares nothing with its
	 * loop but atomics (fabricbus tail): no hand-over, the old tail's speed. */
	int direct;
	void (*on_drained)(void *arg);
	/* Connection state (fb_wsc_opts.on_state: "connected with since=N",
	 * "cannot connect: why", "connection lost: why"); NULL: the source logs it. */
	void (*on_state)(void *arg, int connected, const char *why);
	/* kafka (copied) */
	const char *brokers, *group, *client_id;
	const char *const *topics;
	size_t n_topics;
	const struct fb_kc_prop *props; /* kafka.* lines, after our defaults (they win) */
	size_t n_props;
	uint64_t retry_ms;            /* first backoff after a failure */
	/* One event (or a missed notice, event_id 0) with the EventId it carries. */
	void (*on_event)(void *arg, const char *json, size_t len, uint64_t event_id);
	/* Kafka: 0 while the owner cannot take events yet (nothing is polled,
	 * a message delivered meanwhile comes again). NULL: always ready. */
	int (*ready)(void *arg);
	/* Kafka: save the effects of every event handed over; 0 or -1. */
	int (*sync)(void *arg);
	/* Kafka: fill pos for topic[partition] (made at offset -1 if new); 0, or
	 * -ENOMEM (the message comes again). */
	int (*kafka_pos)(void *arg, const char *topic, int32_t partition,
			 struct fb_source_kpos *pos);
	void *arg;
};

struct fb_source;

/* Start reading. NULL with the reason in err (bad options, out of memory, a
 * Kafka configuration librdkafka refuses); a broker not reachable yet is not
 * an error (the source keeps trying). */
struct fb_source *fb_source_start(const struct fb_source_opts *o, char *err, size_t errsz);
/* Stop, commit what sync() covered (Kafka), free. Safe with NULL. No callback follows. */
void fb_source_stop(struct fb_source *s);
/* "websocket" or "kafka", for logs. */
const char *fb_source_name(const struct fb_source *s);
/* 1 when EventIds arrive in increasing order (websocket). */
int fb_source_ordered(const struct fb_source *s);
/* The WebSocket client's counters (duplicates dropped, reconnects, messages
 * over 1 MiB); 0, or -ENOTSUP for a Kafka source. */
int fb_source_ws_stats(const struct fb_source *s, struct fb_wsc_stats *st);

/* Make (without connecting) a consumer from group and props, so that
 * settings that only conflict together stop a start with a clear message.
 * 0, or FB_ECONFIG / -ENOMEM with the reason in err. */
int fb_source_kafka_check(const char *group, const struct fb_kc_prop *props, size_t n_props,
			  char *err, size_t errsz);

/* Pure parts, for the unit test. */
enum fb_source_verdict {
	FB_SOURCE_HANDLE,      /* new: hand it over */
	FB_SOURCE_REDELIVERED, /* at or below the recorded offset */
	FB_SOURCE_OLD,         /* EventId at or below since */
	FB_SOURCE_EMPTY,       /* no value (a tombstone) */
};
/* What to do with message m of a partition whose record is pos; records m
 * in pos unless it is a redelivery. *recreated: m is at or below the
 * recorded offset but a newer event of the same broker (the topic was made
 * again: offsets restarted), so it is read as new. */
enum fb_source_verdict fb_source_kafka_judge(const struct fb_source_kpos *pos,
					     const struct fb_kc_msg *m, uint64_t since,
					     int *recreated);
/* Our defaults, then the n user properties, into out (at most outn). The count. */
size_t fb_source_kafka_props(const struct fb_kc_prop *user, size_t n, struct fb_kc_prop *out,
			     size_t outn);

#endif
