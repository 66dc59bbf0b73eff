/* rf_tree.c - the snapshot, its publication and lookup (rf_tree.h). */
#include "rf_tree.h"

#include "fabric_map.h"
#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_time.h"
#include "rf_ctr.h"
#include "rf_files.h"
#include "rf_res.h"
#include "rf_service.h"
#include "topology.h"

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
	struct entry *e; /* ents.data */
	size_t n;
	struct fb_buf ents;
};

struct fb_rf_build {
	const struct fb_rf_service *svc;
	struct snap *s;
};

/* What one rebuild reads: copies the builder owns, taken on the loop. */
struct input {
	struct fb_fabric_snap *fs;  /* a reference */
	struct fb_topology *topo;   /* a clone */
	struct fb_rf_ctrs *ctrs;    /* a clone */
};

struct fb_rf_tree {
	struct fb_rf_service *svc;
	/* loop */
	struct fb_rf_ctrs *ctrs;
	struct fb_fabric_snap *seen;   /* the map snapshot the last capture read */
	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct snap *cur;
	struct input *pending;         /* for the builder thread */
	int building, stop, threaded;
	uint64_t next_ms;              /* no rebuild before (spacing by cost) */
	struct fb_rf_tree_stats st;
	pthread_t thread;
};

static void snap_unref(struct snap *s)
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
	pthread_cond_init(&t->cv, NULL);
	*out = t;
	return 0;
}

static void input_free(struct input *in);

void fb_rf_tree_free(struct fb_rf_tree *t)
{
	if (!t)
		return;
	if (t->threaded) {
		pthread_mutex_lock(&t->mu);
		t->stop = 1;
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->thread, NULL);
	}
	input_free(t->pending);
	snap_unref(t->cur);
	if (t->seen)
		fb_fabric_snap_unref(t->seen);
	fb_rf_ctrs_free(t->ctrs);
	pthread_cond_destroy(&t->cv);
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
	const struct entry zero = { 0 };
	if (fb_buf_put(&s->ents, &zero, sizeof(zero)))
		return NULL;
	s->e = (struct entry *)s->ents.data; /* may have moved */
	struct entry *e = &s->e[s->n];
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
static void input_free(struct input *in)
{
	if (!in)
		return;
	if (in->fs)
		fb_fabric_snap_unref(in->fs);
	fb_topology_free(in->topo);
	fb_rf_ctrs_free(in->ctrs);
	free(in);
}

/* Loop: copy what a rebuild reads (memcpy-fast: the loop goes on at once). */
static struct input *capture(struct fb_rf_tree *t)
{
	struct input *in = calloc(1, sizeof(*in));
	struct fb_fabric_map *m = t->svc->map;
	if (!in)
		return NULL;
	in->fs = m ? fb_fabric_map_snapshot(m) : NULL;
	in->topo = m ? fb_topology_clone(fb_fabric_map_topology(m)) : NULL;
	in->ctrs = fb_rf_ctrs_clone(t->ctrs);
	if ((m && !in->topo) || !in->ctrs) {
		input_free(in);
		return NULL;
	}
	if (t->seen)
		fb_fabric_snap_unref(t->seen);
	t->seen = in->fs ? fb_fabric_snap_ref(in->fs) : NULL; /* held: its address stays unique */
	fb_rf_ctrs_clean(t->ctrs);
	return in;
}

static int build_all(struct fb_rf_build *b, const struct input *in)
{
	json_t *map = in->fs ? json_loadb(in->fs->json, in->fs->len, 0, NULL) : NULL;
	int rc = fb_rf_res_root(b);
	if (!rc)
		rc = fb_rf_res_fabric(b, map, in->topo, in->ctrs);
	if (!rc)
		rc = fb_rf_res_systems(b, map);
	if (!rc)
		rc = fb_rf_res_aggregation(b);
	if (!rc)
		rc = fb_rf_res_registries(b);
	json_decref(map);
	return rc;
}

/* Publish s; after a rebuild that took T, none for max(FB_RF_TREE_MIN_MS,
 * 9 T), so that a big tree that keeps changing keeps a core busy a tenth
 * of the time at most. */
static void publish(struct fb_rf_tree *t, struct snap *s, uint64_t took)
{
	uint64_t gap = 9 * took > FB_RF_TREE_MIN_MS ? 9 * took : FB_RF_TREE_MIN_MS;
	pthread_mutex_lock(&t->mu);
	struct snap *old = t->cur;
	t->cur = s;
	t->next_ms = (uint64_t)fb_time_ms() + gap;
	t->st.rebuilds++;
	t->st.last_ms = took;
	t->st.resources = s->n;
	pthread_mutex_unlock(&t->mu);
	snap_unref(old);
	if (took >= 100)
		fb_log_info("redfish: the tree (%zu resources) took %llu ms to build; next rebuild "
			    "in %llu ms at the earliest", s->n, (unsigned long long)took,
			    (unsigned long long)gap);
}

/* Any thread: build from in and publish. 1, or -ENOMEM. */
static int build_from(struct fb_rf_tree *t, const struct input *in)
{
	uint64_t t0 = (uint64_t)fb_time_ms();
	struct fb_rf_build b = { .svc = t->svc, .s = calloc(1, sizeof(struct snap)) };
	if (!b.s)
		return -ENOMEM;
	atomic_init(&b.s->refs, 1);
	int rc = build_all(&b, in);
	if (rc) {
		snap_unref(b.s);
		return rc;
	}
	qsort(b.s->e, b.s->n, sizeof(b.s->e[0]), entry_cmp);
	publish(t, b.s, (uint64_t)fb_time_ms() - t0);
	return 1;
}

void fb_rf_tree_get_stats(struct fb_rf_tree *t, struct fb_rf_tree_stats *st)
{
	pthread_mutex_lock(&t->mu);
	*st = t->st;
	pthread_mutex_unlock(&t->mu);
}

int fb_rf_tree_rebuild(struct fb_rf_tree *t, uint64_t last_event_id)
{
	(void)last_event_id;
	struct input *in = capture(t);
	int rc = in ? build_from(t, in) : -ENOMEM;
	input_free(in);
	return rc;
}

static void *builder_main(void *arg)
{
	struct fb_rf_tree *t = arg;
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		if (!t->pending) {
			pthread_cond_wait(&t->cv, &t->mu);
			continue;
		}
		struct input *in = t->pending;
		t->pending = NULL;
		t->building = 1;
		pthread_mutex_unlock(&t->mu);
		if (build_from(t, in) < 0)
			fb_log_warn("redfish: out of memory rebuilding the tree; the old one stays");
		input_free(in);
		pthread_mutex_lock(&t->mu);
		t->building = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int fb_rf_tree_start_builder(struct fb_rf_tree *t)
{
	int rc = pthread_create(&t->thread, NULL, builder_main, t);
	if (rc) {
		fb_log_err("redfish: cannot start the tree's builder thread: %s", strerror(rc));
		return -rc;
	}
	t->threaded = 1;
	return 0;
}

/* Loop: due, and not already being built; *none: no tree published yet. */
static int due(struct fb_rf_tree *t, int *none)
{
	pthread_mutex_lock(&t->mu);
	*none = !t->cur && !t->pending && !t->building;
	int ok = *none || ((uint64_t)fb_time_ms() >= t->next_ms && !t->pending && !t->building);
	pthread_mutex_unlock(&t->mu);
	return ok;
}

int fb_rf_tree_refresh(struct fb_rf_tree *t, uint64_t last_event_id)
{
	int none;
	if (!due(t, &none))
		return 0;
	struct fb_fabric_snap *fs = t->svc->map ? fb_fabric_map_snapshot(t->svc->map) : NULL;
	int changed = none || fs != t->seen || fb_rf_ctrs_dirty(t->ctrs);
	if (fs)
		fb_fabric_snap_unref(fs);
	if (!changed)
		return 0;
	if (!t->threaded)
		return fb_rf_tree_rebuild(t, last_event_id);
	struct input *in = capture(t);
	if (!in)
		return -ENOMEM;
	pthread_mutex_lock(&t->mu);
	t->pending = in;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	return 1;
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
	char *key = decoded(path);
	struct snap *s = key ? current(t) : NULL;
	const struct entry *e = find(s, key);
	free(key);
	char *copy = e ? strdup(e->body) : NULL;
	snap_unref(s);
	return copy;
}
