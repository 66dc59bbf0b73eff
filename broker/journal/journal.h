/* journal.h - the append-only event journal (segments with a CRC per record).
 *
 * Layout: <dir>/<first EventId, 20 digits>.fbj, each starting with a 16-byte
 * header ("FBJ1", u32 version, u64 first EventId), then records:
 *   u32 payload_len | u32 crc32c(event_id BE || payload) | u64 event_id | payload
 * payload = str8 agent_id || event body (fb_event_encode, see fb_wire.h).
 * All integers big-endian.
 *
 * Threads: the writer (struct fb_journal) has two sides. The append side
 * (fb_journal_append, fb_journal_stage, fb_journal_staged,
 * fb_journal_get_stats) belongs to the libevent loop. The write side
 * (fb_journal_write, _flush, _sync, _retain, _broken, _close) belongs to whoever
 * holds the write token: the loop, or the sync thread (journal_worker.h)
 * between handing it a job and taking its result; a stage happens only while
 * the loop holds the token. get_stats may run while the sync thread writes:
 * it reads the write side's figures as of its last call. Readers
 * (struct fb_journal_reader) are independent objects with their own file
 * descriptors and may run on any thread (the WebSocket thread replays with
 * them); they only ever return records with event_id <= the limit the caller
 * passes, which is the last *committed* id, so they never see a record that is
 * still being written.
 */
#ifndef FB_JOURNAL_H
#define FB_JOURNAL_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct fb_journal_opts {
	const char *dir;          /* created if missing (mode 0750) */
	uint64_t segment_bytes;   /* roll to a new segment past this size */
	uint64_t retain_bytes;    /* delete oldest segments past this total (0 = no limit) */
	uint64_t retain_age_s;    /* delete segments whose newest record is older (0 = no limit) */
	/* JournalSync=none: fb_journal_sync runs only at segment rolls, so
	 * written records are not kept for a rewrite after a failed sync. */
	int no_sync;
	/* Synced bytes left in the page cache behind the end of the active
	 * segment; older ones are dropped after each sync, and a finished
	 * segment's at its roll (0 = leave the page cache to the kernel). */
	uint64_t cache_bytes;
};

struct fb_journal_stats {
	uint64_t first_id;     /* oldest retained EventId (0 if empty) */
	uint64_t last_id;      /* newest appended EventId (0 if empty) */
	uint64_t bytes;        /* total size of all segments */
	uint32_t segments;
	uint64_t appended;     /* records appended since open */
	uint64_t syncs;        /* fdatasync calls since open */
	uint64_t truncated_bytes; /* torn tail removed at recovery */
	uint64_t damaged_bytes; /* bad bytes between good records, skipped at recovery */
	uint64_t removed_segments; /* by retention since open */
	int stalled;           /* 0, or the errno (negative) of the failure that stalled it */
	uint64_t stalled_for_ms; /* how long it has been stalled (0 when not) */
	uint64_t stalls;       /* times a write or sync failed and left the journal stalled */
	uint64_t waiting_bytes; /* encoded records held in memory, not yet durable */
};

struct fb_journal;

/* Called once per valid record during recovery, in EventId order, so that
 * the broker can rebuild per-agent sequence state. ev->agent_id is set. */
typedef void (*fb_journal_recover_cb)(void *arg, uint64_t event_id, const struct fb_event *ev);

/* Open (creating if needed) and recover: scan every segment, verify CRCs,
 * truncate a torn or corrupt tail of the newest segment (logging the file,
 * offset and bytes removed), and report each good record to cb (may be NULL).
 * Returns 0 and *out, or a negative error with a log line naming the path. */
int fb_journal_open(const struct fb_journal_opts *o, fb_journal_recover_cb cb, void *arg,
		    struct fb_journal **out);
void fb_journal_close(struct fb_journal *j);

/* Buffer one record in memory. raw/raw_len is the already-encoded event body
 * (from the EVENTS frame); pass NULL to have ev encoded. event_id must be
 * greater than every earlier one. No I/O happens here. */
int fb_journal_append(struct fb_journal *j, uint64_t event_id, const struct fb_event *ev,
		      const uint8_t *raw, size_t raw_len);
/* Append side, with the write token: move what was appended since the last
 * stage behind the records the write side holds (ENOMEM leaves them where
 * they are). */
int fb_journal_stage(struct fb_journal *j);
/* 1 if records were appended since the last stage. */
int fb_journal_staged(const struct fb_journal *j);
/* Write side: fb_journal_flush without the stage (what a sync thread runs). */
int fb_journal_write(struct fb_journal *j);
/* Stage, then write(2) everything buffered, rolling segments at segment_bytes. Handles
 * short writes. A failed write (ENOSPC, EDQUOT, EIO...) cuts what it tore off
 * the segment again and keeps the records buffered: the journal is *stalled*
 * (fb_journal_get_stats().stalled) and the next flush retries them. Only when
 * the torn bytes cannot be cut is the journal broken for good
 * (fb_journal_broken). Returns 0 or negative errno. */
int fb_journal_flush(struct fb_journal *j);
/* fdatasync the segment(s) written since the last sync. After a failed sync
 * the kernel may have dropped the dirty pages, so the segment is cut back to
 * where the last good sync left it and the records are written again by the
 * next flush (stalled, as above). With no_sync the records are gone from
 * memory by then, so a failed sync breaks the journal. */
int fb_journal_sync(struct fb_journal *j);
/* The negative errno that made the journal unusable for good, or 0 (a
 * stalled journal is not broken: flush and sync again later). */
int fb_journal_broken(const struct fb_journal *j);
/* Observe each fdatasync's duration in seconds into hist (fb_metrics.h). */
struct fb_metric;
void fb_journal_set_sync_metric(struct fb_journal *j, struct fb_metric *hist);
/* Apply retention now (also applied on every roll). Never removes the active
 * segment. */
int fb_journal_retain(struct fb_journal *j, time_t now);
void fb_journal_get_stats(const struct fb_journal *j, struct fb_journal_stats *st);
const char *fb_journal_dir(const struct fb_journal *j);

struct fb_journal_reader;

/* A reader positioned after EventId after_id (after_id = 0: from the oldest
 * retained record). */
int fb_journal_reader_open(const char *dir, uint64_t after_id, struct fb_journal_reader **out);
/* Next record with event_id <= limit_id: returns 1 and fills *event_id and *ev
 * (agent_id set), 0 when there is nothing more up to limit_id for now (call
 * again later, it resumes where it was), or a negative error. If the records
 * right after after_id were removed by retention, the first call returns
 * FB_EGONE and fb_journal_reader_gap() tells the first id still available;
 * the next call goes on from there. */
int fb_journal_reader_next(struct fb_journal_reader *r, uint64_t limit_id, uint64_t *event_id,
			   struct fb_event *ev);
uint64_t fb_journal_reader_gap(const struct fb_journal_reader *r);
void fb_journal_reader_close(struct fb_journal_reader *r);

#endif
