/* loopq.c - see loopq.h. Two singly linked lists under one mutex: in
 * (submitted, not run) and done (run, not taken). */
#include "loopq.h"

#include "fb_err.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct fb_loopq {
	struct event *ev;
	size_t max;
	pthread_mutex_t mu;
	struct fb_loop_call *in, **in_tail, *done, **done_tail;
	size_t in_flight;
	void (*wake)(void *);
	void *wake_arg;
};

static void run_cb(evutil_socket_t fd, short what, void *arg);

struct fb_loopq *fb_loopq_new(struct event_base *base, size_t max_in_flight)
{
	struct fb_loopq *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_mutex_init(&q->mu, NULL);
	q->max = max_in_flight;
	q->in_tail = &q->in;
	q->done_tail = &q->done;
	/* Priority 0, like the agent sockets: a request waits for one pass. */
	if (base && (!(q->ev = event_new(base, -1, 0, run_cb, q)) || event_priority_set(q->ev, 0) != 0)) {
		fb_loopq_free(q);
		return NULL;
	}
	return q;
}

static void free_list(struct fb_loop_call *c)
{
	while (c) {
		struct fb_loop_call *next = c->next;
		c->free(c);
		c = next;
	}
}

void fb_loopq_free(struct fb_loopq *q)
{
	if (!q)
		return;
	if (q->ev)
		event_free(q->ev);
	free_list(q->in);
	free_list(q->done);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static void run_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_loopq *q = arg;
	pthread_mutex_lock(&q->mu);
	struct fb_loop_call *calls = q->in;
	q->in = NULL;
	q->in_tail = &q->in;
	pthread_mutex_unlock(&q->mu);
	if (!calls)
		return;
	struct fb_loop_call *last = calls;
	for (struct fb_loop_call *c = calls; c; c = c->next) {
		c->run(c);
		last = c;
	}
	pthread_mutex_lock(&q->mu);
	*q->done_tail = calls;
	q->done_tail = &last->next;
	if (q->wake)
		q->wake(q->wake_arg); /* under mu: the waker cannot go away meanwhile */
	pthread_mutex_unlock(&q->mu);
}

int fb_loopq_submit(struct fb_loopq *q, struct fb_loop_call *c)
{
	if (!q->ev)
		return -ENOTSUP;
	pthread_mutex_lock(&q->mu);
	int full = q->in_flight >= q->max;
	if (!full) {
		c->next = NULL;
		*q->in_tail = c;
		q->in_tail = &c->next;
		q->in_flight++;
	}
	pthread_mutex_unlock(&q->mu);
	if (full)
		return FB_EFULL;
	event_active(q->ev, 0, 0);
	return 0;
}

struct fb_loop_call *fb_loopq_take_done(struct fb_loopq *q)
{
	pthread_mutex_lock(&q->mu);
	struct fb_loop_call *c = q->done;
	if (c) {
		q->done = c->next;
		if (!q->done)
			q->done_tail = &q->done;
		q->in_flight--;
		c->next = NULL;
	}
	pthread_mutex_unlock(&q->mu);
	return c;
}

void fb_loopq_set_waker(struct fb_loopq *q, void (*wake)(void *), void *arg)
{
	pthread_mutex_lock(&q->mu);
	q->wake = wake;
	q->wake_arg = arg;
	pthread_mutex_unlock(&q->mu);
}
