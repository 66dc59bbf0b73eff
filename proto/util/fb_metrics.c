/* fb_metrics.c - Prometheus registry and text exposition: see fb_metrics.h.
 *
 * Values are atomics so that any thread updates without a lock: counters a
 * uint64, gauges and sums the bits of a double (compare-and-swap to add),
 * histogram buckets per-bucket counts made cumulative at render time. A
 * scrape is not a snapshot across series (Prometheus does not need one);
 * a histogram's _count is its +Inf bucket as read, so the two agree.
 */
#include "fb_metrics.h"

#include "fb_err.h"
#include "fb_log.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fb_metric {
	struct fb_metric *next; /* in its family */
	char *labels;           /* "" when none */
	enum fb_metric_type type;
	_Atomic uint64_t u;     /* counter value, or double bits of a gauge */
	/* histograms */
	double bounds[FB_METRICS_BUCKETS_MAX];
	size_t nb;
	_Atomic uint64_t buckets[FB_METRICS_BUCKETS_MAX + 1]; /* last: above every bound */
	_Atomic uint64_t sum_bits;
};

struct family {
	struct family *next;
	char *name, *help;
	enum fb_metric_type type;
	struct fb_metric *series, **tail;
};

struct fb_metrics {
	pthread_mutex_t mu;
	struct family *fams, **tail;
};

static uint64_t d2u(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double u2d(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

struct fb_metrics *fb_metrics_new(void)
{
	struct fb_metrics *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	r->tail = &r->fams;
	return r;
}

void fb_metrics_free(struct fb_metrics *r)
{
	if (!r)
		return;
	for (struct family *f = r->fams, *fn; f; f = fn) {
		fn = f->next;
		for (struct fb_metric *m = f->series, *mn; m; m = mn) {
			mn = m->next;
			free(m->labels);
			free(m);
		}
		free(f->name);
		free(f->help);
		free(f);
	}
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static int name_valid(const char *s)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == ':'))
			return 0;
	return 1;
}

static struct family *family_get(struct fb_metrics *r, enum fb_metric_type type, const char *name,
				 const char *help)
{
	for (struct family *f = r->fams; f; f = f->next) {
		if (strcmp(f->name, name) != 0)
			continue;
		if (f->type != type || strcmp(f->help, help) != 0) {
			fb_log_err("metrics: %s registered twice with another type or help", name);
			return NULL;
		}
		return f;
	}
	struct family *f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name)) || !(f->help = strdup(help))) {
		if (f)
			free(f->name);
		free(f);
		return NULL;
	}
	f->type = type;
	f->tail = &f->series;
	*r->tail = f;
	r->tail = &f->next;
	return f;
}

static struct fb_metric *series_get(struct fb_metrics *r, enum fb_metric_type type, const char *name,
				    const char *help, const char *labels, const double *bounds, size_t nb)
{
	if (!r || !name_valid(name) || !help || nb > FB_METRICS_BUCKETS_MAX) {
		fb_log_err("metrics: bad series '%s'", name ? name : "(null)");
		return NULL;
	}
	labels = labels ? labels : "";
	pthread_mutex_lock(&r->mu);
	struct fb_metric *m = NULL;
	struct family *f = family_get(r, type, name, help);
	for (struct fb_metric *s = f ? f->series : NULL; s; s = s->next)
		if (strcmp(s->labels, labels) == 0) {
			m = s;
			goto out;
		}
	if (f && (m = calloc(1, sizeof(*m))) != NULL) {
		if (!(m->labels = strdup(labels))) {
			free(m);
			m = NULL;
			goto out;
		}
		m->type = type;
		m->nb = nb;
		if (nb)
			memcpy(m->bounds, bounds, nb * sizeof(*bounds));
		if (type == FB_METRIC_GAUGE)
			atomic_init(&m->u, d2u(0.0));
		*f->tail = m;
		f->tail = &m->next;
	}
out:
	pthread_mutex_unlock(&r->mu);
	return m;
}

struct fb_metric *fb_metrics_add(struct fb_metrics *r, enum fb_metric_type type, const char *name,
				 const char *help, const char *labels)
{
	if (type == FB_METRIC_HISTOGRAM)
		return NULL;
	return series_get(r, type, name, help, labels, NULL, 0);
}

int fb_metrics_build_info(struct fb_metrics *r, const char *daemon)
{
	char l[192];
	snprintf(l, sizeof(l), "daemon=\"%s\",version=\"%s\"", daemon, FB_VERSION);
	struct fb_metric *m = fb_metrics_add(r, FB_METRIC_GAUGE, "fabricbus_build_info",
					     "Always 1; the daemon and version are the labels.", l);
	fb_metric_set(m, 1);
	return m ? 0 : -1;
}

int fb_metrics_add_all(struct fb_metrics *r, const struct fb_metric_def *defs, size_t n, void *base,
		       const char *labels)
{
	for (size_t i = 0; i < n; i++) {
		struct fb_metric *m = fb_metrics_add(r, defs[i].type, defs[i].name, defs[i].help,
						     defs[i].labels ? defs[i].labels : labels);
		if (!m)
			return -1;
		memcpy((char *)base + defs[i].off, &m, sizeof(m));
	}
	return 0;
}

struct fb_metric *fb_metrics_histogram(struct fb_metrics *r, const char *name, const char *help,
				       const char *labels, const double *bounds, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (!(bounds[i] > bounds[i - 1]))
			return NULL;
	return series_get(r, FB_METRIC_HISTOGRAM, name, help, labels, bounds, n);
}

void fb_metric_add(struct fb_metric *m, uint64_t n)
{
	if (m && m->type == FB_METRIC_COUNTER)
		atomic_fetch_add_explicit(&m->u, n, memory_order_relaxed);
}

void fb_metric_set(struct fb_metric *m, double v)
{
	if (!m)
		return;
	if (m->type == FB_METRIC_COUNTER)
		atomic_store_explicit(&m->u, v > 0 ? (uint64_t)v : 0, memory_order_relaxed);
	else if (m->type == FB_METRIC_GAUGE)
		atomic_store_explicit(&m->u, d2u(v), memory_order_relaxed);
}

double fb_metric_get(const struct fb_metric *m)
{
	if (!m)
		return 0.0;
	uint64_t u = atomic_load_explicit(&m->u, memory_order_relaxed);
	return m->type == FB_METRIC_COUNTER ? (double)u : m->type == FB_METRIC_GAUGE ? u2d(u) : 0.0;
}

void fb_metric_observe(struct fb_metric *m, double v)
{
	if (!m || m->type != FB_METRIC_HISTOGRAM || isnan(v))
		return;
	size_t i = 0;
	while (i < m->nb && v > m->bounds[i])
		i++;
	atomic_fetch_add_explicit(&m->buckets[i], 1, memory_order_relaxed);
	uint64_t old = atomic_load_explicit(&m->sum_bits, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&m->sum_bits, &old, d2u(u2d(old) + v),
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* A float as the text format wants it: +Inf/-Inf/NaN, else the shortest
 * of %.15g..%.17g that reads back exactly (0.00025, not
 * 0.00025000000000000001); counters below 2^53 print as integers. */
static void fmt_float(char *out, size_t outsz, double v)
{
	if (isnan(v) || isinf(v)) {
		snprintf(out, outsz, "%s", isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (int prec = 15; prec < 17; prec++) {
		snprintf(out, outsz, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
	snprintf(out, outsz, "%.17g", v);
}

static int put_float(struct fb_buf *b, double v)
{
	char t[40];
	fmt_float(t, sizeof(t), v);
	return fb_buf_puts(b, t);
}

static int put_help(struct fb_buf *b, const struct family *f)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	int rc = fb_buf_printf(b, "# HELP %s ", f->name);
	for (const char *p = f->help; !rc && *p; p++)
		rc = *p == '\\' ? fb_buf_puts(b, "\\\\") : *p == '\n' ? fb_buf_puts(b, "\\n")
								     : fb_buf_put(b, p, 1);
	return rc ? rc : fb_buf_printf(b, "\n# TYPE %s %s\n", f->name, types[f->type]);
}

/* name{labels[,extra]} */
static int put_name(struct fb_buf *b, const char *name, const char *suffix, const char *labels,
		    const char *extra)
{
	int rc = fb_buf_printf(b, "%s%s", name, suffix);
	if (rc || (!*labels && !extra))
		return rc;
	return fb_buf_printf(b, "{%s%s%s}", labels, *labels && extra ? "," : "", extra ? extra : "");
}

static int put_histogram(struct fb_buf *b, const char *name, const struct fb_metric *m)
{
	uint64_t cum = 0;
	int rc = 0;
	char le[64];
	for (size_t i = 0; !rc && i <= m->nb; i++) {
		cum += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
		char f[40];
		fmt_float(f, sizeof(f), i < m->nb ? m->bounds[i] : INFINITY);
		snprintf(le, sizeof(le), "le=\"%s\"", f);
		rc = put_name(b, name, "_bucket", m->labels, le);
		if (!rc)
			rc = fb_buf_printf(b, " %llu\n", (unsigned long long)cum);
	}
	if (!rc)
		rc = put_name(b, name, "_sum", m->labels, NULL);
	if (!rc)
		rc = fb_buf_puts(b, " ");
	if (!rc)
		rc = put_float(b, u2d(atomic_load_explicit(&m->sum_bits, memory_order_relaxed)));
	if (!rc)
		rc = fb_buf_puts(b, "\n");
	if (!rc)
		rc = put_name(b, name, "_count", m->labels, NULL);
	/* _count is the +Inf bucket, so that they agree even when an
	 * observation races the scrape. */
	return rc ? rc : fb_buf_printf(b, " %llu\n", (unsigned long long)cum);
}

int fb_metrics_render(struct fb_metrics *r, struct fb_buf *out)
{
	int rc = 0;
	pthread_mutex_lock(&r->mu);
	for (struct family *f = r->fams; f && !rc; f = f->next) {
		rc = put_help(out, f);
		for (struct fb_metric *m = f->series; m && !rc; m = m->next) {
			if (m->type == FB_METRIC_HISTOGRAM) {
				rc = put_histogram(out, f->name, m);
				continue;
			}
			rc = put_name(out, f->name, "", m->labels, NULL);
			if (!rc)
				rc = fb_buf_puts(out, " ");
			if (!rc)
				rc = put_float(out, fb_metric_get(m));
			if (!rc)
				rc = fb_buf_puts(out, "\n");
		}
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

int fb_metrics_label_escape(const char *value, char *out, size_t outsz)
{
	size_t o = 0;
	for (const char *p = value; *p; p++) {
		const char *rep = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
		size_t n = rep ? 2 : 1;
		if (o + n >= outsz)
			return FB_ETOOBIG;
		memcpy(out + o, rep ? rep : p, n);
		o += n;
	}
	if (o >= outsz)
		return FB_ETOOBIG;
	out[o] = '\0';
	return 0;
}
