/* push.h - Redfish push delivery: the EventService's subscriptions and the
 * engine that sends them their events.
 *
 * The engine owns the subscription store (rf_sub_store.h) and, for every
 * enabled Redfish-protocol subscription, a destination that follows the
 * journal like the Kafka sink does: its own journal reader, positioned after
 * the subscription's cursor, reads committed events, skips those the
 * subscription's filters reject, renders the rest as Redfish Events with the
 * subscription's Context, and POSTs them one at a time, in EventId order,
 * through fb_hc (libcurl on this loop). A destination that fails waits and
 * retries per its DeliveryRetryPolicy (push_retry.h) without holding any
 * other destination or the loop; the events it has not taken stay in the
 * journal. Cursors are persisted (push_cursor.h), so after a broker restart
 * or a receiver outage delivery resumes where it stopped: at least once
 * (a delivery that succeeded after the last cursor write is sent again after
 * a crash; receivers see the same EventId twice).
 *
 * Heartbeats (SendHeartbeat) and SubmitTestEvent events are not journaled:
 * they wait in memory ahead of journal events and are lost on a restart.
 * Kafka-protocol subscriptions are stored and listed here and delivered by
 * the Kafka sink (kafka_sink.h).
 *
 * Threads: everything on the libevent loop.
 */
#ifndef FB_PUSH_H
#define FB_PUSH_H

#include "batch.h"
#include "fb_buf.h"
#include "rf_sub_store.h"

#include <event2/event.h>
#include <jansson.h>
#include <stdint.h>

struct fb_push;
struct fb_hc;

struct fb_push_opts {
	struct event_base *base;
	const char *journal_dir;     /* the store, the cursors, the journal */
	uint64_t epoch;              /* the journal's: ties the cursors to it */
	uint64_t committed_id;       /* newest committed EventId at start */
	const char *fabric;          /* FabricName, for OriginOfCondition */
	const char *ca_file;         /* RedfishPushCAFile, "" = system CAs */
	unsigned retry_attempts;     /* DeliveryRetryAttempts */
	uint64_t retry_interval_ms;  /* DeliveryRetryIntervalSeconds */
	uint64_t max_backoff_ms;     /* RetryForeverWithBackoff's cap */
	uint64_t timeout_ms;         /* one delivery */
	uint64_t cursor_sync_ms;     /* PushCursorSync */
	uint64_t heartbeat_unit_ms;  /* one HeartbeatIntervalMinutes (60000; tests shorten it) */
	/* Called after any change of the subscriptions (created, changed,
	 * deleted, suspended by a policy), e.g. to refresh a snapshot. */
	void (*changed)(void *arg);
	void *changed_arg;
	/* IncludeOriginOfCondition: the body of the resource at path (malloc'd
	 * JSON object), or NULL (then the event keeps the bare @odata.id). */
	char *(*origin_body)(void *arg, const char *path);
	void *origin_body_arg;
};

struct fb_push_stats {
	uint64_t delivered, failed, skipped, retries, heartbeats, terminated, suspended;
	uint64_t undeliverable; /* events dropped by fb_push_drop */
};

/* Load the store and the cursors, start delivering. 0 and *out, or a
 * negative error (logged). A corrupt store is set aside, not fatal. */
int fb_push_start(const struct fb_push_opts *o, struct fb_push **out);
/* Write the cursors, cancel what is in flight (sent again at the next
 * start), free. */
void fb_push_stop(struct fb_push *p);

/* The output (output.h): events up to last_id are committed. Never busy. */
int fb_push_committed(void *p, struct fb_batch *batch, uint64_t last_id);

const struct fb_rf_store *fb_push_store(const struct fb_push *p);
/* The HTTP client, for other modules' requests on this loop (OFMF). */
struct fb_hc *fb_push_hc(struct fb_push *p);

/* Create: take s (moved), give it id (NULL: the next number), save the store
 * and a cursor at the newest committed event, start delivering. 0 and *out,
 * -EEXIST (id taken), -ENOSPC (too many), -errno (the store could not be
 * written: nothing is created). */
int fb_push_create(struct fb_push *p, struct fb_rf_sub *s, const char *id, struct fb_rf_sub **out);
/* Replace the subscription with s's id by s (a PATCH built with
 * fb_rf_sub_build(FB_RF_SUB_PATCH)). Re-enabling a suspended one resumes it at
 * its cursor. 0, -ENOENT, -errno. */
int fb_push_update(struct fb_push *p, struct fb_rf_sub *s);
/* Enable (resume) or suspend. 0, -ENOENT, -errno. */
int fb_push_set_enabled(struct fb_push *p, const char *id, int enabled);
/* Delete. 0, -ENOENT, -errno. */
int fb_push_delete(struct fb_push *p, const char *id);

/* SubmitTestEvent: record is one Events[] member (borrowed), with MessageId
 * and the rest already checked; queue it for every enabled Redfish
 * destination whose filters take it. Returns how many, or -ENOMEM. */
int fb_push_submit(struct fb_push *p, json_t *record);

/* The member as GET shows it, with Oem.Fabricbus delivery state (cursor,
 * delivered, failures, last error). New reference or NULL. */
json_t *fb_push_render(struct fb_push *p, const struct fb_rf_sub *s);

void fb_push_get_stats(const struct fb_push *p, struct fb_push_stats *st);

/* What happened to a subscription, for watchers (the OFMF agent). */
enum fb_push_what {
	FB_PUSH_CREATED,   /* POST or fb_push_create */
	FB_PUSH_UPDATED,   /* PATCH or fb_push_update (e.g. the core set Context) */
	FB_PUSH_DELETED,   /* DELETE, fb_push_delete or TerminateAfterRetries */
	FB_PUSH_ENABLED,   /* resumed */
	FB_PUSH_DISABLED,  /* suspended (SuspendRetries or a client) */
	FB_PUSH_FAILED,    /* one delivery try failed (detail: why) */
	FB_PUSH_DELIVERED, /* a delivery succeeded after failures */
};
/* Called on the loop after the change is in the store; s is NULL for
 * DELETED (id names it). The watcher must not delete or create from
 * within FAILED (it may suspend with fb_push_set_enabled). */
typedef void (*fb_push_watch_fn)(void *arg, enum fb_push_what what, const char *id,
				 const struct fb_rf_sub *s, const char *detail);
#define FB_PUSH_WATCHERS_MAX 4
/* 0 or -ENOSPC. */
int fb_push_watch(struct fb_push *p, fb_push_watch_fn fn, void *arg);

/* The delivery a subscription is retrying, for a FAILED watcher that
 * decides whether its receiver will ever take it. */
struct fb_push_pending {
	uint64_t event_id;  /* journal EventId; 0 for a heartbeat or test event */
	const char *origin; /* its OriginOfCondition ("" for none); valid until the next call */
	long status;        /* the last try's HTTP status, 0 when no reply came */
	int no_reply;       /* ... the receiver took the request and closed without a reply */
	uint64_t tries;     /* failed tries of it so far */
};
/* 0 and *out, -ENOENT (no such subscription, or nothing being retried). */
int fb_push_pending(const struct fb_push *p, const char *id, struct fb_push_pending *out);
/* Drop the event subscription id is retrying as permanently undeliverable
 * (its receiver refuses it, whatever the retry policy): counted, logged with
 * why, the cursor moves past it and the next event follows at once. A FAILED
 * watcher may call it. 0, -ENOENT (nothing being retried). */
int fb_push_drop(struct fb_push *p, const char *id, const char *why);

/* EventService DeliveryRetryAttempts / DeliveryRetryIntervalSeconds: read,
 * and changed by a PATCH (until the next start; the config keys are the
 * lasting values). */
void fb_push_get_retry(const struct fb_push *p, unsigned *attempts, uint64_t *interval_ms);
void fb_push_set_retry(struct fb_push *p, unsigned attempts, uint64_t interval_ms);

#endif
