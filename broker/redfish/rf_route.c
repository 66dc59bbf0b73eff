/* rf_route.c - pattern matching and the route helpers (rf_route.h). The
 * dispatch itself, which needs the connection, is in rf_conn.c. */
#include "rf_route.h"

#include <string.h>

/* Next segment of *p (after its '/'): [s, s+n); 0 at the end. */
static int next_seg(const char **p, const char **s, size_t *n)
{
	if (**p != '/')
		return 0;
	*s = *p + 1;
	*n = strcspn(*s, "/");
	*p = *s + *n;
	return 1;
}

static int capture(struct fb_rf_ctx *c, size_t *used, const char *s, size_t n, const char **dst)
{
	if (*used + n + 1 > sizeof(c->argbuf))
		return 0;
	memcpy(c->argbuf + *used, s, n);
	c->argbuf[*used + n] = '\0';
	*dst = c->argbuf + *used;
	*used += n + 1;
	return 1;
}

int fb_rf_route_match(const char *pattern, const char *path, struct fb_rf_ctx *c)
{
	const char *pp = pattern, *xp = path;
	size_t used = 0;
	c->n_arg = 0;
	c->rest = "";
	for (;;) {
		const char *ps, *xs;
		size_t pn, xn;
		int more_p = next_seg(&pp, &ps, &pn);
		if (more_p && pn == 2 && memcmp(ps, "**", 2) == 0)
			return *xp == '\0' || (*xp == '/' && capture(c, &used, xp + 1, strlen(xp + 1), &c->rest));
		int more_x = next_seg(&xp, &xs, &xn);
		if (!more_p || !more_x)
			return !more_p && !more_x;
		if (pn == 2 && memcmp(ps, "{}", 2) == 0) {
			if (!xn || c->n_arg == FB_RF_ARGS_MAX || !capture(c, &used, xs, xn, &c->arg[c->n_arg]))
				return 0;
			c->n_arg++;
		} else if (pn != xn || memcmp(ps, xs, pn) != 0) {
			return 0;
		}
	}
}

const struct fb_rf_route *fb_rf_route_find(const struct fb_rf_route *table, const char *path,
					   struct fb_rf_ctx *c)
{
	for (const struct fb_rf_route *r = table; r->pattern; r++)
		if (fb_rf_route_match(r->pattern, path, c))
			return r;
	return NULL;
}

struct fb_rf_op fb_rf_route_op(const struct fb_rf_route *r, enum fb_rf_method m)
{
	if (m >= FB_RF_METHODS)
		return (struct fb_rf_op){ 0 };
	if (m == FB_RF_HEAD && !r->op[FB_RF_HEAD].fn)
		return r->op[FB_RF_GET];
	return r->op[m];
}

/* The "$" query parameters a route takes (by pattern), space-separated;
 * any other "$..." is 501 QueryParameterUnsupported (DSP0266). */
static const char *const dollar_ok[][2] = {
	{ "/redfish/v1/EventService/SSE", "$filter" }, /* rf-sse */
};

static const char *dollars_of(const struct fb_rf_route *r)
{
	for (size_t i = 0; i < sizeof(dollar_ok) / sizeof(dollar_ok[0]); i++)
		if (strcmp(dollar_ok[i][0], r->pattern) == 0)
			return dollar_ok[i][1];
	return "";
}

const char *fb_rf_route_bad_dollar(const struct fb_rf_route *r, const struct fb_rf_req *req)
{
	for (size_t i = 0; i < req->n_query; i++) {
		const char *a = req->query[i];
		size_t n = strcspn(a, "=");
		if (a[0] != '$')
			continue; /* other parameters are the handler's (or ignored) */
		const char *d = dollars_of(r);
		int ok = 0;
		while (*d && !ok) {
			size_t m = strcspn(d, " ");
			ok = m == n && strncmp(d, a, n) == 0;
			d += m + (d[m] == ' ');
		}
		if (!ok)
			return a;
	}
	return NULL;
}

unsigned fb_rf_route_allow(const struct fb_rf_route *r)
{
	unsigned a = 0;
	for (int m = 0; m < FB_RF_METHODS; m++)
		if (fb_rf_route_op(r, (enum fb_rf_method)m).fn)
			a |= FB_RF_ALLOW(m);
	return a;
}

int fb_rf_unimplemented(struct fb_rf_ctx *c)
{
	fb_rf_reply_error(c->rep, FB_RF_NOT_IMPLEMENTED, NULL, 0);
	return 0;
}
