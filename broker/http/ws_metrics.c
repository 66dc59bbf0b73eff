/* ws_metrics.c - the WebSocket thread's Prometheus series: see ws_metrics.h. */
#include "ws_metrics.h"

#include "fb_metrics.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define WM(field) offsetof(struct fb_ws_metrics, field)
#define LAG_HELP                                                                          \
	"Events subscribers are behind the head: the sum over subscribers (agg=\"sum\") and " \
	"the largest (agg=\"max\")."
static const struct fb_metric_def series[] = {
	{ FB_METRIC_GAUGE, "fabricbus_ws_subscribers", "WebSocket subscribers connected now.", NULL,
	  WM(subscribers) },
	{ FB_METRIC_GAUGE, "fabricbus_ws_subscriber_queue_events", LAG_HELP, "agg=\"sum\"", WM(lag_sum) },
	{ FB_METRIC_GAUGE, "fabricbus_ws_subscriber_queue_events", LAG_HELP, "agg=\"max\"", WM(lag_max) },
	{ FB_METRIC_COUNTER, "fabricbus_events_out_total", FB_BROKER_OUT_HELP, "sink=\"websocket\"",
	  WM(sent) },
	{ FB_METRIC_COUNTER, "fabricbus_ws_subscribers_dropped_total",
	  "Subscribers cut off with a missed-events notice because they stopped reading.", NULL,
	  WM(dropped) },
	{ FB_METRIC_COUNTER, "fabricbus_ws_replayed_total",
	  "Messages served from the journal (since= and catch-up).", NULL, WM(replayed) },
	{ FB_METRIC_COUNTER, "fabricbus_ws_queue_dropped_events_total",
	  "Committed events the WebSocket thread skipped because it fell behind (subscribers "
	  "catch up from the journal).",
	  NULL, WM(queue_dropped) },
	{ FB_METRIC_COUNTER, "fabricbus_ws_agents_held_total",
	  "Times the WebSocket queue was full and the agents were held (backpressure).", NULL,
	  WM(held) },
	{ FB_METRIC_GAUGE, "fabricbus_ws_ring_events",
	  "Rendered events kept in memory for live subscribers.", NULL, WM(ring_events) },
	{ FB_METRIC_COUNTER, "fabricbus_ws_slow_subscribers_total",
	  "Live subscribers sent to catch up from the journal because their socket pushed back.",
	  NULL, WM(demoted) },
};
#undef WM

int fb_ws_metrics_init(struct fb_ws_metrics *m, struct fb_metrics *r)
{
	memset(m, 0, sizeof(*m));
	if (!r)
		return 0;
	m->r = r;
	return fb_metrics_add_all(r, series, sizeof(series) / sizeof(series[0]), m, NULL) ? -ENOMEM : 0;
}
