/* slurm_actuator.c - the Slurm thread: a FIFO of jobs, run in order, retried until done. */
#include "slurm_actuator.h"

#include "fb_err.h"
#include "fb_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct job {
	struct job *next;
	uint8_t type;
	struct fbs_batch b;
};

struct res {
	struct res *next;
	struct fbs_result r;
};

struct fbs_actuator {
	struct fbs_actuator_cfg cfg;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *head, **tail;   /* jobs, under mu */
	struct res *rhead, **rtail; /* results, under mu */
	size_t backlog;             /* jobs queued or running, under mu */
	int stop;                   /* under mu */
	struct event *result_ev;    /* loop thread's; activated from the actuator */
	fbs_result_fn on_result;
	void *arg;
};

void fbs_result_free(struct fbs_result *r)
{
	free(r->r);
	fbs_snodes_free(&r->nodes);
	memset(r, 0, sizeof(*r));
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* What to do with each target, from what Slurm holds now. Returns how many
 * go into the update; their names are put in names[]. */
static size_t sort_targets(const struct fbs_actuator_cfg *c, const struct fbs_batch *b,
			   const struct fbs_snodes *sn, struct fbs_result *r, const char **names)
{
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		struct fbs_node_result *x = &r->r[i];
		const struct fbs_snode *s = fbs_snodes_find(sn, b->t[i].node);
		snprintf(x->node, sizeof(x->node), "%s", b->t[i].node);
		if (!s) {
			x->outcome = FBS_R_UNKNOWN;
			continue;
		}
		snprintf(x->reason, sizeof(x->reason), "%s", s->reason);
		x->drained = s->drained;
		int ours = fbs_reason_is_ours(c->reason_prefix, s->reason);
		if (b->action == FBS_A_DRAIN && s->reason[0] && !ours) {
			x->outcome = FBS_R_SKIPPED;
			continue;
		}
		if (b->action == FBS_A_UNDRAIN && !c->dry_run && !(s->drained && ours)) {
			x->outcome = FBS_R_GONE;
			continue;
		}
		x->outcome = FBS_R_DONE;
		names[k++] = x->node;
	}
	return k;
}

/* After a failed update (why in err): did Slurm apply it anyway? */
static int applied(const struct fbs_actuator_cfg *c, const struct fbs_batch *b,
		   const char *const *names, size_t k, const char *err)
{
	struct fbs_snodes sn;
	char why[256];
	if (fbs_slurm_load_nodes(NULL, &sn, why, sizeof(why)))
		return 0;
	int all = 1;
	for (size_t i = 0; i < k && all; i++) {
		const struct fbs_snode *s = fbs_snodes_find(&sn, names[i]);
		if (b->action == FBS_A_DRAIN)
			all = s && s->drained && strcmp(s->reason, b->reason) == 0;
		else
			all = !s || !s->drained || !fbs_reason_is_ours(c->reason_prefix, s->reason);
	}
	fbs_snodes_free(&sn);
	if (all)
		fb_log_debug("%s (Slurm applied it all the same, as it does for nodes without "
			     "slurmd)", err);
	return all;
}

static void read_jobs(struct fbs_result *r, const struct fbs_batch *b)
{
	const char **names = calloc(b->n ? b->n : 1, sizeof(*names));
	char (*jobs)[FB_JOBS_MAX] = calloc(b->n ? b->n : 1, sizeof(*jobs));
	size_t k = 0;
	if (!names || !jobs) {
		snprintf(r->jobs_err, sizeof(r->jobs_err), "out of memory");
	} else {
		for (size_t i = 0; i < b->n; i++)
			if (r->r[i].outcome != FBS_R_UNKNOWN)
				names[k++] = r->r[i].node;
		if (k && fbs_slurm_jobs(names, k, jobs, r->jobs_err, sizeof(r->jobs_err)) == 0) {
			for (size_t i = 0, j = 0; i < b->n; i++)
				if (r->r[i].outcome != FBS_R_UNKNOWN)
					memcpy(r->r[i].jobs, jobs[j++], FB_JOBS_MAX);
		}
	}
	free(names);
	free(jobs);
}

static int run_batch(const struct fbs_actuator_cfg *c, const struct fbs_batch *b,
		     struct fbs_result *r, char *err, size_t errsz)
{
	struct fbs_snodes sn;
	if (fbs_slurm_load_nodes(c->cap_partition, &sn, err, errsz))
		return -1;
	r->cap_base = sn.cap_base;
	r->cap_partition_missing = sn.cap_partition_missing;
	const char **names = calloc(b->n ? b->n : 1, sizeof(*names));
	if (!(r->r = calloc(b->n ? b->n : 1, sizeof(*r->r))) || !names) {
		free(names);
		fbs_snodes_free(&sn);
		return fb_err_set(err, errsz, -1, "out of memory");
	}
	r->n = b->n;
	size_t k = sort_targets(c, b, &sn, r, names);
	r->nodes = sn; /* the adapter refreshes its list of Slurm nodes from it */
	int rc = 0;
	if (k) {
		char *hl = fbs_slurm_hostlist(names, k);
		if (!hl) {
			rc = fb_err_set(err, errsz, -1, "out of memory");
		} else {
			snprintf(r->hostlist, sizeof(r->hostlist), "%s", hl);
			struct timespec t0;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (!c->dry_run &&
			    fbs_slurm_update(hl, b->action == FBS_A_DRAIN, b->reason, err, errsz) &&
			    !applied(c, b, names, k, err))
				rc = -1;
			r->update_ms = ms_since(&t0);
			free(hl);
		}
	}
	free(names);
	if (rc)
		return rc;
	read_jobs(r, b);
	return 0;
}

int fbs_actuator_run(const struct fbs_actuator_cfg *c, uint8_t type, const struct fbs_batch *b,
		     struct fbs_result *r, char *err, size_t errsz)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	int rc;
	if (type == FBS_J_RECONCILE) {
		rc = fbs_slurm_load_nodes(c->cap_partition, &r->nodes, err, errsz);
		r->cap_base = r->nodes.cap_base;
		r->cap_partition_missing = r->nodes.cap_partition_missing;
	} else {
		r->batch_id = b->id;
		r->action = b->action;
		rc = run_batch(c, b, r, err, errsz);
	}
	if (rc)
		fbs_result_free(r);
	return rc;
}

/* ---- the thread --------------------------------------------------------------- */

static void deliver(struct fbs_actuator *a, struct res *x)
{
	pthread_mutex_lock(&a->mu);
	*a->rtail = x;
	a->rtail = &x->next;
	pthread_mutex_unlock(&a->mu);
	event_active(a->result_ev, EV_READ, 0);
}

/* CLOCK_REALTIME in ms from now: what pthread_cond_timedwait and
 * pthread_timedjoin_np wait until. */
static struct timespec deadline_after(uint64_t ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return until;
}

/* Wait for retry_ms or stop. Returns 1 if stopping. */
static int pause_retry(struct fbs_actuator *a)
{
	struct timespec until = deadline_after(a->cfg.retry_ms);
	pthread_mutex_lock(&a->mu);
	while (!a->stop && pthread_cond_timedwait(&a->cv, &a->mu, &until) != ETIMEDOUT)
		;
	int stop = a->stop;
	pthread_mutex_unlock(&a->mu);
	return stop;
}

static const char *job_name(const struct job *j)
{
	if (j->type == FBS_J_RECONCILE)
		return "reading the nodes";
	return j->b.action == FBS_A_DRAIN ? "drain" : "undrain";
}

/* Run j until it succeeds or we are stopped. Returns its result, or NULL. */
static struct res *run_until_done(struct fbs_actuator *a, struct job *j)
{
	struct res *x = calloc(1, sizeof(*x));
	char err[512], first[512] = "";
	unsigned attempts = 0;
	if (!x)
		return NULL;
	for (;;) {
		attempts++;
		if (fbs_actuator_run(&a->cfg, j->type, &j->b, &x->r, err, sizeof(err)) == 0)
			break;
		if (attempts == 1) {
			snprintf(first, sizeof(first), "%s", err);
			fb_log_warn("slurm: %s (batch %llu) failed: %s; kept pending, retrying every "
				    "%llu ms (is slurmctld up? SLURM_CONF=%s)", job_name(j),
				    (unsigned long long)j->b.id, err,
				    (unsigned long long)a->cfg.retry_ms,
				    getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "(default)");
		} else if (strcmp(err, first) != 0) {
			snprintf(first, sizeof(first), "%s", err);
			fb_log_warn("slurm: %s (batch %llu) still failing, now: %s", job_name(j),
				    (unsigned long long)j->b.id, err);
		}
		if (pause_retry(a)) {
			free(x);
			return NULL;
		}
	}
	if (attempts > 1)
		fb_log_info("slurm: %s (batch %llu) went through after %u attempts: slurmctld "
			    "answers again", job_name(j), (unsigned long long)j->b.id, attempts);
	x->r.attempts = attempts;
	return x;
}

static void *thread_main(void *arg)
{
	struct fbs_actuator *a = arg;
	for (;;) {
		pthread_mutex_lock(&a->mu);
		while (!a->stop && !a->head)
			pthread_cond_wait(&a->cv, &a->mu);
		struct job *j = a->stop ? NULL : a->head;
		pthread_mutex_unlock(&a->mu);
		if (!j)
			return NULL;
		struct res *x = run_until_done(a, j);
		pthread_mutex_lock(&a->mu);
		if (x) { /* done: only now does it leave the FIFO */
			a->head = j->next;
			if (!a->head)
				a->tail = &a->head;
			a->backlog--;
		}
		pthread_mutex_unlock(&a->mu);
		if (!x)
			return NULL; /* stopped: the job stays pending in the state file */
		fbs_batch_free(&j->b);
		free(j);
		deliver(a, x);
	}
}

static void on_results(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fbs_actuator *a = arg;
	pthread_mutex_lock(&a->mu);
	struct res *list = a->rhead;
	a->rhead = NULL;
	a->rtail = &a->rhead;
	pthread_mutex_unlock(&a->mu);
	while (list) {
		struct res *next = list->next;
		a->on_result(a->arg, &list->r);
		fbs_result_free(&list->r);
		free(list);
		list = next;
	}
}

int fbs_actuator_start(const struct fbs_actuator_cfg *c, struct event_base *base,
		       fbs_result_fn on_result, void *arg, struct fbs_actuator **out)
{
	struct fbs_actuator *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->cfg = *c;
	a->tail = &a->head;
	a->rtail = &a->rhead;
	a->on_result = on_result;
	a->arg = arg;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (!(a->result_ev = event_new(base, -1, 0, on_results, a))) {
		free(a);
		return -ENOMEM;
	}
	int rc = pthread_create(&a->thread, NULL, thread_main, a);
	if (rc) {
		event_free(a->result_ev);
		free(a);
		return -rc;
	}
	*out = a;
	return 0;
}

int fbs_actuator_submit(struct fbs_actuator *a, uint8_t type, const struct fbs_batch *b)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->type = type;
	if (b) {
		j->b = *b;
		if (!(j->b.t = malloc((b->n ? b->n : 1) * sizeof(*b->t)))) {
			free(j);
			return -ENOMEM;
		}
		memcpy(j->b.t, b->t, b->n * sizeof(*b->t));
	}
	pthread_mutex_lock(&a->mu);
	*a->tail = j;
	a->tail = &j->next;
	a->backlog++;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

size_t fbs_actuator_backlog(struct fbs_actuator *a)
{
	pthread_mutex_lock(&a->mu);
	size_t n = a->backlog;
	pthread_mutex_unlock(&a->mu);
	return n;
}

int fbs_actuator_stop(struct fbs_actuator *a, int wait_ms)
{
	if (!a)
		return 0;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	struct timespec until = deadline_after(wait_ms > 0 ? (uint64_t)wait_ms : 0);
	if (pthread_timedjoin_np(a->thread, NULL, &until) != 0)
		return -ETIMEDOUT;
	event_free(a->result_ev);
	for (struct job *j = a->head, *n; j; j = n) {
		n = j->next;
		fbs_batch_free(&j->b);
		free(j);
	}
	for (struct res *x = a->rhead, *n; x; x = n) {
		n = x->next;
		fbs_result_free(&x->r);
		free(x);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
	return 0;
}
