/* pmix_notify.c - PMIx_Notify_event for one note (pmix_notify.h). */
#include "pmix_notify.h"

#include "fb_err.h"

#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The completion callback may come after we stopped waiting, and runs on
 * PMIx's progress thread: the waiter and the callback each hold a reference,
 * and whichever drops the last one frees (with the info PMIx read). */
struct wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, refs;
	pmix_status_t status;
	pmix_info_t *info;
	size_t ninfo;
};

static void wait_free(struct wait *w)
{
	PMIX_INFO_FREE(w->info, w->ninfo);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}

static void wait_release(struct wait *w)
{
	pthread_mutex_lock(&w->mu);
	int left = --w->refs;
	pthread_mutex_unlock(&w->mu);
	if (left == 0)
		wait_free(w);
}

static void op_done(pmix_status_t status, void *cbdata)
{
	struct wait *w = cbdata;
	pthread_mutex_lock(&w->mu);
	w->status = status;
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	wait_release(w);
}

/* The processes of nspace on the note's nodes, as a PMIx array (NULL: none). */
static pmix_proc_t *affected_procs(const struct fbp_note *n, const char *nspace, size_t *np)
{
	pmix_proc_t *all = NULL;
	*np = 0;
	if (!nspace || !nspace[0])
		return NULL;
	for (size_t i = 0; i < n->n_nodes; i++) {
		pmix_proc_t *p = NULL;
		size_t k = 0;
		if (PMIx_Resolve_peers(n->nodes[i], nspace, &p, &k) != PMIX_SUCCESS || !k)
			continue;
		pmix_proc_t *grown = realloc(all, (*np + k) * sizeof(*all));
		if (grown) {
			all = grown;
			memcpy(all + *np, p, k * sizeof(*p));
			*np += k;
		}
		PMIX_PROC_FREE(p, k);
	}
	return all;
}

static void load_procs(pmix_info_t *info, const char *key, const pmix_proc_t *procs, size_t np)
{
	pmix_data_array_t da;
	da.type = PMIX_PROC;
	da.size = np;
	da.array = (void *)procs;
	PMIX_INFO_LOAD(info, key, &da, PMIX_DATA_ARRAY); /* deep copy */
}

int fbp_notify(const struct fbp_note *n, const char *nspace, int timeout_ms, size_t *nprocs,
	       char *err, size_t errsz)
{
	size_t np = 0;
	pmix_proc_t *procs = affected_procs(n, nspace, &np);
	if (nprocs)
		*nprocs = np;
	if (n->range == FBP_RANGE_NODES && !np)
		return fb_err_set(err, errsz, -ENOENT,
				  "no processes of %s on the affected nodes", nspace ? nspace : "?");
	struct wait *w = calloc(1, sizeof(*w));
	if (!w) {
		free(procs);
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->refs = 2; /* ours, and op_done's */
	char nodes[FBP_NODES_MAX * 65];
	fbp_note_nodes_joined(n, nodes, sizeof(nodes));
	w->ninfo = 9 + (np ? 1 : 0) + (n->range == FBP_RANGE_NODES ? 1 : 0);
	PMIX_INFO_CREATE(w->info, w->ninfo);
	bool yes = true;
	time_t ts = (time_t)n->timestamp;
	uint64_t eid = n->event_id;
	pmix_info_t *in = w->info;
	PMIX_INFO_LOAD(&in[0], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
	PMIX_INFO_LOAD(&in[1], PMIX_EVENT_TEXT_MESSAGE, n->message, PMIX_STRING);
	PMIX_INFO_LOAD(&in[2], PMIX_EVENT_TIMESTAMP, &ts, PMIX_TIME);
	PMIX_INFO_LOAD(&in[3], FBP_KEY_MESSAGE_ID, n->message_id, PMIX_STRING);
	PMIX_INFO_LOAD(&in[4], FBP_KEY_ORIGIN, n->origin, PMIX_STRING);
	PMIX_INFO_LOAD(&in[5], FBP_KEY_SEVERITY, n->severity, PMIX_STRING);
	PMIX_INFO_LOAD(&in[6], FBP_KEY_EVENT_ID, &eid, PMIX_UINT64);
	PMIX_INFO_LOAD(&in[7], FBP_KEY_KIND, n->kind, PMIX_STRING);
	PMIX_INFO_LOAD(&in[8], FBP_KEY_NODES, nodes, PMIX_STRING);
	size_t k = 9;
	if (np)
		load_procs(&in[k++], PMIX_EVENT_AFFECTED_PROCS, procs, np);
	if (n->range == FBP_RANGE_NODES)
		load_procs(&in[k++], PMIX_EVENT_CUSTOM_RANGE, procs, np);
	free(procs);
	pmix_data_range_t range = n->range == FBP_RANGE_NODES ? PMIX_RANGE_CUSTOM : PMIX_RANGE_SESSION;
	if (timeout_ms == FBP_NOTIFY_BLOCKING) {
		/* A tool's non-blocking notify calls its callback twice in OpenPMIx
		 * 4.2.2 (once for the local handlers, once on the server's reply),
		 * so the state the callback reads could never be freed safely. */
		pmix_status_t brc = PMIx_Notify_event(n->code, NULL, range, w->info, w->ninfo, NULL, NULL);
		wait_free(w);
		if (brc == PMIX_SUCCESS || brc == PMIX_OPERATION_SUCCEEDED)
			return 0;
		return fb_err_set(err, errsz, -EIO,
				  "PMIx_Notify_event: %s", PMIx_Error_string(brc));
	}
	pmix_status_t rc = PMIx_Notify_event(n->code, NULL, range, w->info, w->ninfo, op_done, w);
	if (rc != PMIX_SUCCESS) { /* op_done will not be called */
		wait_free(w);
		if (rc == PMIX_OPERATION_SUCCEEDED)
			return 0;
		return fb_err_set(err, errsz, -EIO, "PMIx_Notify_event: %s", PMIx_Error_string(rc));
	}
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &until) == 0)
		;
	int done = w->done;
	pmix_status_t st = w->status;
	pthread_mutex_unlock(&w->mu);
	wait_release(w);
	if (!done)
		return fb_err_set(err, errsz, -ETIMEDOUT,
				  "PMIx_Notify_event: no completion within %d ms", timeout_ms);
	if (st != PMIX_SUCCESS && st != PMIX_OPERATION_SUCCEEDED)
		return fb_err_set(err, errsz, -EIO,
				  "PMIx_Notify_event completed with %s", PMIx_Error_string(st));
	return 0;
}
