/* fabric_events.c - how an application hears about the fabric from
 * fabricbus-pmix: a plain PMIx client (no MPI) that registers a handler for
 * the fabric event code and prints the fabricbus.* info keys (docs/pmix.md).
 *
 *   srun --mpi=pmix -n2 fabric_events --count 1 --timeout 60
 *
 * --code N       the event code to register for (default PMIX_FABRIC_UPDATED;
 *                a site using Code= in fabricbus-pmix gives the same number)
 * --count N      exit 0 after N events (0: wait for --timeout, then exit 0)
 * --timeout S    give up after S seconds (exit 3 when --count was not reached)
 * --no-handler   register nothing: a PMIx client that ignores fabric events
 *
 * Build: cc fabric_events.c $(pkg-config --cflags --libs pmix)
 */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int seen;

static void print_value(const pmix_info_t *in)
{
	const pmix_value_t *v = &in->value;
	if (v->type == PMIX_STRING)
		printf(" %s=%s", in->key, v->data.string ? v->data.string : "");
	else if (v->type == PMIX_UINT64)
		printf(" %s=%llu", in->key, (unsigned long long)v->data.uint64);
	else if (v->type == PMIX_TIME)
		printf(" %s=%lld", in->key, (long long)v->data.time);
	else if (v->type == PMIX_BOOL)
		printf(" %s=%s", in->key, v->data.flag ? "true" : "false");
	else if (v->type == PMIX_DATA_ARRAY && v->data.darray && v->data.darray->type == PMIX_PROC) {
		const pmix_proc_t *p = v->data.darray->array;
		printf(" %s=", in->key);
		for (size_t i = 0; i < v->data.darray->size; i++)
			printf("%s%u", i ? "," : "", p[i].rank);
	}
}

/* Runs on the PMIx progress thread: print, count, and hand the event on. */
static void on_fabric(size_t id, pmix_status_t status, const pmix_proc_t *source,
		      pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
		      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
	(void)id, (void)results, (void)nresults;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	printf("fabric_events: rank %u: event %d from %s:%u at %lld.%09ld:", me.rank, status,
	       source ? source->nspace : "?", source ? source->rank : 0, (long long)now.tv_sec,
	       now.tv_nsec);
	for (size_t i = 0; i < ninfo; i++)
		if (strncmp(info[i].key, "fabricbus.", 10) == 0 ||
		    PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) ||
		    PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TIMESTAMP) ||
		    PMIX_CHECK_KEY(&info[i], PMIX_EVENT_NON_DEFAULT) ||
		    PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS))
			print_value(&info[i]);
	printf("\n");
	fflush(stdout);
	pthread_mutex_lock(&mu);
	seen++;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	if (cbfunc)
		cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(int argc, char **argv)
{
	pmix_status_t code = PMIX_FABRIC_UPDATED;
	int count = 0, timeout = 60, handler = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--code") && i + 1 < argc)
			code = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-handler"))
			handler = 0;
		else {
			fprintf(stderr, "usage: %s [--code N] [--count N] [--timeout S] [--no-handler]\n",
				argv[0]);
			return 2;
		}
	}
	pmix_status_t rc = PMIx_Init(&me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		fprintf(stderr, "fabric_events: PMIx_Init: %s (run under srun --mpi=pmix or a PMIx server)\n",
			PMIx_Error_string(rc));
		return 1;
	}
	/* One code per registration: a registration that includes a code the
	 * host refuses (Slurm: PMIX_EVENT_NODE_DOWN) fails as a whole. A NULL
	 * callback makes the call blocking; it returns the handler id. */
	if (handler) {
		rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_fabric, NULL, NULL);
		if (rc < 0) {
			fprintf(stderr, "fabric_events: rank %u: cannot register for event %d: %s\n",
				me.rank, code, PMIx_Error_string(rc));
			PMIx_Finalize(NULL, 0);
			return 1;
		}
	}
	printf("fabric_events: rank %u of %s ready (%s %d)\n", me.rank, me.nspace,
	       handler ? "handler for" : "no handler, code", code);
	fflush(stdout);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout;
	pthread_mutex_lock(&mu);
	while ((count == 0 || seen < count) &&
	       pthread_cond_timedwait(&cv, &mu, &until) == 0)
		;
	int got = seen;
	pthread_mutex_unlock(&mu);
	printf("fabric_events: rank %u done, %d event(s)\n", me.rank, got);
	fflush(stdout);
	PMIx_Finalize(NULL, 0);
	return (count && got < count) ? 3 : 0;
}
