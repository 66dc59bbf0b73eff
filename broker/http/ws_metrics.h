/* ws_metrics.h - the WebSocket thread's Prometheus series. It owns the
 * subscribers, so it sets these itself when it answers GET /metrics
 * (ws_server.c), then renders the whole registry.
 *
 * Subscribers are aggregated (count, lag sum and max), not one series per
 * subscriber: a subscriber is a peer address and port that changes at
 * every reconnect, so per-subscriber series would grow without bound in
 * Prometheus (up to WsMaxSubscribers live at once, each reconnect a new
 * one); GET /status lists each subscriber for a closer look.
 */
#ifndef FB_WS_METRICS_H
#define FB_WS_METRICS_H

#include <stdint.h>

struct fb_metrics;
struct fb_metric;

/* The help of fabricbus_events_out_total, whose sinks are registered here
 * (websocket) and in ../metrics.c (journal, kafka): one text for the family. */
#define FB_BROKER_OUT_HELP                                                                   \
	"Events handed on per sink: journal (appended), websocket (messages sent, summed over " \
	"subscribers), kafka (acknowledged by Kafka)."

struct fb_ws_metrics {
	struct fb_metrics *r; /* NULL: /metrics is 404 */
	struct fb_metric *subscribers, *lag_sum, *lag_max, *sent, *dropped, *replayed;
	struct fb_metric *queue_dropped, *held, *ring_events, *demoted;
};

/* Register the series in r (NULL: none). 0 or -ENOMEM. */
int fb_ws_metrics_init(struct fb_ws_metrics *m, struct fb_metrics *r);

#endif
