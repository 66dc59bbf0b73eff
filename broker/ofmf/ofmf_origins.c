#include "ofmf_origins.h"

#include "fb_sorted.h"
#include "ofmf_state.h"

#include <stdlib.h>
#include <string.h>

void fb_ofmf_origins_init(struct fb_ofmf_origins *o, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->max = max;
}

void fb_ofmf_origins_fini(struct fb_ofmf_origins *o)
{
	while (o->n)
		fb_ofmf_origins_pop(o);
	free(o->q);
	fb_ofmf_origins_forget(o);
	free(o->known);
	memset(o, 0, sizeof(*o));
}

int fb_ofmf_origins_push(struct fb_ofmf_origins *o, const char *path, int front, uint64_t due)
{
	if (o->n >= o->max)
		return -1;
	char *p = strdup(path);
	struct fb_ofmf_origin *q = p ? realloc(o->q, (o->n + 1) * sizeof(*q)) : NULL;
	if (!q) {
		free(p);
		return -1;
	}
	o->q = q;
	if (front) {
		memmove(q + 1, q, o->n * sizeof(*q));
		q[0] = (struct fb_ofmf_origin){ p, due };
	} else {
		q[o->n] = (struct fb_ofmf_origin){ p, due };
	}
	o->n++;
	return 0;
}

void fb_ofmf_origins_pop(struct fb_ofmf_origins *o)
{
	free(o->q[0].path);
	memmove(o->q, o->q + 1, --o->n * sizeof(*o->q));
}

int fb_ofmf_origins_queued(const struct fb_ofmf_origins *o, const char *path)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->q[i].path, path) == 0)
			return 1;
	return 0;
}

static int cmp_str(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

int fb_ofmf_origins_known(const struct fb_ofmf_origins *o, const char *path)
{
	int found;
	(void)fb_sorted_pos(o->known, o->n_known, sizeof(char *), path, cmp_str, &found);
	return found;
}

int fb_ofmf_origins_remember(struct fb_ofmf_origins *o, const char *path)
{
	int found;
	size_t at = fb_sorted_pos(o->known, o->n_known, sizeof(char *), path, cmp_str, &found);
	if (found)
		return 0;
	if (o->n_known == o->cap_known) {
		size_t cap = o->cap_known ? o->cap_known * 2 : 64;
		char **k = realloc(o->known, cap * sizeof(*k));
		if (!k)
			return -1;
		o->known = k;
		o->cap_known = cap;
	}
	char *p = strdup(path);
	if (!p)
		return -1;
	memmove(o->known + at + 1, o->known + at, (o->n_known - at) * sizeof(char *));
	o->known[at] = p;
	o->n_known++;
	return 0;
}

void fb_ofmf_origins_forget(struct fb_ofmf_origins *o)
{
	for (size_t i = 0; i < o->n_known; i++)
		free(o->known[i]);
	o->n_known = 0;
}

static int cmp_ptr_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int fb_ofmf_origins_learn(struct fb_ofmf_origins *o, json_t *accessed, const char *keep)
{
	size_t n = 0, max = json_array_size(accessed);
	const char **held = max ? malloc(max * sizeof(*held)) : NULL;
	for (size_t i = 0; held && i < max; i++) {
		json_t *e = json_array_get(accessed, i);
		const char *p = json_is_string(e) ? json_string_value(e)
						 : json_string_value(json_object_get(e, "@odata.id"));
		if (p && !strchr(p, '#') && strlen(p) < FB_OFMF_URL_MAX) {
			held[n++] = p;
			(void)fb_ofmf_origins_remember(o, p);
		}
	}
	int head_gone = 0;
	if (n) {
		qsort(held, n, sizeof(*held), cmp_ptr_str);
		size_t kept = 0;
		for (size_t i = 0; i < o->n; i++) {
			int found;
			(void)fb_sorted_pos(held, n, sizeof(*held), o->q[i].path, cmp_str, &found);
			if (found && strcmp(o->q[i].path, keep) != 0) {
				free(o->q[i].path);
				head_gone |= i == 0;
			} else {
				o->q[kept++] = o->q[i];
			}
		}
		o->n = kept;
	}
	free(held);
	return head_gone;
}
