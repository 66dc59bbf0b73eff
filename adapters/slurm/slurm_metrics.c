/* slurm_metrics.c - fabricbus-slurm's Prometheus series: see slurm_metrics.h. */
#include "slurm_metrics.h"

#include "slurm_actuator.h"
#include "slurm_adapter.h"

#include "fb_metrics.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRAINS_HELP "Nodes drained (or, in a dry run, that would be), by cause kind."
#define UNDRAINS_HELP "Nodes undrained after their condition cleared, by cause kind."
#define SKIPS_HELP                                                                              \
	"Drains and undrains not done, by action and why: foreign_reason (Slurm holds a reason "  \
	"not ours), unknown_node, gone (an admin took the node over), cap (MaxDrain reached), "   \
	"not_in_slurm."

struct fbs_metrics {
	struct fb_metrics *r;
	struct fb_metric *events, *ignored, *unrouted, *published, *publish_drops, *jobs_reconciled;
	struct fb_metric *held, *queued, *update_seconds;
};

/* A slurm_update_node call: ~1 ms on a quiet controller, up to ~9 s while
 * slurmctld is unreachable. */
static const double update_bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
					0.25,  0.5,    1.0,   2.5,  5.0,   10.0, 30.0 };

static const struct {
	const char *prefix, *kind;
} kinds[] = {
	{ "link down", "link_down" },   { "link degraded", "link_degraded" },
	{ "link flapping", "link_flapping" }, { "error rate", "error_rate" },
	{ "congestion", "congestion" }, { "switch", "switch" },
};

const char *fbs_metrics_cause_kind(const char *cause)
{
	for (size_t i = 0; cause && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(cause, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
			return kinds[i].kind;
	return "other";
}

#define SM(field) offsetof(struct fbs_metrics, field)
#define EVENTS_HELP                                                                            \
	"Events read from the broker, by what became of them: read (all), ignored (not a kind "   \
	"DrainOn acts on), unrouted (no node known for it)."
static const struct fb_metric_def series[] = {
	{ FB_METRIC_COUNTER, "fabricbus_slurm_events_total", EVENTS_HELP, "result=\"read\"", SM(events) },
	{ FB_METRIC_COUNTER, "fabricbus_slurm_events_total", EVENTS_HELP, "result=\"ignored\"",
	  SM(ignored) },
	{ FB_METRIC_COUNTER, "fabricbus_slurm_events_total", EVENTS_HELP, "result=\"unrouted\"",
	  SM(unrouted) },
	{ FB_METRIC_COUNTER, "fabricbus_slurm_published_total",
	  "Action events (drain, undrain, skip, cap) published to the broker.", NULL, SM(published) },
	{ FB_METRIC_COUNTER, "fabricbus_slurm_publish_dropped_total",
	  "Action events the session refused (its buffer was full).", NULL, SM(publish_drops) },
	{ FB_METRIC_COUNTER, "fabricbus_slurm_jobs_reconciled_total",
	  "Job registrations deleted from the broker because slurmctld says the job ended "
	  "(JobReconcileInterval).", NULL, SM(jobs_reconciled) },
	{ FB_METRIC_GAUGE, "fabricbus_slurm_drained_nodes",
	  "Nodes fabricbus holds drained now (or is draining).", NULL, SM(held) },
	{ FB_METRIC_GAUGE, "fabricbus_slurm_queued_batches",
	  "Decided batches not yet handed to the Slurm thread.", NULL, SM(queued) },
};
#undef SM

/* The skip series exist from the start, so that rate() sees a 0. */
static const char *const skips[] = { "action=\"drain\",reason=\"foreign_reason\"",
				     "action=\"drain\",reason=\"unknown_node\"",
				     "action=\"drain\",reason=\"cap\"",
				     "action=\"drain\",reason=\"not_in_slurm\"",
				     "action=\"undrain\",reason=\"gone\"",
				     "action=\"undrain\",reason=\"unknown_node\"" };

struct fbs_metrics *fbs_metrics_new(struct fb_metrics *r)
{
	struct fbs_metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->r = r;
	int ok = fb_metrics_build_info(r, "fabricbus-slurm") == 0 &&
		 fb_metrics_add_all(r, series, sizeof(series) / sizeof(series[0]), m, NULL) == 0;
	m->update_seconds = fb_metrics_histogram(r, "fabricbus_slurm_update_duration_seconds",
						 "Time one slurm_update_node call took.", NULL,
						 update_bounds,
						 sizeof(update_bounds) / sizeof(update_bounds[0]));
	ok = ok && m->update_seconds;
	for (size_t i = 0; ok && i < sizeof(skips) / sizeof(skips[0]); i++)
		ok = fb_metrics_add(r, FB_METRIC_COUNTER, "fabricbus_slurm_skips_total", SKIPS_HELP,
				    skips[i]) != NULL;
	if (!ok) {
		free(m);
		return NULL;
	}
	return m;
}

void fbs_metrics_free(struct fbs_metrics *m) { free(m); }

static void count(struct fbs_metrics *m, const char *name, const char *help, const char *labels)
{
	fb_metric_inc(fb_metrics_add(m->r, FB_METRIC_COUNTER, name, help, labels));
}

static void skip(struct fbs_metrics *m, const char *action, const char *reason, size_t n)
{
	char l[96];
	snprintf(l, sizeof(l), "action=\"%s\",reason=\"%s\"", action, reason);
	fb_metric_add(fb_metrics_add(m->r, FB_METRIC_COUNTER, "fabricbus_slurm_skips_total",
				     SKIPS_HELP, l),
		      n);
}

void fbs_metrics_node(struct fbs_metrics *m, int drain, const struct fbs_node_result *x,
		      const char *cause)
{
	if (!m)
		return;
	char l[64];
	snprintf(l, sizeof(l), "cause=\"%s\"", fbs_metrics_cause_kind(cause));
	switch (x->outcome) {
	case FBS_R_DONE:
		if (drain)
			count(m, "fabricbus_slurm_drains_total", DRAINS_HELP, l);
		else
			count(m, "fabricbus_slurm_undrains_total", UNDRAINS_HELP, l);
		return;
	case FBS_R_SKIPPED: skip(m, "drain", "foreign_reason", 1); return;
	case FBS_R_GONE: skip(m, "undrain", "gone", 1); return;
	default: skip(m, drain ? "drain" : "undrain", "unknown_node", 1); return;
	}
}

void fbs_metrics_batch(struct fbs_metrics *m, const struct fbs_result *r)
{
	if (m && r->hostlist[0])
		fb_metric_observe(m->update_seconds, r->update_ms / 1e3);
}

void fbs_metrics_held_back(struct fbs_metrics *m, size_t n_capped, size_t n_not_slurm)
{
	if (!m)
		return;
	if (n_capped)
		skip(m, "drain", "cap", n_capped);
	if (n_not_slurm)
		skip(m, "drain", "not_in_slurm", n_not_slurm);
}

void fbs_metrics_collect(struct fbs_metrics *m, const struct fbs_adapter *a)
{
	if (!m)
		return;
	fb_metric_set(m->events, (double)a->events);
	fb_metric_set(m->ignored, (double)a->ignored);
	fb_metric_set(m->unrouted, (double)a->unrouted);
	fb_metric_set(m->published, (double)a->published);
	fb_metric_set(m->publish_drops, (double)a->publish_drops);
	fb_metric_set(m->jobs_reconciled, (double)a->jobs_reconciled);
	fb_metric_set(m->held, a->pol ? (double)fbs_policy_held(a->pol) : 0);
	fb_metric_set(m->queued, (double)a->n_queued);
}
