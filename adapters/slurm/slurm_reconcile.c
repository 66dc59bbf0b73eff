/* slurm_reconcile.c - drop the registrations of jobs Slurm has finished
 * (see slurm_reconcile.h). */
#include "slurm_reconcile.h"

#include "fb_err.h"
#include "fb_http.h"
#include "fb_log.h"
#include "slurm_adapter.h"
#include "slurm_api.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_TIMEOUT_MS 10000
#define MAP_MAX_BYTES (64u << 20)
#define DELETE_TIMEOUT_MS 5000

struct fbs_jobrec {
	struct fbs_adapter *a;
	uint64_t interval_ms;
	struct event *timer, *done_ev;
	pthread_t thread;
	int running;      /* loop: a thread to join */
	atomic_int stop;  /* loop -> thread: stop asking */
	/* the round: the thread's while running, the loop's otherwise */
	uint32_t *ids;
	int *states;      /* enum fbs_job_state per id */
	size_t n;
	int failed;
	char err[256];
	/* ids slurmctld did not know in the last round (sorted) */
	uint32_t *unknown;
	size_t n_unknown;
};

static int id_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

/* "4711" -> 4711; 0 for anything that is no Slurm job number: left alone. */
static uint32_t job_number(const char *s)
{
	uint64_t v = 0;
	if (!*s || strlen(s) > 10)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* The registered job numbers of a /fabric/map document, sorted, unique. */
static int map_jobs(const char *json, size_t len, uint32_t **ids, size_t *n, char *err, size_t errsz)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je), *nodes = json_object_get(root, "Nodes");
	*ids = NULL;
	*n = 0;
	if (!json_is_object(nodes)) {
		json_decref(root);
		return fb_err_set(err, errsz, FB_EMALFORMED, "no Nodes object (%s)",
				  root ? "not a fabric map" : je.text);
	}
	size_t cap = 0;
	const char *name;
	json_t *node;
	json_object_foreach(nodes, name, node) {
		json_t *jobs = json_object_get(node, "Jobs"), *j;
		size_t i;
		json_array_foreach(jobs, i, j) {
			uint32_t id = json_is_string(j) ? job_number(json_string_value(j)) : 0;
			if (!id)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				uint32_t *v = realloc(*ids, cap * sizeof(*v));
				if (!v) {
					json_decref(root);
					return fb_err_set(err, errsz, -ENOMEM, "out of memory");
				}
				*ids = v;
			}
			(*ids)[(*n)++] = id;
		}
	}
	json_decref(root);
	qsort(*ids, *n, sizeof(**ids), id_cmp);
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		if (!k || (*ids)[k - 1] != (*ids)[i])
			(*ids)[k++] = (*ids)[i];
	*n = k;
	return 0;
}

static void *ask_slurm(void *arg)
{
	struct fbs_jobrec *r = arg;
	for (size_t i = 0; i < r->n && !r->failed; i++) {
		if (atomic_load(&r->stop)) {
			r->failed = 1;
			snprintf(r->err, sizeof(r->err), "stopping");
		} else if (fbs_slurm_job_state(r->ids[i], &r->states[i], r->err, sizeof(r->err))) {
			r->failed = 1; /* slurmctld's error: nothing is deleted this round */
		}
	}
	event_active(r->done_ev, 0, 0);
	return NULL;
}

static void round_free(struct fbs_jobrec *r)
{
	free(r->ids);
	free(r->states);
	r->ids = NULL;
	r->states = NULL;
	r->n = 0;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fbs_jobrec *r = arg;
	const struct fbs_config *c = r->a->cfg;
	struct fb_http_resp resp;
	char err[256];
	if (r->running || r->a->phase == FBS_P_STOPPING)
		return;
	memset(&resp, 0, sizeof(resp));
	int rc = fb_http_request_as(&r->a->http.client, c->broker_host, (uint16_t)c->broker_port,
				    "GET", "/fabric/map", NULL, NULL, 0, MAP_TIMEOUT_MS, MAP_MAX_BYTES,
				    &resp, err, sizeof(err));
	if (!rc && resp.status != 200)
		rc = fb_err_set(err, sizeof(err), FB_EMALFORMED, "HTTP %d", resp.status);
	if (!rc)
		rc = map_jobs((const char *)resp.body.data, resp.body.len, &r->ids, &r->n, err,
			      sizeof(err));
	fb_http_resp_free(&resp);
	if (rc) {
		fb_log_warn("job reconciliation: GET /fabric/map from %s:%d: %s; trying again in "
			    "%" PRIu64 " ms", c->broker_host, c->broker_port, err, r->interval_ms);
		fbs_arm(r->timer, r->interval_ms);
		return;
	}
	r->states = r->n ? calloc(r->n, sizeof(*r->states)) : NULL;
	r->failed = 0;
	r->err[0] = '\0';
	if (!r->n || !r->states || (rc = pthread_create(&r->thread, NULL, ask_slurm, r))) {
		if (r->n)
			fb_log_warn("job reconciliation: cannot start its thread (%s); trying again "
				    "later", r->states ? strerror(rc) : "out of memory");
		round_free(r);
		free(r->unknown);
		r->unknown = NULL;
		r->n_unknown = 0;
		fbs_arm(r->timer, r->interval_ms);
		return;
	}
	r->running = 1;
}

/* 0, or -EACCES when the broker refuses our token (the rest would fail alike). */
static int delete_job(struct fbs_jobrec *r, uint32_t id, const char *why)
{
	const struct fbs_config *c = r->a->cfg;
	char path[64], err[256];
	struct fb_http_resp resp;
	snprintf(path, sizeof(path), "/fabric/jobs/%" PRIu32, id);
	int rc = fb_http_request_as(&r->a->http.client, c->broker_host, (uint16_t)c->broker_port,
				    "DELETE", path, NULL, NULL, 0, DELETE_TIMEOUT_MS, 4096, &resp, err,
				    sizeof(err));
	if (rc) {
		fb_log_warn("job %" PRIu32 ": DELETE %s: %s; tried again next round", id, path, err);
		return 0;
	}
	int st = resp.status;
	fb_http_resp_free(&resp);
	if (st == 401 || st == 403) {
		fb_log_warn("job reconciliation: DELETE %s: HTTP %d: BrokerTokenFile needs an Operator "
			    "token to delete registrations; none deleted this round", path, st);
		return -EACCES;
	}
	if (st != 204 && st != 200 && st != 404) {
		fb_log_warn("job %" PRIu32 ": DELETE %s: HTTP %d; tried again next round", id, path, st);
		return 0;
	}
	fb_log_info("job %" PRIu32 ": registration removed from the broker: %s", id, why);
	r->a->jobs_reconciled++;
	return 0;
}

/* Apply what slurmctld said: ended -> delete; unknown twice -> delete. */
static void on_done(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fbs_jobrec *r = arg;
	pthread_join(r->thread, NULL);
	r->running = 0;
	if (r->failed) {
		fb_log_warn("job reconciliation: %s: no registration removed this round", r->err);
	} else {
		size_t k = 0;
		int denied = 0;
		for (size_t i = 0; i < r->n; i++) {
			uint32_t id = r->ids[i];
			if (r->states[i] == FBS_JOB_ENDED) {
				if (!denied)
					denied = delete_job(r, id, "slurmctld says the job has ended "
								   "(its epilog did not remove it)");
			} else if (r->states[i] == FBS_JOB_UNKNOWN) {
				if (!r->n_unknown ||
				    !bsearch(&id, r->unknown, r->n_unknown, sizeof(id), id_cmp))
					r->ids[k++] = id; /* asked again next round */
				else if (!denied)
					denied = delete_job(r, id, "slurmctld has not known the job "
								   "for one JobReconcileInterval");
			}
		}
		free(r->unknown);
		r->unknown = r->ids; /* the unknown ones, sorted, at the front */
		r->n_unknown = k;
		r->ids = NULL;
	}
	round_free(r);
	fbs_arm(r->timer, r->interval_ms);
}

int fbs_jobrec_start(struct fbs_adapter *a, uint64_t interval_ms, struct fbs_jobrec **out)
{
	struct fbs_jobrec *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->a = a;
	r->interval_ms = interval_ms;
	r->timer = event_new(a->base, -1, 0, on_timer, r);
	r->done_ev = event_new(a->base, -1, 0, on_done, r);
	if (!r->timer || !r->done_ev) {
		fbs_jobrec_free(r);
		return -ENOMEM;
	}
	fbs_arm(r->timer, interval_ms);
	fb_log_info("job registrations reconciled with slurmctld every %" PRIu64 " ms "
		    "(JobReconcileInterval)", interval_ms);
	*out = r;
	return 0;
}

void fbs_jobrec_free(struct fbs_jobrec *r)
{
	if (!r)
		return;
	atomic_store(&r->stop, 1);
	if (r->running)
		pthread_join(r->thread, NULL);
	if (r->timer)
		event_free(r->timer);
	if (r->done_ev)
		event_free(r->done_ev);
	round_free(r);
	free(r->unknown);
	free(r);
}
