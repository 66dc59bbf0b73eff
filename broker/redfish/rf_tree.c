/* rf_tree.c - the tree: what the loop learns for it, the copies a rebuild
 * reads, the builder thread, publication and lookup (rf_tree.h). */
#include "rf_tree.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_time.h"
#include "rf_ctr.h"
#include "rf_snap.h"
#include "rf_res.h"
#include "rf_service.h"
#include "topology.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	fb_rf_snap_unref(t->cur);
	if (t->seen)
		fb_fabric_snap_unref(t->seen);
	fb_rf_ctrs_free(t->ctrs);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

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
	t->st.bytes = fb_rf_snap_bytes(s);
	pthread_mutex_unlock(&t->mu);
	fb_rf_snap_unref(old);
	if (took >= 100)
		fb_log_info("redfish: the tree (%zu resources) took %llu ms to build; next rebuild "
			    "in %llu ms at the earliest", s->n, (unsigned long long)took,
			    (unsigned long long)gap);
}

/* Any thread: build from in and publish. 1, or -ENOMEM. */
static int build_from(struct fb_rf_tree *t, const struct input *in)
{
	uint64_t t0 = (uint64_t)fb_time_ms();
	struct fb_rf_build b = { .svc = t->svc, .s = fb_rf_snap_new() };
	if (!b.s)
		return -ENOMEM;
	int rc = build_all(&b, in);
	if (rc) {
		fb_rf_snap_unref(b.s);
		return rc;
	}
	fb_rf_snap_sort(b.s);
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

int fb_rf_tree_exists(struct fb_rf_ctx *c)
{
	struct snap *s = current(c->svc->tree);
	int found = fb_rf_snap_find(s, c->req->path) != NULL;
	fb_rf_snap_unref(s);
	return found;
}

int fb_rf_tree_get(struct fb_rf_ctx *c)
{
	struct snap *s = current(c->svc->tree);
	const struct entry *e = fb_rf_snap_find(s, c->req->path);
	int rc = 0;
	if (!e) {
		const char *args[] = { "Resource", c->req->path };
		fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	} else {
		rc = fb_rf_reply_bytes(c->rep, c->req, e->body, e->len, e->etag, e->type);
		if (!rc && e->ctype && c->rep->status == 200)
			c->rep->ctype = e->ctype;
	}
	fb_rf_snap_unref(s);
	return rc ? -1 : 0;
}

char *fb_rf_tree_body(struct fb_rf_tree *t, const char *path)
{
	char *key = fb_rf_path_decode(path);
	struct snap *s = key ? current(t) : NULL;
	const struct entry *e = fb_rf_snap_find(s, key);
	free(key);
	char *copy = e ? strdup(e->body) : NULL;
	fb_rf_snap_unref(s);
	return copy;
}
