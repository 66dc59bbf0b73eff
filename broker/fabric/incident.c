/* incident.c - open incidents by switch (see incident.h). A few at a time
 * at most, so a linear scan of a packed array is enough. */
#include "incident.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX 1024

struct fb_incidents {
	size_t n, max;
	struct fb_incident v[];
};

struct fb_incidents *fb_incidents_new(size_t max)
{
	if (!max)
		max = DEFAULT_MAX;
	struct fb_incidents *in = calloc(1, sizeof(*in) + max * sizeof(in->v[0]));
	if (in)
		in->max = max;
	return in;
}

void fb_incidents_free(struct fb_incidents *in) { free(in); }

static long find(const struct fb_incidents *in, uint64_t guid)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].switch_guid == guid)
			return (long)i;
	return -1;
}

static void drop(struct fb_incidents *in, size_t i)
{
	in->v[i] = in->v[--in->n];
}

const struct fb_incident *fb_incidents_verdict(struct fb_incidents *in, uint64_t switch_guid, uint64_t new_group,
					       uint64_t now_ns, size_t no_path)
{
	long i = find(in, switch_guid);
	if (i >= 0) {
		in->v[i].updates++;
		in->v[i].updated_ns = now_ns;
		in->v[i].no_path = no_path;
		return &in->v[i];
	}
	if (in->n == in->max) { /* forget the oldest */
		size_t old = 0;
		for (size_t k = 1; k < in->n; k++)
			if (in->v[k].updated_ns < in->v[old].updated_ns)
				old = k;
		drop(in, old);
	}
	in->v[in->n] = (struct fb_incident){ switch_guid, new_group, now_ns, now_ns, 0, no_path };
	return &in->v[in->n++];
}

const struct fb_incident *fb_incidents_find(const struct fb_incidents *in, uint64_t switch_guid)
{
	long i = find(in, switch_guid);
	return i >= 0 ? &in->v[i] : NULL;
}

int fb_incidents_close(struct fb_incidents *in, uint64_t switch_guid, struct fb_incident *out)
{
	long i = find(in, switch_guid);
	if (i < 0)
		return 0;
	if (out)
		*out = in->v[i];
	drop(in, (size_t)i);
	return 1;
}

size_t fb_incidents_count(const struct fb_incidents *in) { return in->n; }

const struct fb_incident *fb_incidents_at(const struct fb_incidents *in, size_t i)
{
	return i < in->n ? &in->v[i] : NULL;
}
