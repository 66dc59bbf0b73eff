/* fb_metrics.h - the one Prometheus exposition module every fabricbus
 * daemon uses: a registry of counters, gauges and histograms with atomic
 * updates (any thread), rendered in the text format 0.0.4.
 *
 * Series are registered once (at start, or lazily: registration takes the
 * registry's lock, updates never do) and live as long as the registry.
 * Several series of one name (one per label set) form a family: HELP and
 * TYPE are printed once, the series together, in registration order.
 * Names follow Prometheus' rules: fabricbus_<what>_<unit>[_total], base
 * units (seconds, bytes). Updates on a NULL series do nothing, so a
 * program without --metrics passes NULL around instead of testing.
 */
#ifndef FB_METRICS_H
#define FB_METRICS_H

#include "fb_buf.h"

#include <stddef.h>
#include <stdint.h>

#define FB_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* At most this many bucket bounds in one histogram. */
#define FB_METRICS_BUCKETS_MAX 24

enum fb_metric_type { FB_METRIC_COUNTER, FB_METRIC_GAUGE, FB_METRIC_HISTOGRAM };

struct fb_metrics;
struct fb_metric;

struct fb_metrics *fb_metrics_new(void);
void fb_metrics_free(struct fb_metrics *r);

/* A counter or gauge series. labels is the inside of the braces, already
 * escaped (`sink="kafka"`), or NULL. Registering the same name and labels
 * twice returns the first series. NULL on ENOMEM, a bad name, or a name
 * registered before with another type or help (a programming error,
 * logged). */
struct fb_metric *fb_metrics_add(struct fb_metrics *r, enum fb_metric_type type, const char *name,
				 const char *help, const char *labels);
/* A table of counter and gauge series for fb_metrics_add_all: each is
 * stored at byte offset `off` of the caller's struct (offsetof of a
 * `struct fb_metric *` field). */
struct fb_metric_def {
	enum fb_metric_type type;
	const char *name, *help;
	const char *labels; /* NULL: the table's default labels */
	size_t off;
};
/* Register every def of defs[0..n) into the struct at base, with labels
 * (or each def's own). 0, or -1 when one could not be (logged, ENOMEM or a
 * clash). */
int fb_metrics_add_all(struct fb_metrics *r, const struct fb_metric_def *defs, size_t n, void *base,
		       const char *labels);
/* A histogram series with n (<= FB_METRICS_BUCKETS_MAX) increasing upper
 * bounds; +Inf is implied. */
struct fb_metric *fb_metrics_histogram(struct fb_metrics *r, const char *name, const char *help,
				       const char *labels, const double *bounds, size_t n);

/* fabricbus_build_info{daemon="<daemon>",version="<FB_VERSION>"} 1, the
 * series every daemon has. 0 or -1. */
int fb_metrics_build_info(struct fb_metrics *r, const char *daemon);

/* Counters: add n. */
void fb_metric_add(struct fb_metric *m, uint64_t n);
static inline void fb_metric_inc(struct fb_metric *m) { fb_metric_add(m, 1); }
/* Counters mirrored from a monotonic count kept elsewhere, and gauges. */
void fb_metric_set(struct fb_metric *m, double v);
/* Histograms: one observation (in the base unit). */
void fb_metric_observe(struct fb_metric *m, double v);
/* Current value of a counter or gauge (tests, and a daemon's own use). */
double fb_metric_get(const struct fb_metric *m);

/* Append the whole registry in the text format 0.0.4 to out. 0 or -ENOMEM. */
int fb_metrics_render(struct fb_metrics *r, struct fb_buf *out);

/* Escape value for use inside a label's quotes (\\, \", \n) into out;
 * 0, or FB_ETOOBIG when it does not fit. */
int fb_metrics_label_escape(const char *value, char *out, size_t outsz);

#endif
