/* fb_spank_broker.c - GET /fabric/map, POST and DELETE /fabric/jobs. */
#include "fb_spank_broker.h"

#include "fb_err.h"
#include "fb_spank_map.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_BODY_MAX (64u << 10) /* answers to POST and DELETE */

/* Up to 80 bytes of a response body, printable only, for an error line. */
static void snippet(const struct fb_http_resp *r, char *out, size_t outsz)
{
	size_t j = 0;
	for (size_t i = 0; i < r->body.len && i < 80 && j + 1 < outsz; i++) {
		unsigned char ch = r->body.data[i];
		out[j++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : ' ';
	}
	out[j] = '\0';
}

static void status_error(const struct fb_spank_conf *c, const char *what,
			 const struct fb_http_resp *r, char *err, size_t errsz)
{
	char body[96];
	snippet(r, body, sizeof(body));
	int login = r->status == 401 || r->status == 403;
	fb_err_set(err, errsz, -EIO,
		   "%s: %s: HTTP %d%s%s%s", c->broker, what, r->status, body[0] ? ": " : "",
		   body, !login ? "" : c->client && c->client->token && c->client->token[0]
		   ? " (is the token of token_file= in plugstack.conf one the broker's HttpTokens has, "
		   "with role Operator or Administrator?)"
		   : " (the broker wants a login: set token_file= in plugstack.conf)");
}

/* fb_http's own message names the peer as host:port; keep it. Its reasons
 * may quote the peer's bytes (a bad status line, up to 60 of them), and the
 * line goes to slurmd's log and, refused, to the user's terminal: whatever
 * answers on the broker's port must not write escape sequences there. */
static int request(const struct fb_spank_conf *c, const char *method, const char *path,
		   const char *body, size_t body_len, size_t max_body, struct fb_http_resp *r,
		   char *err, size_t errsz)
{
	int rc = fb_http_request_as(c->client, c->host, c->port, method, path,
				    body ? "application/json" : NULL, body, body_len, c->timeout_ms,
				    max_body, r, err, errsz);
	for (size_t i = 0; rc < 0 && i < errsz && err[i]; i++)
		if ((unsigned char)err[i] < 0x20 || (unsigned char)err[i] > 0x7e)
			err[i] = '?';
	return rc;
}

static int get_map(const struct fb_spank_conf *c, const char *path, struct fb_http_resp *r,
		   char *err, size_t errsz)
{
	return request(c, "GET", path, NULL, 0, FB_SPANK_MAP_MAX_BODY, r, err, errsz);
}

int fb_spank_fetch_map(const struct fb_spank_conf *c, const char *nodelist, struct fb_http_resp *r,
		       int *filtered, char *err, size_t errsz)
{
	char path[FB_SPANK_QUERY_PATH_MAX + 1];
	int query = nodelist && nodelist[0] && fb_http_map_target(nodelist, path, sizeof(path));
	int rc = get_map(c, query ? path : "/fabric/map", r, err, errsz);
	if (rc == 0 && query && r->status == 400) { /* the whole map, once */
		fb_http_resp_free(r);
		query = 0;
		rc = get_map(c, "/fabric/map", r, err, errsz);
	}
	if (filtered)
		*filtered = query;
	if (rc < 0)
		return rc;
	if (r->status != 200) {
		status_error(c, "GET /fabric/map", r, err, errsz);
		fb_http_resp_free(r);
		return FB_EPROTO;
	}
	return 0;
}

static char *register_body(const char *job_id, const char *user, const char *const *nodes,
			   size_t n)
{
	json_t *arr = json_array();
	json_t *doc = NULL;
	char *s = NULL;
	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, json_string(nodes[i])))
			goto out;
	doc = json_pack("{s:s, s:s, s:O}", "JobId", job_id, "User", user, "Nodes", arr);
	if (doc)
		s = json_dumps(doc, JSON_COMPACT);
out:
	json_decref(doc);
	json_decref(arr);
	return s;
}

int fb_spank_register(const struct fb_spank_conf *c, const char *job_id, const char *user,
		      const char *const *nodes, size_t n, char *err, size_t errsz)
{
	struct fb_http_resp r;
	char *body = register_body(job_id, user, nodes, n);
	if (!body)
		return fb_err_set(err, errsz, -ENOMEM,
				  "%s: POST /fabric/jobs: cannot build the body (out of memory)",
				  c->broker);
	int rc = request(c, "POST", "/fabric/jobs", body, strlen(body), SMALL_BODY_MAX, &r, err,
			 errsz);
	free(body);
	if (rc < 0)
		return rc;
	if (r.status != 200 && r.status != 201) {
		status_error(c, "POST /fabric/jobs", &r, err, errsz);
		rc = FB_EPROTO;
	}
	fb_http_resp_free(&r);
	return rc;
}

int fb_spank_unregister(const struct fb_spank_conf *c, const char *job_id, char *err,
			size_t errsz)
{
	struct fb_http_resp r;
	char path[64];
	int n = snprintf(path, sizeof(path), "/fabric/jobs/%s", job_id);
	if (n < 0 || (size_t)n >= sizeof(path) || strspn(job_id, "0123456789") != strlen(job_id))
		return fb_err_set(err, errsz, -EINVAL,
				  "%s: DELETE: bad job id '%.32s'", c->broker, job_id);
	int rc = request(c, "DELETE", path, NULL, 0, SMALL_BODY_MAX, &r, err, errsz);
	if (rc < 0)
		return rc;
	if ((r.status < 200 || r.status > 299) && r.status != 404) {
		char what[96];
		snprintf(what, sizeof(what), "DELETE %s", path);
		status_error(c, what, &r, err, errsz);
		rc = FB_EPROTO;
	}
	fb_http_resp_free(&r);
	return rc;
}
