/* slurm_metrics.h - fabricbus-slurm's Prometheus series (served with
 * --metrics ADDR:PORT, fb_metrics_http.h), all updated on the loop.
 *
 * Causes are labelled by their kind (link_down, link_degraded,
 * link_flapping, error_rate, congestion, switch, other), never by the
 * cause text, which names a port and would make one series per port.
 */
#ifndef FBS_METRICS_H
#define FBS_METRICS_H

#include <stddef.h>

struct fb_metrics;
struct fbs_metrics;
struct fbs_adapter;
struct fbs_node_result;
struct fbs_result;

/* Registers the fixed series in r; NULL on ENOMEM. */
struct fbs_metrics *fbs_metrics_new(struct fb_metrics *r);
void fbs_metrics_free(struct fbs_metrics *m);
/* One node's outcome of a drain (drain=1) or undrain batch; cause is the
 * condition's text ("link down leaf1/3"). m NULL: nothing. */
void fbs_metrics_node(struct fbs_metrics *m, int drain, const struct fbs_node_result *x,
		      const char *cause);
/* A batch's result came back (its Slurm update time). */
void fbs_metrics_batch(struct fbs_metrics *m, const struct fbs_result *r);
/* Drains the policy did not send: n_capped kept by the cap, n_not_slurm
 * unknown to slurmctld (counted when first found). */
void fbs_metrics_held_back(struct fbs_metrics *m, size_t n_capped, size_t n_not_slurm);
/* Before a scrape: the adapter's counts. */
void fbs_metrics_collect(struct fbs_metrics *m, const struct fbs_adapter *a);
/* The cause kind of a cause text (static string). */
const char *fbs_metrics_cause_kind(const char *cause);

#endif
