/* ws_fabric.c - the lws side of /fabric/map and /fabric/jobs (see
 * ws_fabric.h). A POST is read whole into the request's buffer, parsed,
 * and handed to the loop; the request then waits, linked on f->waiting by a
 * token, until fb_ws_fabric_take_results() finds its operation and asks lws
 * for a writeable callback to answer it.
 *
 * The map is streamed: every step start of a big job GETs it at once, and
 * a reply written in one lws_write would leave each client's unsent part
 * (most of a map of several MB) copied in lws, and have lws close a reader
 * that is still taking it once its keep-alive timeout passes.
 *
 * What a GET streams (the whole snapshot, or the part ?nodes= asks for)
 * is built by ws_fabric_map.c; this file parses the query, sends the
 * headers and copies the body out a chunk per writeable callback.
 */
#include "ws_fabric.h"

#include "fabric_map.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_time.h"
#include "jobs.h"
#include "rf_auth_priv.h"
#include "ws_auth.h"
#include "ws_http.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAP_PATH "/fabric/map"
#define JOBS_PATH "/fabric/jobs"
#define REPLY_TIMEOUT_S 30 /* the loop answers in one pass; this is a backstop */
#define MAP_CHUNK (32 * 1024) /* bytes of the map per lws_write: what lws may hold per reader */
#define MAP_WRITES_PER_CALLBACK 32 /* while the socket takes them */
#define MAP_STALL_S 20 /* a map reader that takes nothing this long is closed */
/* ... and one that has not taken it all by then (64 MiB at 0.5 MB/s): a
 * reader holds its snapshot, which a newer one may have replaced */
#define MAP_SEND_MAX_MS (120 * 1000)

/* ---- HTTP ---- */

/* End the transaction after a reply (keep-alive), or close on error. */
static int finish(struct lws *wsi, int rc)
{
	if (rc < 0)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

void fb_ws_fabric_release(struct fb_ws_fabric *f, struct fb_ws_fabric_req *r)
{
	if (r->state == FB_WSF_WAIT) {
		if (r->prev)
			r->prev->next = r->next;
		else
			f->waiting = r->next;
		if (r->next)
			r->next->prev = r->prev;
	}
	fb_buf_free(&r->body);
	fb_job_op_free(r->done);
	fb_ws_map_body_free(r->map);
	memset(r, 0, sizeof(*r));
}

/* 400 naming the parameter: why is "<Parameter>: <detail>". */
static int refuse_param(struct lws *wsi, const char *why)
{
	char param[16];
	snprintf(param, sizeof(param), "%.*s", (int)strcspn(why, ":"), why);
	return fb_ws_http_error(wsi, 400, "bad request", param, why);
}

/* The value of ?nodes= (malloc'd; NULL when absent) or a refusal in why.
 * lws has already percent-decoded it. Any other argument is refused, so
 * that a typo ("node=") is not silently answered with the whole map. */
static int map_query(struct lws *wsi, char **val, size_t *len, char *why, size_t whysz)
{
	*val = NULL;
	for (int i = 0; i < 64; i++) {
		int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
		char *arg = n > 0 ? malloc((size_t)n + 1) : NULL;
		if (n <= 0 || (arg && lws_hdr_copy_fragment(wsi, arg, n + 1, WSI_TOKEN_HTTP_URI_ARGS,
							    i) < 0)) {
			free(arg);
			return 0;
		}
		if (!arg)
			return -ENOMEM;
		size_t key = strcspn(arg, "=");
		int is_nodes = key == 5 && strncmp(arg, "nodes", 5) == 0;
		if (!is_nodes || *val) {
			for (size_t k = 0; k < key; k++) /* quoted back: printable only */
				arg[k] = arg[k] > 0x20 && arg[k] < 0x7f && arg[k] != ':' ? arg[k] : '?';
			snprintf(why, whysz, "%.*s: %s", (int)(key < 40 ? key : 40), arg,
				 is_nodes ? "given twice" : "unknown parameter (GET /fabric/map takes "
							   "nodes=<Slurm hostlist>)");
			free(arg);
			return FB_EMALFORMED;
		}
		*len = arg[key] ? (size_t)n - key - 1 : 0;
		memmove(arg, arg + key + (arg[key] ? 1 : 0), *len + 1);
		*val = arg;
	}
	snprintf(why, whysz, "query: more than 64 arguments");
	return FB_ETOOBIG;
}

/* The body GET /fabric/map answers with: the whole snapshot, or the part
 * ?nodes= asks for. 0, or what the lws callback returns after refusing. */
static int map_body(struct lws *wsi, struct fb_fabric_snap *snap, struct fb_ws_map_body **body)
{
	char why[300], *nodes = NULL;
	size_t len = 0;
	int rc = map_query(wsi, &nodes, &len, why, sizeof(why));
	if (!rc)
		rc = nodes ? fb_ws_fabric_select(snap, nodes, len, body, why, sizeof(why))
			   : fb_ws_fabric_whole(snap, body);
	free(nodes);
	if (rc == -ENOMEM)
		return finish(wsi, fb_ws_http_error(wsi, 503, "out of memory", NULL, NULL));
	if (rc) {
		char peer[64];
		fb_ws_peer_name(wsi, peer, sizeof(peer));
		fb_log_debug("http %s: GET " MAP_PATH " refused: %s", peer, why);
		return finish(wsi, refuse_param(wsi, why));
	}
	return 0;
}

/* GET /fabric/map: the headers now, the body from fb_ws_fabric_writeable. */
static int start_map(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r)
{
	uint8_t hdr[LWS_PRE + 512];
	uint8_t *start = hdr + LWS_PRE, *p = start, *end = hdr + sizeof(hdr) - 1;
	struct fb_ws_map_body *body = NULL;
	fb_ws_fabric_release(f, r);
	struct fb_fabric_snap *snap = fb_fabric_map_snapshot(f->map);
	if (!snap)
		return finish(wsi, fb_ws_http_error(wsi, 503, "fabric map not built yet", NULL,
						    "retry in a moment"));
	int rc = map_body(wsi, snap, &body);
	fb_fabric_snap_unref(snap); /* the body holds its own reference */
	if (!body)
		return rc;
	if (lws_add_http_common_headers(wsi, 200, "application/json", fb_ws_map_body_len(body), &p,
					end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
					 (const uint8_t *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end)) {
		fb_ws_map_body_free(body);
		return -1;
	}
	r->state = FB_WSF_MAP;
	r->map = body;
	r->deadline_ms = fb_time_ms() + MAP_SEND_MAX_MS;
	lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, MAP_STALL_S);
	lws_callback_on_writable(wsi);
	return 0;
}

/* Chunks of the snapshot while the socket takes them; lws keeps what it
 * did not take of the last one and calls back once that has left. Each
 * callback that makes progress re-arms the stall timeout, so a reader is
 * closed for taking nothing for MAP_STALL_S, or for taking longer than
 * MAP_SEND_MAX_MS in all, not for lws's keep-alive timeout. */
static int write_map(struct lws *wsi, struct fb_ws_fabric_req *r)
{
	uint8_t buf[LWS_PRE + MAP_CHUNK];
	struct fb_ws_map_body *b = r->map;
	if (fb_time_ms() > r->deadline_ms) {
		char peer[64];
		fb_ws_peer_name(wsi, peer, sizeof(peer));
		fb_log_warn("http %s: GET " MAP_PATH " not taken within %d s (%zu of %zu bytes); closing",
			    peer, MAP_SEND_MAX_MS / 1000, r->sent, fb_ws_map_body_len(b));
		return -1;
	}
	for (int i = 0; i < MAP_WRITES_PER_CALLBACK; i++) {
		size_t n = fb_ws_map_body_read(b, buf + LWS_PRE, MAP_CHUNK);
		int last = r->sent + n == fb_ws_map_body_len(b);
		if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < 0)
			return -1;
		r->sent += n;
		if (last) {
			fb_ws_map_body_free(r->map);
			r->map = NULL;
			r->state = FB_WSF_IDLE;
			return finish(wsi, 0);
		}
		if (lws_send_pipe_choked(wsi))
			break;
	}
	lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, MAP_STALL_S);
	lws_callback_on_writable(wsi);
	return 0;
}

/* Hand op to the loop; the reply waits for its answer. */
static int submit(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r,
		  struct fb_job_op *op)
{
	op->token = ++f->next_token;
	if (fb_fabric_map_submit(f->map, op) != 0) {
		fb_job_op_free(op);
		return finish(wsi, fb_ws_http_error(wsi, 503, "busy", NULL,
						    "too many job requests in flight; retry"));
	}
	r->state = FB_WSF_WAIT;
	r->token = op->token;
	r->wsi = wsi;
	r->prev = NULL;
	r->next = f->waiting;
	if (f->waiting)
		f->waiting->prev = r;
	f->waiting = r;
	lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, REPLY_TIMEOUT_S);
	return 0;
}

/* Refuse once the body has been read, so the connection stays usable. */
static void discard(struct fb_ws_fabric_req *r, unsigned code, const char *error, const char *param,
		    const char *detail)
{
	fb_buf_free(&r->body);
	*r = (struct fb_ws_fabric_req){ .state = FB_WSF_DISCARD, .code = code, .error = error,
					.param = param, .detail = detail };
}

/* 401 (with WWW-Authenticate) or 403 in fb_ws_http_error's shape; v is
 * the enum fb_rf_auth_result. */
static int refuse_auth(struct lws *wsi, int v)
{
	static const char e401[] =
		"{\"error\":\"unauthorized\",\"detail\":\"log in with Authorization: Bearer (a "
		"token of HttpTokens), Basic (an account of RedfishAccounts) or X-Auth-Token (a "
		"Redfish session)\"}\n";
	static const char e403[] =
		"{\"error\":\"forbidden\",\"detail\":\"job registration needs the "
		"ConfigureComponents privilege (role Operator or Administrator)\"}\n";
	return v == FB_RF_AUTH_FORBIDDEN
		       ? fb_ws_auth_refuse(wsi, FB_RF_AUTH_FORBIDDEN, e403, sizeof(e403) - 1)
		       : fb_ws_auth_refuse(wsi, FB_RF_AUTH_NO_SESSION, e401, sizeof(e401) - 1);
}

static int start_post(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r)
{
	unsigned long long len;
	fb_ws_fabric_release(f, r);
	int v = fb_ws_auth_check(f->auth, wsi, FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, NULL);
	int have_len = fb_ws_http_content_length(wsi, &len) == 0;
	if (v && have_len && len > 0 && len <= FB_JOB_BODY_MAX) {
		/* Credentials first, but answered once the body is read, so that
		 * the connection stays usable and the client sees the answer. */
		discard(r, v == FB_RF_AUTH_FORBIDDEN ? 403 : 401, NULL, NULL, NULL);
		r->expect = len;
		return 0;
	}
	if (v) /* no body to wait for, or one too large to read */
		return have_len && len <= FB_JOB_BODY_MAX ? finish(wsi, refuse_auth(wsi, v))
							  : (refuse_auth(wsi, v), -1);
	if (!have_len)
		return finish(wsi, fb_ws_http_error(wsi, 411, "Content-Length required", "Content-Length",
						    "send the JSON body with a Content-Length"));
	if (len > FB_JOB_BODY_MAX) {
		/* Not worth reading: answer and close. */
		fb_ws_http_error(wsi, 413, "body too large", "body", "at most 4194304 bytes");
		return -1;
	}
	if (len == 0)
		return finish(wsi, fb_ws_http_error(wsi, 400, "bad request", "body",
						    "body: empty; send {\"JobId\":..., \"User\":..., "
						    "\"Nodes\":[...]}"));
	if (!fb_ws_http_is_json(wsi))
		discard(r, 415, "unsupported media type", "Content-Type",
			"send Content-Type: application/json");
	else if (fb_buf_reserve(&r->body, (size_t)len) != 0)
		discard(r, 503, "out of memory", NULL, "cannot hold the request body");
	else
		r->state = FB_WSF_BODY;
	r->expect = len;
	return 0;
}

int fb_ws_fabric_body(struct fb_ws_fabric_req *r, const void *in, size_t len)
{
	if (r->state != FB_WSF_BODY)
		return 0;
	if (r->body.len + len > r->expect)
		discard(r, 400, "bad request", "body", "more bytes than Content-Length");
	else if (fb_buf_put(&r->body, in, len) != 0)
		discard(r, 503, "out of memory", NULL, "cannot hold the request body");
	return 0;
}

int fb_ws_fabric_body_done(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r)
{
	if (r->state == FB_WSF_DISCARD) {
		int rc = r->code == 401 || r->code == 403
				 ? refuse_auth(wsi, r->code == 403 ? FB_RF_AUTH_FORBIDDEN
								   : FB_RF_AUTH_NO_SESSION)
				 : fb_ws_http_error(wsi, r->code, r->error, r->param, r->detail);
		fb_ws_fabric_release(f, r);
		return finish(wsi, rc);
	}
	if (r->state != FB_WSF_BODY)
		return 0;
	struct fb_job_op *op = calloc(1, sizeof(*op));
	char why[256] = "";
	int rc = op ? fb_jobs_parse_register((const char *)r->body.data, r->body.len, &op->reg, why,
					     sizeof(why))
		    : -ENOMEM;
	fb_ws_fabric_release(f, r);
	if (rc) {
		fb_job_op_free(op);
		if (rc == -ENOMEM)
			return finish(wsi, fb_ws_http_error(wsi, 503, "out of memory", NULL, NULL));
		char peer[64];
		fb_ws_peer_name(wsi, peer, sizeof(peer));
		fb_log_warn("http %s: POST " JOBS_PATH " refused: %s", peer, why);
		return finish(wsi, refuse_param(wsi, why));
	}
	op->kind = FB_JOB_OP_REGISTER;
	memcpy(op->job_id, op->reg.job_id, sizeof(op->job_id));
	return submit(f, wsi, r, op);
}

static int start_delete(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r,
			const char *id)
{
	fb_ws_fabric_release(f, r);
	int v = fb_ws_auth_check(f->auth, wsi, FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, NULL);
	if (v)
		return finish(wsi, refuse_auth(wsi, v));
	if (!fb_jobs_valid_id(id))
		return finish(wsi, fb_ws_http_error(wsi, 400, "bad request", "JobId",
						    "JobId: must be 1 to 20 decimal digits without a "
						    "leading zero"));
	struct fb_job_op *op = calloc(1, sizeof(*op));
	if (!op)
		return finish(wsi, fb_ws_http_error(wsi, 503, "out of memory", NULL, NULL));
	op->kind = FB_JOB_OP_DELETE;
	memcpy(op->job_id, id, strlen(id) + 1);
	return submit(f, wsi, r, op);
}

void fb_ws_fabric_take_results(struct fb_ws_fabric *f)
{
	struct fb_job_op *op;
	while (f->map && (op = fb_fabric_map_take_done(f->map))) {
		struct fb_ws_fabric_req *r = f->waiting;
		while (r && r->token != op->token)
			r = r->next;
		if (!r) {
			fb_job_op_free(op); /* the client has gone */
			continue;
		}
		struct lws *wsi = r->wsi;
		fb_ws_fabric_release(f, r); /* unlinks it */
		r->state = FB_WSF_REPLY;
		r->done = op;
		lws_callback_on_writable(wsi);
	}
}

int fb_ws_fabric_writeable(struct lws *wsi, struct fb_ws_fabric_req *r)
{
	if (r->state == FB_WSF_MAP)
		return write_map(wsi, r);
	if (r->state != FB_WSF_REPLY)
		return 1;
	struct fb_job_op *op = r->done;
	char body[96];
	int rc;
	r->done = NULL;
	r->state = FB_WSF_IDLE;
	if (op->kind == FB_JOB_OP_DELETE) {
		rc = fb_ws_http_reply(wsi, 204, NULL, "", 0);
	} else if (op->result >= 0) {
		int n = snprintf(body, sizeof(body), "{\"JobId\":\"%s\",\"Nodes\":%zu}\n", op->job_id,
				 op->n_nodes);
		rc = fb_ws_http_reply(wsi, op->result == FB_JOB_REPLACED ? 200 : 201, "application/json",
				      body, (size_t)n);
	} else if (op->result == -E2BIG) {
		rc = fb_ws_http_error(wsi, 413, "too many nodes in one job", "Nodes", op->err);
	} else if (op->result == -ENOSPC) {
		rc = fb_ws_http_error(wsi, 429, "too many jobs registered", NULL, op->err);
	} else {
		rc = fb_ws_http_error(wsi, 503, "cannot register the job", NULL, fb_strerror(op->result));
	}
	fb_job_op_free(op);
	return finish(wsi, rc);
}

static int not_allowed(struct lws *wsi, const char *use)
{
	return finish(wsi, fb_ws_http_error(wsi, 405, "method not allowed", NULL, use));
}

int fb_ws_fabric_http(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r,
		      const char *path)
{
	if (!f->map || !r)
		return 1;
	enum fb_ws_method m = fb_ws_http_method(wsi);
	if (strcmp(path, MAP_PATH) == 0) {
		if (m != FB_WS_GET)
			return not_allowed(wsi, "use GET");
		int v = fb_ws_auth_read(f->auth, wsi, f->anonymous_reads);
		return v ? finish(wsi, refuse_auth(wsi, v)) : start_map(f, wsi, r);
	}
	if (strcmp(path, JOBS_PATH) == 0)
		return m == FB_WS_POST ? start_post(f, wsi, r) : not_allowed(wsi, "use POST");
	if (strncmp(path, JOBS_PATH "/", sizeof(JOBS_PATH)) == 0)
		return m == FB_WS_DELETE ? start_delete(f, wsi, r, path + sizeof(JOBS_PATH))
					 : not_allowed(wsi, "use DELETE");
	return 1;
}
