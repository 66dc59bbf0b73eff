/* fb_kafka_consumer.h - a Kafka consumer-group member for fabricbus events,
 * shared by the Slurm and PMIx adapters and `fabricbus consume`.
 *
 * fabricbusd's Kafka sink writes one Redfish Event JSON document per message,
 * key = OriginOfCondition path, headers fabricbus-event-id (decimal EventId),
 * fabricbus-severity, fabricbus-agent-id and fabricbus-broker (broker epoch,
 * 16 hex digits). This module hands each message to a callback with those
 * headers decoded, and commits offsets only for messages whose callback
 * returned success.
 *
 * Delivery is AT LEAST ONCE. An offset is stored after the callback returns,
 * and stored offsets are committed at the end of each fb_kc_poll() (async),
 * on partition revocation (sync) and in fb_kc_close() (sync). A process that
 * dies between its action and that commit, or whose commit fails, sees the
 * event again (or its partition's next owner does). Adapters MUST therefore
 * make their actions idempotent: draining an already drained node is a
 * no-op for the Slurm adapter; the PMIx adapter must do likewise.
 *
 * One thread: a struct fb_kc is used by the thread that created it. All
 * callbacks (message, before_commit, rebalance logging) run inside
 * fb_kc_poll() or fb_kc_close() on that thread.
 *
 * Logging goes through fb_log: assignments and revocations at info (so a
 * failover is visible), librdkafka errors at warn/err with the broker list,
 * topic and partition.
 */
#ifndef FB_KAFKA_CONSUMER_H
#define FB_KAFKA_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

struct fb_kc;

/* One extra librdkafka property, e.g. {"security.protocol", "SASL_SSL"}. */
struct fb_kc_prop {
	const char *name;
	const char *value;
};

/* Borrowed by fb_kc_new() only: nothing here must outlive that call. */
struct fb_kc_opts {
	const char *brokers;            /* bootstrap.servers "host:port[,..]" (required) */
	const char *group_id;           /* consumer group (required) */
	const char *const *topics;      /* topic names ("^regex" allowed by librdkafka) */
	size_t n_topics;                /* >= 1 */
	int from_beginning;             /* auto.offset.reset=earliest (else latest): only
	                                 * where the group has no committed offset yet */
	const struct fb_kc_prop *props; /* applied after our defaults, so they win; */
	size_t n_props;                 /* enable.auto.commit and enable.auto.offset.store
	                                 * are refused (they would break at-least-once) */
	int session_timeout_ms;         /* 0: 10000. A killed member's partitions move
	                                 * to the others after this long */
	const char *client_id;          /* NULL: "fabricbus-consumer" */
	int skip_seen;                  /* best-effort de-duplication, see below */
	/* Called before any commit, e.g. to fflush() output the message callback
	 * buffered, so that what is committed has really been handed on. Nonzero:
	 * nothing more is ever committed by this handle and fb_kc_poll() returns
	 * FB_KC_ECOMMIT. May be NULL. */
	int (*before_commit)(void *arg);
	void *before_commit_arg;
};

/* One message. Every pointer is valid only during the callback. */
struct fb_kc_msg {
	const char *topic;
	int32_t partition;
	int64_t offset;
	int64_t timestamp_ms;   /* -1 if the message has none */
	const void *key;        /* NULL if the message has no key */
	size_t key_len;
	const void *value;      /* the Redfish Event JSON, not NUL-terminated; */
	size_t value_len;       /* NULL/0 for a tombstone */
	uint64_t event_id;      /* fabricbus-event-id, 0 if absent or not decimal */
	const char *broker;     /* fabricbus-broker epoch, "" if absent */
	const char *severity;   /* fabricbus-severity, "" if absent */
	const char *agent_id;   /* fabricbus-agent-id, "" if absent */
};

/* Return 0: done, commit it. FB_KC_STOP: done, commit it, and deliver no
 * more messages in this fb_kc_poll() (e.g. a --count was reached).
 * Negative: not done. The message is not committed, its partition is rewound
 * to it (it comes again on a later poll), and fb_kc_poll() returns this
 * value at once. */
typedef int (*fb_kc_cb)(const struct fb_kc_msg *m, void *arg);
#define FB_KC_STOP 1

/* fb_kc_poll() results besides the callback's own negative values. */
#define FB_KC_EFATAL (-1100)  /* librdkafka fatal or permanent (authorization) error */
#define FB_KC_ECOMMIT (-1101) /* before_commit failed; handle no longer commits */

/* Create the consumer and subscribe. 0 and *out (owned by the caller, free
 * with fb_kc_close), or FB_ECONFIG for bad options/properties (the reason is
 * written to err) or -ENOMEM. Does not wait for Kafka: an unreachable broker
 * shows up as logged errors from fb_kc_poll(). */
int fb_kc_new(const struct fb_kc_opts *o, struct fb_kc **out, char *err, size_t errsz);

/* Wait up to timeout_ms for messages and hand each to cb, up to a batch of
 * 1024, then commit (async) what was processed. Also serves the rebalance,
 * error and commit callbacks. Returns the number of messages processed
 * (0 on timeout), or a negative value: cb's, FB_KC_EFATAL or FB_KC_ECOMMIT.
 * After FB_KC_EFATAL every later call returns it again. */
int fb_kc_poll(struct fb_kc *kc, int timeout_ms, fb_kc_cb cb, void *arg);

/* Commit what was processed (sync, after before_commit), leave the group so
 * the remaining members take the partitions over at once, and free kc.
 * Returns 0, or a negative value if the final commit failed (logged). */
int fb_kc_close(struct fb_kc *kc);

/* Since fb_kc_new. For --stats and the adapters' status. */
struct fb_kc_counters {
	uint64_t messages;      /* handed to the callback and done */
	uint64_t skipped;       /* skip_seen duplicates (committed, not delivered) */
	uint64_t errors;        /* librdkafka errors logged */
	uint64_t assignments;   /* rebalances that assigned partitions */
	uint64_t revocations;   /* rebalances that revoked (or lost) partitions */
	uint64_t commit_failures;
	int assigned;           /* partitions currently assigned */
};
void fb_kc_get_counters(const struct fb_kc *kc, struct fb_kc_counters *c);

/* skip_seen (de-duplication, best effort): per (fabricbus-broker epoch,
 * topic, partition) the highest fabricbus-event-id processed by THIS handle
 * is kept, and a message at or below it is committed without being handed to
 * the callback. It removes the duplicates one member sees (a producer resend
 * after a fabricbusd restart with the same epoch, a rewind after a failed
 * callback is NOT skipped since that message was never done). It cannot
 * remove those seen across a rebalance or a restart of the consumer: the new
 * owner of a partition has no high-water for it. Messages without the
 * headers are never skipped. Idempotent actions are still required. */

#endif
