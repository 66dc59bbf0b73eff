/* rf_sub_match.c - matching events to subscriptions (rf_sub_match.h). */
#include "rf_sub_match.h"

#include "rf_filter.h"

#include <stdlib.h>
#include <string.h>

void fb_rf_facts_init(struct fb_rf_facts *f, const char *message_id, unsigned severity,
		      const char *event_type, const char *origin)
{
	f->message_id = message_id ? message_id : "";
	const char *dot = strchr(f->message_id, '.');
	f->prefix_len = dot ? (size_t)(dot - f->message_id) : strlen(f->message_id);
	f->severity = severity;
	f->event_type = event_type ? event_type : "";
	f->origin = origin ? origin : "";
	f->resource_type = fb_rf_origin_type(f->origin); /* shared with $filter */
}

static int prefix_in(const struct fb_rf_strv *l, const struct fb_rf_facts *f)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == f->prefix_len &&
		    strncmp(l->v[i], f->message_id, f->prefix_len) == 0)
			return 1;
	return 0;
}

/* "Prefix.Key" (no version) names every version of that message. */
static int id_match(const char *want, const struct fb_rf_facts *f)
{
	if (strcmp(want, f->message_id) == 0)
		return 1;
	const char *dot = strchr(want, '.');
	if (!dot || strchr(dot + 1, '.'))
		return 0;
	size_t plen = (size_t)(dot - want);
	const char *key = strrchr(f->message_id, '.');
	return plen == f->prefix_len && strncmp(want, f->message_id, plen) == 0 && key &&
	       strcmp(key + 1, dot + 1) == 0;
}

static int id_in(const struct fb_rf_strv *l, const struct fb_rf_facts *f)
{
	for (size_t i = 0; i < l->n; i++)
		if (id_match(l->v[i], f))
			return 1;
	return 0;
}

static int origin_in(const struct fb_rf_strv *l, int subordinate, const char *origin)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *w = l->v[i];
		size_t n = strlen(w);
		while (n > 1 && w[n - 1] == '/')
			n--; /* ".../sw1/" names the same resource as ".../sw1" */
		if (strncmp(origin, w, n) != 0)
			continue;
		if (origin[n] == '\0' || (subordinate && origin[n] == '/'))
			return 1;
	}
	return 0;
}

static int str_in(const struct fb_rf_strv *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

int fb_rf_match(const struct fb_rf_match *m, const struct fb_rf_facts *f)
{
	if (m->sev_mask && (f->severity >= 32 || !(m->sev_mask & (1u << f->severity))))
		return 0;
	if (m->x_prefixes.n && prefix_in(&m->x_prefixes, f))
		return 0;
	if (m->x_ids.n && id_in(&m->x_ids, f))
		return 0;
	if (m->prefixes.n && !prefix_in(&m->prefixes, f))
		return 0;
	if (m->ids.n && !id_in(&m->ids, f))
		return 0;
	if (m->origins.n && !origin_in(&m->origins, m->subordinate, f->origin))
		return 0;
	if (m->types.n && !str_in(&m->types, f->resource_type))
		return 0;
	if (m->event_types.n && !str_in(&m->event_types, f->event_type))
		return 0;
	return 1;
}

void fb_rf_match_free(struct fb_rf_match *m)
{
	struct fb_rf_strv *l[] = { &m->prefixes, &m->x_prefixes, &m->ids, &m->x_ids,
				   &m->origins, &m->types, &m->event_types };
	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		free(l[i]->v);
		l[i]->v = NULL;
		l[i]->n = 0;
	}
}
