/* push_cursor.c - the push cursors file (push_cursor.h). */
#include "push_cursor.h"

#include "fb_buf.h"
#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_file.h"
#include "rf_sub_store.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "fabricbus-push-cursors 1"
#define FILE_MAX (1u << 20)

int fb_push_cursors_write(const char *dir, uint64_t epoch, const struct fb_push_cursor *v, size_t n)
{
	struct fb_buf body = FB_BUF_INIT, all = FB_BUF_INIT;
	int rc = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = fb_buf_printf(&body, "%s %" PRIu64 "\n", v[i].id, v[i].cursor);
	if (!rc)
		rc = fb_buf_printf(&all, MAGIC " %016" PRIx64 " %zu %08" PRIx32 "\n", epoch, body.len,
				   fb_crc32c(0, body.data ? body.data : (const uint8_t *)"", body.len));
	if (!rc && body.len)
		rc = fb_buf_put(&all, body.data, body.len);
	if (!rc) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/" FB_PUSH_CURSOR_NAME, dir);
		rc = fb_file_replace(path, all.data, all.len, 0640, NULL);
	}
	fb_buf_free(&body);
	fb_buf_free(&all);
	return rc;
}

static int bad(const char **why, const char *what)
{
	*why = what;
	return FB_ECORRUPT;
}

static int parse_line(const char *s, size_t len, struct fb_push_cursor *c)
{
	const char *sp = memchr(s, ' ', len);
	if (!sp || sp == s || (size_t)(sp - s) >= sizeof(c->id))
		return -1;
	memcpy(c->id, s, (size_t)(sp - s));
	c->id[sp - s] = '\0';
	char num[24];
	size_t nl = len - (size_t)(sp - s) - 1;
	if (!fb_rf_id_ok(c->id) || !nl || nl >= sizeof(num))
		return -1;
	memcpy(num, sp + 1, nl);
	num[nl] = '\0';
	char *end;
	errno = 0;
	c->cursor = strtoull(num, &end, 10);
	return strspn(num, "0123456789") == nl && !*end && !errno ? 0 : -1;
}

int fb_push_cursors_parse(const uint8_t *p, size_t len, uint64_t epoch, struct fb_push_cursor **v,
			  size_t *n, const char **why)
{
	*v = NULL;
	*n = 0;
	char hdr[96];
	const uint8_t *b;
	if (fb_rf_file_header(p, len, hdr, sizeof(hdr), &b))
		return bad(why, "no header line");
	uint64_t e;
	size_t blen;
	uint32_t crc;
	int used = 0;
	if (sscanf(hdr, MAGIC " %16" SCNx64 " %zu %8" SCNx32 "%n", &e, &blen, &crc, &used) != 3 ||
	    hdr[used])
		return bad(why, "not a cursors header");
	const char *body = (const char *)b;
	size_t left = len - (size_t)(b - p);
	if (blen != left)
		return bad(why, "length mismatch (torn write?)");
	if (fb_crc32c(0, body, left) != crc)
		return bad(why, "checksum mismatch");
	if (e != epoch)
		return bad(why, "written for another journal (epoch differs)");
	size_t lines = 0;
	for (size_t i = 0; i < left; i++)
		lines += body[i] == '\n';
	if (left && body[left - 1] != '\n')
		return bad(why, "last line not ended");
	struct fb_push_cursor *out = calloc(lines ? lines : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	size_t k = 0;
	for (const char *s = body; s < body + left;) {
		const char *eol = memchr(s, '\n', (size_t)(body + left - s));
		if (parse_line(s, (size_t)(eol - s), &out[k])) {
			free(out);
			return bad(why, "bad cursor line");
		}
		k++;
		s = eol + 1;
	}
	*v = out;
	*n = k;
	return 0;
}

int fb_push_cursors_read(const char *dir, uint64_t epoch, struct fb_push_cursor **v, size_t *n,
			 const char **why)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/" FB_PUSH_CURSOR_NAME, dir);
	*why = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	uint8_t *buf = malloc(FILE_MAX);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	size_t len = fread(buf, 1, FILE_MAX, f);
	int err = ferror(f) || !feof(f);
	fclose(f);
	int rc = err ? bad(why, "unreadable or larger than 1 MiB")
		     : fb_push_cursors_parse(buf, len, epoch, v, n, why);
	free(buf);
	return rc;
}
