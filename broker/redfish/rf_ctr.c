/* rf_ctr.c - see rf_ctr.h. A jansson object maps "guid:port" to the
 * port's slot (its hashtable is what we need; events with counters are
 * rare next to the rest). */
#include "rf_ctr.h"

#include "fb_buf.h"
#include "topology.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fb_rf_ctrs {
	json_t *index; /* key -> integer slot */
	json_t *fabric; /* switch GUID hex -> fabric name */
	struct fb_rf_port_ctrs *p; /* slots.data */
	size_t n;
	struct fb_buf slots;
	int dirty;
};

struct fb_rf_ctrs *fb_rf_ctrs_new(void)
{
	struct fb_rf_ctrs *c = calloc(1, sizeof(*c));
	if (c && (!(c->index = json_object()) || !(c->fabric = json_object()))) {
		json_decref(c->index);
		free(c);
		c = NULL;
	}
	return c;
}

void fb_rf_ctrs_free(struct fb_rf_ctrs *c)
{
	if (!c)
		return;
	json_decref(c->index);
	json_decref(c->fabric);
	fb_buf_free(&c->slots);
	free(c);
}

static void key(char out[40], uint64_t guid, uint16_t port)
{
	snprintf(out, 40, "%016llx:%u", (unsigned long long)guid, (unsigned)port);
}

static struct fb_rf_port_ctrs *slot(struct fb_rf_ctrs *c, uint64_t guid, uint16_t port)
{
	char k[40];
	key(k, guid, port);
	json_t *i = json_object_get(c->index, k);
	if (i)
		return &c->p[json_integer_value(i)];
	if (c->n == FB_RF_CTRS_MAX)
		return NULL;
	const struct fb_rf_port_ctrs zero = { 0 };
	if (fb_buf_put(&c->slots, &zero, sizeof(zero)))
		return NULL;
	c->p = (struct fb_rf_port_ctrs *)c->slots.data; /* may have moved */
	if (json_object_set_new(c->index, k, json_integer((json_int_t)c->n)))
		return NULL;
	return &c->p[c->n++];
}

static void learn_fabric(struct fb_rf_ctrs *c, const struct fb_event *ev, uint64_t guid)
{
	char k[24];
	snprintf(k, sizeof(k), "%016llx", (unsigned long long)guid);
	const char *was = json_string_value(json_object_get(c->fabric, k));
	if (was && strcmp(was, ev->subj.fabric) == 0)
		return;
	json_object_set_new(c->fabric, k, json_string(ev->subj.fabric));
	c->dirty = 1;
}

const char *fb_rf_ctrs_fabric(const struct fb_rf_ctrs *c, uint64_t switch_guid)
{
	char k[24];
	snprintf(k, sizeof(k), "%016llx", (unsigned long long)switch_guid);
	return json_string_value(json_object_get(c->fabric, k));
}

void fb_rf_ctrs_learn(struct fb_rf_ctrs *c, const struct fb_event *ev)
{
	uint64_t guid;
	uint16_t port;
	if (ev->link_class == FB_LINK_NODE || ev->kind == FB_KIND_INVENTORY ||
	    !fb_topology_key(ev, &guid, &port))
		return;
	if (ev->subj.fabric[0])
		learn_fabric(c, ev, guid);
	if (!ev->n_counters || !port)
		return;
	struct fb_rf_port_ctrs *s = slot(c, guid, port);
	if (!s)
		return;
	for (unsigned i = 0; i < ev->n_counters; i++) {
		unsigned id = ev->counters[i].id;
		if (id >= FB_CTR__END || id >= 64)
			continue;
		s->v[id] = ev->counters[i].value;
		s->have |= 1ull << id;
	}
	s->ts_ns = ev->ts_ns;
	c->dirty = 1;
}

const struct fb_rf_port_ctrs *fb_rf_ctrs_get(const struct fb_rf_ctrs *c, uint64_t switch_guid,
					     uint16_t port)
{
	char k[40];
	key(k, switch_guid, port);
	json_t *i = json_object_get(c->index, k);
	return i ? &c->p[json_integer_value(i)] : NULL;
}

int fb_rf_ctrs_dirty(const struct fb_rf_ctrs *c)
{
	return c->dirty;
}

void fb_rf_ctrs_clean(struct fb_rf_ctrs *c)
{
	c->dirty = 0;
}

struct fb_rf_ctrs *fb_rf_ctrs_clone(const struct fb_rf_ctrs *c)
{
	struct fb_rf_ctrs *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->index = json_deep_copy(c->index);
	d->fabric = json_deep_copy(c->fabric);
	d->n = c->n;
	if (!d->index || !d->fabric || fb_buf_put(&d->slots, c->slots.data, c->slots.len)) {
		fb_rf_ctrs_free(d);
		return NULL;
	}
	d->p = (struct fb_rf_port_ctrs *)d->slots.data;
	return d;
}
