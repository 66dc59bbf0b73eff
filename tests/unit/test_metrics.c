/* test_metrics.c - proto/util's Prometheus registry: the exact text of a
 * small registry (HELP/TYPE once per family, series together in
 * registration order, labels, shortest floats, cumulative buckets with
 * _count equal to +Inf); the same name and labels give the same series and
 * a clash of type or help is refused; bad names are refused; NULL series are
 * no-ops; label escaping; and counters and histograms updated by 4 threads
 * at once lose no update (the atomics). The text is also parsed by
 * prometheus_client in tests/integration/test_metrics.py. */
#include "fb_metrics.h"
#include "fb_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static char *render(struct fb_metrics *r)
{
	struct fb_buf b = FB_BUF_INIT;
	int rc = fb_metrics_render(r, &b);
	if (!rc)
		rc = fb_buf_put_u8(&b, 0);
	if (rc) {
		fb_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

static void renders_families_in_text_format(void)
{
	struct fb_metrics *r = fb_metrics_new();
	const char *h = "Events out per sink.";
	struct fb_metric *ws = fb_metrics_add(r, FB_METRIC_COUNTER, "fb_out_total", h, "sink=\"ws\"");
	struct fb_metric *g = fb_metrics_add(r, FB_METRIC_GAUGE, "fb_size_bytes", "Size.\nTwo", NULL);
	struct fb_metric *k = fb_metrics_add(r, FB_METRIC_COUNTER, "fb_out_total", h, "sink=\"kafka\"");
	const double bounds[] = { 0.00025, 0.5, 1 };
	struct fb_metric *hist = fb_metrics_histogram(r, "fb_sync_seconds", "Sync time.", NULL, bounds, 3);
	fb_metric_add(ws, 3);
	fb_metric_inc(k);
	fb_metric_set(g, 1.5);
	fb_metric_observe(hist, 0.0001);
	fb_metric_observe(hist, 0.7);
	fb_metric_observe(hist, 0.5);
	fb_metric_observe(hist, 30);
	char *t = render(r);
	CHECK_STR(t, "# HELP fb_out_total Events out per sink.\n"
		     "# TYPE fb_out_total counter\n"
		     "fb_out_total{sink=\"ws\"} 3\n"
		     "fb_out_total{sink=\"kafka\"} 1\n"
		     "# HELP fb_size_bytes Size.\\nTwo\n"
		     "# TYPE fb_size_bytes gauge\n"
		     "fb_size_bytes 1.5\n"
		     "# HELP fb_sync_seconds Sync time.\n"
		     "# TYPE fb_sync_seconds histogram\n"
		     "fb_sync_seconds_bucket{le=\"0.00025\"} 1\n"
		     "fb_sync_seconds_bucket{le=\"0.5\"} 2\n"
		     "fb_sync_seconds_bucket{le=\"1\"} 3\n"
		     "fb_sync_seconds_bucket{le=\"+Inf\"} 4\n"
		     "fb_sync_seconds_sum 31.2001\n"
		     "fb_sync_seconds_count 4\n");
	free(t);
	fb_metrics_free(r);
}

static void same_series_clash_and_bad_names(void)
{
	struct fb_metrics *r = fb_metrics_new();
	struct fb_metric *a = fb_metrics_add(r, FB_METRIC_COUNTER, "x_total", "X.", "a=\"1\"");
	CHECK(a != NULL);
	CHECK(fb_metrics_add(r, FB_METRIC_COUNTER, "x_total", "X.", "a=\"1\"") == a);
	CHECK(fb_metrics_add(r, FB_METRIC_COUNTER, "x_total", "X.", "a=\"2\"") != a);
	CHECK(fb_metrics_add(r, FB_METRIC_GAUGE, "x_total", "X.", NULL) == NULL);
	CHECK(fb_metrics_add(r, FB_METRIC_COUNTER, "x_total", "Other help.", NULL) == NULL);
	CHECK(fb_metrics_add(r, FB_METRIC_GAUGE, "1bad", "B.", NULL) == NULL);
	CHECK(fb_metrics_add(r, FB_METRIC_GAUGE, "bad-name", "B.", NULL) == NULL);
	const double down[] = { 2, 1 };
	CHECK(fb_metrics_histogram(r, "h_seconds", "H.", NULL, down, 2) == NULL);
	/* NULL series: every update is a no-op (a daemon without --metrics). */
	fb_metric_inc(NULL);
	fb_metric_set(NULL, 1);
	fb_metric_observe(NULL, 1);
	CHECK(fb_metric_get(NULL) == 0.0);
	/* A counter mirrored from elsewhere is set, never below 0. */
	fb_metric_set(a, 42);
	CHECK(fb_metric_get(a) == 42.0);
	fb_metric_set(a, -1);
	CHECK(fb_metric_get(a) == 0.0);
	fb_metrics_free(r);
}

static void label_escape(void)
{
	char out[32];
	CHECK_EQ(fb_metrics_label_escape("a\"b\\c\nd", out, sizeof(out)), 0);
	CHECK_STR(out, "a\\\"b\\\\c\\nd");
	CHECK(fb_metrics_label_escape("0123456789", out, 10) != 0);
	CHECK_EQ(fb_metrics_label_escape("012345678", out, 10), 0);
}

#define THREADS 4
#define PER_THREAD 100000

struct hammer {
	struct fb_metric *c, *h;
};

static void *hammer(void *arg)
{
	struct hammer *x = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		fb_metric_inc(x->c);
		fb_metric_observe(x->h, 1.0);
	}
	return NULL;
}

static void concurrent_updates_are_not_lost(void)
{
	struct fb_metrics *r = fb_metrics_new();
	const double b[] = { 0.5, 2 };
	struct hammer x = { fb_metrics_add(r, FB_METRIC_COUNTER, "n_total", "N.", NULL),
			    fb_metrics_histogram(r, "d_seconds", "D.", NULL, b, 2) };
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, hammer, &x), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(fb_metric_get(x.c) == (double)THREADS * PER_THREAD);
	char *text = render(r);
	CHECK(text != NULL);
	CHECK(strstr(text, "d_seconds_bucket{le=\"2\"} 400000\n") != NULL);
	CHECK(strstr(text, "d_seconds_sum 400000\n") != NULL);
	CHECK(strstr(text, "d_seconds_count 400000\n") != NULL);
	free(text);
	fb_metrics_free(r);
}

int main(void)
{
	RUN(renders_families_in_text_format);
	RUN(same_series_clash_and_bad_names);
	RUN(label_escape);
	RUN(concurrent_updates_are_not_lost);
	return TEST_DONE();
}
