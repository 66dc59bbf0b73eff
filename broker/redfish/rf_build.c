/* rf_build.c - making a snapshot: the fb_rf_build_* calls the builders
 * (rf_res_*.c) use, the path helpers, and each resource rendered once with
 * its @odata.etag (rf_tree.h). */
#include "rf_snap.h"
#include "rf_tree.h"

#include "fb_err.h"
#include "rf_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fb_rf_snap_unref(struct snap *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].body);
	}
	fb_buf_free(&s->ents);
	free(s);
}

struct snap *fb_rf_snap_new(void)
{
	struct snap *s = calloc(1, sizeof(*s));
	if (s)
		atomic_init(&s->refs, 1);
	return s;
}

json_t *fb_rf_ref(const char *path)
{
	return json_pack("{s:s}", "@odata.id", path);
}

const struct fb_rf_service *fb_rf_build_service(const struct fb_rf_build *b)
{
	return b->svc;
}

int fb_rf_path_append(char *path, size_t sz, const char *seg)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), start = n;
	if (n + 2 >= sz)
		return FB_ETOOBIG;
	path[n++] = '/';
	for (const unsigned char *c = (const unsigned char *)seg; *c && n + 4 < sz; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		    *c == '-' || *c == '.' || *c == '_' || *c == '~') {
			path[n++] = (char)*c;
		} else {
			path[n++] = '%';
			path[n++] = hex[*c >> 4];
			path[n++] = hex[*c & 15];
		}
	}
	if (n + 4 >= sz && seg[0]) {
		path[start] = '\0';
		return FB_ETOOBIG;
	}
	path[n] = '\0';
	return 0;
}

int fb_rf_path_cat(char *out, size_t sz, const char *base, const char *suffix)
{
	size_t n = base == out ? strlen(out) : strlen(base), m = strlen(suffix);
	if (n + m >= sz) {
		if (sz)
			out[0] = '\0';
		return FB_ETOOBIG;
	}
	if (base != out)
		memmove(out, base, n);
	memcpy(out + n, suffix, m + 1);
	return 0;
}

int fb_rf_path_port(char *out, size_t sz, const char *sw, unsigned port)
{
	char num[24];
	snprintf(num, sizeof(num), "/Ports/%u", port);
	return fb_rf_path_cat(out, sz, sw, num);
}

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
				       : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The key of a resource: its path as lws hands it to us (percent-decoded). */
char *fb_rf_path_decode(const char *path)
{
	char *k = strdup(path), *o = k;
	for (const char *p = path; k && *p; p++) {
		if (p[0] == '%' && unhex(p[1]) >= 0 && unhex(p[2]) >= 0) {
			*o++ = (char)(unhex(p[1]) * 16 + unhex(p[2]));
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	if (k)
		*o = '\0';
	return k;
}

static struct entry *new_entry(struct fb_rf_build *b, const char *path)
{
	struct snap *s = b->s;
	const struct entry zero = { 0 };
	if (fb_buf_put(&s->ents, &zero, sizeof(zero)))
		return NULL;
	s->e = (struct entry *)s->ents.data; /* may have moved */
	struct entry *e = &s->e[s->n];
	if (!(e->path = fb_rf_path_decode(path)))
		return NULL;
	s->n++;
	return e;
}

int fb_rf_build_add_raw(struct fb_rf_build *b, const char *path, const char *ctype, const char *body,
			size_t len)
{
	struct entry *e = new_entry(b, path);
	if (!e || !(e->body = malloc(len + 1)))
		return -ENOMEM;
	memcpy(e->body, body, len);
	e->body[len] = '\0';
	e->len = len;
	e->ctype = ctype;
	fb_rf_etag(body, len, e->etag);
	return 0;
}

/* obj's bytes with its @odata.etag (the tag of the bytes without it),
 * serialized once: the annotation is spliced in before the final '}'. */
static char *render(json_t *obj, char etag[FB_RF_ETAG_MAX])
{
	json_object_del(obj, "@odata.etag");
	char *plain = json_dumps(obj, JSON_COMPACT);
	if (!plain)
		return NULL;
	size_t n = strlen(plain);
	fb_rf_etag(plain, n, etag);
	char *out = realloc(plain, n + FB_RF_ETAG_MAX + 32);
	if (!out) {
		free(plain);
		return NULL;
	}
	/* etag is W/"<hex>": its quotes are escaped in JSON */
	snprintf(out + n - 1, FB_RF_ETAG_MAX + 33, "%s\"@odata.etag\":\"W/\\\"%.16s\\\"\"}",
		 n > 2 ? "," : "", etag + 3);
	return out;
}

int fb_rf_build_add(struct fb_rf_build *b, const char *path, const char *type, json_t *obj)
{
	if (!obj)
		return -ENOMEM;
	int rc = -ENOMEM;
	if (!json_object_get(obj, "@odata.id"))
		json_object_set_new(obj, "@odata.id", json_string(path));
	struct entry *e = new_entry(b, path);
	if (e && (e->body = render(obj, e->etag))) {
		e->len = strlen(e->body);
		e->type = fb_rf_schema_served(type) ? type : NULL;
		rc = 0;
	}
	json_decref(obj);
	return rc;
}

int fb_rf_build_collection(struct fb_rf_build *b, const char *path, const char *type,
			   const char *name, json_t *member_paths)
{
	json_t *members = json_array();
	size_t i;
	json_t *p;
	json_array_foreach(member_paths, i, p)
		json_array_append_new(members, fb_rf_ref(json_string_value(p)));
	size_t n = json_array_size(member_paths);
	json_decref(member_paths);
	char otype[96];
	snprintf(otype, sizeof(otype), "#%s.%s", type, type);
	return fb_rf_build_add(b, path, type,
			       json_pack("{s:s,s:s,s:s,s:I,s:o}", "@odata.id", path, "@odata.type", otype,
					 "Name", name, "Members@odata.count", (json_int_t)n, "Members",
					 members));
}
static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

/* The parsed fabric map (new reference) or NULL; *snap keeps the one read. */
size_t fb_rf_snap_bytes(const struct snap *s)
{
	size_t n = s->ents.len;
	for (size_t i = 0; i < s->n; i++)
		n += s->e[i].len + strlen(s->e[i].path) + 2;
	return n;
}

void fb_rf_snap_sort(struct snap *s)
{
	qsort(s->e, s->n, sizeof(s->e[0]), entry_cmp);
}

const struct entry *fb_rf_snap_find(const struct snap *s, const char *key)
{
	struct entry k = { .path = (char *)key };
	return s && key ? bsearch(&k, s->e, s->n, sizeof(s->e[0]), entry_cmp) : NULL;
}
