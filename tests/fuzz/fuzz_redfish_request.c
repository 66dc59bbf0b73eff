/* fuzz_redfish_request.c - libFuzzer target for what the Redfish router
 * does with bytes from the network before and after a handler: path
 * normalization, query and header lookups, route matching, If-Match /
 * If-None-Match lists, the body as JSON and its property checks, error
 * rendering, and a GET of the tree at the normalized path.
 *
 * Input: "<path>\n<If-Match>\n<Content-Type>\n<body...>". Any crash,
 * out-of-bounds read or leak is a bug; so is a normalized path that is not
 * a fixed point of normalization, or a refused body without an error. */
#include "fb_err.h"
#include "rf_body.h"
#include "rf_etag.h"
#include "rf_req.h"
#include "rf_route.h"
#include "rf_service.h"
#include "rf_tree.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fb_rf_service *svc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char dir[] = "/tmp/fuzz_redfish_request-XXXXXX";
	struct fb_rf_service_opts o = { .state_dir = mkdtemp(dir), .fabric_name = "IB" };
	if (!o.state_dir || fb_rf_service_new(&o, &svc) || fb_rf_tree_rebuild(svc->tree, 0) != 1)
		abort();
	return 0;
}

/* The next '\n'-ended field of [*p, end) as a NUL-terminated copy. */
static char *field(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	char *s = malloc(n + 1);
	memcpy(s, *p, n);
	s[n] = '\0';
	*p += n + (nl ? 1 : 0);
	return s;
}

static void check_path(const char *raw, struct fb_rf_req *req)
{
	int n = fb_rf_path_normalize(raw, strlen(raw), req->path, sizeof(req->path));
	if (n < 0) {
		snprintf(req->path, sizeof(req->path), "/redfish/v1");
		return;
	}
	char again[FB_RF_PATH_MAX];
	if (fb_rf_path_normalize(req->path, (size_t)n, again, sizeof(again)) != n ||
	    strcmp(again, req->path) != 0)
		__builtin_trap();
}

static void check_body(struct fb_rf_req *req)
{
	static const struct fb_rf_prop props[] = {
		{ "Destination", FB_RF_T_STRING, FB_RF_P_REQUIRED },
		{ "Context", FB_RF_T_STRING | FB_RF_T_NULL, 0 },
		{ "Id", FB_RF_T_STRING, FB_RF_P_READONLY },
		{ "HttpHeaders", FB_RF_T_ARRAY, 0 },
		{ "DeliveryRetryAttempts", FB_RF_T_INT, 0 },
		{ NULL, 0, 0 },
	};
	struct fb_rf_reply rep = { 0 };
	json_t *o = NULL;
	fb_rf_body_object(req, &rep, &o);
	if (!o && rep.status != 400)
		__builtin_trap();
	if (o && !fb_rf_body_check(o, props, 1, &rep) && rep.status != 400)
		__builtin_trap();
	json_decref(o);
	fb_rf_reply_free(&rep);
}

static void get_tree(struct fb_rf_req *req)
{
	struct fb_rf_reply rep = { 0 };
	struct fb_rf_ctx c = { .svc = svc, .req = req, .rep = &rep };
	const struct fb_rf_route *r = fb_rf_route_find(fb_rf_routes, req->path, &c);
	if (r && r->op[FB_RF_GET].fn == fb_rf_tree_get) {
		c.route = r;
		if (fb_rf_tree_get(&c) != 0 || (rep.status != 200 && rep.status != 304 && rep.status != 404))
			__builtin_trap();
		if (fb_rf_tree_exists(&c) != (rep.status != 404))
			__builtin_trap();
	}
	fb_rf_reply_free(&rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct fb_rf_req req = { .method = FB_RF_GET };
	char *raw = field(&p, end);
	char *if_match = field(&p, end);
	char *ctype = field(&p, end);
	check_path(raw, &req);
	if (if_match[0])
		fb_rf_req_set_header(&req, FB_RF_H_IF_NONE_MATCH, if_match);
	fb_rf_req_set_header(&req, FB_RF_H_CONTENT_TYPE, ctype);
	(void)fb_rf_req_is_json(&req);
	char tag[FB_RF_ETAG_MAX];
	fb_rf_etag(data, size, tag);
	(void)fb_rf_etag_listed(if_match, tag);
	(void)fb_rf_etag_listed(if_match, if_match);
	fb_buf_put(&req.body, p, (size_t)(end - p));
	check_body(&req);
	get_tree(&req);
	fb_rf_req_free(&req);
	free(raw);
	free(if_match);
	free(ctype);
	return 0;
}
