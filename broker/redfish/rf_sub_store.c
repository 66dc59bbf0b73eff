/* rf_sub_store.c - the subscriptions and their file (rf_sub_store.h). */
#include "rf_sub_store.h"

#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_file.h"
#include "fb_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fb_rf_store_init(struct fb_rf_store *st, const char *dir)
{
	memset(st, 0, sizeof(*st));
	st->next_id = 1;
	if (dir)
		snprintf(st->path, sizeof(st->path), "%s/" FB_RF_STORE_NAME, dir);
}

static void clear(struct fb_rf_store *st)
{
	for (size_t i = 0; i < st->n; i++) {
		fb_rf_sub_free(st->v[i]);
		free(st->v[i]);
	}
	st->n = 0;
	st->next_id = 1;
}

void fb_rf_store_free(struct fb_rf_store *st)
{
	clear(st);
	free(st->v);
	st->v = NULL;
	st->cap = 0;
}

struct fb_rf_sub *fb_rf_store_find(const struct fb_rf_store *st, const char *id)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i]->id, id) == 0)
			return st->v[i];
	return NULL;
}

/* A number the counter may hand out later must not be taken by a name. */
static int numeric(const char *id, uint64_t *v)
{
	char *end;
	if (!*id || *id == '0' || *id < '0' || *id > '9')
		return 0;
	errno = 0;
	*v = strtoull(id, &end, 10);
	return !*end && !errno;
}

int fb_rf_id_ok(const char *id)
{
	size_t n = strlen(id);
	if (!n || n >= FB_RF_SUB_ID_MAX)
		return 0;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_'))
			return 0;
	return 1;
}

int fb_rf_store_add(struct fb_rf_store *st, struct fb_rf_sub *s, const char *id,
		    struct fb_rf_sub **out)
{
	char num[24];
	if (!id || !*id) {
		snprintf(num, sizeof(num), "%" PRIu64, st->next_id);
		id = num;
	}
	if (!fb_rf_id_ok(id))
		return -EINVAL;
	if (fb_rf_store_find(st, id))
		return -EEXIST;
	if (st->n >= FB_RF_STORE_MAX_SUBS)
		return -ENOSPC;
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 8;
		struct fb_rf_sub **v = realloc(st->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	struct fb_rf_sub *copy = malloc(sizeof(*copy));
	if (!copy || fb_rf_sub_set_id(s, id)) {
		free(copy);
		return -ENOMEM;
	}
	*copy = *s;
	memset(s, 0, sizeof(*s));
	uint64_t v;
	if (numeric(id, &v) && v >= st->next_id)
		st->next_id = v + 1;
	st->v[st->n++] = copy;
	if (out)
		*out = copy;
	return 0;
}

int fb_rf_store_replace(struct fb_rf_store *st, struct fb_rf_sub *s)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i]->id, s->id) == 0) {
			fb_rf_sub_free(st->v[i]);
			*st->v[i] = *s;
			memset(s, 0, sizeof(*s));
			return 0;
		}
	return -ENOENT;
}

int fb_rf_store_remove(struct fb_rf_store *st, const char *id)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i]->id, id) == 0) {
			fb_rf_sub_free(st->v[i]);
			free(st->v[i]);
			memmove(&st->v[i], &st->v[i + 1], (st->n - i - 1) * sizeof(st->v[0]));
			st->n--;
			return 0;
		}
	return -ENOENT;
}

int fb_rf_store_serialize(const struct fb_rf_store *st, struct fb_buf *out)
{
	json_t *members = json_array();
	json_t *root = json_pack("{s:I,s:o}", "NextId", (json_int_t)st->next_id, "Members", members);
	if (!root)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++)
		if (json_array_append(members, st->v[i]->doc)) {
			json_decref(root);
			return -ENOMEM;
		}
	char *text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	if (!text)
		return -ENOMEM;
	size_t n = strlen(text);
	int rc = fb_buf_printf(out, FB_RF_STORE_MAGIC " %zu %08" PRIx32 "\n", n, fb_crc32c(0, text, n));
	if (!rc)
		rc = fb_buf_put(out, text, n);
	free(text);
	return rc ? -ENOMEM : 0;
}

static int load_members(struct fb_rf_store *st, json_t *root, char *err, size_t errsz)
{
	json_t *next = json_object_get(root, "NextId");
	json_t *members = json_object_get(root, "Members");
	if (!json_is_object(root) || json_object_size(root) != 2 || !json_is_integer(next) ||
	    json_integer_value(next) < 1 || !json_is_array(members))
		return fb_err_set(err, errsz, FB_ECORRUPT, "expected {\"NextId\":n,\"Members\":[...]}");
	size_t i;
	json_t *m;
	json_array_foreach(members, i, m) {
		struct fb_rf_sub s;
		struct fb_rf_error e;
		if (fb_rf_sub_build(m, FB_RF_SUB_LOAD, NULL, &s, &e))
			return fb_err_set(err, errsz, FB_ECORRUPT, "member %zu: %s %s %s", i, e.key,
					  e.n_args > 0 ? e.args[0] : "", e.n_args > 1 ? e.args[1] : "");
		char id[FB_RF_SUB_ID_MAX];
		snprintf(id, sizeof(id), "%s", s.id);
		int rc = id[0] ? fb_rf_store_add(st, &s, id, NULL) : -EINVAL;
		fb_rf_sub_free(&s);
		if (rc)
			return fb_err_set(err, errsz, FB_ECORRUPT, "member %zu: Id \"%s\": %s", i, id,
					  rc == -EEXIST ? "used twice" : fb_strerror(rc));
	}
	if ((uint64_t)json_integer_value(next) > st->next_id)
		st->next_id = (uint64_t)json_integer_value(next);
	return 0;
}

int fb_rf_file_header(const uint8_t *p, size_t len, char *hdr, size_t hdrsz, const uint8_t **body)
{
	const uint8_t *nl = memchr(p, '\n', len < hdrsz ? len : hdrsz);
	if (!nl || memchr(p, '\0', (size_t)(nl - p)))
		return -1;
	memcpy(hdr, p, (size_t)(nl - p));
	hdr[nl - p] = '\0';
	*body = nl + 1;
	return 0;
}

int fb_rf_store_parse(struct fb_rf_store *st, const uint8_t *p, size_t len, char *err,
		      size_t errsz)
{
	clear(st);
	char hdr[128];
	const uint8_t *body;
	if (fb_rf_file_header(p, len, hdr, sizeof(hdr), &body))
		return fb_err_set(err, errsz, FB_ECORRUPT, "no header line");
	size_t n;
	uint32_t crc;
	int used = 0;
	if (sscanf(hdr, FB_RF_STORE_MAGIC " %zu %8" SCNx32 "%n", &n, &crc, &used) != 2 || hdr[used])
		return fb_err_set(err, errsz, FB_ECORRUPT, "not a subscriptions file header");
	if (n != len - (size_t)(body - p))
		return fb_err_set(err, errsz, FB_ECORRUPT, "length %zu, but %zu bytes follow", n,
				  len - (size_t)(body - p));
	if (fb_crc32c(0, body, n) != crc)
		return fb_err_set(err, errsz, FB_ECORRUPT, "checksum mismatch");
	json_error_t je;
	json_t *root = json_loadb((const char *)body, n, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return fb_err_set(err, errsz, FB_ECORRUPT, "JSON: %s at %d", je.text, je.position);
	int rc = load_members(st, root, err, errsz);
	json_decref(root);
	if (rc)
		clear(st);
	return rc;
}

int fb_rf_store_load(struct fb_rf_store *st, char *err, size_t errsz)
{
	clear(st);
	if (!st->path[0])
		return 0;
	FILE *f = fopen(st->path, "rb");
	if (!f)
		return errno == ENOENT ? 0 : fb_err_set(err, errsz, -errno, "%s: %s", st->path, strerror(errno));
	struct fb_buf b = FB_BUF_INIT;
	char chunk[65536];
	size_t r;
	int rc = 0;
	while (!rc && (r = fread(chunk, 1, sizeof(chunk), f)) > 0)
		rc = b.len + r > FB_RF_STORE_FILE_MAX ? FB_ETOOBIG : fb_buf_put(&b, chunk, r);
	if (!rc && ferror(f))
		rc = -EIO;
	fclose(f);
	if (rc)
		rc = fb_err_set(err, errsz, rc, "%s: %s", st->path, fb_strerror(rc));
	else {
		char why[400];
		rc = fb_rf_store_parse(st, b.data ? b.data : (const uint8_t *)"", b.len, why, sizeof(why));
		if (rc)
			fb_err_set(err, errsz, rc, "%s: %s", st->path, why);
	}
	fb_buf_free(&b);
	return rc;
}

int fb_rf_store_save(struct fb_rf_store *st)
{
	if (!st->path[0])
		return 0;
	struct fb_buf b = FB_BUF_INIT;
	int rc = fb_rf_store_serialize(st, &b);
	const char *step = "serialize";
	if (!rc)
		rc = fb_file_replace(st->path, b.data, b.len, 0600, &step);
	if (rc)
		fb_log_err("redfish: cannot %s %s: %s; the subscriptions changed in memory only "
			   "(check the disk, then change a subscription to write them again)",
			   step, st->path, fb_strerror(rc));
	fb_buf_free(&b);
	return rc;
}
