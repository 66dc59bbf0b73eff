/* journal_format.c - segment names, headers, the record parser and the
 * buffered segment cursor shared by journal recovery and journal readers. */
#include "journal_format.h"

#include "fb_buf.h"
#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_wire.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fbj_parse_rec(const uint8_t *p, size_t avail, struct fbj_rec *rec)
{
	if (avail < FBJ_REC_HDR_LEN)
		return 0;
	uint32_t len = fb_load_be32(p);
	/* Every payload holds at least the agent id length byte; a zero length
	 * is what a zero-filled tail after a crash looks like. */
	if (len == 0 || len > FBJ_PAYLOAD_MAX)
		return FB_ECORRUPT;
	if (avail - FBJ_REC_HDR_LEN < len)
		return 0;
	uint32_t crc = fb_load_be32(p + 4);
	if (fb_crc32c(0, p + 8, 8 + (size_t)len) != crc)
		return FB_ECORRUPT;
	rec->event_id = fb_load_be64(p + 8);
	rec->payload = p + FBJ_REC_HDR_LEN;
	rec->payload_len = len;
	rec->total = FBJ_REC_HDR_LEN + (size_t)len;
	return 1;
}

int fbj_parse_hdr(const uint8_t *p, uint64_t *first_id)
{
	if (memcmp(p, FBJ_MAGIC, 4) != 0)
		return FB_ECORRUPT;
	if (fb_load_be32(p + 4) != FBJ_VERSION)
		return FB_EVERSION;
	*first_id = fb_load_be64(p + 8);
	return 0;
}

void fbj_put_hdr(uint8_t out[FBJ_HDR_LEN], uint64_t first_id)
{
	memcpy(out, FBJ_MAGIC, 4);
	fb_store_be32(out + 4, FBJ_VERSION);
	fb_store_be64(out + 8, first_id);
}

int fbj_decode_payload(const uint8_t *p, size_t len, struct fb_event *ev)
{
	struct fb_rd r;
	fb_rd_init(&r, p, len);
	fb_rd_str8(&r, ev->agent_id, sizeof(ev->agent_id));
	size_t left = fb_rd_left(&r);
	const uint8_t *body = fb_rd_take(&r, left);
	if (r.err)
		return r.err;
	return fb_event_decode(body, left, ev);
}

void fbj_name(char *out, uint64_t first_id)
{
	snprintf(out, FBJ_NAME_LEN + 1, "%020llu" FBJ_SUFFIX, (unsigned long long)first_id);
}

int fbj_name_parse(const char *name, uint64_t *first_id)
{
	if (strlen(name) != FBJ_NAME_LEN || strcmp(name + FBJ_NAME_DIGITS, FBJ_SUFFIX) != 0)
		return 0;
	uint64_t v = 0;
	for (int i = 0; i < FBJ_NAME_DIGITS; i++) {
		unsigned d = (unsigned)(name[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*first_id = v;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int ids_push(uint64_t **ids, size_t *n, size_t *cap, uint64_t id)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint64_t *p = realloc(*ids, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*ids = p;
		*cap = nc;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

int fbj_list(const char *dir, int log_unknown, uint64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	size_t cap = 0;
	int rc = 0;
	struct dirent *de;
	errno = 0;
	while (!rc && (de = readdir(d)) != NULL) {
		uint64_t id;
		if (fbj_name_parse(de->d_name, &id))
			rc = ids_push(ids, n, &cap, id);
		else if (log_unknown && de->d_name[0] != '.')
			fb_log_debug("journal: ignoring %s/%s (not a segment name)", dir, de->d_name);
		errno = 0;
	}
	if (!rc && errno)
		rc = -errno;
	closedir(d);
	if (rc) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rc;
	}
	if (*n > 1)
		qsort(*ids, *n, sizeof(**ids), cmp_u64);
	return 0;
}

int fbj_cursor_init(struct fbj_cursor *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->buf = malloc(FBJ_READ_CHUNK);
	return c->buf ? 0 : -ENOMEM;
}

void fbj_cursor_free(struct fbj_cursor *c)
{
	free(c->buf);
	c->buf = NULL;
}

/* Keep the unparsed tail, drop the rest, and read more after it. Returns the
 * number of new bytes (0 at EOF) or -errno. A short pread is EOF for a
 * regular file, so one call per chunk is enough. */
static ssize_t cursor_fill(struct fbj_cursor *c)
{
	if (c->pos > 0) {
		memmove(c->buf, c->buf + c->pos, c->len - c->pos);
		c->buf_off += c->pos;
		c->len -= c->pos;
		c->pos = 0;
	}
	ssize_t got;
	do
		got = pread(c->fd, c->buf + c->len, FBJ_READ_CHUNK - c->len,
			    (off_t)(c->buf_off + c->len));
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	c->len += (size_t)got;
	return got;
}

static int cursor_header(struct fbj_cursor *c)
{
	while (c->len - c->pos < FBJ_HDR_LEN) {
		ssize_t got = cursor_fill(c);
		if (got <= 0)
			return (int)got;
	}
	int rc = fbj_parse_hdr(c->buf + c->pos, &c->first_id);
	if (rc)
		return rc;
	c->pos += FBJ_HDR_LEN;
	c->have_hdr = 1;
	return 1;
}

int fbj_cursor_peek(struct fbj_cursor *c, struct fbj_rec *rec)
{
	if (!c->have_hdr) {
		int rc = cursor_header(c);
		if (rc <= 0)
			return rc;
	}
	for (;;) {
		int rc = fbj_parse_rec(c->buf + c->pos, c->len - c->pos, rec);
		if (rc != 0)
			return rc;
		/* FBJ_REC_MAX < FBJ_READ_CHUNK, so after a fill any record
		 * fits; no new bytes means it is not (all) on disk yet. */
		ssize_t got = cursor_fill(c);
		if (got <= 0)
			return (int)got;
	}
}

/* Put the cursor at file offset off with nothing buffered. */
static void cursor_seek(struct fbj_cursor *c, uint64_t off)
{
	c->buf_off = off;
	c->len = c->pos = 0;
}

int fbj_cursor_resync(struct fbj_cursor *c, uint64_t min_id, uint64_t *skipped)
{
	uint64_t start = fbj_cursor_off(c);
	*skipped = 0;
	for (c->pos++;; c->pos++) {
		/* A candidate needs its header in the buffer, and all of its
		 * bytes if its length is plausible: fill when short. */
		struct fbj_rec rec;
		int rc = fbj_parse_rec(c->buf + c->pos, c->len - c->pos, &rec);
		if (rc == 0) {
			ssize_t got = cursor_fill(c);
			if (got < 0)
				return (int)got;
			rc = fbj_parse_rec(c->buf + c->pos, c->len - c->pos, &rec);
			if (rc == 0 && got == 0 && c->len - c->pos < FBJ_REC_HDR_LEN)
				break; /* EOF: no record can start here or later */
		}
		if (rc == 1 && rec.event_id > min_id) {
			*skipped = fbj_cursor_off(c) - start;
			return 1;
		}
	}
	cursor_seek(c, start);
	return 0;
}
