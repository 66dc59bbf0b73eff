/* fabric_map.c - the fabric map: learning, job enrichment, the job
 * channel, and publishing snapshots (see fabric_map.h; the format is in
 * docs/fabric-map.md).
 *
 * This file owns the map's tables (topology, jobs) and the published
 * snapshot with its refcount. fabric_render.c turns the tables into a new
 * snapshot; fb_fabric_map_refresh decides when, and swaps it in under mu.
 * With the renderer thread (fb_fabric_map_start_renderer) the loop only
 * takes a copy of the tables (fb_fabric_render_take) and hands it over
 * under mu; the renderer writes the map from the copy and swaps the
 * snapshot in itself, and the loop learns of it at its next refresh.
 */
#include "fabric_map.h"

#include "fabric_render.h"
#include "fb_err.h"
#include "fb_log.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARN_EVERY_NS (60 * 1000000000ull)
/* After a render that took T, wait RENDER_SPACING * T before the next, so
 * that a big map that keeps changing costs the loop at most ~10% of its
 * time (10000 nodes render in ~30 ms). With the renderer thread the same
 * holds for the loop's copy, and after a render that took the renderer T
 * it waits THREAD_SPACING * T: at most half a core for a map that keeps
 * changing. */
#define RENDER_SPACING 9
#define THREAD_SPACING 1

struct fb_fabric_map {
	/* loop thread */
	const struct fb_inventory *inv;
	struct fb_topology *topo;
	struct fb_jobs *jobs;
	char fabric[FB_FABRIC_MAX];
	int dirty;
	size_t last_nodes;
	uint64_t renders, job_ops, refused, jobs_expired;
	uint64_t job_ttl_ns; /* 0: registrations never expire */
	uint64_t warned_topo_ns, warned_jobs_ns;
	uint64_t render_ns, next_render_ns; /* the last render's duration; no render before */
	uint64_t take_ns;       /* the loop's part of the last render */
	struct fb_loopq *ops;   /* the job operations from the lws thread */
	int threaded;           /* the renderer thread runs (fb_fabric_map_start_renderer) */
	pthread_t renderer;
	uint64_t seen_published; /* renderer results the loop has taken note of */

	/* shared with the lws thread (snap) and the renderer thread (all), under mu */
	pthread_mutex_t mu;
	struct fb_fabric_snap *snap;
	pthread_cond_t cv;                 /* signals in_next or stop to the renderer */
	struct fb_fabric_render_in *in_next; /* handed over by the loop, taken by the renderer */
	int busy;                          /* the renderer is writing a map */
	int stop;
	int failed;                        /* the renderer ran out of memory */
	uint64_t published;                /* snapshots the renderer swapped in */
	size_t r_nodes;                    /* the renderer's last map: nodes, */
	uint64_t r_ns, r_done_ns;          /* its duration and when it was done */
};

struct fb_fabric_snap *fb_fabric_snap_ref(struct fb_fabric_snap *s)
{
	atomic_fetch_add(&s->refs, 1);
	return s;
}

/* The buffers were fabric_render.c's (render_to_snap hands them over). */
void fb_fabric_snap_unref(struct fb_fabric_snap *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		free(s->json);
		free((void *)s->nodes);
		free((void *)s->names);
		free((void *)s->sw_of);
		free((void *)s->sws);
		free(s);
	}
}

void fb_job_op_free(struct fb_job_op *op)
{
	if (!op)
		return;
	fb_job_reg_free(&op->reg);
	free(op);
}

struct fb_fabric_map *fb_fabric_map_new(struct event_base *base, const struct fb_inventory *inv,
					const char *fabric)
{
	struct fb_fabric_map *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	m->inv = inv;
	m->dirty = 1; /* publish a first (maybe empty) map at the first refresh */
	snprintf(m->fabric, sizeof(m->fabric), "%s", fabric ? fabric : "");
	m->topo = fb_topology_new(0, 0);
	m->jobs = fb_jobs_new(0, 0);
	/* Priority 0, like the agent sockets: a request waits for one pass. */
	m->ops = fb_loopq_new(base, FB_FABRIC_MAP_MAX_OPS);
	if (!m->topo || !m->jobs || !m->ops) {
		fb_fabric_map_free(m);
		return NULL;
	}
	return m;
}

void fb_fabric_map_set_job_limits(struct fb_fabric_map *m, size_t max_jobs, size_t max_members,
				  size_t max_nodes, uint64_t ttl_s)
{
	fb_jobs_set_limits(m->jobs, max_jobs, max_members, max_nodes);
	m->job_ttl_ns = ttl_s * 1000000000ull;
}

size_t fb_fabric_map_expire_jobs(struct fb_fabric_map *m, uint64_t now_ns)
{
	if (!m->job_ttl_ns || now_ns < m->job_ttl_ns || !fb_jobs_count(m->jobs))
		return 0;
	size_t n = fb_jobs_expire(m->jobs, now_ns - m->job_ttl_ns);
	if (n) {
		m->dirty = 1;
		m->jobs_expired += n;
		fb_log_info("%zu jobs expired: not registered again within JobTtl=%llus (their "
			    "DELETE was lost, or nothing re-registers them); %zu jobs left", n,
			    (unsigned long long)(m->job_ttl_ns / 1000000000ull), fb_jobs_count(m->jobs));
	}
	return n;
}

/* The 4xx detail for a refused registration: which bound, its key, and the
 * registry's state. */
static void refusal_text(const struct fb_fabric_map *m, struct fb_job_op *op)
{
	size_t mj, mm, mn;
	fb_jobs_get_limits(m->jobs, &mj, &mm, &mn);
	char *e = op->err;
	if (op->result == -E2BIG)
		snprintf(e, sizeof(op->err), "Nodes: %zu nodes, at most %zu per job (JobNodesMax)",
			 op->n_nodes, mn);
	else if (op->result == -ENOSPC)
		snprintf(e, sizeof(op->err), "the registry is full: %zu of at most %zu jobs (JobsMax), "
			 "%zu of at most %zu job nodes (JobMembersMax); delete finished jobs",
			 fb_jobs_count(m->jobs), mj, fb_jobs_members(m->jobs), mm);
	else
		snprintf(e, sizeof(op->err), "%s", fb_strerror(op->result));
}

void fb_fabric_map_free(struct fb_fabric_map *m)
{
	if (!m)
		return;
	if (m->threaded) {
		pthread_mutex_lock(&m->mu);
		m->stop = 1;
		pthread_cond_signal(&m->cv);
		pthread_mutex_unlock(&m->mu);
		pthread_join(m->renderer, NULL);
	}
	fb_fabric_render_in_free(m->in_next);
	fb_loopq_free(m->ops);
	fb_fabric_snap_unref(m->snap);
	fb_topology_free(m->topo);
	fb_jobs_free(m->jobs);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

/* ---- learning and enrichment (loop) ---- */

void fb_fabric_map_learn(struct fb_fabric_map *m, const struct fb_event *ev)
{
	if ((ev->kind == FB_KIND_INVENTORY && ev->subj.node[0]) ||
	    (ev->link_class == FB_LINK_NODE &&
	     (ev->kind == FB_KIND_LINK_DOWN || ev->kind == FB_KIND_LINK_UP)))
		m->dirty = 1; /* the inventory learned it just before us (NodeLinkState) */
	int rc = fb_topology_learn(m->topo, ev);
	if (rc > 0) {
		m->dirty = 1;
		return;
	}
	if (rc == 0)
		return;
	m->dirty = 1; /* a full table may still have taken the switch, if not its port */
	m->refused++;
	uint64_t now = fb_now_ns();
	if (now - m->warned_topo_ns < WARN_EVERY_NS)
		return;
	m->warned_topo_ns = now;
	fb_log_warn("fabric map: cannot add switch 0x%016" PRIx64 " ('%s') port %u from agent %s: %s "
		    "(%zu switches, %zu ports known); GET /fabric/map leaves it out. Is an agent "
		    "reporting made-up GUIDs?",
		    ev->subj.switch_guid, ev->subj.switch_name, ev->subj.port, ev->agent_id,
		    rc == -ENOSPC ? "the table is full" : "out of memory",
		    fb_topology_n_switches(m->topo), fb_topology_n_ports(m->topo));
}

int fb_fabric_map_enrich_peer(const struct fb_fabric_map *m, struct fb_event *ev)
{
	if (ev->tech != FB_TECH_ETH || ev->link_class == FB_LINK_NODE || ev->subj.peer_guid ||
	    ev->subj.node[0] || ev->kind == FB_KIND_INVENTORY)
		return 0;
	const struct fb_topo_port *p = fb_topology_event_port(m->topo, ev);
	/* a port whose host moved to another port (a newer report claims the
	 * MAC) names no one */
	if (!p || !p->peer_guid || p->tech != FB_TECH_ETH ||
	    fb_topology_by_peer(m->topo, p->peer_guid, p->peer_port) != p)
		return 0;
	ev->subj.peer_guid = p->peer_guid;
	ev->subj.peer_port = p->peer_port;
	memcpy(ev->subj.peer_name, p->peer_name, sizeof(ev->subj.peer_name));
	return 1;
}

int fb_fabric_map_enrich(const struct fb_fabric_map *m, struct fb_event *ev)
{
	if (!ev->subj.node[0] || ev->jobs[0] || !fb_jobs_count(m->jobs))
		return 0;
	return fb_jobs_node_list(m->jobs, ev->subj.node, ev->jobs, sizeof(ev->jobs)) > 0;
}

/* ---- the job channel ---- */

void fb_fabric_map_apply(struct fb_fabric_map *m, struct fb_job_op *op)
{
	if (op->kind == FB_JOB_OP_DELETE) {
		op->result = fb_jobs_delete(m->jobs, op->job_id) ? FB_JOB_DELETED : FB_JOB_UNKNOWN;
		if (op->result == FB_JOB_DELETED)
			fb_log_debug("job %s unregistered", op->job_id);
	} else {
		op->n_nodes = op->reg.n_nodes;
		int rc = fb_jobs_register(m->jobs, &op->reg, fb_now_ns());
		op->result = rc;
		if (rc >= 0)
			fb_log_debug("job %s of %s registered on %zu nodes%s", op->job_id, op->reg.user,
				     op->n_nodes, rc == 1 ? " (replaces the earlier registration)" : "");
		fb_job_reg_free(&op->reg);
	}
	if (op->result == FB_JOB_UNKNOWN)
		return;
	m->job_ops++;
	if (op->result >= 0) {
		m->dirty = 1;
		return;
	}
	m->refused++;
	refusal_text(m, op);
	uint64_t now = fb_now_ns();
	if (op->result != -E2BIG && now - m->warned_jobs_ns >= WARN_EVERY_NS) {
		m->warned_jobs_ns = now;
		fb_log_warn("job %s not registered: %s (%zu jobs on %zu nodes, %zu job nodes in all); "
			    "is something registering jobs without deleting them at job end?",
			    op->job_id, fb_strerror(op->result), fb_jobs_count(m->jobs),
			    fb_jobs_nodes(m->jobs), fb_jobs_members(m->jobs));
	}
}

/* On the loop (loopq.h): apply one submitted operation. */
static void op_run(struct fb_loop_call *c)
{
	struct fb_job_op *op = (struct fb_job_op *)c;
	fb_fabric_map_apply(op->map, op);
}

static void op_free(struct fb_loop_call *c)
{
	fb_job_op_free((struct fb_job_op *)c);
}

int fb_fabric_map_submit(struct fb_fabric_map *m, struct fb_job_op *op)
{
	op->map = m;
	op->call.run = op_run;
	op->call.free = op_free;
	op->call.token = op->token;
	return fb_loopq_submit(m->ops, &op->call);
}

struct fb_job_op *fb_fabric_map_take_done(struct fb_fabric_map *m)
{
	return (struct fb_job_op *)fb_loopq_take_done(m->ops);
}

void fb_fabric_map_set_waker(struct fb_fabric_map *m, void (*wake)(void *), void *arg)
{
	fb_loopq_set_waker(m->ops, wake, arg);
}

/* ---- rendering (loop; fabric_render.c writes the JSON) ---- */

struct fb_fabric_snap *fb_fabric_map_render_snap(struct fb_fabric_map *m, uint64_t last_event_id)
{
	size_t nodes = 0;
	struct fb_fabric_snap *s = fb_fabric_render(m->inv, m->topo, m->jobs, m->fabric, last_event_id,
						    &nodes);
	if (s)
		m->last_nodes = nodes;
	return s;
}

char *fb_fabric_map_render(struct fb_fabric_map *m, uint64_t last_event_id, size_t *len)
{
	struct fb_fabric_snap *s = fb_fabric_map_render_snap(m, last_event_id);
	if (!s)
		return NULL;
	char *json = s->json;
	if (len)
		*len = s->len;
	s->json = NULL;
	fb_fabric_snap_unref(s);
	return json;
}

/* Swap s in as the published snapshot (any thread) and drop the old one
 * outside the lock: freeing a big map takes a while. */
static void publish(struct fb_fabric_map *m, struct fb_fabric_snap *s)
{
	pthread_mutex_lock(&m->mu);
	struct fb_fabric_snap *old = m->snap;
	m->snap = s;
	pthread_mutex_unlock(&m->mu);
	fb_fabric_snap_unref(old);
}

/* The renderer thread: writes the map of each input the loop hands over
 * and publishes it. It touches only the input and, under mu, the fields
 * marked shared. */
static void *renderer_main(void *arg)
{
	struct fb_fabric_map *m = arg;
	pthread_mutex_lock(&m->mu);
	for (;;) {
		while (!m->in_next && !m->stop)
			pthread_cond_wait(&m->cv, &m->mu);
		if (m->stop)
			break;
		struct fb_fabric_render_in *in = m->in_next;
		m->in_next = NULL;
		m->busy = 1;
		pthread_mutex_unlock(&m->mu);
		uint64_t t0 = fb_now_ns();
		size_t nodes = 0;
		struct fb_fabric_snap *s = fb_fabric_render_in(in, &nodes);
		fb_fabric_render_in_free(in);
		uint64_t t1 = fb_now_ns();
		if (s)
			publish(m, s);
		pthread_mutex_lock(&m->mu);
		if (s) {
			m->published++;
			m->r_nodes = nodes;
			m->r_ns = t1 - t0;
			m->r_done_ns = t1;
		} else {
			m->failed = 1;
		}
		m->busy = 0;
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

int fb_fabric_map_start_renderer(struct fb_fabric_map *m)
{
	if (m->threaded)
		return 0;
	int rc = pthread_create(&m->renderer, NULL, renderer_main, m);
	if (rc)
		return -rc;
	m->threaded = 1;
	return 0;
}

/* Threaded refresh: take note of what the renderer published, and hand it
 * a copy of the tables if they changed, it is idle and the spacing allows. */
static int refresh_threaded(struct fb_fabric_map *m, uint64_t last_event_id, uint64_t t0)
{
	pthread_mutex_lock(&m->mu);
	uint64_t published = m->published, r_ns = m->r_ns, r_done = m->r_done_ns;
	size_t r_nodes = m->r_nodes;
	int idle = !m->busy && !m->in_next, failed = m->failed;
	m->failed = 0;
	pthread_mutex_unlock(&m->mu);
	int rc = 0;
	if (published != m->seen_published) {
		m->renders += published - m->seen_published;
		m->seen_published = published;
		m->last_nodes = r_nodes;
		m->render_ns = r_ns;
		if (r_done + THREAD_SPACING * r_ns > m->next_render_ns)
			m->next_render_ns = r_done + THREAD_SPACING * r_ns;
		rc = 1;
	}
	if (failed)
		m->dirty = 1; /* out of memory: try again */
	if (!m->dirty || !idle || t0 < m->next_render_ns)
		return rc;
	struct fb_fabric_render_in *in = fb_fabric_render_take(m->inv, m->topo, m->jobs, m->fabric,
							       last_event_id);
	if (!in)
		return rc ? rc : -ENOMEM;
	pthread_mutex_lock(&m->mu);
	m->in_next = in;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	m->dirty = 0;
	uint64_t t1 = fb_now_ns();
	m->take_ns = t1 - t0;
	m->next_render_ns = t1 + RENDER_SPACING * m->take_ns;
	return rc;
}

int fb_fabric_map_refresh(struct fb_fabric_map *m, uint64_t last_event_id)
{
	uint64_t t0 = fb_now_ns();
	if (m->threaded)
		return refresh_threaded(m, last_event_id, t0);
	if (!m->dirty || t0 < m->next_render_ns)
		return 0;
	struct fb_fabric_snap *s = fb_fabric_map_render_snap(m, last_event_id);
	if (!s)
		return -ENOMEM;
	publish(m, s);
	m->dirty = 0;
	m->renders++;
	uint64_t t1 = fb_now_ns();
	m->render_ns = m->take_ns = t1 - t0;
	m->next_render_ns = t1 + RENDER_SPACING * m->render_ns;
	return 1;
}

struct fb_fabric_snap *fb_fabric_map_snapshot(struct fb_fabric_map *m)
{
	pthread_mutex_lock(&m->mu);
	struct fb_fabric_snap *s = m->snap ? fb_fabric_snap_ref(m->snap) : NULL;
	pthread_mutex_unlock(&m->mu);
	return s;
}

void fb_fabric_map_get_stats(const struct fb_fabric_map *m, struct fb_fabric_map_stats *st)
{
	st->nodes = m->last_nodes;
	st->switches = fb_topology_n_switches(m->topo);
	st->switch_ports = fb_topology_n_ports(m->topo);
	st->jobs = fb_jobs_count(m->jobs);
	st->job_nodes = fb_jobs_nodes(m->jobs);
	st->job_members = fb_jobs_members(m->jobs);
	st->renders = m->renders;
	st->render_ms = (double)m->render_ns / 1e6;
	st->take_ms = (double)m->take_ns / 1e6;
	st->render_thread = m->threaded;
	st->job_ops = m->job_ops;
	st->refused = m->refused;
	st->jobs_expired = m->jobs_expired;
}

const struct fb_topology *fb_fabric_map_topology(const struct fb_fabric_map *m) { return m->topo; }
const struct fb_jobs *fb_fabric_map_jobs(const struct fb_fabric_map *m) { return m->jobs; }
