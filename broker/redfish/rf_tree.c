/* rf_tree.c - the snapshot, its publication and lookup (rf_tree.h). */
#include "rf_tree.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_time.h"
#include "rf_ctr.h"
#include "rf_files.h"
#include "rf_res.h"
#include "rf_service.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *path;
	char *body;
	size_t len;
	const char *type;  /* schema, for Link; NULL for raw files */
	const char *ctype; /* NULL: JSON */
	char etag[FB_RF_ETAG_MAX];
};

struct snap {
	atomic_uint refs;
	struct entry *e;
	size_t n, cap;
};

struct fb_rf_build {
	const struct fb_rf_service *svc;
	struct snap *s;
};

struct fb_rf_tree {
	struct fb_rf_service *svc;
	/* loop */
	struct fb_rf_ctrs *ctrs;
	struct fb_fabric_snap *seen;   /* the map snapshot the tree was built from */
	uint64_t built_ms;
	/* shared */
	pthread_mutex_t mu;
	struct snap *cur;
};

static void snap_unref(struct snap *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].body);
	}
	free(s->e);
	free(s);
}

static struct snap *current(struct fb_rf_tree *t)
{
	pthread_mutex_lock(&t->mu);
	struct snap *s = t->cur;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&t->mu);
	return s;
}

int fb_rf_tree_new(struct fb_rf_service *svc, struct fb_rf_tree **out)
{
	struct fb_rf_tree *t = calloc(1, sizeof(*t));
	if (!t || !(t->ctrs = fb_rf_ctrs_new())) {
		free(t);
		return -ENOMEM;
	}
	t->svc = svc;
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	return 0;
}

void fb_rf_tree_free(struct fb_rf_tree *t)
{
	if (!t)
		return;
	snap_unref(t->cur);
	if (t->seen)
		fb_fabric_snap_unref(t->seen);
	fb_rf_ctrs_free(t->ctrs);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* ---- building ---- */

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

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
				       : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The key of a resource: its path as lws hands it to us (percent-decoded). */
static char *decoded(const char *path)
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
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct entry *e = realloc(s->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		s->e = e;
		s->cap = cap;
	}
	struct entry *e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	if (!(e->path = decoded(path)))
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

/* obj's bytes with its @odata.etag (the tag of the bytes without it). */
static char *render(json_t *obj, char etag[FB_RF_ETAG_MAX])
{
	char *plain = json_dumps(obj, JSON_COMPACT);
	if (!plain)
		return NULL;
	fb_rf_etag(plain, strlen(plain), etag);
	free(plain);
	if (json_object_set_new(obj, "@odata.etag", json_string(etag)))
		return NULL;
	return json_dumps(obj, JSON_COMPACT);
}

/* The Link header may name only a schema /redfish/v1/JsonSchemas serves. */
static int has_schema(const char *type)
{
	char name[128];
	if (!type)
		return 0;
	snprintf(name, sizeof(name), "json-schema/%s.json", type);
	for (const struct fb_rf_file *f = fb_rf_files; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return 1;
	return 0;
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
		e->type = has_schema(type) ? type : NULL;
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
static json_t *read_map(struct fb_rf_tree *t, struct fb_fabric_snap **snap)
{
	*snap = t->svc->map ? fb_fabric_map_snapshot(t->svc->map) : NULL;
	return *snap ? json_loadb((*snap)->json, (*snap)->len, 0, NULL) : NULL;
}

static int build_all(struct fb_rf_tree *t, struct fb_rf_build *b, const json_t *map)
{
	const struct fb_topology *topo = t->svc->map ? fb_fabric_map_topology(t->svc->map) : NULL;
	int rc = fb_rf_res_root(b);
	if (!rc)
		rc = fb_rf_res_fabric(b, map, topo, t->ctrs);
	if (!rc)
		rc = fb_rf_res_systems(b, map);
	if (!rc)
		rc = fb_rf_res_aggregation(b);
	if (!rc)
		rc = fb_rf_res_registries(b);
	return rc;
}

int fb_rf_tree_rebuild(struct fb_rf_tree *t, uint64_t last_event_id)
{
	(void)last_event_id;
	struct fb_rf_build b = { .svc = t->svc, .s = calloc(1, sizeof(struct snap)) };
	if (!b.s)
		return -ENOMEM;
	atomic_init(&b.s->refs, 1);
	struct fb_fabric_snap *fs;
	json_t *map = read_map(t, &fs);
	int rc = build_all(t, &b, map);
	json_decref(map);
	if (rc) {
		if (fs)
			fb_fabric_snap_unref(fs);
		snap_unref(b.s);
		return rc;
	}
	qsort(b.s->e, b.s->n, sizeof(b.s->e[0]), entry_cmp);
	pthread_mutex_lock(&t->mu);
	struct snap *old = t->cur;
	t->cur = b.s;
	pthread_mutex_unlock(&t->mu);
	snap_unref(old);
	if (t->seen)
		fb_fabric_snap_unref(t->seen);
	t->seen = fs; /* held: its address cannot come back for another map */
	fb_rf_ctrs_clean(t->ctrs);
	t->built_ms = (uint64_t)fb_time_ms();
	return 1;
}

int fb_rf_tree_refresh(struct fb_rf_tree *t, uint64_t last_event_id)
{
	uint64_t now = (uint64_t)fb_time_ms();
	if (t->cur && now - t->built_ms < FB_RF_TREE_MIN_MS)
		return 0;
	struct fb_fabric_snap *fs = t->svc->map ? fb_fabric_map_snapshot(t->svc->map) : NULL;
	int changed = !t->cur || fs != t->seen || fb_rf_ctrs_dirty(t->ctrs);
	if (fs)
		fb_fabric_snap_unref(fs);
	return changed ? fb_rf_tree_rebuild(t, last_event_id) : 0;
}

void fb_rf_tree_learn(struct fb_rf_tree *t, const struct fb_event *ev)
{
	fb_rf_ctrs_learn(t->ctrs, ev);
}

/* ---- lookup (any thread) ---- */

static const struct entry *find(const struct snap *s, const char *path)
{
	struct entry key = { .path = (char *)path };
	return s ? bsearch(&key, s->e, s->n, sizeof(s->e[0]), entry_cmp) : NULL;
}

int fb_rf_tree_exists(struct fb_rf_ctx *c)
{
	struct snap *s = current(c->svc->tree);
	int found = find(s, c->req->path) != NULL;
	snap_unref(s);
	return found;
}

int fb_rf_tree_get(struct fb_rf_ctx *c)
{
	struct snap *s = current(c->svc->tree);
	const struct entry *e = find(s, c->req->path);
	int rc = 0;
	if (!e) {
		const char *args[] = { "Resource", c->req->path };
		fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	} else {
		rc = fb_rf_reply_bytes(c->rep, c->req, e->body, e->len, e->etag, e->type);
		if (!rc && e->ctype && c->rep->status == 200)
			c->rep->ctype = e->ctype;
	}
	snap_unref(s);
	return rc ? -1 : 0;
}

char *fb_rf_tree_body(struct fb_rf_tree *t, const char *path)
{
	struct snap *s = current(t);
	const struct entry *e = find(s, path);
	char *copy = e ? strdup(e->body) : NULL;
	snap_unref(s);
	return copy;
}
