/* fuzz_journal.c - libFuzzer target for the journal's disk parser.
 *
 * The input becomes the newest segment of a journal directory, named after
 * the first id in its header so the header check passes when the bytes look
 * like ours. Recovery (scan, truncate, report), an append after recovery, and
 * readers from the start and from a later id then run over it. Disk bytes are
 * untrusted input just like network bytes: nothing may crash, leak or loop.
 */
#include "fb_buf.h"
#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_log.h"
#include "journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[64];

static void clear_dir(void)
{
	DIR *d = opendir(g_dir);
	struct dirent *de;
	char p[128];
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", g_dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
}

static void cleanup(void)
{
	clear_dir();
	rmdir(g_dir);
}

static int setup_once(void)
{
	if (g_dir[0])
		return 0;
	/* tmpfs when there is one: the journal fsyncs, and that is slow on disk. */
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(g_dir, sizeof(g_dir), "%s/fuzz-journal-XXXXXX", base);
	if (!mkdtemp(g_dir))
		return -1;
	fb_log_init("fuzz_journal", 0, FB_LOG_ERR - 1); /* quiet */
	atexit(cleanup);
	return 0;
}

static void on_recover(void *arg, uint64_t id, const struct fb_event *ev)
{
	uint64_t *last = arg;
	(void)ev;
	if (id <= *last)
		abort(); /* recovery must report strictly increasing ids */
	*last = id;
}

static void write_segment(const uint8_t *data, size_t size)
{
	uint64_t first = size >= 16 ? fb_load_be64(data + 8) : 1;
	char p[128];
	snprintf(p, sizeof(p), "%s/%020llu.fbj", g_dir, (unsigned long long)first);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

static void recover_and_append(void)
{
	struct fb_journal_opts o = { g_dir, 4096, 0, 0, 0, 0 };
	struct fb_journal *j;
	uint64_t last = 0;
	if (fb_journal_open(&o, on_recover, &last, &j) != 0)
		return;
	struct fb_journal_stats st;
	fb_journal_get_stats(j, &st);
	/* A CRC-valid record that does not decode is skipped, not reported,
	 * but its id stays used. */
	if (last > st.last_id)
		abort();
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	strcpy(ev.agent_id, "fuzz");
	ev.seq = 1;
	ev.kind = FB_KIND_TEST;
	if (last < UINT64_MAX && fb_journal_append(j, last + 1, &ev, NULL, 0) == 0)
		(void)fb_journal_flush(j);
	fb_journal_close(j);
}

static void read_all(uint64_t after_id)
{
	struct fb_journal_reader *r;
	if (fb_journal_reader_open(g_dir, after_id, &r) != 0)
		return;
	uint64_t id, prev = after_id;
	struct fb_event ev;
	for (int i = 0; i < 100000; i++) {
		int rc = fb_journal_reader_next(r, UINT64_MAX, &id, &ev);
		if (rc == FB_EGONE)
			continue;
		if (rc <= 0)
			break;
		if (id <= prev)
			abort(); /* readers never go backwards */
		prev = id;
	}
	fb_journal_reader_close(r);
}

/* Most mutations break a CRC, which stops the parser before the payload
 * decoder. A copy with every in-bounds record's CRC recomputed lets the
 * fuzzer reach the agent id and event body parsing too. 1 if it changed. */
static int fix_crcs(uint8_t *p, size_t size)
{
	int changed = 0;
	size_t off = 16;
	while (size >= 16 && size - off >= 16) {
		uint32_t len = fb_load_be32(p + off);
		if (len > size - off - 16)
			break;
		uint32_t crc = fb_crc32c(0, p + off + 8, 8 + (size_t)len);
		if (fb_load_be32(p + off + 4) != crc) {
			fb_store_be32(p + off + 4, crc);
			changed = 1;
		}
		off += 16 + (size_t)len;
	}
	return changed;
}

static void run_one(const uint8_t *data, size_t size)
{
	clear_dir();
	/* Readers first, over the raw bytes; then recovery repairs them. */
	write_segment(data, size);
	read_all(0);
	read_all(size >= 24 ? fb_load_be64(data + 8) : 2);
	recover_and_append();
	read_all(0);
	clear_dir();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (setup_once() != 0)
		return 0;
	run_one(data, size);
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (fix_crcs(copy, size))
		run_one(copy, size);
	free(copy);
	return 0;
}
