/* journal.c - the journal writer: recovery at open, buffered appends, flush
 * with segment rolling, fdatasync, and retention. Readers live in
 * journal_reader.c and never touch this struct.
 *
 * Two sides (journal.h, "Threads"): the append side (fb_journal_append,
 * fb_journal_stage, fb_journal_get_stats) is the loop's; the write side
 * (flush, sync, retain, broken) belongs to whoever holds the write token:
 * the loop, or the sync thread while a job is in flight (journal_worker.c
 * hands it over and back under its mutex, which orders the two). */
#include "journal.h"

#include "fb_buf.h"
#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_file.h"
#include "fb_log.h"
#include "fb_metrics.h"
#include "fb_time.h"
#include "fb_wire.h"
#include "journal_format.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Used when the configuration leaves segment_bytes at 0. */
#define FBJ_DEFAULT_SEGMENT_BYTES (64u << 20)

struct fbj_seg {
	uint64_t first; /* from the file name */
	uint64_t bytes; /* size on disk (as far as this process knows) */
};

struct fb_journal {
	char *dir;
	int dirfd;
	uint64_t segment_bytes, retain_bytes, retain_age_s;
	struct fbj_seg *segs; /* oldest first; the last one is active when fd >= 0 */
	size_t nsegs, segs_cap;
	uint64_t total_bytes;
	int fd;     /* active segment, -1 until the first flush needs one */
	int dirty;  /* bytes written to fd since its last fdatasync */
	struct fb_metric *sync_hist; /* each fdatasync's duration, or NULL */
	/* Sticky: the journal is broken (a torn write could not be cut). Set
	 * by the write side, read by append on the loop: atomic. */
	atomic_int err;
	/* Write side. Encoded records: [0, wr) written to the active segment
	 * since its last good sync (kept to write again if that sync fails),
	 * [wr, len) not written yet. With no_sync, written records are dropped
	 * at once. */
	struct fb_buf buf;
	size_t wr;
	uint64_t synced_bytes; /* write side: the active segment's size at its last good sync */
	uint64_t cache_bytes;  /* see fb_journal_opts */
	uint64_t page_mask;    /* ~(page size - 1) */
	uint64_t uncached;     /* write side: where cache_trim's last drop in the active segment ended */
	int no_sync;
	int stall;             /* write side: errno of the failure that stalls us, 0 when healthy */
	uint64_t stall_since_ns, stall_log_ns; /* write side */
	struct fb_journal_stats st; /* write side: the counters; sizes are filled by publish() */
	/* Append side (loop only): records appended since the last stage. */
	struct fb_buf in;
	uint64_t last_id;
	uint64_t appended;
	/* The write side's figures as of its last call, for get_stats while a
	 * sync is in flight (pub_mu: written by the write side, read by the loop). */
	pthread_mutex_t pub_mu;
	struct fb_journal_stats pub;
};

/* Write side, at the end of each call: copy the figures for get_stats. */
static void publish(struct fb_journal *j)
{
	pthread_mutex_lock(&j->pub_mu);
	j->pub = j->st;
	j->pub.first_id = j->nsegs ? j->segs[0].first : 0;
	j->pub.bytes = j->total_bytes;
	j->pub.segments = (uint32_t)j->nsegs;
	j->pub.stalled = j->stall;
	j->pub.stalled_for_ms = j->stall_since_ns; /* converted in get_stats */
	j->pub.waiting_bytes = j->buf.len;
	pthread_mutex_unlock(&j->pub_mu);
}

static void seg_path(const struct fb_journal *j, uint64_t first, char out[PATH_MAX])
{
	char name[FBJ_NAME_LEN + 1];
	fbj_name(name, first);
	snprintf(out, PATH_MAX, "%s/%s", j->dir, name);
}

static int segs_push(struct fb_journal *j, uint64_t first, uint64_t bytes)
{
	if (j->nsegs == j->segs_cap) {
		size_t nc = j->segs_cap ? j->segs_cap * 2 : 16;
		struct fbj_seg *p = realloc(j->segs, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		j->segs = p;
		j->segs_cap = nc;
	}
	j->segs[j->nsegs++] = (struct fbj_seg){ first, bytes };
	j->total_bytes += bytes;
	return 0;
}

/* ---- recovery ---------------------------------------------------------- */

struct recover_ctx {
	fb_journal_recover_cb cb;
	void *arg;
	struct fb_event ev;
};

static void recover_report(const char *path, uint64_t off, const struct fbj_rec *rec,
			   struct recover_ctx *rc)
{
	if (!rc->cb)
		return;
	/* The CRC matched, so these are the bytes we wrote; a decode failure
	 * means a format or version mismatch, not a torn write. Keep the data
	 * on disk, skip the record, and tell the operator. */
	int e = fbj_decode_payload(rec->payload, rec->payload_len, &rc->ev);
	if (e) {
		fb_log_err("journal: %s offset %llu: record %llu does not decode (%s); not replayed",
			   path, (unsigned long long)off, (unsigned long long)rec->event_id,
			   fb_strerror(e));
		return;
	}
	rc->cb(rc->arg, rec->event_id, &rc->ev);
}

/* Walk the records of one segment. Returns 0 with *end set to the offset
 * where the good records stop (0 when the header is not one of ours naming
 * this file), or -errno for an I/O error. */
static int scan_segment(struct fb_journal *j, int fd, uint64_t first, const char *path,
			struct recover_ctx *rcx, uint64_t *end)
{
	struct fbj_cursor c;
	int rc = fbj_cursor_init(&c, fd);
	if (rc)
		return rc;
	struct fbj_rec rec;
	rc = fbj_cursor_peek(&c, &rec);
	/* A header naming another segment than the file is as bad as none. */
	int hdr_ok = c.have_hdr && c.first_id == first;
	while (hdr_ok && (rc == 1 || rc == FB_ECORRUPT)) {
		/* Ids only grow, across segments too; anything else is damage. */
		uint64_t below = first ? first - 1 : 0, floor = j->last_id > below ? j->last_id : below;
		if (rc == 1 && rec.event_id > floor) {
			recover_report(path, fbj_cursor_off(&c), &rec, rcx);
			j->last_id = rec.event_id;
			fbj_cursor_advance(&c, &rec);
			rc = fbj_cursor_peek(&c, &rec);
			continue;
		}
		/* Damage followed by good records is not a torn write: keep
		 * them (cutting them off would lose acked events). Only
		 * damage that runs to the end is a torn tail. */
		uint64_t at = fbj_cursor_off(&c), skipped;
		rc = fbj_cursor_resync(&c, floor, &skipped);
		if (rc <= 0)
			break;
		fb_log_err("journal: %s: %llu damaged bytes at offset %llu skipped; the records "
			   "after them are kept", path, (unsigned long long)skipped,
			   (unsigned long long)at);
		j->st.damaged_bytes += skipped;
		rc = fbj_cursor_peek(&c, &rec);
	}
	*end = hdr_ok ? fbj_cursor_off(&c) : 0;
	fbj_cursor_free(&c);
	/* FB_ECORRUPT / FB_EVERSION only mark where the good records end. */
	return (rc < 0 && rc != FB_ECORRUPT && rc != FB_EVERSION) ? rc : 0;
}

/* The newest segment is where a crash leaves a half-written record: cut it
 * off so appends continue from a clean end. */
static int truncate_tail(struct fb_journal *j, int fd, const char *path, uint64_t end,
			 uint64_t size)
{
	if (ftruncate(fd, (off_t)end) < 0 || fdatasync(fd) < 0) {
		int e = -errno;
		fb_log_err("journal: cannot truncate %s to %llu bytes: %s", path,
			   (unsigned long long)end, strerror(-e));
		return e;
	}
	fb_log_warn("journal: truncated torn tail of %s at offset %llu (%llu bytes)", path,
		    (unsigned long long)end, (unsigned long long)(size - end));
	j->st.truncated_bytes += size - end;
	return 0;
}

/* A crash between creating the newest segment and writing its header leaves
 * fewer than 16 bytes (or zeros): nothing in it was ever committed. */
static int drop_torn_header(struct fb_journal *j, uint64_t first, const char *path, uint64_t size)
{
	char name[FBJ_NAME_LEN + 1];
	fbj_name(name, first);
	if (unlinkat(j->dirfd, name, 0) < 0) {
		int e = -errno;
		fb_log_err("journal: cannot remove %s (torn header): %s", path, strerror(-e));
		return e;
	}
	fb_log_warn("journal: removed %s: torn or zeroed header (%llu bytes); a new segment "
		    "will be created", path, (unsigned long long)size);
	j->st.truncated_bytes += size;
	return 0;
}

/* XFS and others can leave a zero-filled block after a crash: a header of
 * zeros was never written, so the segment holds nothing committed. */
static int header_is_zero(int fd)
{
	uint8_t h[FBJ_HDR_LEN];
	ssize_t got;
	do
		got = pread(fd, h, sizeof(h), 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(h))
		return 0;
	for (size_t i = 0; i < sizeof(h); i++)
		if (h[i])
			return 0;
	return 1;
}

static int recover_segment(struct fb_journal *j, uint64_t first, int newest,
			   struct recover_ctx *rcx)
{
	char name[FBJ_NAME_LEN + 1], path[PATH_MAX];
	fbj_name(name, first);
	seg_path(j, first, path);
	int fd = openat(j->dirfd, name, (newest ? O_RDWR | O_APPEND : O_RDONLY) | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		int e = -errno;
		fb_log_err("journal: cannot open %s: %s", path, strerror(-e));
		if (fd >= 0)
			close(fd);
		return e;
	}
	uint64_t size = (uint64_t)sb.st_size, end = 0;
	int rc = 0;
	if (newest && (size < FBJ_HDR_LEN || header_is_zero(fd))) {
		close(fd);
		return drop_torn_header(j, first, path, size);
	}
	if (size >= FBJ_HDR_LEN)
		rc = scan_segment(j, fd, first, path, rcx, &end);
	if (rc) {
		fb_log_err("journal: cannot read %s: %s", path, fb_strerror(rc));
	} else if (end < FBJ_HDR_LEN && newest) {
		fb_log_err("journal: %s is not a fabricbus journal segment (bad header); "
			   "move it out of %s and restart", path, j->dir);
		rc = FB_ECORRUPT;
	} else if (end < FBJ_HDR_LEN) {
		fb_log_err("journal: %s has a bad header; its %llu bytes are skipped", path,
			   (unsigned long long)size);
	} else if (end < size && newest) {
		rc = truncate_tail(j, fd, path, end, size);
		size = end;
	} else if (end < size) {
		fb_log_err("journal: corrupt record in %s at offset %llu; skipping the rest of "
			   "this segment (%llu bytes)", path, (unsigned long long)end,
			   (unsigned long long)(size - end));
	}
	rc = rc ? rc : segs_push(j, first, size);
	if (rc || !newest) {
		/* Read once to recover: leave it out of the page cache, as the
		 * writer does (cache_trim). */
		if (j->cache_bytes)
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	} else {
		j->fd = fd;
		j->synced_bytes = size; /* recovery made it durable (truncate_tail syncs) */
	}
	return rc;
}

static int recover(struct fb_journal *j, fb_journal_recover_cb cb, void *arg)
{
	uint64_t *ids;
	size_t n;
	int rc = fbj_list(j->dir, 1, &ids, &n);
	if (rc) {
		fb_log_err("journal: cannot list %s: %s", j->dir, fb_strerror(rc));
		return rc;
	}
	struct recover_ctx *rcx = calloc(1, sizeof(*rcx));
	if (!rcx) {
		free(ids);
		return -ENOMEM;
	}
	rcx->cb = cb;
	rcx->arg = arg;
	for (size_t i = 0; !rc && i < n; i++)
		rc = recover_segment(j, ids[i], i + 1 == n, rcx);
	free(rcx);
	free(ids);
	return rc;
}

/* One writer per directory. A second broker on the same JournalDir
 * numbered its EventIds from the same point and appended to the same
 * segment; the next recovery then cut acked events off as a torn tail. The
 * lock lives on the directory's descriptor, so an exit or a crash frees it. */
static int lock_dir(struct fb_journal *j)
{
	if (flock(j->dirfd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	int e = -errno;
	if (e == -EWOULDBLOCK)
		fb_log_err("journal: %s is in use by another process (another fabricbusd with this "
			   "JournalDir?); each broker needs its own", j->dir);
	else
		fb_log_err("journal: cannot lock %s: %s", j->dir, strerror(-e));
	return e;
}

int fb_journal_open(const struct fb_journal_opts *o, fb_journal_recover_cb cb, void *arg,
		    struct fb_journal **out)
{
	*out = NULL;
	if (!o || !o->dir || !o->dir[0])
		return FB_ECONFIG;
	struct fb_journal *j = calloc(1, sizeof(*j));
	if (!j || !(j->dir = strdup(o->dir))) {
		free(j);
		return -ENOMEM;
	}
	j->fd = j->dirfd = -1;
	pthread_mutex_init(&j->pub_mu, NULL);
	j->segment_bytes = o->segment_bytes ? o->segment_bytes : FBJ_DEFAULT_SEGMENT_BYTES;
	j->retain_bytes = o->retain_bytes;
	j->retain_age_s = o->retain_age_s;
	j->no_sync = o->no_sync;
	j->cache_bytes = o->cache_bytes;
	long page = sysconf(_SC_PAGESIZE);
	j->page_mask = ~(uint64_t)(page > 0 ? page - 1 : 4095);
	int rc = fb_mkdir_p(j->dir, 0750);
	if (!rc && (j->dirfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc)
		fb_log_err("journal: cannot create or open directory %s: %s", j->dir, strerror(-rc));
	rc = rc ? rc : lock_dir(j);
	rc = rc ? rc : recover(j, cb, arg);
	if (rc) {
		fb_journal_close(j);
		return rc;
	}
	publish(j);
	*out = j;
	return 0;
}

void fb_journal_close(struct fb_journal *j)
{
	if (!j)
		return;
	/* Best effort: close is also the error path, so failures are logged by
	 * flush/sync and not returned. */
	if (!j->err && j->stall && j->buf.len + j->in.len)
		fb_log_warn("journal: closing while stalled (%s): %zu bytes of records were never "
			    "written; their agents were not acked and send them again",
			    fb_strerror(j->stall), j->buf.len + j->in.len);
	if (!j->err && j->buf.len + j->in.len)
		(void)fb_journal_flush(j);
	if (!j->err)
		(void)fb_journal_sync(j);
	if (j->fd >= 0)
		close(j->fd);
	if (j->dirfd >= 0)
		close(j->dirfd);
	fb_buf_free(&j->buf);
	fb_buf_free(&j->in);
	pthread_mutex_destroy(&j->pub_mu);
	free(j->segs);
	free(j->dir);
	free(j);
}

/* ---- append and flush -------------------------------------------------- */

int fb_journal_append(struct fb_journal *j, uint64_t event_id, const struct fb_event *ev,
		      const uint8_t *raw, size_t raw_len)
{
	if (j->err)
		return j->err;
	if (!ev || event_id <= j->last_id)
		return -EINVAL;
	if (raw && raw_len > FBJ_PAYLOAD_MAX)
		return FB_ETOOBIG;
	size_t alen = strnlen(ev->agent_id, sizeof(ev->agent_id));
	if (alen == sizeof(ev->agent_id))
		return -EINVAL;
	struct fb_buf *b = &j->in;
	size_t start = b->len;
	/* One reserve: the whole record when the body is given (the common
	 * case, copied in place below), else room for a typical encoding. */
	int rc = fb_buf_reserve(b, FBJ_REC_HDR_LEN + 1 + alen + (raw ? raw_len : 1024));
	if (rc)
		return rc;
	uint8_t *o = b->data + start + FBJ_REC_HDR_LEN;
	*o++ = (uint8_t)alen;
	memcpy(o, ev->agent_id, alen);
	o += alen;
	if (raw) {
		memcpy(o, raw, raw_len);
		o += raw_len;
	}
	b->len = (size_t)(o - b->data);
	rc = raw ? 0 : fb_event_encode(b, ev);
	size_t plen = b->len - start - FBJ_REC_HDR_LEN;
	if (!rc && plen > FBJ_PAYLOAD_MAX)
		rc = FB_ETOOBIG;
	if (rc) {
		b->len = start;
		return rc;
	}
	uint8_t *p = b->data + start;
	fb_store_be32(p, (uint32_t)plen);
	fb_store_be64(p + 8, event_id);
	fb_store_be32(p + 4, fb_crc32c(0, p + 8, 8 + plen));
	j->last_id = event_id;
	j->appended++;
	return 0;
}

int fb_journal_stage(struct fb_journal *j)
{
	if (!j->in.len)
		return 0;
	if (!j->buf.len) {
		/* The common case (everything before is durable): swap, so the
		 * capacities are reused and nothing is copied. */
		struct fb_buf t = j->buf;
		j->buf = j->in;
		j->in = t;
		j->wr = 0;
		return 0;
	}
	int rc = fb_buf_put(&j->buf, j->in.data, j->in.len);
	if (!rc)
		j->in.len = 0;
	return rc;
}

int fb_journal_staged(const struct fb_journal *j) { return j->in.len != 0; }

static uint64_t *active_bytes(struct fb_journal *j) { return &j->segs[j->nsegs - 1].bytes; }

/* Unusable for good: bytes that are not whole records may sit in the active
 * segment and anything appended after them would be lost at recovery. */
static int journal_break(struct fb_journal *j, const char *path, const char *what, int err)
{
	fb_log_err("journal: cannot %s (%s): %s; journal stopped, check the disk and restart",
		   what, path, fb_strerror(err));
	j->err = err;
	return err;
}

static void active_path(const struct fb_journal *j, char out[PATH_MAX])
{
	seg_path(j, j->nsegs ? j->segs[j->nsegs - 1].first : 0, out);
}

/* A write or sync failed but nothing torn is left on disk: keep the records
 * and say so once, then once a minute while it lasts (the broker retries
 * every second). */
#define STALL_LOG_EVERY_NS (60ull * 1000000000ull)

static int stall(struct fb_journal *j, const char *what, int err)
{
	char path[PATH_MAX];
	active_path(j, path);
	uint64_t now = (uint64_t)fb_time_ns();
	if (!j->stall) {
		j->st.stalls++;
		j->stall_since_ns = j->stall_log_ns = now;
		fb_log_err("journal: %s %s failed: %s; nothing more is acked until it can be written "
			   "again (free space in %s); the %zu bytes of records waiting are kept and "
			   "retried", what, path, fb_strerror(err), j->dir, j->buf.len);
	} else if (now - j->stall_log_ns >= STALL_LOG_EVERY_NS) {
		j->stall_log_ns = now;
		fb_log_err("journal: still cannot write %s: %s, for %llu s now; %zu bytes of records "
			   "waiting (free space in %s)", path, fb_strerror(err),
			   (unsigned long long)((now - j->stall_since_ns) / 1000000000ull), j->buf.len,
			   j->dir);
	}
	j->stall = err;
	return err;
}

static void stall_over(struct fb_journal *j)
{
	if (!j->stall)
		return;
	fb_log_info("journal: %s is writable again after %.1f s; acking resumes", j->dir,
		    (double)((uint64_t)fb_time_ns() - j->stall_since_ns) / 1e9);
	j->stall = 0;
	j->stall_since_ns = 0;
}

/* The records before wr are durable (or, with no_sync, never rewritten). */
static void drop_written(struct fb_journal *j)
{
	if (!j->wr)
		return; /* also: no buffer at all yet */
	memmove(j->buf.data, j->buf.data + j->wr, j->buf.len - j->wr);
	j->buf.len -= j->wr;
	j->wr = 0;
}

static int seg_create(struct fb_journal *j, uint64_t first)
{
	char name[FBJ_NAME_LEN + 1], path[PATH_MAX];
	uint8_t hdr[FBJ_HDR_LEN];
	fbj_name(name, first);
	seg_path(j, first, path);
	fbj_put_hdr(hdr, first);
	/* O_EXCL: a name clash would mean two segments claim the same ids. */
	int fd = openat(j->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0640);
	int rc = fd < 0 ? -errno : fb_write_all(fd, hdr, sizeof(hdr));
	/* The new name must survive a crash, or its records vanish with it. */
	if (!rc && fsync(j->dirfd) < 0)
		rc = -errno;
	rc = rc ? rc : segs_push(j, first, FBJ_HDR_LEN);
	if (rc) {
		/* A full disk fails the header write: remove the file, or the
		 * retry's O_EXCL would fail on it for good. */
		if (fd >= 0) {
			close(fd);
			if (unlinkat(j->dirfd, name, 0) < 0)
				return journal_break(j, path, "remove the half-created segment",
						     -errno);
		}
		return rc;
	}
	j->fd = fd;
	j->dirty = 1;
	j->synced_bytes = FBJ_HDR_LEN;
	j->uncached = 0;
	return 0;
}

/* The page cache behind a sync. The journal is written once and read back
 * rarely (a subscriber past the ring, Kafka after an outage), so of what is
 * durable only the newest `keep` bytes stay cached: older pages are clean
 * and are dropped at once, and the kernel hands them to the next writes.
 * Left alone, a broker writing ~100 MB/s fills the page cache with journal
 * that the kernel must later reclaim, and each write takes a page never
 * touched for a while: on a VM that returns free memory to its host (free
 * page reporting, as on this project's CI machine) such a page costs a
 * host fault. There, writing 500 MB into the page cache took 0.09 s with
 * just-freed pages and 0.7-0.9 s with pages idle for 5 s. Only synced
 * bytes: DONTNEED would start writeback of dirty ones, not drop them. */
static void cache_trim(struct fb_journal *j, uint64_t keep)
{
	if (!j->cache_bytes || j->fd < 0 || j->synced_bytes <= keep)
		return;
	uint64_t to = (j->synced_bytes - keep) & j->page_mask;
	if (to <= j->uncached)
		return;
	/* From the start each time: the kernel skips a large folio that
	 * straddles either end of the range, so the one left at the last end
	 * goes now; what is already gone costs the walk nothing. Advice only:
	 * a failure leaves the pages to the kernel's reclaim. */
	(void)posix_fadvise(j->fd, 0, (off_t)to, POSIX_FADV_DONTNEED);
	j->uncached = to;
}

static int journal_sync(struct fb_journal *j, uint64_t keep);

/* Make the finished segment durable before starting the next one, so a
 * crash can only ever tear the newest segment, which recovery repairs. */
static int seg_roll(struct fb_journal *j, uint64_t next_first)
{
	/* The whole segment leaves the cache: the window goes on in the new
	 * one (one fadvise, not a window's and then the rest). */
	int rc = journal_sync(j, 0);
	publish(j);
	if (rc)
		return rc;
	cache_trim(j, 0); /* when there was nothing left to sync */
	close(j->fd);
	j->fd = -1;
	rc = seg_create(j, next_first);
	if (rc)
		return rc;
	(void)fb_journal_retain(j, time(NULL)); /* logs its own failures */
	return 0;
}

/* How many leading bytes of the buffered records fit in the active segment,
 * on record boundaries. A segment always takes at least one record, so a
 * record larger than segment_bytes is still stored. */
static size_t fit_prefix(const struct fb_journal *j, const uint8_t *p, size_t left)
{
	uint64_t used = j->segs[j->nsegs - 1].bytes;
	uint64_t room = j->segment_bytes > used ? j->segment_bytes - used : 0;
	if (left <= room)
		return left;
	size_t n = 0;
	while (n < left) {
		size_t t = FBJ_REC_HDR_LEN + fb_load_be32(p + n);
		if (n + t > room) {
			if (n == 0 && used <= FBJ_HDR_LEN)
				n = t;
			break;
		}
		n += t;
	}
	return n;
}

static int flush_some(struct fb_journal *j, const uint8_t *p, size_t left, size_t *done)
{
	uint64_t id = fb_load_be64(p + 8);
	if (j->fd < 0)
		return seg_create(j, id);
	size_t n = fit_prefix(j, p, left);
	if (n == 0)
		return seg_roll(j, id);
	int rc = fb_write_all(j->fd, p, n);
	if (rc)
		return rc;
	j->dirty = 1;
	*active_bytes(j) += n;
	j->total_bytes += n;
	*done = n;
	return 0;
}

/* A write that failed part-way left part of a record at the end of the
 * active segment: cut it, so that the retry appends whole records after
 * whole records (recovery would cut it too, but only at the end). */
static int flush_failed(struct fb_journal *j, int err)
{
	if (j->err)
		return j->err;
	char path[PATH_MAX];
	active_path(j, path);
	if (j->fd >= 0 && ftruncate(j->fd, (off_t)*active_bytes(j)) < 0)
		return journal_break(j, path, "cut a torn write off", -errno);
	return stall(j, "write to", err);
}

static int journal_write(struct fb_journal *j);

int fb_journal_flush(struct fb_journal *j)
{
	int rc = fb_journal_stage(j);
	return rc ? rc : fb_journal_write(j);
}

int fb_journal_write(struct fb_journal *j)
{
	int rc = journal_write(j);
	publish(j);
	return rc;
}

static int journal_write(struct fb_journal *j)
{
	if (j->err)
		return j->err;
	/* j->wr, not a local: a roll's sync inside flush_some drops the
	 * records it made durable and moves wr back to 0. */
	while (j->wr < j->buf.len) {
		size_t done = 0;
		int rc = flush_some(j, j->buf.data + j->wr, j->buf.len - j->wr, &done);
		if (rc)
			return flush_failed(j, rc);
		j->wr += done;
	}
	if (j->no_sync) {
		drop_written(j);
		stall_over(j);
	}
	return 0;
}

/* After a failed fdatasync the page cache may have dropped the dirty pages
 * (and a second fdatasync would report success for them): cut the segment
 * back to its last good sync and write the kept records again. */
static int sync_failed(struct fb_journal *j, int err)
{
	char path[PATH_MAX];
	active_path(j, path);
	if (j->no_sync)
		return journal_break(j, path, "fdatasync", err);
	if (ftruncate(j->fd, (off_t)j->synced_bytes) < 0)
		return journal_break(j, path, "cut records whose fdatasync failed", -errno);
	uint64_t *ab = active_bytes(j);
	j->total_bytes -= *ab - j->synced_bytes;
	*ab = j->synced_bytes;
	j->wr = 0;
	return stall(j, "fdatasync", err);
}

int fb_journal_sync(struct fb_journal *j)
{
	int rc = journal_sync(j, j->cache_bytes);
	publish(j);
	return rc;
}

/* fdatasync, then drop the synced pages but the newest keep bytes. */
static int journal_sync(struct fb_journal *j, uint64_t keep)
{
	if (j->err)
		return j->err;
	if (j->fd < 0 || !j->dirty) {
		if (j->wr == j->buf.len)
			stall_over(j);
		return 0;
	}
	int64_t t0 = fb_time_ns();
	if (fdatasync(j->fd) < 0)
		return sync_failed(j, -errno);
	j->dirty = 0;
	j->st.syncs++;
	fb_metric_observe(j->sync_hist, (double)(fb_time_ns() - t0) / 1e9);
	j->synced_bytes = *active_bytes(j);
	cache_trim(j, keep);
	drop_written(j);
	if (j->wr == j->buf.len)
		stall_over(j);
	return 0;
}

void fb_journal_set_sync_metric(struct fb_journal *j, struct fb_metric *hist) { j->sync_hist = hist; }

/* ---- retention and stats ----------------------------------------------- */

static int seg_expired(const struct fb_journal *j, uint64_t first, time_t now)
{
	char name[FBJ_NAME_LEN + 1];
	struct stat sb;
	if (!j->retain_age_s)
		return 0;
	fbj_name(name, first);
	if (fstatat(j->dirfd, name, &sb, 0) < 0)
		return errno == ENOENT; /* already gone: drop it from the list */
	/* mtime is the time of the last write, i.e. of the newest record. */
	return (uint64_t)sb.st_mtime + j->retain_age_s < (uint64_t)now;
}

static int seg_remove_oldest(struct fb_journal *j, const char *why)
{
	char name[FBJ_NAME_LEN + 1], path[PATH_MAX];
	struct fbj_seg s = j->segs[0];
	fbj_name(name, s.first);
	seg_path(j, s.first, path);
	if (unlinkat(j->dirfd, name, 0) < 0 && errno != ENOENT) {
		int e = -errno;
		fb_log_err("journal: cannot remove %s for retention: %s", path, strerror(-e));
		return e;
	}
	fb_log_info("journal: removed %s (%llu bytes, %s)", path, (unsigned long long)s.bytes, why);
	memmove(j->segs, j->segs + 1, (j->nsegs - 1) * sizeof(*j->segs));
	j->nsegs--;
	j->total_bytes -= s.bytes;
	j->st.removed_segments++;
	return 0;
}

static int journal_retain(struct fb_journal *j, time_t now);

int fb_journal_retain(struct fb_journal *j, time_t now)
{
	int rc = journal_retain(j, now);
	publish(j);
	return rc;
}

static int journal_retain(struct fb_journal *j, time_t now)
{
	/* The newest segment stays even when no segment is open, so readers
	 * always find where the journal ends. */
	while (j->nsegs > 1) {
		const char *why = NULL;
		if (j->retain_bytes && j->total_bytes > j->retain_bytes)
			why = "over retain_bytes";
		else if (seg_expired(j, j->segs[0].first, now))
			why = "older than retain_age_s";
		if (!why)
			return 0;
		int rc = seg_remove_oldest(j, why);
		if (rc)
			return rc;
	}
	return 0;
}

void fb_journal_get_stats(const struct fb_journal *j, struct fb_journal_stats *st)
{
	struct fb_journal *w = (struct fb_journal *)j; /* the mutex only */
	pthread_mutex_lock(&w->pub_mu);
	*st = j->pub;
	pthread_mutex_unlock(&w->pub_mu);
	st->appended = j->appended;
	st->last_id = j->last_id;
	if (!j->last_id)
		st->first_id = 0;
	st->stalled_for_ms = st->stalled ? ((uint64_t)fb_time_ns() - st->stalled_for_ms) / 1000000u : 0;
	st->waiting_bytes += j->in.len;
}

int fb_journal_broken(const struct fb_journal *j) { return atomic_load(&j->err); }

const char *fb_journal_dir(const struct fb_journal *j) { return j->dir; }
