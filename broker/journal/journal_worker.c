/* journal_worker.c - the journal's sync thread (journal_worker.h). The mutex
 * is the hand-over: everything the loop did to the journal before start
 * happens before the thread's write, and everything the thread did happens
 * before the loop's take. */
#include "journal_worker.h"

#include "journal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct fb_jworker {
	struct fb_journal *j;
	void (*notify)(void *arg);
	void *arg;
	pthread_t thread;
	int busy; /* loop only */
	pthread_mutex_t mu;
	pthread_cond_t cv; /* job posted, done set, or stop */
	int job, sync, done, rc, stop; /* under mu */
};

static void *worker_main(void *arg)
{
	struct fb_jworker *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->job && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->job)
			break;
		int sync = w->sync;
		pthread_mutex_unlock(&w->mu);
		int rc = fb_journal_write(w->j);
		if (!rc && sync)
			rc = fb_journal_sync(w->j);
		pthread_mutex_lock(&w->mu);
		w->job = 0;
		w->done = 1;
		w->rc = rc;
		pthread_cond_broadcast(&w->cv);
		/* Under mu: fb_jworker_free cannot run between done and notify,
		 * so notify never sees a freed arg. */
		w->notify(w->arg);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int fb_jworker_new(struct fb_journal *j, void (*notify)(void *arg), void *arg,
		   struct fb_jworker **out)
{
	*out = NULL;
	struct fb_jworker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->j = j;
	w->notify = notify;
	w->arg = arg;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	int e = pthread_create(&w->thread, NULL, worker_main, w);
	if (e) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return -e;
	}
	*out = w;
	return 0;
}

void fb_jworker_free(struct fb_jworker *w)
{
	if (!w)
		return;
	int rc;
	(void)fb_jworker_wait(w, &rc);
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

int fb_jworker_start(struct fb_jworker *w, int sync)
{
	if (w->busy)
		return -EBUSY;
	int rc = fb_journal_stage(w->j);
	if (rc)
		return rc;
	pthread_mutex_lock(&w->mu);
	w->job = 1;
	w->sync = sync;
	w->done = 0;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	w->busy = 1;
	return 0;
}

int fb_jworker_busy(const struct fb_jworker *w) { return w->busy; }

static int take_locked(struct fb_jworker *w, int *rc)
{
	if (!w->done)
		return 0;
	w->done = 0;
	w->busy = 0;
	*rc = w->rc;
	return 1;
}

int fb_jworker_take(struct fb_jworker *w, int *rc)
{
	if (!w->busy)
		return 0;
	pthread_mutex_lock(&w->mu);
	int got = take_locked(w, rc);
	pthread_mutex_unlock(&w->mu);
	return got;
}

int fb_jworker_wait(struct fb_jworker *w, int *rc)
{
	if (!w->busy)
		return 0;
	pthread_mutex_lock(&w->mu);
	while (!w->done)
		pthread_cond_wait(&w->cv, &w->mu);
	int got = take_locked(w, rc);
	pthread_mutex_unlock(&w->mu);
	return got;
}
