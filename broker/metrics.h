/* metrics.h - fabricbusd's Prometheus series (GET /metrics on HttpListen).
 *
 * The loop owns the broker's counts, so it mirrors them into the registry
 * every 100 ms tick (fb_broker_metrics_update); the journal observes its
 * fdatasync latency directly; the WebSocket thread sets its own series
 * when it answers a scrape (ws_metrics.h). The registry itself is
 * thread-safe (fb_metrics.h), so the lws thread renders it without asking
 * the loop. The list with meanings is in docs/operations.md, "Metrics".
 */
#ifndef FB_BROKER_METRICS_H
#define FB_BROKER_METRICS_H

#include "broker.h"

struct fb_metrics;
struct fb_metric;
struct fb_broker_metrics;

/* Registers every loop-side series in r (which the caller owns). */
struct fb_broker_metrics *fb_broker_metrics_new(struct fb_metrics *r);
void fb_broker_metrics_free(struct fb_broker_metrics *m);
/* The histogram the journal observes each fdatasync into. */
struct fb_metric *fb_broker_metrics_fsync(struct fb_broker_metrics *m);
/* Mirror the loop's counts (loop thread). */
void fb_broker_metrics_update(struct fb_broker_metrics *m, struct fb_broker *b);

#endif
