/* journal_reader.c - replay readers over the journal directory.
 *
 * A reader shares nothing with the writer but the files: it has its own fds,
 * finds segments by listing the directory, and only returns records up to the
 * caller's limit (the last committed id), so it may run on any thread.
 * Holding a segment open keeps its bytes readable even after retention
 * unlinks it (POSIX), so a slow reader finishes the segment it is in.
 */
#include "journal.h"

#include "fb_err.h"
#include "fb_log.h"
#include "journal_format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Retention can race with listing; give up (and report "nothing now") after
 * this many vanished segments in one call rather than spin. */
#define READER_MAX_RETRIES 16

struct fb_journal_reader {
	char *dir;
	int fd;              /* the open segment, -1 before the first one exists */
	uint64_t seg_first;  /* its first id, from the name */
	struct fbj_cursor cur;
	uint64_t last_id;    /* every record <= this is behind the reader */
	uint64_t gap;        /* first id still available after a retention gap */
	int gap_pending;     /* report FB_EGONE on the next call */
	int rechecked;       /* re-read the segment after seeing a newer one */
	int corrupt_logged;
};

static void reader_path(const struct fb_journal_reader *r, uint64_t first, char out[PATH_MAX])
{
	char name[FBJ_NAME_LEN + 1];
	fbj_name(name, first);
	snprintf(out, PATH_MAX, "%s/%s", r->dir, name);
}

/* Open segment first and make it current. -ENOENT when retention removed it
 * after the listing. */
static int reader_switch(struct fb_journal_reader *r, uint64_t first)
{
	char path[PATH_MAX];
	reader_path(r, first, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = fd;
	r->seg_first = first;
	r->rechecked = 0;
	r->corrupt_logged = 0;
	fbj_cursor_reset(&r->cur, fd);
	return 0;
}

/* The last segment whose first id is <= last_id + 1 holds the next record;
 * when every segment starts later, the records in between are gone (unless
 * the reader wanted everything from the start). Returns 1 for a gap. */
static int pick_start(const uint64_t *ids, size_t n, uint64_t last_id, uint64_t *first)
{
	size_t i = n;
	while (i > 0 && ids[i - 1] > last_id && ids[i - 1] - last_id > 1)
		i--;
	*first = ids[i ? i - 1 : 0];
	return i == 0 && last_id > 0;
}

/* Position at the segment holding the record after last_id: 1 when one is
 * open, 0 when the journal has no segment yet, or -errno. */
static int reader_seek(struct fb_journal_reader *r)
{
	for (int tries = 0; tries < READER_MAX_RETRIES; tries++) {
		uint64_t *ids, first;
		size_t n;
		int rc = fbj_list(r->dir, 0, &ids, &n);
		if (rc || n == 0)
			return rc;
		int gone = pick_start(ids, n, r->last_id, &first);
		free(ids);
		rc = reader_switch(r, first);
		if (rc == -ENOENT)
			continue;
		if (rc)
			return rc;
		if (gone) {
			r->gap = first;
			r->gap_pending = 1;
		}
		return 1;
	}
	return 0;
}

/* Smallest segment after the current one: 1 and *next, 0 if none, -errno. */
static int find_newer(const struct fb_journal_reader *r, uint64_t *next)
{
	uint64_t *ids;
	size_t n;
	int rc = fbj_list(r->dir, 0, &ids, &n);
	if (rc)
		return rc;
	size_t i = 0;
	while (i < n && ids[i] <= r->seg_first)
		i++;
	if (i < n)
		*next = ids[i];
	free(ids);
	return i < n;
}

static void log_skip(struct fb_journal_reader *r, int why, uint64_t next)
{
	int partial = r->cur.len > r->cur.pos;
	if (why == 0 && !partial)
		return;
	char path[PATH_MAX];
	reader_path(r, r->seg_first, path);
	fb_log_err("journal: reader: %s in %s at offset %llu; continuing with segment %llu",
		   why ? "corrupt record" : "torn record", path,
		   (unsigned long long)fbj_cursor_off(&r->cur), (unsigned long long)next);
}

/* The current segment has nothing more to give (why = 0) or bad bytes
 * (why < 0). Returns 1 to read on (from the next segment, or once more from
 * this one), 0 for "nothing now", FB_EGONE when the next segment does not
 * start right after the last id (records removed by retention, or skipped as
 * corrupt; gap tells where reading resumes), or an error. */
static int reader_move_on(struct fb_journal_reader *r, int why)
{
	for (int tries = 0; tries < READER_MAX_RETRIES; tries++) {
		uint64_t next = 0;
		int rc = find_newer(r, &next);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			if (why && !r->corrupt_logged) {
				char path[PATH_MAX];
				reader_path(r, r->seg_first, path);
				fb_log_err("journal: reader: corrupt record in %s at offset %llu",
					   path, (unsigned long long)fbj_cursor_off(&r->cur));
				r->corrupt_logged = 1;
			}
			return why;
		}
		/* The writer appends to a segment before it creates the next
		 * one, so after a newer segment is seen one more read of this
		 * one is enough to be sure it is complete. */
		if (!why && !r->rechecked) {
			r->rechecked = 1;
			return 1;
		}
		log_skip(r, why, next);
		rc = reader_switch(r, next);
		if (rc == -ENOENT)
			continue; /* retention got there first: list again */
		if (rc)
			return rc;
		/* The broker numbers events consecutively, so a jump means the
		 * segments in between were removed (or skipped as corrupt). */
		if (next > r->last_id && next - r->last_id > 1) {
			r->gap = next;
			return FB_EGONE;
		}
		return 1;
	}
	return 0;
}

/* Bad bytes in the middle of a segment, with good records after them (as
 * recovery keeps them): skip to those. 1 found, FB_EGONE found after a gap
 * (the damage took records: gap is the first id after it), 0 none, -errno. */
static int reader_resync(struct fb_journal_reader *r)
{
	uint64_t at = fbj_cursor_off(&r->cur), skipped;
	int rc = fbj_cursor_resync(&r->cur, r->last_id, &skipped);
	struct fbj_rec rec;
	if (rc != 1 || fbj_cursor_peek(&r->cur, &rec) != 1)
		return rc < 0 ? rc : 0; /* a resync's record parses again */
	char path[PATH_MAX];
	reader_path(r, r->seg_first, path);
	fb_log_err("journal: reader: %llu damaged bytes in %s at offset %llu skipped",
		   (unsigned long long)skipped, path, (unsigned long long)at);
	if (rec.event_id - r->last_id > 1) {
		r->gap = rec.event_id;
		return FB_EGONE;
	}
	return 1;
}

/* 1: *rec is the next record to hand out; 0 / negative: see reader_move_on. */
static int reader_peek(struct fb_journal_reader *r, uint64_t limit_id, struct fbj_rec *rec)
{
	for (;;) {
		int rc = fbj_cursor_peek(&r->cur, rec);
		if (rc == 1 && r->cur.first_id != r->seg_first)
			rc = FB_ECORRUPT; /* header names another segment */
		if (rc == 1 && rec->event_id <= r->last_id) {
			fbj_cursor_advance(&r->cur, rec); /* before after_id */
			continue;
		}
		if (rc == 1)
			return rec->event_id <= limit_id ? 1 : 0;
		if (rc < 0 && rc != FB_ECORRUPT && rc != FB_EVERSION)
			return rc; /* I/O error */
		if (rc == FB_ECORRUPT && r->cur.have_hdr && r->cur.first_id == r->seg_first) {
			int found = reader_resync(r);
			if (found < 0)
				return found;
			if (found)
				continue; /* on the first good record after the damage */
		}
		rc = reader_move_on(r, rc);
		if (rc != 1)
			return rc;
	}
}

int fb_journal_reader_next(struct fb_journal_reader *r, uint64_t limit_id, uint64_t *event_id,
			   struct fb_event *ev)
{
	for (;;) {
		if (r->gap_pending) {
			r->gap_pending = 0;
			return FB_EGONE;
		}
		/* Caught up: nothing to look for, so no syscalls at all. */
		if (r->last_id >= limit_id)
			return 0;
		if (r->fd < 0) {
			int rc = reader_seek(r);
			if (rc <= 0)
				return rc;
			continue;
		}
		struct fbj_rec rec;
		int rc = reader_peek(r, limit_id, &rec);
		if (rc != 1)
			return rc;
		uint64_t off = fbj_cursor_off(&r->cur);
		fbj_cursor_advance(&r->cur, &rec);
		r->last_id = rec.event_id;
		rc = fbj_decode_payload(rec.payload, rec.payload_len, ev);
		if (rc == 0) {
			*event_id = rec.event_id;
			return 1;
		}
		/* CRC-valid but undecodable: a format mismatch, not a torn
		 * write. Recovery skips it too; keep going. */
		char path[PATH_MAX];
		reader_path(r, r->seg_first, path);
		fb_log_err("journal: reader: %s offset %llu: record %llu does not decode (%s); "
			   "skipped", path, (unsigned long long)off,
			   (unsigned long long)rec.event_id, fb_strerror(rc));
	}
}

int fb_journal_reader_open(const char *dir, uint64_t after_id, struct fb_journal_reader **out)
{
	*out = NULL;
	if (!dir || !dir[0])
		return -EINVAL;
	struct fb_journal_reader *r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(dir))) {
		free(r);
		return -ENOMEM;
	}
	r->fd = -1;
	r->last_id = after_id;
	int rc = fbj_cursor_init(&r->cur, -1);
	rc = rc ? rc : reader_seek(r);
	if (rc < 0) {
		fb_log_err("journal: cannot open a reader on %s: %s", dir, fb_strerror(rc));
		fb_journal_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

uint64_t fb_journal_reader_gap(const struct fb_journal_reader *r) { return r->gap; }

void fb_journal_reader_close(struct fb_journal_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	fbj_cursor_free(&r->cur);
	free(r->dir);
	free(r);
}
