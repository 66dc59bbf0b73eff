/* rf_service.c - the service object and its fb_ws_http_module hook (see
 * rf_service.h). Paths under /redfish go to rf_conn.c; others back to
 * ws_server.c. */
#include "rf_service.h"

#include "fb_err.h"
#include "fb_log.h"
#include "rf_conn.h"
#include "rf_tree.h"

#include <libwebsockets.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* /redfish, /redfish/..., also with more leading slashes. */
static int is_redfish_path(const char *path)
{
	path += strspn(path, "/");
	return strncmp(path, "redfish", 7) == 0 && (path[7] == '\0' || path[7] == '/');
}

static int m_http(void *arg, struct lws *wsi, void **conn, const char *path)
{
	if (!is_redfish_path(path))
		return 1;
	return fb_rf_conn_http(arg, wsi, (struct fb_rf_conn **)conn, path);
}

static int m_body(void *arg, struct lws *wsi, void *conn, const void *in, size_t len)
{
	(void)arg;
	(void)wsi;
	return fb_rf_conn_body(conn, in, len);
}

static int m_body_done(void *arg, struct lws *wsi, void *conn)
{
	(void)wsi;
	return fb_rf_conn_body_done(arg, conn);
}

static int m_writeable(void *arg, struct lws *wsi, void *conn)
{
	(void)wsi;
	return fb_rf_conn_writeable(arg, conn);
}

static void m_closed(void *arg, void *conn)
{
	fb_rf_conn_closed(arg, conn);
}

static void m_wake(void *arg)
{
	struct fb_rf_service *svc = arg;
	fb_rf_conn_wake(svc);
	for (size_t i = 0; i < svc->n_wake; i++)
		svc->wake[i].fn(svc->wake[i].arg);
}

static void wake_lws(void *arg)
{
	struct fb_rf_service *svc = arg;
	if (svc->ctx)
		lws_cancel_service(svc->ctx);
}

/* A method lws does not parse (ws_server.c): 501 with a Redfish error body
 * (RFC 9110 15.6.2: the method is not recognized), the headers every reply
 * of ours has. */
static size_t m_bad_method(void *arg, char *buf, size_t sz)
{
	(void)arg;
	json_t *doc = NULL;
	char *body = fb_rf_error_add(&doc, FB_RF_NOT_IMPLEMENTED, NULL, 0) ? NULL
			: json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!body)
		return 0;
	int n = snprintf(buf, sz,
			 "HTTP/1.1 501 Not Implemented\r\nContent-Type: application/json;charset=utf-8\r\n"
			 "OData-Version: 4.0\r\nCache-Control: no-cache\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s",
			 strlen(body), body);
	free(body);
	return n > 0 && (size_t)n < sz ? (size_t)n : 0;
}

static void m_attach(void *arg, struct lws_context *ctx)
{
	struct fb_rf_service *svc = arg;
	/* the loopq's lock orders this against a waker call in flight */
	if (svc->loopq)
		fb_loopq_set_waker(svc->loopq, ctx ? wake_lws : NULL, ctx ? svc : NULL);
	svc->ctx = ctx;
}

void fb_rf_service_wake(struct fb_rf_service *svc)
{
	wake_lws(svc);
}

int fb_rf_service_on_wake(struct fb_rf_service *svc, void (*fn)(void *), void *arg)
{
	if (svc->n_wake == FB_RF_WAKE_MAX)
		return FB_EFULL;
	svc->wake[svc->n_wake].fn = fn;
	svc->wake[svc->n_wake++].arg = arg;
	return 0;
}

const struct fb_ws_http_module *fb_rf_service_module(struct fb_rf_service *svc)
{
	return &svc->module;
}

static void set_identity(struct fb_rf_service *svc, const struct fb_rf_service_opts *o)
{
	snprintf(svc->fabric, sizeof(svc->fabric), "%s",
		 o->fabric_name && o->fabric_name[0] ? o->fabric_name : "IB");
	if (o->connection_method_id && o->connection_method_id[0])
		snprintf(svc->cm_id, sizeof(svc->cm_id), "%s", o->connection_method_id);
	else /* unique per broker instance: the OFMF core refuses a second one */
		snprintf(svc->cm_id, sizeof(svc->cm_id), "fabricbus-%.8s", svc->uuid);
}

int fb_rf_service_new(const struct fb_rf_service_opts *o, struct fb_rf_service **out)
{
	*out = NULL;
	struct fb_rf_service *svc = calloc(1, sizeof(*svc));
	if (!svc)
		return -ENOMEM;
	int rc = fb_rf_uuid_load(o->state_dir ? o->state_dir : ".", svc->uuid);
	if (rc) {
		fb_log_err("redfish: cannot keep the service UUID in %s/%s: %s (check that the "
			   "directory is writable)", o->state_dir, FB_RF_UUID_FILE, fb_strerror(rc));
		free(svc);
		return rc;
	}
	set_identity(svc, o);
	svc->map = o->map;
	svc->module = (struct fb_ws_http_module){ .http = m_http, .body = m_body,
						  .body_done = m_body_done, .writeable = m_writeable,
						  .closed = m_closed, .wake = m_wake, .attach = m_attach,
						  .bad_method = m_bad_method, .arg = svc };
	if (o->base && !(svc->loopq = fb_loopq_new(o->base, FB_RF_LOOP_MAX_CALLS)))
		rc = -ENOMEM;
	if (!rc)
		rc = fb_rf_auth_new(&o->auth, &svc->auth);
	if (!rc)
		rc = fb_rf_tree_new(svc, &svc->tree);
	if (rc) {
		fb_rf_service_free(svc);
		return rc;
	}
	*out = svc;
	return 0;
}

void fb_rf_service_free(struct fb_rf_service *svc)
{
	if (!svc)
		return;
	fb_rf_tree_free(svc->tree);
	fb_rf_auth_free(svc->auth);
	fb_loopq_free(svc->loopq);
	free(svc);
}
