/* rf_event_service.h - the EventService routes: /redfish/v1/EventService,
 * its Subscriptions collection and members, SubmitTestEvent and
 * EventDestination.ResumeSubscription.
 *
 * Handlers run on the lws thread. Bodies are parsed and checked there
 * (rf_sub.h is pure); everything that reads or changes the subscriptions
 * is handed to the loop (fb_rf_defer), where the push engine owns them
 * (push.h), and answered when the loop is done. SSE streams (rf_live.h) are
 * listed in the collection and served, and closed by DELETE, directly on
 * the lws thread: their registry is thread-safe.
 *
 * main.c makes one struct fb_rf_events (fb_rf_events_new) and sets
 * svc->events before the lws thread starts.
 */
#ifndef FB_RF_EVENT_SERVICE_H
#define FB_RF_EVENT_SERVICE_H

struct fb_rf_ctx;
struct fb_push;
struct fb_rf_live;

struct fb_kafka_sub;

struct fb_rf_events {
	struct fb_push *push;     /* loop-owned: touched only in deferred calls */
	struct fb_rf_live *live;  /* owned; any thread */
	char sse_uri[64];         /* ServerSentEventUri */
	/* The KafkaSubscription config lines, listed read-only as
	 * "KafkaSubscription<n>" (immutable; any thread). Set by main. */
	const struct fb_kafka_sub *ksubs;
	unsigned n_ksubs;
	const char *kafka_brokers;
};

/* Also makes live, the registry rf-sse adds its streams to
 * (svc->events->live). NULL on ENOMEM. */
struct fb_rf_events *fb_rf_events_new(struct fb_push *push);
void fb_rf_events_free(struct fb_rf_events *ev);

int fb_rf_event_service_get(struct fb_rf_ctx *c);
int fb_rf_event_service_patch(struct fb_rf_ctx *c);
int fb_rf_submit_test_event(struct fb_rf_ctx *c);
int fb_rf_subs_get(struct fb_rf_ctx *c);
int fb_rf_subs_post(struct fb_rf_ctx *c);
int fb_rf_sub_get(struct fb_rf_ctx *c);
int fb_rf_sub_patch(struct fb_rf_ctx *c);
int fb_rf_sub_delete(struct fb_rf_ctx *c);
int fb_rf_sub_resume(struct fb_rf_ctx *c);

#endif
