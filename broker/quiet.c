/* quiet.c - the quiet stages (see quiet.h). */
#include "quiet.h"

#include <errno.h>

int fb_quiets_add(struct fb_quiets *q, const char *name, fb_quiet_fn fn, void *arg)
{
	if (q->n >= FB_QUIET_STAGES_MAX)
		return -ENOSPC;
	q->v[q->n++] = (struct fb_quiet_stage){ name, fn, arg };
	return 0;
}

int fb_quiets_apply(struct fb_quiets *q, struct fb_event *ev, uint64_t event_id, uint64_t now_ns)
{
	int changed = 0;
	if (fb_event_clear_quiet(ev)) {
		q->agent_set++;
		changed = 1;
	}
	unsigned quiet = 0;
	for (unsigned i = 0; i < q->n; i++) {
		unsigned r = q->v[i].fn(q->v[i].arg, ev, event_id, quiet, now_ns);
		if (r && r < FB_QUIET__END && (!quiet || r < quiet))
			quiet = r;
	}
	if (!quiet)
		return changed;
	if (fb_event_set_quiet(ev, quiet) != 0) {
		q->counters_full++; /* stays loud: quiet.h */
		return changed;
	}
	q->by_reason[quiet]++;
	return 1;
}

json_t *fb_quiets_json(const struct fb_quiets *q)
{
	json_t *j = json_object();
	for (unsigned r = 1; j && r < FB_QUIET__END; r++)
		json_object_set_new(j, fb_quiet_name(r), json_integer((json_int_t)q->by_reason[r]));
	if (j) {
		json_object_set_new(j, "counters_full", json_integer((json_int_t)q->counters_full));
		json_object_set_new(j, "agent_set", json_integer((json_int_t)q->agent_set));
	}
	return j;
}
