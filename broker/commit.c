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

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void commit_cb(evutil_socket_t fd, short what, void *arg);
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

int fb_commit_init(struct fb_broker *b)
{
	b->commit_ev = event_new(b->base, -1, 0, commit_cb, b);
	if (!b->commit_ev || event_priority_set(b->commit_ev, 1) != 0)
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
	return 0;
}

void fb_commit_fini(struct fb_broker *b)
{
	if (b->commit_ev)
		event_free(b->commit_ev);
	if (b->sync_timer)
		event_free(b->sync_timer);
	if (b->resume_ev)
		event_free(b->resume_ev);
	if (b->journal_retry)
		event_free(b->journal_retry);
	b->commit_ev = b->sync_timer = b->resume_ev = b->journal_retry = NULL;
	for (unsigned i = 0; i < b->n_pending; i++)
		fb_batch_unref(b->pending[i]);
	b->n_pending = 0;
	free(b->dirty);
	b->dirty = NULL;
	b->n_dirty = b->cap_dirty = 0;
}

struct fb_record *fb_commit_slot(struct fb_broker *b)
{
	struct fb_batch *cur = b->n_pending ? b->pending[b->n_pending - 1] : NULL;
	if (cur && cur->n < cur->cap)
		return &cur->rec[cur->n];
	if (b->n_pending == FB_PENDING_BATCHES_MAX && fb_commit_now(b) != 0)
		return NULL;
	cur = fb_batch_new(FB_BATCH_CAP);
	if (!cur)
		return NULL;
	b->pending[b->n_pending++] = cur;
	return &cur->rec[0];
}

void fb_commit_mark(struct fb_broker *b, struct fb_agent *a)
{
	if (!a->dirty) {
		if (b->n_dirty == b->cap_dirty) {
			size_t cap = b->cap_dirty ? b->cap_dirty * 2 : 64;
			struct fb_agent **d = realloc(b->dirty, cap * sizeof(*d));
			if (!d) {
				/* The ack is only late: the next commit with room sends it. */
				fb_log_warn("out of memory queueing an ack for agent %s", a->id);
				return;
			}
			b->dirty = d;
			b->cap_dirty = cap;
		}
		b->dirty[b->n_dirty++] = a;
		a->dirty = 1;
	}
	event_active(b->commit_ev, 0, 0);
}

/* Everything written so far is durable: ack the agents and publish. */
static void release(struct fb_broker *b)
{
	for (size_t i = 0; i < b->n_dirty; i++) {
		struct fb_agent *a = b->dirty[i];
		a->durable_seq = a->stored_seq;
		a->dirty = 0;
		if (b->durable)
			b->durable(b, a, a->durable_seq);
	}
	b->n_dirty = 0;
	int busy = 0;
	for (unsigned i = 0; i < b->n_pending; i++) {
		struct fb_batch *bt = b->pending[i];
		if (fb_outputs_committed(&b->outputs, bt) == FB_OUTPUT_BUSY)
			busy = 1;
		fb_batch_unref(bt);
	}
	b->n_pending = 0;
	b->committed_id = b->last_event_id;
	if (busy)
		set_hold(b, FB_HOLD_OUTPUT, 1);
	b->unsynced = 0;
	b->st.commits++;
}

int fb_commit_now(struct fb_broker *b)
{
	if (b->exit_code)
		return -1;
	/* Stalled: only the retry timer writes, so that a full disk costs one
	 * failed write a second, not one per agent frame. */
	if (b->held & FB_HOLD_JOURNAL)
		return -EAGAIN;
	int rc = fb_journal_flush(b->journal);
	if (rc) {
		journal_failed(b, "journal write", rc);
		return rc;
	}
	if (b->cfg->sync_policy == FB_SYNC_INTERVAL) {
		b->unsynced = 1;
		/* Past this many batches waiting on the timer, sync now to bound memory. */
		if (b->n_pending < FB_PENDING_BATCHES_MAX)
			return 0;
	}
	if (b->cfg->sync_policy != FB_SYNC_NONE) {
		rc = fb_journal_sync(b->journal);
		if (rc) {
			journal_failed(b, "journal fdatasync", rc);
			return rc;
		}
	}
	release(b);
	return 0;
}

int fb_commit_stalled(const struct fb_broker *b) { return (b->held & FB_HOLD_JOURNAL) != 0; }

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
	fb_commit_now(arg);
}

static void sync_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_broker *b = arg;
	if (b->exit_code || (!b->unsynced && b->n_dirty == 0))
		return;
	if (b->held & FB_HOLD_JOURNAL)
		return; /* the retry timer syncs */
	/* Appends made since the last commit event are in the journal buffer
	 * only: write them too, so the sync covers everything we release. */
	int rc = fb_journal_flush(b->journal);
	if (rc) {
		journal_failed(b, "journal write", rc);
		return;
	}
	rc = fb_journal_sync(b->journal);
	if (rc) {
		journal_failed(b, "journal fdatasync", rc);
		return;
	}
	release(b);
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
	int rc = fb_journal_flush(b->journal);
	if (!rc && b->cfg->sync_policy != FB_SYNC_NONE)
		rc = fb_journal_sync(b->journal);
	if (rc) {
		journal_failed(b, "journal write", rc);
		return;
	}
	release(b);
	set_hold(b, FB_HOLD_JOURNAL, 0);
}
