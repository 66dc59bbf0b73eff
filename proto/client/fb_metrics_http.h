/* fb_metrics_http.h - the tiny HTTP listener that serves GET /metrics
 * (fb_metrics.h) for a daemon that has no HTTP server of its own (the
 * agents, fabricbus-slurm, fabricbus-pmix), on the daemon's libevent loop.
 * Read-only: /metrics only, every other path is 404 and every other
 * method 405. fabricbusd serves /metrics on its HttpListen port instead.
 */
#ifndef FB_METRICS_HTTP_H
#define FB_METRICS_HTTP_H

#include <event2/event.h>
#include <stddef.h>

struct fb_metrics;
struct fb_metrics_http;

/* Listen on addr ("HOST:PORT", "[IPV6]:PORT" or ":PORT" for 127.0.0.1)
 * and serve r on base. 0, or FB_EMALFORMED for a bad address, or -EIO
 * when the port cannot be bound (in use, no such address); err says
 * which and what to do. */
int fb_metrics_http_start(struct event_base *base, const char *addr, struct fb_metrics *r,
			  struct fb_metrics_http **out, char *err, size_t errsz);
/* Called on the loop before each scrape is rendered: the daemon mirrors
 * the counts its loop owns into r (NULL: none). */
void fb_metrics_http_set_collect(struct fb_metrics_http *h, void (*collect)(void *arg), void *arg);
/* The address the listener is bound to ("127.0.0.1:19180", "[::1]:19180"):
 * for the daemon's "serving" log line, which names where a scraper must go
 * (":19180" binds 127.0.0.1 only). Owned by h. */
const char *fb_metrics_http_addr(const struct fb_metrics_http *h);
void fb_metrics_http_free(struct fb_metrics_http *h);

#endif
