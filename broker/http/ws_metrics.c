/* ws_metrics.c - the WebSocket thread's Prometheus series: see ws_metrics.h. */
#include "ws_metrics.h"

#include "fb_metrics.h"

#include <errno.h>
#include <string.h>

int fb_ws_metrics_init(struct fb_ws_metrics *m, struct fb_metrics *r)
{
	memset(m, 0, sizeof(*m));
	if (!r)
		return 0;
	m->r = r;
	m->subscribers = fb_metrics_add(r, FB_METRIC_GAUGE, "fabricbus_ws_subscribers",
					"WebSocket subscribers connected now.", NULL);
	m->lag_sum = fb_metrics_add(r, FB_METRIC_GAUGE, "fabricbus_ws_subscriber_queue_events",
				    "Events subscribers are behind the head: the sum over subscribers "
				    "(agg=\"sum\") and the largest (agg=\"max\").",
				    "agg=\"sum\"");
	m->lag_max = fb_metrics_add(r, FB_METRIC_GAUGE, "fabricbus_ws_subscriber_queue_events",
				    "Events subscribers are behind the head: the sum over subscribers "
				    "(agg=\"sum\") and the largest (agg=\"max\").",
				    "agg=\"max\"");
	m->sent = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_events_out_total",
				 "Events handed on per sink: journal (appended), websocket (messages sent, "
				 "summed over subscribers), kafka (acknowledged by Kafka).",
				 "sink=\"websocket\"");
	m->dropped = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_ws_subscribers_dropped_total",
				    "Subscribers disconnected because they fell WsQueueEvents behind.",
				    NULL);
	m->replayed = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_ws_replayed_total",
				     "Messages served from the journal (since= and catch-up).", NULL);
	m->queue_dropped = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_ws_queue_dropped_events_total",
					  "Committed events the WebSocket thread skipped because it fell "
					  "behind (subscribers catch up from the journal).",
					  NULL);
	m->held = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_ws_agents_held_total",
				 "Times the WebSocket queue was full and the agents were held "
				 "(backpressure).",
				 NULL);
	m->ring_events = fb_metrics_add(r, FB_METRIC_GAUGE, "fabricbus_ws_ring_events",
					"Rendered events kept in memory for live subscribers.", NULL);
	m->demoted = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_ws_slow_subscribers_total",
				    "Live subscribers sent to catch up from the journal because their "
				    "socket pushed back.",
				    NULL);
	if (!m->subscribers || !m->lag_sum || !m->lag_max || !m->sent || !m->dropped || !m->replayed ||
	    !m->queue_dropped || !m->held || !m->ring_events || !m->demoted)
		return -ENOMEM;
	return 0;
}
