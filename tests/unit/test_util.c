/* test_util.c - proto/util's clock, file writer and sorted search: the clock
 * never goes back and its three units agree; fb_file_replace leaves the whole new
 * content and no temporary file, replaces an existing file, and names the
 * step that failed; fb_sorted_pos finds every key and places every missing one;
 * fb_buf_put_json_str escapes exactly as RFC 8259 says on its one-pass path
 * and its general path alike, for every length and escape position, and
 * never reads past the page that holds the string's NUL; fb_crc32c
 * (the hardware path where the CPU has one) equals a bit-at-a-time CRC-32C
 * for every length and alignment and when split anywhere. */
#include "fb_buf.h"
#include "fb_crc32c.h"
#include "fb_file.h"
#include "fb_sorted.h"
#include "fb_test.h"
#include "fb_time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


static size_t slurp(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return (size_t)-1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return r < 0 ? (size_t)-1 : (size_t)r;
}

static void clock_is_monotonic_and_units_agree(void)
{
	int64_t ms0 = fb_time_ms(), us = fb_time_us(), ns = fb_time_ns(), ms1 = fb_time_ms();
	CHECK(ms0 <= us / 1000 && us / 1000 <= ns / 1000000 && ns / 1000000 <= ms1);
	struct timespec d = { 0, 20 * 1000000 };
	nanosleep(&d, NULL);
	CHECK(fb_time_ms() - ms1 >= 20);
}

static void replace_writes_whole_file_and_no_tmp(void)
{
	char path[256], tmp[300], buf[64];
	const char *step = "unset";
	snprintf(path, sizeof(path), "%s/state", fbt_dir());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK_EQ(fb_file_replace(path, "old content\n", 12, 0640, &step), 0);
	CHECK(step == NULL);
	CHECK_EQ(fb_file_replace(path, "new\n", 4, 0640, &step), 0);
	CHECK_EQ(slurp(path, buf, sizeof(buf)), 4);
	CHECK_STR(buf, "new\n");
	CHECK(access(tmp, F_OK) != 0 && errno == ENOENT);
	struct stat st;
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0007, 0); /* 0640 minus the umask: never world-readable */
}

static void mkdir_p_makes_every_missing_level(void)
{
	char dir[256], file[300];
	snprintf(dir, sizeof(dir), "%s/a/b/c", fbt_dir());
	CHECK_EQ(fb_mkdir_p(dir, 0750), 0);
	CHECK_EQ(fb_mkdir_p(dir, 0750), 0); /* already there: fine */
	struct stat st;
	CHECK_EQ(stat(dir, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 0007, 0);
	/* a file in the way is an error, not a success */
	snprintf(file, sizeof(file), "%s/a/f", fbt_dir());
	CHECK_EQ(fb_file_replace(file, "x", 1, 0640, NULL), 0);
	snprintf(dir, sizeof(dir), "%s/a/f/d", fbt_dir());
	CHECK_EQ(fb_mkdir_p(dir, 0750), -ENOTDIR);
}

static void replace_names_the_failed_step(void)
{
	char path[256];
	const char *step = NULL;
	snprintf(path, sizeof(path), "%s/no/such/dir/state", fbt_dir());
	CHECK_EQ(fb_file_replace(path, "x", 1, 0640, &step), -ENOENT);
	CHECK_STR(step, "create");
	/* a directory in the way of the rename: the temporary file is removed */
	snprintf(path, sizeof(path), "%s/adir", fbt_dir());
	CHECK_EQ(mkdir(path, 0700), 0);
	char inner[300];
	snprintf(inner, sizeof(inner), "%s/f", path);
	CHECK_EQ(fb_file_replace(inner, "x", 1, 0640, NULL), 0); /* not empty */
	CHECK(fb_file_replace(path, "x", 1, 0640, &step) < 0);
	CHECK_STR(step, "rename");
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK(access(tmp, F_OK) != 0);
}

static void write_all_writes_everything(void)
{
	int p[2];
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fb_write_all(p[1], "abcdef", 6), 0);
	close(p[1]);
	char buf[16] = { 0 };
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 6);
	close(p[0]);
	CHECK_STR(buf, "abcdef");
	CHECK_EQ(fb_write_all(-1, "x", 1), -EBADF);
}

static int cmp_int(const void *key, const void *elem)
{
	int a = *(const int *)key, b = *(const int *)elem;
	return (a > b) - (a < b);
}

/* Every key of an odd and an even length array is found at its index, and
 * every missing key gets the index that keeps the array ascending. */
static void sorted_pos_finds_and_places(void)
{
	static const int a[] = { 10, 20, 30, 40, 50, 60 };
	int found = -1, key;
	for (size_t n = 0; n <= 6; n++) {
		for (size_t i = 0; i < n; i++) {
			CHECK_EQ(fb_sorted_pos(a, n, sizeof(int), &a[i], cmp_int, &found), i);
			CHECK_EQ(found, 1);
		}
		for (size_t i = 0; i <= n; i++) {
			key = 10 * (int)i + 5; /* between a[i - 1] and a[i] */
			CHECK_EQ(fb_sorted_pos(a, n, sizeof(int), &key, cmp_int, &found), i);
			CHECK_EQ(found, 0);
		}
	}
	key = 1;
	CHECK_EQ(fb_sorted_pos(a, 6, sizeof(int), &key, cmp_int, &found), 0);
	CHECK_EQ(found, 0);
}

/* The escaping RFC 8259 asks for, one byte at a time. */
static size_t json_reference(const char *s, char *out)
{
	static const char hex[] = "0123456789abcdef";
	char *o = out;
	*o++ = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			*o++ = '\\';
			*o++ = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20) {
			o += sprintf(o, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	return (size_t)(o - out);
}

/* s through both paths: a buffer with room (one pass) and an empty one
 * (measured, grown). Returns 1 if both match the reference. */
static int json_both_paths(const char *s)
{
	static char want[6 * 400 + 3];
	size_t n = json_reference(s, want);
	struct fb_buf roomy = FB_BUF_INIT, bare = FB_BUF_INIT;
	int ok = fb_buf_reserve(&roomy, FB_BUF_JSON_STR_ROOM) == 0 && fb_buf_put_json_str(&roomy, s) == 0 &&
		 fb_buf_put_json_str(&bare, s) == 0 && roomy.len == n && bare.len == n &&
		 memcmp(roomy.data, want, n) == 0 && memcmp(bare.data, want, n) == 0;
	if (!ok)
		fprintf(stderr, "  json string of %zu bytes: got %.*s\n", strlen(s), (int)roomy.len,
			(const char *)roomy.data);
	fb_buf_free(&roomy);
	fb_buf_free(&bare);
	return ok;
}

/* Every length from 0 to 300 (across the 256-byte one-pass limit), each
 * escape class at every position, and strings whose NUL is the last byte
 * before an unmapped page, at every alignment. */
static void json_str_escapes_like_the_reference(void)
{
	static const char special[] = { '"', '\\', '\n', '\r', '\t', 0x01, 0x1f, 0x7f, (char)0xc3 };
	long page = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	CHECK_EQ(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	char s[301];
	for (size_t len = 0; len <= 300; len++) {
		memset(s, 'a', len);
		s[len] = '\0';
		CHECK(json_both_paths(s));
		for (size_t k = 0; k < sizeof(special) && len; k++)
			for (size_t pos = 0; pos < len; pos += len > 40 ? 7 : 1) {
				s[pos] = special[k];
				CHECK(json_both_paths(s));
				s[pos] = 'a';
			}
		/* ending at the page's last byte: a read past it would fault */
		char *at = map + page - (len + 1);
		memset(at, 'b', len);
		at[len] = '\0';
		CHECK(json_both_paths(at));
		if (len)
			at[len / 2] = '"';
		CHECK(json_both_paths(at));
	}
	munmap(map, (size_t)page * 2);
}

/* CRC-32C one bit at a time, straight from its definition (reflected,
 * polynomial 0x82F63B78). */
static uint32_t crc_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

static void crc32c_matches_the_definition(void)
{
	CHECK(fb_crc32c(0, "123456789", 9) == 0xE3069283u); /* the RFC 3720 check value */
	uint8_t buf[1100];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n + off <= 1090; n += n < 300 ? 1 : 37) {
			uint32_t want = crc_ref(buf + off, n);
			CHECK(fb_crc32c(0, buf + off, n) == want);
			size_t h = n / 3;
			CHECK(fb_crc32c(fb_crc32c(0, buf + off, h), buf + off + h, n - h) == want);
		}
}

/* fb_nul32 finds the first NUL at every position of the block, whatever
 * follows it, at every alignment, and answers 32 for a block without one. */
static void nul32_finds_the_first_nul(void)
{
	char buf[32 + 8 + 32];
	for (size_t align = 0; align < 8; align++) {
		char *s = buf + align;
		memset(buf, 'a', sizeof(buf));
		CHECK_EQ(fb_nul32(s), 32);
		s[32] = '\0'; /* past the block: not seen */
		CHECK_EQ(fb_nul32(s), 32);
		for (size_t at = 0; at < 32; at++) {
			memset(buf, (int)(0x80 + at), sizeof(buf));
			s[at] = '\0';
			if (at + 3 < 32)
				s[at + 3] = '\0'; /* a later NUL does not count */
			CHECK_EQ(fb_nul32(s), at);
		}
	}
}

int main(void)
{
	RUN(clock_is_monotonic_and_units_agree);
	RUN(replace_writes_whole_file_and_no_tmp);
	RUN(mkdir_p_makes_every_missing_level);
	RUN(replace_names_the_failed_step);
	RUN(write_all_writes_everything);
	RUN(sorted_pos_finds_and_places);
	RUN(json_str_escapes_like_the_reference);
	RUN(crc32c_matches_the_definition);
	RUN(nul32_finds_the_first_nul);
	return TEST_DONE();
}
