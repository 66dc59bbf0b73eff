/* commit.c - group commit: journal write, sync, acks, fan-out.
 *
 * Reads append to the journal buffer and to the pending batch; the commit
 * event has a lower priority than the connections, so it runs once every
 * readable agent has been served in this loop iteration. That makes one
 * write(2) and one fdatasync cover many agents' frames (group commit), which
 * is how durability stays cheap at high rates.
 *
 * JournalSync=batch    write, fdatasync, then ack and publish.
 * JournalSync=interval write now; the sync timer fdatasyncs every
 *                      JournalSyncInterval, then acks and publishes.
 * JournalSync=none     write, then ack and publish (durable against a
 *                      broker crash, not against power loss).
 *
 * The write and the fdatasync run on the journal's sync thread
 * (journal_worker.h), one job at a time, pipelined: a commit seals the
 * pending batches and takes the owed acks as (agent, seq) pairs into the job,
 * and while the thread writes and syncs them the loop goes on reading and
 * appending the next ones. When the thread is done (jdone_ev, back on the
 * loop) the job's acks go out and its batches are published, in EventId
 * order, and the next job starts with whatever has come in meanwhile. So an
 * ack still never precedes the sync of its events: the job's seq for an
 * agent is its stored_seq when the job was staged, and everything appended
 * up to then is in the job's write. Ownership: every field below is the
 * loop's; the sync thread touches only the journal's write side, which the
 * loop leaves alone while a job is in flight (fb_jworker_busy): retention
 * waits for the job (retain_due) and the stall retry runs only when idle.
 *
 * "Publish" is a call to every registered output (output.h). An output that
 * falls behind says so (FB_OUTPUT_BUSY): the broker then stops reading its
 * agents until the output is ready again, so the agents wait instead of the
 * output dropping events or subscribers.
 *
 * A journal that cannot be written (disk full, quota, I/O error) stalls
 * instead of stopping the broker: the journal keeps the records in memory
 * and leaves no torn bytes on disk (journal.h), the broker acks nothing more
 * and stops reading agents (they keep their unacked events), and retries
 * every JOURNAL_RETRY_MS until the write and sync succeed; then it acks and
 * publishes everything at once and reads the agents again.
 */
#include "broker.h"

#include "fb_err.h"
#include "fb_log.h"
#include "journal.h"
#include "journal_worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An ack a job owes: a's events up to seq are durable once the job is done. */
struct fb_commit_ack {
	struct fb_agent *a;
	uint64_t seq;
};

/* fb_agent.dirty bits: the agent is owed an ack, so it must not expire. */
#define DIRTY_LISTED 1 /* on b->dirty, for the next job */
#define DIRTY_ACKING 2 /* in the job in flight's acks */

static void commit_cb(evutil_socket_t fd, short what, void *arg);
static void jdone_cb(evutil_socket_t fd, short what, void *arg);
static void sync_timer_cb(evutil_socket_t fd, short what, void *arg);
static void resume_cb(evutil_socket_t fd, short what, void *arg);
static void journal_retry_cb(evutil_socket_t fd, short what, void *arg);

#define JOURNAL_RETRY_MS 1000

/* The agents are read while no reason to hold them remains (FB_HOLD_*). */
static void set_hold(struct fb_broker *b, int why, int on)
{
	int was = b->held != 0;
	b->held = on ? (b->held | why) : (b->held & ~why);
	if (was != (b->held != 0) && b->hold_agents)
		b->hold_agents(b, b->held != 0);
}

/* A failed write or sync: fatal only if the journal is broken for good. */
static void journal_failed(struct fb_broker *b, const char *what, int err)
{
	if (fb_journal_broken(b->journal)) {
		fb_broker_fatal(b, what, err);
		return;
	}
	set_hold(b, FB_HOLD_JOURNAL, 1);
	struct timeval tv = { JOURNAL_RETRY_MS / 1000, (JOURNAL_RETRY_MS % 1000) * 1000 };
	if (!evtimer_pending(b->journal_retry, NULL))
		evtimer_add(b->journal_retry, &tv);
}

void fb_broker_fatal(struct fb_broker *b, const char *what, int err)
{
	if (b->exit_code)
		return;
	fb_log_err("%s failed: %s. Stopping so that nothing is acked that is not stored; agents keep "
		   "their unacked events and resend them after the restart (check JournalDir %s)",
		   what, fb_strerror(err), b->cfg->journal_dir);
	b->exit_code = 1;
	event_base_loopbreak(b->base);
}

/* The sync thread, when a job is done: wake the loop (thread-safe, the base
 * was made after evthread_use_pthreads()). */
static void jdone_notify(void *arg)
{
	struct fb_broker *b = arg;
	event_active(b->jdone_ev, 0, 0);
}

int fb_commit_init(struct fb_broker *b)
{
	b->commit_ev = event_new(b->base, -1, 0, commit_cb, b);
	if (!b->commit_ev || event_priority_set(b->commit_ev, 1) != 0)
		return -12;
	/* The agents' priority: acks leave as soon as their sync is done. */
	b->jdone_ev = event_new(b->base, -1, 0, jdone_cb, b);
	if (!b->jdone_ev || event_priority_set(b->jdone_ev, 0) != 0)
		return -12;
	b->resume_ev = event_new(b->base, -1, 0, resume_cb, b);
	b->journal_retry = evtimer_new(b->base, journal_retry_cb, b);
	if (!b->resume_ev || !b->journal_retry)
		return -12;
	if (b->cfg->sync_policy == FB_SYNC_INTERVAL) {
		b->sync_timer = event_new(b->base, -1, EV_PERSIST, sync_timer_cb, b);
		struct timeval tv = { (time_t)(b->cfg->sync_interval_ms / 1000),
				      (suseconds_t)(b->cfg->sync_interval_ms % 1000) * 1000 };
		if (!b->sync_timer || event_add(b->sync_timer, &tv) != 0)
			return -12;
	}
	int rc = fb_jworker_new(b->journal, jdone_notify, b, &b->jworker);
	if (rc)
		fb_log_err("cannot start the journal's sync thread: %s", fb_strerror(rc));
	return rc;
}

void fb_commit_fini(struct fb_broker *b)
{
	/* Waits for the sync in flight: the journal is closed after this. Its
	 * acks are not sent (the agents are gone); its records are durable. */
	fb_jworker_free(b->jworker);
	b->jworker = NULL;
	if (b->commit_ev)
		event_free(b->commit_ev);
	if (b->jdone_ev)
		event_free(b->jdone_ev);
	if (b->sync_timer)
		event_free(b->sync_timer);
	if (b->resume_ev)
		event_free(b->resume_ev);
	if (b->journal_retry)
		event_free(b->journal_retry);
	b->commit_ev = b->jdone_ev = b->sync_timer = b->resume_ev = b->journal_retry = NULL;
	for (unsigned i = 0; i < b->n_pending; i++)
		fb_batch_unref(b->pending[i]);
	b->n_pending = b->n_inflight = 0;
	free(b->dirty);
	b->dirty = NULL;
	b->n_dirty = b->cap_dirty = 0;
	free(b->acks);
	b->acks = NULL;
	b->n_acks = b->cap_acks = 0;
}

/* Put a on the list for the next job. 0, or -ENOMEM (the ack is late: the
 * next mark with room sends it). */
static int list_dirty(struct fb_broker *b, struct fb_agent *a)
{
	if (a->dirty & DIRTY_LISTED)
		return 0;
	if (b->n_dirty == b->cap_dirty) {
		size_t cap = b->cap_dirty ? b->cap_dirty * 2 : 64;
		struct fb_agent **d = realloc(b->dirty, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		b->dirty = d;
		b->cap_dirty = cap;
	}
	b->dirty[b->n_dirty++] = a;
	a->dirty |= DIRTY_LISTED;
	return 0;
}

static void commit_wait(struct fb_broker *b);

struct fb_record *fb_commit_slot(struct fb_broker *b)
{
	/* Batches the job in flight took are sealed: what it publishes must be
	 * exactly what it synced. */
	struct fb_batch *cur = b->n_pending > b->n_inflight ? b->pending[b->n_pending - 1] : NULL;
	if (cur && fb_batch_room(cur))
		return &b->slot;
	if (b->n_pending == FB_PENDING_BATCHES_MAX) {
		commit_wait(b); /* frees the job's batches, if it had any */
		if (b->n_pending == FB_PENDING_BATCHES_MAX && fb_commit_now(b) != 0)
			return NULL;
	}
	cur = fb_batch_new(FB_BATCH_CAP);
	if (!cur)
		return NULL;
	b->pending[b->n_pending++] = cur;
	return &b->slot;
}

void fb_commit_add(struct fb_broker *b) { fb_batch_add(b->pending[b->n_pending - 1], &b->slot); }

void fb_commit_mark(struct fb_broker *b, struct fb_agent *a)
{
	if (list_dirty(b, a) != 0)
		fb_log_warn("out of memory queueing an ack for agent %s", a->id);
	event_active(b->commit_ev, 0, 0);
}

/* Move the owed acks into the job, each at the seq stored so far: exactly
 * what the job's write covers. On ENOMEM they stay listed (late, not lost). */
static void take_acks(struct fb_broker *b)
{
	if (b->n_dirty > b->cap_acks) {
		struct fb_commit_ack *p = realloc(b->acks, b->n_dirty * sizeof(*p));
		if (!p)
			return;
		b->acks = p;
		b->cap_acks = b->n_dirty;
	}
	for (size_t i = 0; i < b->n_dirty; i++) {
		struct fb_agent *a = b->dirty[i];
		b->acks[i] = (struct fb_commit_ack){ a, a->stored_seq };
		a->dirty = DIRTY_ACKING;
	}
	b->n_acks = b->n_dirty;
	b->n_dirty = 0;
}

/* The job failed (or never started): its acks are owed again. */
static void acks_back(struct fb_broker *b)
{
	for (size_t i = 0; i < b->n_acks; i++) {
		struct fb_agent *a = b->acks[i].a;
		a->dirty &= ~DIRTY_ACKING;
		if (list_dirty(b, a) != 0)
			fb_log_warn("out of memory queueing an ack for agent %s", a->id);
	}
	b->n_acks = 0;
}

/* Hand everything appended so far to the sync thread. rel: the job acks
 * and publishes what is pending now when it is done. */
static int job_start(struct fb_broker *b, int sync, int rel)
{
	if (rel)
		take_acks(b);
	int rc = fb_jworker_start(b->jworker, sync);
	if (rc) {
		acks_back(b);
		return rc;
	}
	b->job_release = rel;
	if (rel) {
		b->n_inflight = b->n_pending;
		b->job_last_id = b->last_event_id;
	}
	if (!sync)
		b->unsynced = 1;
	else if (rel)
		b->unsynced = 0;
	return 0;
}

/* The job's events are durable: ack its agents and publish its batches. */
static void release(struct fb_broker *b)
{
	for (size_t i = 0; i < b->n_acks; i++) {
		struct fb_agent *a = b->acks[i].a;
		a->dirty &= ~DIRTY_ACKING;
		if (b->acks[i].seq > a->durable_seq)
			a->durable_seq = b->acks[i].seq;
		if (b->durable)
			b->durable(b, a, a->durable_seq);
	}
	b->n_acks = 0;
	int busy = 0;
	unsigned n = b->n_inflight;
	for (unsigned i = 0; i < n; i++) {
		struct fb_batch *bt = b->pending[i];
		if (fb_outputs_committed(&b->outputs, bt) == FB_OUTPUT_BUSY)
			busy = 1;
		fb_batch_unref(bt);
	}
	memmove(b->pending, b->pending + n, (b->n_pending - n) * sizeof(*b->pending));
	b->n_pending -= n;
	b->n_inflight = 0;
	b->committed_id = b->job_last_id;
	if (busy)
		set_hold(b, FB_HOLD_OUTPUT, 1);
	b->st.commits++;
}

/* The write token is back: release, or on failure stall (records kept by
 * the journal, acks owed again, batches unsealed for the retry). */
static void job_done(struct fb_broker *b, int rc)
{
	if (b->retain_due) {
		b->retain_due = 0;
		(void)fb_journal_retain(b->journal, time(NULL)); /* logs its own failures */
	}
	if (rc) {
		acks_back(b);
		b->n_inflight = 0;
		journal_failed(b, "journal write or fdatasync", rc);
		return;
	}
	if (b->job_release)
		release(b);
}

/* Block until the job in flight (if any) is done, and finish it. */
static void commit_wait(struct fb_broker *b)
{
	int rc;
	if (b->jworker && fb_jworker_wait(b->jworker, &rc))
		job_done(b, rc);
}

/* Start the next job if the thread is free and there is something to do. */
static void commit_kick(struct fb_broker *b)
{
	if (b->exit_code || (b->held & FB_HOLD_JOURNAL) || fb_jworker_busy(b->jworker))
		return;
	int staged = fb_journal_staged(b->journal);
	int sync = b->cfg->sync_policy != FB_SYNC_NONE, rel = 1;
	if (b->cfg->sync_policy == FB_SYNC_INTERVAL && !b->sync_due &&
	    b->n_pending < FB_PENDING_BATCHES_MAX) {
		sync = rel = 0; /* write now, the timer syncs */
		if (!staged)
			return;
	} else if (!staged && !b->n_pending && !b->n_dirty && !b->sync_due) {
		return;
	}
	if (rel)
		b->sync_due = 0;
	int rc = job_start(b, sync, rel);
	if (rc)
		journal_failed(b, "journal write", rc);
}

/* Start a job for everything and wait for it (also while stalled: the
 * retry). */
static int commit_sync(struct fb_broker *b)
{
	commit_wait(b);
	if (b->exit_code)
		return -1;
	b->sync_due = 0;
	int rc = job_start(b, b->cfg->sync_policy != FB_SYNC_NONE, 1);
	if (rc) {
		journal_failed(b, "journal write", rc);
		return rc;
	}
	(void)fb_jworker_wait(b->jworker, &rc);
	job_done(b, rc);
	return rc;
}

int fb_commit_now(struct fb_broker *b)
{
	if (b->exit_code)
		return -1;
	/* Stalled: only the retry timer writes, so that a full disk costs one
	 * failed write a second, not one per agent frame. */
	if (b->held & FB_HOLD_JOURNAL)
		return -EAGAIN;
	commit_wait(b); /* may stall */
	if (b->held & FB_HOLD_JOURNAL)
		return -EAGAIN;
	return commit_sync(b);
}

int fb_commit_stalled(const struct fb_broker *b) { return (b->held & FB_HOLD_JOURNAL) != 0; }

void fb_commit_retain(struct fb_broker *b, time_t now)
{
	if (b->jworker && fb_jworker_busy(b->jworker))
		b->retain_due = 1; /* the journal's write side is the thread's */
	else
		(void)fb_journal_retain(b->journal, now);
}

/* Any thread: an output drained below its bound. Level-triggered on the
 * loop: the hold ends only if no output is still busy, which the next
 * commit would report again (it re-holds at once). */
void fb_commit_outputs_ready(void *broker)
{
	struct fb_broker *b = broker;
	if (b->resume_ev)
		event_active(b->resume_ev, 0, 0);
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_broker *b = arg;
	set_hold(b, FB_HOLD_OUTPUT, 0);
}

static void commit_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	commit_kick(arg);
}

static void jdone_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_broker *b = arg;
	int rc;
	/* Nothing to take when commit_wait already finished the job. */
	if (fb_jworker_take(b->jworker, &rc))
		job_done(b, rc);
	commit_kick(b);
}

static void sync_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_broker *b = arg;
	if (b->exit_code || (!b->unsynced && !b->n_dirty && !b->n_pending &&
			     !fb_journal_staged(b->journal)))
		return;
	/* Appends made since the last job are in the journal buffer only: the
	 * sync job writes them too, so the sync covers everything it releases.
	 * With a job in flight, its end starts this one. */
	b->sync_due = 1;
	commit_kick(b);
}

/* Stalled: write and sync everything kept (whatever the sync policy, the
 * retry is rare and what it releases must be on disk), then ack it all. */
static void journal_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_broker *b = arg;
	if (b->exit_code)
		return;
	if (commit_sync(b) != 0)
		return; /* re-armed by journal_failed */
	set_hold(b, FB_HOLD_JOURNAL, 0);
	commit_kick(b);
}
