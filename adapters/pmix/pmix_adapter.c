/* pmix_adapter.c - the loop of fabricbus-pmix (pmix_adapter.h). */
#include "pmix_adapter.h"
#include "pmix_attach.h"

#include "fb_err.h"
#include "fb_http.h"
#include "fb_log.h"
#include "fb_source.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HTTP_TIMEOUT_MS 2000
#define MAP_MAX (64u << 20)

/* What to check when the broker wants a login it did not get. */
static const char *login_hint(int status)
{
	return status == 401 || status == 403 ? " (the broker wants a login: is BrokerTokenFile set "
						"to a token of its HttpTokens?)" : "";
}

/* The broker's newest EventId (GET /status websocket.head_id), 0 if unknown. */
static uint64_t broker_head(const struct fbp_adapter *a)
{
	const struct fbp_config *c = a->cfg;
	struct fb_http_resp r;
	char err[256];
	uint64_t head = 0;
	if (fb_http_request_as(&a->http.client, c->broker_host, (uint16_t)c->broker_port, "GET",
			       "/status", NULL, NULL, 0, HTTP_TIMEOUT_MS, 1u << 20, &r, err,
			       sizeof(err)) < 0) {
		fb_log_warn("broker: GET /status: %s; starting from the broker's newest event", err);
		return 0;
	}
	if (r.status != 200)
		fb_log_warn("broker: GET /status: HTTP %d%s; starting from the broker's newest event",
			    r.status, login_hint(r.status));
	json_t *root = r.status == 200 ? json_loadb((const char *)r.body.data, r.body.len, 0, NULL) : NULL;
	json_t *h = json_object_get(json_object_get(root, "websocket"), "head_id");
	if (json_is_integer(h) && json_integer_value(h) > 0)
		head = (uint64_t)json_integer_value(h);
	json_decref(root);
	fb_http_resp_free(&r);
	return head;
}

/* Percent-encode a hostlist for ?nodes= ([],  and anything unusual). */
static void pct(const char *in, char *out, size_t sz)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *in && o + 4 < sz; in++) {
		unsigned char ch = (unsigned char)*in;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

/* The view's cables from GET /fabric/map?nodes=<its nodes>. A broker that
 * cannot answer leaves the view with its nodes only: node events still
 * route, switch events for it do not until the next step start. */
static void load_cables(const struct fbp_adapter *a, struct fbp_view *v, const char *hostlist)
{
	const struct fbp_config *c = a->cfg;
	char q[3 * 4096 + 32], path[3 * 4096 + 64], err[256];
	pct(hostlist, q, sizeof(q));
	snprintf(path, sizeof(path), "/fabric/map?nodes=%s", q);
	struct fb_http_resp r;
	if (fb_http_request_as(&a->http.client, c->broker_host, (uint16_t)c->broker_port, "GET",
			       path, NULL, NULL, 0, HTTP_TIMEOUT_MS, MAP_MAX, &r, err,
			       sizeof(err)) < 0) {
		fb_log_warn("broker: GET /fabric/map for %s: %s; switch events will not reach these nodes",
			    hostlist, err);
		return;
	}
	if (r.status != 200 ||
	    fbp_view_set_map(v, (const char *)r.body.data, r.body.len, err, sizeof(err)) < 0)
		fb_log_warn("broker: GET /fabric/map for %s: HTTP %d%s%s%s", hostlist, r.status,
			    r.status == 200 ? " " : "", r.status == 200 ? err : "",
			    login_hint(r.status));
	fb_http_resp_free(&r);
}

static int on_new_step(void *arg, struct fbp_step *st)
{
	struct fbp_adapter *a = arg;
	char err[256];
	if (fbp_view_set_nodes(&st->view, st->hello.step_nodes, err, sizeof(err)) < 0) {
		fb_log_warn("steps: job %s.%s: node list '%s': %s", st->hello.job_id, st->hello.step_id,
			    st->hello.step_nodes, err);
		return -1;
	}
	snprintf(st->view.job_id, sizeof(st->view.job_id), "%s", st->hello.job_id);
	load_cables(a, &st->view, st->hello.step_nodes);
	/* A new step starts at the adapter's position; a step that knew an
	 * earlier adapter keeps its own (a restart replays what it missed). */
	if (st->position == 0)
		st->position = a->position;
	fb_log_info("steps: job %s.%s on %s (nodes %s, namespace %s%s), from EventId %" PRIu64,
		    st->hello.job_id, st->hello.step_id, st->hello.node, st->hello.step_nodes,
		    st->hello.nspace, st->hello.pmix ? "" : ", PMIx server not up yet",
		    st->position + 1);
	if (st->told != st->position && fbp_step_send(st, NULL, err, sizeof(err)) < 0)
		fb_log_warn("steps: %s", err);
	return 0;
}

static void deliver_to_step(struct fbp_adapter *a, struct fbp_step *st, const struct fbp_event *ev)
{
	struct fbp_note n;
	char err[512];
	if (st->fd < 0 || ev->event_id <= st->position)
		return; /* closed, or handled before an adapter restart */
	st->position = ev->event_id;
	if (!fbp_route(ev, &st->view, a->cfg->kinds, &n))
		return; /* the mark goes out with the next scan */
	n.code = a->cfg->code;
	n.range = a->cfg->range;
	if (fbp_step_send(st, &n, err, sizeof(err)) < 0) {
		a->failed++;
		fb_log_warn("deliver: EventId %" PRIu64 " (%s) to job %s.%s: %s", ev->event_id,
			    ev->message_id, st->hello.job_id, st->hello.step_id, err);
		return;
	}
	a->delivered++;
	fb_log_info("deliver: EventId %" PRIu64 " %s %s -> job %s.%s (code %d)", ev->event_id,
		    ev->message_id, ev->origin, st->hello.job_id, st->hello.step_id, n.code);
}

static void deliver_to_server(struct fbp_adapter *a, const struct fbp_event *ev)
{
	struct fbp_note n;
	char err[512];
	size_t np = 0;
	if (!a->tool_up || !fbp_route(ev, &a->server_view, a->cfg->kinds, &n))
		return;
	n.code = a->cfg->code;
	n.range = a->cfg->range;
	n.position = ev->event_id;
	if (fbp_tool_notify(a->cfg, &n, &np, err, sizeof(err)) < 0) {
		a->failed++;
		fb_log_warn("deliver: EventId %" PRIu64 " (%s) to %s: %s", ev->event_id, ev->message_id,
			    a->cfg->server_uri, err);
		return;
	}
	a->delivered++;
	fb_log_info("deliver: EventId %" PRIu64 " %s %s -> server (%zu affected procs, code %d)",
		    ev->event_id, ev->message_id, ev->origin, np, n.code);
}

static void on_message(void *arg, const char *json, size_t len, uint64_t event_id)
{
	struct fbp_adapter *a = arg;
	struct fbp_event ev;
	char err[256];
	if (event_id == 0)
		return; /* a missed notice: fb_ws_client resumes from the journal */
	if (fbp_event_parse(json, len, &ev, err, sizeof(err)) < 0) {
		fb_log_warn("events: EventId %" PRIu64 ": %s; skipped", event_id, err);
	} else {
		ev.event_id = event_id;
		if (a->cfg->delivery == FBP_DELIVERY_SLURM) {
			for (size_t i = 0; i < a->steps.n; i++)
				deliver_to_step(a, a->steps.v[i], &ev);
			fbp_steps_reap(&a->steps);
		} else {
			deliver_to_server(a, &ev);
		}
	}
	a->position = event_id;
}

/* New steps, ended steps, and Positions to tell. */
static void on_scan(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	struct fbp_adapter *a = arg;
	char err[256];
	fbp_steps_scan(&a->steps, on_new_step, a);
	for (size_t i = 0; i < a->steps.n; i++) {
		struct fbp_step *st = a->steps.v[i];
		if (st->fd >= 0 && st->told != st->position && fbp_step_send(st, NULL, err, sizeof(err)) < 0)
			fb_log_debug("steps: %s", err);
	}
	fbp_steps_reap(&a->steps);
}

static void mkdirs(const char *dir, const char *node, char *out, size_t sz)
{
	snprintf(out, sz, "%s/%s", dir, node);
	/* 0700 like the plugin makes them: only root may send events to steps */
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		fb_log_warn("steps: mkdir %s: %s", dir, strerror(errno));
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		fb_log_warn("steps: mkdir %s: %s", out, strerror(errno));
}

/* Delivery=slurm: the steps first, so that the subscription can start from
 * the oldest Position they hold. */
static uint64_t start_slurm(struct fbp_adapter *a, uint64_t head)
{
	mkdirs(a->cfg->step_dir, a->cfg->node, a->steps.dir, sizeof(a->steps.dir));
	fbp_steps_scan(&a->steps, on_new_step, a);
	uint64_t since = head;
	for (size_t i = 0; i < a->steps.n; i++)
		if (a->steps.v[i]->position && a->steps.v[i]->position < since)
			since = a->steps.v[i]->position;
	if (a->steps.n)
		fb_log_info("steps: %zu running on %s; resuming after EventId %" PRIu64, a->steps.n,
			    a->cfg->node, since);
	return since;
}

static int start_server(struct fbp_adapter *a, char *err, size_t errsz)
{
	const char *nodes = a->cfg->server_nodes[0] ? a->cfg->server_nodes : a->cfg->node;
	int rc = fbp_view_set_nodes(&a->server_view, nodes, err, errsz);
	if (rc < 0)
		return rc;
	load_cables(a, &a->server_view, nodes);
	if ((rc = fbp_tool_start(a->cfg, err, errsz)) < 0)
		return rc;
	a->tool_up = 1;
	fb_log_info("server: attached to %s as a tool; events for %s", a->cfg->server_uri, nodes);
	return 0;
}

int fbp_adapter_start(struct fbp_adapter *a, const struct fbp_config *cfg, struct event_base *base,
		      char *err, size_t errsz)
{
	memset(a, 0, sizeof(*a));
	a->cfg = cfg;
	a->base = base;
	int rc = fb_http_auth_init(&a->http, cfg->broker_token_file, cfg->broker_tls_ca, err, errsz);
	if (rc < 0)
		return rc;
	uint64_t head = broker_head(a), since = head;
	a->position = head;
	if (cfg->delivery == FBP_DELIVERY_SLURM) {
		since = start_slurm(a, head);
		struct timeval tv = {cfg->scan_ms / 1000, (cfg->scan_ms % 1000) * 1000};
		if (!(a->scan_timer = event_new(base, -1, EV_PERSIST, on_scan, a)) ||
		    event_add(a->scan_timer, &tv) < 0)
			return fb_err_set(err, errsz, -ENOMEM, "cannot start the step scan timer");
	} else if ((rc = start_server(a, err, errsz)) < 0) {
		return rc;
	}
	a->position = since;
	struct fb_source_opts o;
	memset(&o, 0, sizeof(o));
	o.kind = FB_SOURCE_WEBSOCKET;
	o.host = cfg->broker_host;
	o.port = (uint16_t)cfg->broker_port;
	/* Quiet events too (proto/PROTOCOL.md): a job must hear of its node's
	 * link going down even when that port is over a rate limit or flapping. */
	o.query = "quiet=1";
	o.auth = &a->http;
	o.base = base;
	o.since = since;
	o.on_event = on_message;
	o.arg = a;
	if (!(a->src = fb_source_start(&o, err, errsz)))
		return -EIO;
	return 0;
}

void fbp_adapter_stop(struct fbp_adapter *a)
{
	fb_source_stop(a->src);
	a->src = NULL;
	if (a->scan_timer)
		event_free(a->scan_timer);
	a->scan_timer = NULL;
	fbp_steps_free(&a->steps);
	fbp_view_free(&a->server_view);
	fb_http_auth_free(&a->http);
	if (a->tool_up)
		fbp_tool_stop();
	a->tool_up = 0;
	fb_log_info("stopped: %" PRIu64 " events delivered, %" PRIu64 " failed", a->delivered, a->failed);
}
