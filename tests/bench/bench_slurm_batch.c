/* bench_slurm_batch.c - one batched drain + undrain of N nodes against N
 * single-node drains + undrains, through the adapter's actuator code
 * (fbs_actuator_run: read the nodes, filter, slurm_update_node, read the
 * running jobs), against the slurmctld that SLURM_CONF names.
 *
 * Usage: SLURM_CONF=... bench_slurm_batch [NODES [ROUNDS]]   (default 100 3)
 * The nodes are node001..node<NODES>; nodes without slurmd (UNKNOWN) accept
 * DRAIN, and an UNDRAIN that Slurm reports failed but applied counts as done
 * (the actuator checks). Prints "name: value unit" lines and a "ratio:" line
 * (median of ROUNDS each); asserts no timing. Started by bench_slurm.sh. */
#include "fb_log.h"
#include "slurm_actuator.h"
#include "slurm_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REASON "fabric: bench_slurm_batch (EventId 1)"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run one batch of nodes [first, first + n); 0, or -1 (printed). */
static int run(const struct fbs_actuator_cfg *c, uint8_t action, unsigned first, unsigned n,
	       double *update_ms)
{
	struct fbs_batch b;
	struct fbs_result r;
	char err[512];
	memset(&b, 0, sizeof(b));
	b.action = action;
	snprintf(b.reason, sizeof(b.reason), "%s", REASON);
	b.event_id = 1;
	b.n = n;
	if (!(b.t = calloc(n, sizeof(*b.t))))
		return -1;
	for (unsigned i = 0; i < n; i++)
		snprintf(b.t[i].node, sizeof(b.t[i].node), "node%03u", first + i);
	int rc = fbs_actuator_run(c, FBS_J_BATCH, &b, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench_slurm_batch: %s\n", err);
	} else {
		for (size_t i = 0; i < r.n; i++)
			if (r.r[i].outcome != FBS_R_DONE) {
				fprintf(stderr, "bench_slurm_batch: %s: outcome %d (reason '%s')\n",
					r.r[i].node, r.r[i].outcome, r.r[i].reason);
				rc = -1;
			}
		*update_ms += r.update_ms;
		fbs_result_free(&r);
	}
	fbs_batch_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned nodes = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	if (nodes < 1 || nodes > 999 || rounds < 1 || rounds > 100) {
		fprintf(stderr, "usage: bench_slurm_batch [NODES 1..999 [ROUNDS 1..100]]\n");
		return 2;
	}
	fb_log_init("bench_slurm_batch", 0, FB_LOG_WARN);
	fbs_slurm_init();
	struct fbs_actuator_cfg c;
	memset(&c, 0, sizeof(c));
	snprintf(c.reason_prefix, sizeof(c.reason_prefix), "fabric:");
	c.retry_ms = 1000;
	double *batched = calloc((size_t)rounds, sizeof(double));
	double *single = calloc((size_t)rounds, sizeof(double));
	double upd_b = 0, upd_s = 0;
	int rc = batched && single ? 0 : 1;
	for (int k = 0; !rc && k < rounds; k++) {
		double t0 = now_ms();
		rc |= run(&c, FBS_A_DRAIN, 1, nodes, &upd_b) | run(&c, FBS_A_UNDRAIN, 1, nodes, &upd_b);
		double t1 = now_ms();
		for (unsigned i = 1; !rc && i <= nodes; i++)
			rc |= run(&c, FBS_A_DRAIN, i, 1, &upd_s);
		for (unsigned i = 1; !rc && i <= nodes; i++)
			rc |= run(&c, FBS_A_UNDRAIN, i, 1, &upd_s);
		double t2 = now_ms();
		batched[k] = t1 - t0;
		single[k] = t2 - t1;
	}
	if (!rc) {
		double b = median(batched, rounds), s = median(single, rounds);
		printf("nodes: %u nodes\n", nodes);
		printf("rounds: %d rounds\n", rounds);
		printf("batched_drain_undrain: %.1f ms\n", b);
		printf("single_drain_undrain: %.1f ms\n", s);
		printf("batched_update_calls: %.2f ms\n", upd_b / rounds);
		printf("single_update_calls: %.2f ms\n", upd_s / rounds);
		printf("single_per_node: %.2f ms\n", s / nodes);
		printf("ratio: %.1f (single-node calls / one batched call, drain + undrain of %u nodes)\n",
		       b > 0 ? s / b : 0.0, nodes);
	}
	free(batched);
	free(single);
	fbs_slurm_fini();
	return rc ? 1 : 0;
}
