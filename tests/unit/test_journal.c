/* test_journal.c - the journal: append/flush/read round trip, crash
 * recovery (torn and corrupt tails), segment rolling, retention by size and
 * age, readers that follow the writer across segments and retention, the
 * page cache it leaves behind a sync (JournalCacheSize), and the sync
 * thread (journal_worker.c) that writes while the loop appends. */
#include "fb_test.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_wire.h"
#include "journal.h"
#include "journal_worker.h"
#include "test_journal_files.h"

#include <dirent.h>
#include <stdatomic.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static void make_event(struct fb_event *ev, uint64_t id)
{
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->agent_id, sizeof(ev->agent_id), "agent-%u", (unsigned)(id % 3));
	ev->seq = id;
	ev->ts_ns = id * 1000;
	ev->kind = FB_KIND_LINK_DOWN;
	ev->severity = FB_SEV_WARNING;
	ev->link_class = FB_LINK_HOST;
	ev->tech = FB_TECH_IB;
	ev->subj.port = (uint16_t)(id % 40);
	snprintf(ev->subj.node, sizeof(ev->subj.node), "node%03u", (unsigned)(id % 1000));
	fb_event_add_counter(ev, FB_CTR_SYMBOL_ERROR, id * 3);
}

/* 1 if ev is what make_event(id) produced, agent id included. */
static int event_matches(const struct fb_event *ev, uint64_t id)
{
	struct fb_event want;
	make_event(&want, id);
	return strcmp(ev->agent_id, want.agent_id) == 0 && ev->seq == id &&
	       ev->ts_ns == want.ts_ns && ev->kind == want.kind && ev->subj.port == want.subj.port &&
	       strcmp(ev->subj.node, want.subj.node) == 0 && ev->n_counters == 1 &&
	       ev->counters[0].value == id * 3;
}

static struct fb_journal *jopen(const char *dir, uint64_t seg, uint64_t retain, uint64_t age,
				fb_journal_recover_cb cb, void *arg)
{
	struct fb_journal_opts o = { dir, seg, retain, age, 0, 0 };
	struct fb_journal *j = NULL;
	return fb_journal_open(&o, cb, arg, &j) == 0 ? j : NULL;
}

/* Append ids from..to (every third one as pre-encoded raw bytes, like the
 * ingest path), flushing every `batch` records. 0 or the first error. */
static int append_range(struct fb_journal *j, uint64_t from, uint64_t to, unsigned batch)
{
	struct fb_buf raw = FB_BUF_INIT;
	int rc = 0;
	for (uint64_t id = from; !rc && id <= to; id++) {
		struct fb_event ev;
		make_event(&ev, id);
		if (id % 3 == 0) {
			fb_buf_reset(&raw);
			rc = fb_event_encode(&raw, &ev);
			rc = rc ? rc : fb_journal_append(j, id, &ev, raw.data, raw.len);
		} else {
			rc = fb_journal_append(j, id, &ev, NULL, 0);
		}
		if (!rc && (id - from + 1) % batch == 0)
			rc = fb_journal_flush(j);
	}
	fb_buf_free(&raw);
	return rc ? rc : fb_journal_flush(j);
}

/* A fresh journal in dir with ids 1..mid, then mid+1..last, closed. *mid_end
 * and *end get its size in bytes after each part: where a torn or corrupt
 * last record begins and ends. 0, or -1 if any step failed. */
static int write_in_two_parts(const char *dir, uint64_t mid, uint64_t last, uint64_t *mid_end,
			      uint64_t *end)
{
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, NULL, NULL);
	if (!j)
		return -1;
	struct fb_journal_stats st;
	int rc = append_range(j, 1, mid, 100);
	fb_journal_get_stats(j, &st);
	*mid_end = st.bytes;
	rc = rc ? rc : append_range(j, mid + 1, last, 100);
	fb_journal_get_stats(j, &st);
	*end = st.bytes;
	fb_journal_close(j);
	return rc ? -1 : 0;
}

struct recovered {
	uint64_t count, last_id;
	int bad; /* out of order, or not the event that was written */
};

static void on_recover(void *arg, uint64_t id, const struct fb_event *ev)
{
	struct recovered *r = arg;
	if (id <= r->last_id || !event_matches(ev, id))
		r->bad = 1;
	r->count++;
	r->last_id = id;
}

/* Open dir again (1 MiB segments) as the broker does at start, keep what
 * recovery replays in *rec and the stats in *st (when not NULL), close it.
 * 0, or -1 if it did not open. */
static int reopen(const char *dir, struct recovered *rec, struct fb_journal_stats *st)
{
	*rec = (struct recovered){ 0 };
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, on_recover, rec);
	if (!j)
		return -1;
	if (st)
		fb_journal_get_stats(j, st);
	fb_journal_close(j);
	return 0;
}

struct readout {
	uint64_t count, first, last;
	int bad, rc; /* rc: the return that ended the loop */
};

/* Drain a reader up to limit, checking order and content. */
static void drain(struct fb_journal_reader *r, uint64_t limit, struct readout *o)
{
	uint64_t id;
	struct fb_event ev;
	while ((o->rc = fb_journal_reader_next(r, limit, &id, &ev)) == 1) {
		if (id <= o->last || id > limit || !event_matches(&ev, id))
			o->bad = 1;
		if (!o->count)
			o->first = id;
		o->count++;
		o->last = id;
	}
}

/* Drain a new reader of dir from the start to the end into o, then close
 * it: 0, or fb_journal_reader_open's error. */
/* Read dir from its start to the first gap, then on to the end. *o holds
 * both parts; *first_rc, *gap and *before_gap say how the first ended (its
 * return, fb_journal_reader_gap, the last id read before the gap). */
static void read_across_gap(const char *dir, struct readout *o, int *first_rc, uint64_t *gap,
			    uint64_t *before_gap)
{
	struct fb_journal_reader *r;
	*o = (struct readout){ 0 };
	CHECK_EQ(fb_journal_reader_open(dir, 0, &r), 0);
	drain(r, UINT64_MAX, o);
	*first_rc = o->rc;
	*gap = fb_journal_reader_gap(r);
	*before_gap = o->last;
	drain(r, UINT64_MAX, o);
	fb_journal_reader_close(r);
}

static int read_all(const char *dir, struct readout *o)
{
	struct fb_journal_reader *r;
	int rc = fb_journal_reader_open(dir, 0, &r);
	if (rc)
		return rc;
	drain(r, UINT64_MAX, o);
	fb_journal_reader_close(r);
	return 0;
}

/* Each test gets a fresh directory, removed afterwards even on failure. */
#define DIR_TEST(name)                                                              \
	static void name##_in(const char *dir);                                     \
	static void name(void)                                                      \
	{                                                                           \
		char d[] = "/tmp/fbj-test-XXXXXX";                                  \
		CHECK(mkdtemp(d) != NULL);                                          \
		name##_in(d);                                                       \
		rm_dir(d);                                                          \
	}                                                                           \
	static void name##_in(const char *dir)

/* A full disk for the journal's files: files may grow to cur bytes, and
 * writes past that fail with EFBIG instead of raising SIGXFSZ. Restore with
 * setrlimit(RLIMIT_FSIZE, old) and signal(SIGXFSZ, *prev). */
static int limit_file_size(rlim_t cur, struct rlimit *old, void (**prev)(int))
{
	if (getrlimit(RLIMIT_FSIZE, old) != 0)
		return -errno;
	*prev = signal(SIGXFSZ, SIG_IGN);
	struct rlimit lim = *old;
	lim.rlim_cur = cur;
	return setrlimit(RLIMIT_FSIZE, &lim) == 0 ? 0 : -errno;
}

/* ---- tests -------------------------------------------------------------- */

DIR_TEST(journal_roundtrip_append_read)
{
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.last_id, 0);
	CHECK_EQ(st.segments, 0);
	CHECK_EQ(append_range(j, 1, 100, 1000), 0);
	CHECK_EQ(fb_journal_sync(j), 0);
	struct fb_event ev;
	make_event(&ev, 100);
	CHECK_EQ(fb_journal_append(j, 100, &ev, NULL, 0), -EINVAL); /* ids only grow */
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.appended, 100);
	CHECK_EQ(st.first_id, 1);
	CHECK_EQ(st.last_id, 100);
	CHECK_EQ(st.segments, 1);
	CHECK_EQ(st.syncs, 1);
	CHECK_EQ(file_size(dir, 1), (long long)st.bytes);

	/* The documented layout: header, then u32 len | u32 crc | u64 id. */
	uint8_t hdr[32];
	CHECK_EQ(read_at(dir, 1, 0, hdr, sizeof(hdr)), 0);
	CHECK(memcmp(hdr, "FBJ1", 4) == 0);
	CHECK_EQ(fb_load_be32(hdr + 4), 1);
	CHECK_EQ(fb_load_be64(hdr + 8), 1);
	CHECK_EQ(fb_load_be64(hdr + 24), 1);

	struct fb_journal_reader *r;
	CHECK_EQ(fb_journal_reader_open(dir, 0, &r), 0);
	struct readout o = { 0 };
	drain(r, 50, &o); /* stops at the limit... */
	CHECK_EQ(o.rc, 0);
	CHECK_EQ(o.count, 50);
	drain(r, 100, &o); /* ...and resumes right after it */
	fb_journal_reader_close(r);
	CHECK_EQ(o.rc, 0);
	CHECK(!o.bad);
	CHECK_EQ(o.first, 1);
	CHECK_EQ(o.count, 100);
	CHECK_EQ(o.last, 100);

	struct readout o2 = { 0 };
	CHECK_EQ(fb_journal_reader_open(dir, 90, &r), 0);
	drain(r, UINT64_MAX, &o2);
	fb_journal_reader_close(r);
	CHECK_EQ(o2.first, 91);
	CHECK_EQ(o2.count, 10);
	fb_journal_close(j);
}

DIR_TEST(journal_recovers_torn_tail)
{
	uint64_t good_end, end;
	CHECK_EQ(write_in_two_parts(dir, 9, 10, &good_end, &end), 0);

	/* A crash in the middle of record 10, then junk past it. */
	CHECK_EQ(truncate_seg(dir, 1, (off_t)good_end + 20), 0);
	static const uint8_t junk[13] = { 0xAB, 0xCD, 0xEF, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	CHECK_EQ(write_at(dir, 1, 0, junk, sizeof(junk), 1), 0);

	struct recovered rec = { 0 };
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	CHECK_EQ(rec.count, 9);
	CHECK_EQ(rec.last_id, 9);
	CHECK(!rec.bad);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.truncated_bytes, 20 + sizeof(junk));
	CHECK_EQ(st.last_id, 9);
	CHECK_EQ(file_size(dir, 1), (long long)good_end);

	CHECK_EQ(append_range(j, 10, 12, 100), 0);
	fb_journal_close(j);
	struct recovered rec2;
	CHECK_EQ(reopen(dir, &rec2, &st), 0);
	CHECK_EQ(rec2.count, 12);
	CHECK_EQ(rec2.last_id, 12);
	CHECK(!rec2.bad);
	CHECK_EQ(st.truncated_bytes, 0);
}

DIR_TEST(journal_crc_corruption_truncates_tail)
{
	uint64_t good_end, full;
	CHECK_EQ(write_in_two_parts(dir, 4, 5, &good_end, &full), 0);

	uint8_t b;
	CHECK_EQ(read_at(dir, 1, (off_t)full - 3, &b, 1), 0);
	b ^= 0x01;
	CHECK_EQ(write_at(dir, 1, (off_t)full - 3, &b, 1, 0), 0);

	struct recovered rec = { 0 };
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(rec.count, 4);
	CHECK_EQ(st.truncated_bytes, full - good_end);
	CHECK_EQ(file_size(dir, 1), (long long)good_end);
	CHECK_EQ(append_range(j, 5, 6, 100), 0);
	fb_journal_close(j);

	struct readout o = { 0 };
	CHECK_EQ(read_all(dir, &o), 0);
	CHECK_EQ(o.count, 6);
	CHECK(!o.bad);
}

DIR_TEST(journal_rolls_segments)
{
	struct fb_journal *j = jopen(dir, 4096, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 150, 10), 0);
	CHECK_EQ(append_range(j, 151, 300, 1000), 0); /* one flush crossing several rolls */
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	fb_journal_close(j);

	uint64_t ids[256];
	size_t n = list_segs(dir, ids, 256);
	CHECK(n > 5);
	CHECK_EQ(st.segments, n);
	CHECK(st.syncs >= n - 1); /* every finished segment was synced */
	long long total = 0;
	for (size_t i = 0; i < n; i++) {
		long long sz = file_size(dir, ids[i]);
		CHECK(sz > 16 && sz <= 4096); /* records never span segments */
		total += sz;
		/* Named after its first record. */
		uint8_t b[8];
		CHECK_EQ(read_at(dir, ids[i], 24, b, 8), 0);
		CHECK_EQ(fb_load_be64(b), ids[i]);
	}
	CHECK_EQ(total, (long long)st.bytes);

	struct readout o = { 0 };
	CHECK_EQ(read_all(dir, &o), 0);
	CHECK(!o.bad);
	CHECK_EQ(o.count, 300);

	/* A record bigger than a segment still goes in, one per segment. */
	char d2[600];
	snprintf(d2, sizeof(d2), "%s/tiny", dir);
	j = jopen(d2, 40, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 5, 100), 0);
	fb_journal_get_stats(j, &st);
	fb_journal_close(j);
	rm_dir(d2);
	CHECK_EQ(st.segments, 5);
}

DIR_TEST(journal_retention_by_size)
{
	struct fb_journal *j = jopen(dir, 4096, 10000, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 500, 10), 0);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	fb_journal_close(j);
	CHECK(st.removed_segments > 0);
	CHECK(st.bytes <= 10000 + 4096);
	CHECK(st.first_id > 1);
	uint64_t ids[256];
	size_t n = list_segs(dir, ids, 256);
	CHECK_EQ(n, st.segments);
	CHECK_EQ(ids[0], st.first_id);

	struct readout o = { 0 };
	CHECK_EQ(read_all(dir, &o), 0);
	CHECK_EQ(o.rc, 0);
	CHECK_EQ(o.first, st.first_id);
	CHECK_EQ(o.last, 500);
}

DIR_TEST(journal_retention_by_age)
{
	struct fb_journal *j = jopen(dir, 4096, 0, 3600, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 150, 10), 0);
	uint64_t ids[256];
	size_t n = list_segs(dir, ids, 256);
	CHECK(n >= 4);
	time_t now = time(NULL);
	CHECK_EQ(fb_journal_retain(j, now), 0); /* nothing old yet */
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.removed_segments, 0);

	CHECK_EQ(set_mtime(dir, ids[0], now - 7200), 0);
	CHECK_EQ(set_mtime(dir, ids[1], now - 7200), 0);
	CHECK_EQ(fb_journal_retain(j, now), 0);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.removed_segments, 2);
	CHECK_EQ(file_size(dir, ids[0]), -1);
	CHECK_EQ(file_size(dir, ids[1]), -1);
	CHECK(file_size(dir, ids[2]) > 0);
	CHECK_EQ(st.first_id, ids[2]);

	/* Everything old: all but the active segment go. */
	for (size_t i = 2; i < n; i++)
		CHECK_EQ(set_mtime(dir, ids[i], now - 7200), 0);
	CHECK_EQ(fb_journal_retain(j, now), 0);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.segments, 1);
	CHECK(file_size(dir, ids[n - 1]) > 0);
	CHECK_EQ(append_range(j, 151, 160, 100), 0); /* still writable */
	fb_journal_close(j);
}

DIR_TEST(journal_reader_follows_new_segments)
{
	struct fb_journal *j = jopen(dir, 2048, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	struct fb_journal_reader *r;
	CHECK_EQ(fb_journal_reader_open(dir, 0, &r), 0); /* before any segment */
	struct readout o = { 0 };
	drain(r, 10, &o);
	CHECK_EQ(o.count, 0);
	CHECK_EQ(append_range(j, 1, 10, 100), 0);
	drain(r, 10, &o);
	CHECK_EQ(o.count, 10);

	CHECK_EQ(append_range(j, 11, 100, 7), 0);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK(st.segments > 3);
	drain(r, 60, &o); /* on disk up to 100, committed up to 60 */
	CHECK_EQ(o.rc, 0);
	CHECK_EQ(o.last, 60);
	drain(r, 100, &o);
	CHECK_EQ(o.last, 100);
	CHECK_EQ(o.count, 100);
	CHECK(!o.bad);
	fb_journal_reader_close(r);
	fb_journal_close(j);
}

DIR_TEST(journal_reader_respects_limit_between_ids)
{
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	/* Ids may skip; the limit still falls between records. */
	for (uint64_t id = 10; id <= 30; id += 10) {
		struct fb_event ev;
		make_event(&ev, id);
		CHECK_EQ(fb_journal_append(j, id, &ev, NULL, 0), 0);
	}
	CHECK_EQ(fb_journal_flush(j), 0);
	fb_journal_close(j);
	struct fb_journal_reader *r;
	CHECK_EQ(fb_journal_reader_open(dir, 0, &r), 0);
	struct readout o = { 0 };
	drain(r, 25, &o);
	int n25 = (int)o.count;
	drain(r, 30, &o);
	fb_journal_reader_close(r);
	CHECK_EQ(n25, 2);
	CHECK_EQ(o.count, 3);
	CHECK_EQ(o.last, 30);
	CHECK(!o.bad);
}

DIR_TEST(journal_reader_waits_for_partial_record)
{
	uint64_t end3, end5;
	CHECK_EQ(write_in_two_parts(dir, 3, 5, &end3, &end5), 0);

	/* Replay the file as if record 4 were half written. */
	size_t full = (size_t)end5;
	uint8_t *all = malloc(full);
	CHECK(all != NULL);
	int ok = read_at(dir, 1, 0, all, full) == 0 && truncate_seg(dir, 1, (off_t)end3 + 10) == 0;
	struct fb_journal_reader *r = NULL;
	struct readout o = { 0 };
	if (ok && fb_journal_reader_open(dir, 0, &r) == 0) {
		drain(r, UINT64_MAX, &o);
		ok = o.rc == 0 && o.count == 3;
		ok = ok && write_at(dir, 1, 0, all + end3 + 10, full - end3 - 10, 1) == 0;
		drain(r, UINT64_MAX, &o);
	}
	fb_journal_reader_close(r);
	free(all);
	CHECK(ok);
	CHECK_EQ(o.count, 5);
	CHECK(!o.bad);
}

DIR_TEST(journal_reader_gone_after_retention)
{
	struct fb_journal *j = jopen(dir, 2048, 5000, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 300, 10), 0);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK(st.first_id > 6);

	struct fb_journal_reader *r;
	uint64_t id;
	struct fb_event ev;
	CHECK_EQ(fb_journal_reader_open(dir, 5, &r), 0);
	int rc = fb_journal_reader_next(r, 300, &id, &ev);
	uint64_t gap = fb_journal_reader_gap(r);
	struct readout o = { 0 };
	drain(r, 300, &o);
	fb_journal_reader_close(r);
	CHECK_EQ(rc, FB_EGONE);
	CHECK_EQ(gap, st.first_id);
	CHECK_EQ(o.first, st.first_id);
	CHECK_EQ(o.last, 300);
	CHECK(!o.bad);

	/* A reader inside a segment that retention unlinks keeps reading its
	 * fd, then learns the next records are gone. */
	CHECK_EQ(fb_journal_reader_open(dir, 0, &r), 0);
	struct readout o2 = { 0 };
	drain(r, st.first_id + 2, &o2);
	CHECK_EQ(o2.count, 3);
	CHECK_EQ(append_range(j, 301, 600, 10), 0);
	fb_journal_get_stats(j, &st);
	CHECK(file_size(dir, o2.first) == -1); /* its segment is unlinked */
	drain(r, 600, &o2);
	int rc2 = o2.rc;
	uint64_t gap2 = fb_journal_reader_gap(r);
	struct readout o3 = { 0 };
	drain(r, 600, &o3);
	fb_journal_reader_close(r);
	fb_journal_close(j);
	CHECK_EQ(rc2, FB_EGONE);
	CHECK(gap2 > o2.last + 1);
	CHECK_EQ(o3.first, gap2);
	CHECK_EQ(o3.last, 600);
	CHECK(!o2.bad && !o3.bad);
}

/* A file size limit (RLIMIT_FSIZE) makes write(2) fail part-way with EFBIG
 * as a full disk does with ENOSPC, without root or a tmpfs: the journal
 * stalls (not broken), cuts what the failed write tore off, keeps the
 * records, and writes them all once the limit is lifted; nothing is lost,
 * nothing torn is left for recovery to cut. */
DIR_TEST(journal_write_failure_stalls_and_retries)
{
	struct fb_journal *j = jopen(dir, 4096, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 10, 5), 0);
	CHECK_EQ(fb_journal_sync(j), 0);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	long long before = file_size(dir, 1);
	CHECK(before > 0);
	struct rlimit old;
	void (*prev)(int);
	CHECK_EQ(limit_file_size((rlim_t)before + 300, &old, &prev), 0); /* part of the next flush */
	int rc = append_range(j, 11, 60, 100);
	CHECK_EQ(rc, -EFBIG);
	CHECK_EQ(fb_journal_broken(j), 0);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.stalled, -EFBIG);
	CHECK_EQ(st.stalls, 1);
	CHECK(st.waiting_bytes > 0);
	CHECK_EQ(file_size(dir, 1), before); /* the torn part is cut again */
	CHECK_EQ(fb_journal_flush(j), -EFBIG); /* still full: still one stall */
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.stalls, 1);
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	CHECK_EQ(fb_journal_flush(j), 0);
	CHECK_EQ(fb_journal_sync(j), 0);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.stalled, 0);
	CHECK_EQ(st.waiting_bytes, 0);
	CHECK_EQ(st.last_id, 60);
	CHECK(st.segments > 1); /* it rolled past 4096 once it could write */
	fb_journal_close(j);

	struct recovered rec = { 0, 0, 0 };
	j = jopen(dir, 4096, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(rec.count, 60);
	CHECK(!rec.bad);
	CHECK_EQ(st.truncated_bytes, 0);
	fb_journal_close(j);
}

DIR_TEST(journal_reopen_keeps_ids)
{
	struct fb_journal *j = jopen(dir, 2048, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1000, 1049, 10), 0);
	struct fb_journal_stats st1, st2;
	fb_journal_get_stats(j, &st1);
	fb_journal_close(j);
	CHECK(file_size(dir, 1000) > 0); /* first segment named after the first id */

	struct recovered rec = { 999, 999, 0 };
	j = jopen(dir, 2048, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	fb_journal_get_stats(j, &st2);
	CHECK_EQ(rec.count, 999 + 50);
	CHECK(!rec.bad);
	CHECK_EQ(st2.last_id, 1049);
	CHECK_EQ(st2.first_id, 1000);
	CHECK_EQ(st2.segments, st1.segments);
	CHECK_EQ(st2.bytes, st1.bytes);
	CHECK_EQ(st2.appended, 0);
	struct fb_event ev;
	make_event(&ev, 1049);
	CHECK_EQ(fb_journal_append(j, 1049, &ev, NULL, 0), -EINVAL);
	CHECK_EQ(append_range(j, 1050, 1060, 100), 0);
	fb_journal_close(j);

	struct recovered rec2 = { 999, 999, 0 };
	j = jopen(dir, 2048, 0, 0, on_recover, &rec2);
	CHECK(j != NULL);
	fb_journal_close(j);
	CHECK_EQ(rec2.last_id, 1060);
	CHECK_EQ(rec2.count, 999 + 61);
	CHECK(!rec2.bad);
}

DIR_TEST(journal_torn_header_segment_recreated)
{
	struct fb_journal *j = jopen(dir, 2048, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 40, 10), 0);
	fb_journal_close(j);
	/* A crash right after creating segment 41: only part of a header. */
	CHECK_EQ(write_at(dir, 41, 0, "FBJ1\0\0", 6, 0), 0);
	/* Other files in the directory are left alone. */
	char p[512];
	snprintf(p, sizeof(p), "%s/123.fbj", dir);
	int fd = open(p, O_WRONLY | O_CREAT, 0640);
	CHECK(fd >= 0);
	close(fd);

	struct recovered rec = { 0 };
	j = jopen(dir, 2048, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.truncated_bytes, 6);
	CHECK_EQ(file_size(dir, 41), -1);
	CHECK_EQ(rec.count, 40);
	CHECK_EQ(append_range(j, 41, 45, 100), 0);
	fb_journal_close(j);
	CHECK(file_size(dir, 41) > 16);
	CHECK_EQ(access(p, F_OK), 0);

	/* A zero-filled newest segment (a crash on XFS) is treated the same. */
	static const uint8_t zeros[4096];
	CHECK_EQ(write_at(dir, 46, 0, zeros, sizeof(zeros), 0), 0);
	struct recovered rec2 = { 0 };
	j = jopen(dir, 2048, 0, 0, on_recover, &rec2);
	CHECK(j != NULL);
	fb_journal_get_stats(j, &st);
	fb_journal_close(j);
	CHECK_EQ(st.truncated_bytes, sizeof(zeros));
	CHECK_EQ(file_size(dir, 46), -1);
	CHECK_EQ(rec2.count, 45);
}

DIR_TEST(journal_older_segment_corruption_skipped)
{
	struct fb_journal *j = jopen(dir, 2048, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 60, 10), 0);
	fb_journal_close(j);
	uint64_t ids[64];
	size_t n = list_segs(dir, ids, 64);
	CHECK(n >= 3);
	/* Break the third record of the first segment. */
	long long size0 = file_size(dir, ids[0]);
	uint8_t b;
	CHECK_EQ(read_at(dir, ids[0], 16 + 16 * 3 + 200, &b, 1), 0);
	b ^= 0x80;
	CHECK_EQ(write_at(dir, ids[0], 16 + 16 * 3 + 200, &b, 1, 0), 0);

	struct recovered rec = { 0 };
	j = jopen(dir, 2048, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	fb_journal_close(j);
	CHECK_EQ(file_size(dir, ids[0]), size0); /* older segments are not truncated */
	CHECK_EQ(st.truncated_bytes, 0);
	CHECK_EQ(rec.count, 59); /* only the broken record: the ones after it are kept */
	CHECK(st.damaged_bytes > 0);
	CHECK_EQ(rec.last_id, 60);
	CHECK(!rec.bad);

	/* The reader skips the same record, and says that one is missing. */
	struct readout o;
	int rc;
	uint64_t gap, before_gap;
	read_across_gap(dir, &o, &rc, &gap, &before_gap);
	CHECK_EQ(rc, FB_EGONE);
	CHECK_EQ(gap, before_gap + 2);
	CHECK_EQ(o.rc, 0);
	CHECK_EQ(o.count, rec.count);
	CHECK_EQ(o.last, 60);
}

/* Damage in the middle of the newest segment (a bad sector, a stray write)
 * is not a torn tail: the acked records after it stay, on disk and in
 * recovery, and the ids go on after the last of them. */
DIR_TEST(journal_damage_in_newest_segment_keeps_later_records)
{
	uint64_t part1, full;
	CHECK_EQ(write_in_two_parts(dir, 2, 10, &part1, &full), 0);
	uint8_t junk[4] = { 'X', 'X', 'X', 'X' };
	CHECK_EQ(write_at(dir, 1, (off_t)part1 + 20, junk, sizeof(junk), 0), 0); /* in record 3 */

	struct recovered rec = { 0 };
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(rec.count, 9);
	CHECK_EQ(rec.last_id, 10);
	CHECK(!rec.bad);
	CHECK_EQ(st.truncated_bytes, 0);
	CHECK(st.damaged_bytes > 0);
	CHECK_EQ(st.last_id, 10);
	CHECK_EQ(file_size(dir, 1), (long long)full);
	CHECK_EQ(append_range(j, 11, 12, 100), 0);
	fb_journal_close(j);

	struct recovered rec2;
	CHECK_EQ(reopen(dir, &rec2, NULL), 0);
	CHECK_EQ(rec2.count, 11);
	CHECK_EQ(rec2.last_id, 12);
	CHECK(!rec2.bad);

	struct readout o;
	int rc;
	uint64_t gap, before_gap;
	read_across_gap(dir, &o, &rc, &gap, &before_gap);
	CHECK_EQ(rc, FB_EGONE);
	CHECK_EQ(before_gap, 2);
	CHECK_EQ(gap, 4);
	CHECK_EQ(o.rc, 0);
	CHECK_EQ(o.count, 11);
	CHECK_EQ(o.last, 12);
	CHECK(!o.bad);
}

/* A second writer on the same directory is refused while the first holds
 * it, and the directory is free again once the first closes. */
DIR_TEST(journal_second_writer_refused)
{
	struct fb_journal *j = jopen(dir, 1 << 20, 0, 0, NULL, NULL);
	CHECK(j != NULL);
	CHECK_EQ(append_range(j, 1, 3, 100), 0);
	struct fb_journal_opts o = { dir, 1 << 20, 0, 0, 0, 0 };
	struct fb_journal *j2 = NULL;
	CHECK_EQ(fb_journal_open(&o, NULL, NULL, &j2), -EWOULDBLOCK);
	CHECK(j2 == NULL);
	fb_journal_close(j);
	struct recovered rec;
	CHECK_EQ(reopen(dir, &rec, NULL), 0);
	CHECK_EQ(rec.count, 3);
}

/* ---- the page cache behind a sync (JournalCacheSize) ---------------------- */

/* Which pages of the segment named first are in the page cache: vec[i] is 1
 * for each resident page (mincore(2) of a read-only mapping, which faults
 * nothing in). Returns the number of pages, or -1. */
static long resident_pages(const char *dir, uint64_t first, unsigned char *vec, size_t cap)
{
	char path[512];
	seg_file(path, sizeof(path), dir, first);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = ((size_t)sb.st_size + page - 1) / page;
	void *m = n <= cap ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	int rc = mincore(m, (size_t)sb.st_size, vec);
	munmap(m, (size_t)sb.st_size);
	for (size_t i = 0; i < n; i++)
		vec[i] &= 1;
	return rc ? -1 : (long)n;
}

/* Resident pages among [from, to) of vec. */
static long count_resident(const unsigned char *vec, long from, long to)
{
	long c = 0;
	for (long i = from < 0 ? 0 : from; i < to; i++)
		c += vec[i];
	return c;
}

/* Append ids from..to and sync: the journal's synced end, in pages
 * (rounded up), or -1. */
static long append_synced(struct fb_journal *j, uint64_t from, uint64_t to)
{
	if (append_range(j, from, to, 500) || fb_journal_sync(j))
		return -1;
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	long page = sysconf(_SC_PAGESIZE);
	return (long)((st.bytes + (uint64_t)page - 1) / (uint64_t)page);
}

DIR_TEST(journal_drops_synced_pages_from_the_cache)
{
	struct statfs fs;
	if (statfs(dir, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
		/* tmpfs pages are the file itself: nothing to drop. */
		fprintf(stderr, "  %s is tmpfs: page cache residency not checked\n", dir);
		return;
	}
	long page = sysconf(_SC_PAGESIZE), keep = 16;
	static unsigned char vec[1 << 16];
	struct fb_journal_opts o = { dir, 1ull << 30, 0, 0, 0, (uint64_t)(keep * page) };
	struct fb_journal *j = NULL;
	CHECK_EQ(fb_journal_open(&o, NULL, NULL, &j), 0);
	/* Each sync drops what fell out of the window. The kernel keeps a
	 * large folio that straddles the end of the range (up to a few dozen
	 * pages here, for writes of ~50 KB), so below the window at most that
	 * stays, and the next sync takes it, dropping from the start again. */
	long prev = 0;
	for (uint64_t round = 0; round < 3; round++) {
		long end = append_synced(j, 1 + round * 20000, 20000 + round * 20000);
		CHECK(end > 4 * keep);
		CHECK_EQ(resident_pages(dir, 1, vec, sizeof(vec)), end);
		CHECK(count_resident(vec, 0, end - keep - 1) <= 64);
		CHECK_EQ(count_resident(vec, 0, prev - keep - 1), 0);
		/* The newest pages are still there (written a moment ago). */
		CHECK_EQ(count_resident(vec, end - keep + 1, end), keep - 1);
		prev = end;
	}
	fb_journal_close(j);

	/* JournalCacheSize=0 leaves the pages to the kernel: all still cached. */
	char d0[600];
	snprintf(d0, sizeof(d0), "%s/kernel", dir);
	o.dir = d0;
	o.cache_bytes = 0;
	CHECK_EQ(fb_journal_open(&o, NULL, NULL, &j), 0);
	long end = append_synced(j, 1, 20000);
	CHECK(end > 4 * keep);
	CHECK_EQ(resident_pages(d0, 1, vec, sizeof(vec)), end);
	CHECK_EQ(count_resident(vec, 0, end), end);
	fb_journal_close(j);

	/* A finished segment is dropped whole at its roll (all but its last,
	 * partial page); the active one keeps its newest pages. */
	char d1[600];
	snprintf(d1, sizeof(d1), "%s/rolls", dir);
	o.dir = d1;
	o.cache_bytes = (uint64_t)(keep * page);
	o.segment_bytes = (uint64_t)(64 * page);
	CHECK_EQ(fb_journal_open(&o, NULL, NULL, &j), 0);
	CHECK(append_synced(j, 1, 20000) > 0);
	fb_journal_close(j);
	uint64_t ids[256];
	size_t n = list_segs(d1, ids, 256);
	CHECK(n > 3);
	for (size_t i = 0; i + 1 < n; i++) {
		long pages = resident_pages(d1, ids[i], vec, sizeof(vec));
		CHECK(pages > keep);
		CHECK(count_resident(vec, 0, pages) <= 1);
	}

	/* Recovery reads every segment once and leaves the finished ones out
	 * of the cache too; with JournalCacheSize=0 they stay. */
	for (int cached = 0; cached < 2; cached++) {
		for (size_t i = 0; i < n; i++) { /* read them all into the cache */
			char path[1024], buf[4096];
			seg_file(path, sizeof(path), d1, ids[i]);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			CHECK(fd >= 0);
			while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0) {
			}
			if (fd >= 0)
				close(fd);
		}
		o.cache_bytes = cached ? 0 : (uint64_t)(keep * page);
		CHECK_EQ(fb_journal_open(&o, NULL, NULL, &j), 0);
		fb_journal_close(j);
		long pages = resident_pages(d1, ids[0], vec, sizeof(vec));
		CHECK(pages > keep);
		CHECK_EQ(count_resident(vec, 0, pages), cached ? pages : 0);
	}
}

/* ---- the sync thread (journal_worker.c) ---------------------------------- */

static void count_notify(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* Append ids from..to without flushing (the loop's side while a job runs). */
static int append_only(struct fb_journal *j, uint64_t from, uint64_t to)
{
	for (uint64_t id = from; id <= to; id++) {
		struct fb_event ev;
		make_event(&ev, id);
		int rc = fb_journal_append(j, id, &ev, NULL, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* A journal and its sync thread, or NULL. */
static struct fb_journal *open_with_worker(const char *dir, uint64_t seg, atomic_int *notified,
					   struct fb_jworker **w)
{
	struct fb_journal *j = jopen(dir, seg, 0, 0, NULL, NULL);
	if (j && fb_jworker_new(j, count_notify, notified, w) != 0) {
		fb_journal_close(j);
		j = NULL;
	}
	return j;
}

/* A job writes and syncs exactly what was appended before it started: what
 * the loop appends while it runs (concurrently, as the broker does) waits
 * for the next job, and a reader sees the job's records, in order, once it
 * is done. This is what commit.c acks on. */
DIR_TEST(journal_worker_job_covers_what_was_staged)
{
	atomic_int notified = 0;
	struct fb_jworker *w = NULL;
	struct fb_journal *j = open_with_worker(dir, 64 << 10, &notified, &w);
	CHECK(j != NULL);
	CHECK_EQ(append_only(j, 1, 2000), 0);
	CHECK_EQ(fb_jworker_start(w, 1), 0);
	CHECK_EQ(fb_jworker_busy(w), 1);
	CHECK_EQ(fb_jworker_start(w, 1), -EBUSY); /* one job at a time */
	/* The loop's side while the thread writes and syncs (TSan checks the
	 * hand-over): more appends and stats. */
	struct fb_journal_stats st;
	for (uint64_t id = 2001; id <= 4000; id += 100) {
		CHECK_EQ(append_only(j, id, id + 99), 0);
		fb_journal_get_stats(j, &st);
		CHECK_EQ(st.last_id, id + 99);
	}
	int rc = 1;
	CHECK_EQ(fb_jworker_wait(w, &rc), 1);
	CHECK_EQ(rc, 0);
	CHECK_EQ(fb_jworker_busy(w), 0);
	CHECK_EQ(fb_jworker_take(w, &rc), 0); /* taken already */
	CHECK_EQ(atomic_load(&notified), 1);
	fb_journal_get_stats(j, &st);
	CHECK(st.syncs >= 1);
	CHECK(st.waiting_bytes > 0); /* 2001..4000, appended meanwhile */
	CHECK(st.segments > 1);      /* the job rolled segments on the thread */

	struct fb_journal_reader *r;
	struct readout o = { 0 };
	CHECK_EQ(fb_journal_reader_open(dir, 0, &r), 0);
	drain(r, UINT64_MAX, &o);
	CHECK_EQ(o.rc, 0);
	CHECK(!o.bad);
	CHECK_EQ(o.first, 1);
	CHECK_EQ(o.last, 2000); /* nothing of the next job is written yet */

	/* The next job takes the rest; take() sees it done after notify. */
	CHECK_EQ(fb_jworker_start(w, 1), 0);
	while (!fb_jworker_take(w, &rc))
		usleep(1000);
	CHECK_EQ(rc, 0);
	CHECK_EQ(atomic_load(&notified), 2);
	drain(r, UINT64_MAX, &o);
	fb_journal_reader_close(r);
	CHECK(!o.bad);
	CHECK_EQ(o.count, 4000);
	CHECK_EQ(o.last, 4000);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.waiting_bytes, 0);
	fb_jworker_free(w);
	fb_journal_close(j);
}

/* A write that fails on the thread stalls the journal as it does on the
 * loop: the job's records are kept, those appended meanwhile queue behind
 * them, and the job after the disk has room writes them all in EventId
 * order (recovery sees 1..N, nothing twice, nothing lost). */
DIR_TEST(journal_worker_failed_job_keeps_order)
{
	atomic_int notified = 0;
	struct fb_jworker *w = NULL;
	struct fb_journal *j = open_with_worker(dir, 1 << 20, &notified, &w);
	CHECK(j != NULL);
	CHECK_EQ(append_only(j, 1, 10), 0);
	int rc = 1;
	CHECK_EQ(fb_jworker_start(w, 1), 0);
	CHECK_EQ(fb_jworker_wait(w, &rc), 1);
	CHECK_EQ(rc, 0);
	long long before = file_size(dir, 1);
	CHECK(before > 0);
	struct rlimit old;
	void (*prev)(int);
	CHECK_EQ(limit_file_size((rlim_t)before + 300, &old, &prev), 0); /* part of the next write */
	CHECK_EQ(append_only(j, 11, 60), 0);
	CHECK_EQ(fb_jworker_start(w, 1), 0);
	CHECK_EQ(append_only(j, 61, 80), 0); /* while the failing job runs */
	CHECK_EQ(fb_jworker_wait(w, &rc), 1);
	CHECK_EQ(rc, -EFBIG);
	CHECK_EQ(fb_journal_broken(j), 0);
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.stalled, -EFBIG);
	CHECK_EQ(file_size(dir, 1), before); /* the torn part is cut again */
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	CHECK_EQ(append_only(j, 81, 90), 0);
	CHECK_EQ(fb_jworker_start(w, 1), 0);
	CHECK_EQ(fb_jworker_wait(w, &rc), 1);
	CHECK_EQ(rc, 0);
	fb_journal_get_stats(j, &st);
	CHECK_EQ(st.stalled, 0);
	CHECK_EQ(st.waiting_bytes, 0);
	fb_jworker_free(w);
	fb_journal_close(j);

	struct recovered rec = { 0, 0, 0 };
	j = jopen(dir, 1 << 20, 0, 0, on_recover, &rec);
	CHECK(j != NULL);
	fb_journal_close(j);
	CHECK(!rec.bad);
	CHECK_EQ(rec.count, 90);
	CHECK_EQ(rec.last_id, 90);
}

int main(void)
{
	fb_log_init("test_journal", 0, getenv("FB_TEST_VERBOSE") ? FB_LOG_DEBUG : FB_LOG_ERR - 1);
	RUN(journal_roundtrip_append_read);
	RUN(journal_recovers_torn_tail);
	RUN(journal_crc_corruption_truncates_tail);
	RUN(journal_rolls_segments);
	RUN(journal_retention_by_size);
	RUN(journal_retention_by_age);
	RUN(journal_reader_follows_new_segments);
	RUN(journal_reader_respects_limit_between_ids);
	RUN(journal_reader_waits_for_partial_record);
	RUN(journal_reader_gone_after_retention);
	RUN(journal_reopen_keeps_ids);
	RUN(journal_write_failure_stalls_and_retries);
	RUN(journal_torn_header_segment_recreated);
	RUN(journal_older_segment_corruption_skipped);
	RUN(journal_damage_in_newest_segment_keeps_later_records);
	RUN(journal_second_writer_refused);
	RUN(journal_drops_synced_pages_from_the_cache);
	RUN(journal_worker_job_covers_what_was_staged);
	RUN(journal_worker_failed_job_keeps_order);
	return TEST_DONE();
}
