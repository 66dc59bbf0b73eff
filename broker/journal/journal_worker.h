/* journal_worker.h - the journal's sync thread: write(2) and fdatasync off
 * the libevent loop, so that the loop reads and parses the next batch while
 * the previous one syncs (pipelined group commit, commit.c).
 *
 * One job at a time. fb_jworker_start hands the journal's write token to the
 * thread (journal.h, "Threads"): until fb_jworker_take or fb_jworker_wait
 * returns the job's result, the loop may only append to the journal and read
 * its stats. The thread calls notify(arg) when a job is done (from the
 * thread: notify must be thread-safe, e.g. event_active on a base made after
 * evthread_use_pthreads()).
 *
 * Ownership, per field of struct fb_jworker (journal_worker.c):
 *   j, notify, arg, thread        set at new, read-only after
 *   busy                          loop only: a job was started and not taken
 *   job, sync, done, rc, stop     under mu (loop writes job/sync/stop, the
 *                                 thread writes done/rc)
 */
#ifndef FB_JOURNAL_WORKER_H
#define FB_JOURNAL_WORKER_H

struct fb_journal;
struct fb_jworker;

/* Start the thread for j. 0 or negative errno. */
int fb_jworker_new(struct fb_journal *j, void (*notify)(void *arg), void *arg,
		   struct fb_jworker **out);
/* Waits for the job in flight (its result is dropped: take it first), then
 * stops the thread. The journal is the loop's again. */
void fb_jworker_free(struct fb_jworker *w);
/* Loop, with no job in flight: stage what was appended (fb_journal_stage),
 * then let the thread fb_journal_write and, if sync, fb_journal_sync. 0, or
 * the stage's error (no job started then). */
int fb_jworker_start(struct fb_jworker *w, int sync);
/* 1 while a job is started and its result not taken. */
int fb_jworker_busy(const struct fb_jworker *w);
/* Loop: 1 and *rc when the job is done (the token is back), 0 while it runs
 * or when there is none. */
int fb_jworker_take(struct fb_jworker *w, int *rc);
/* Loop: block until the job in flight is done; 1 and *rc, or 0 if none. */
int fb_jworker_wait(struct fb_jworker *w, int *rc);

#endif
