/* ws_www.c - serving the live page: see ws_www.h. */
#include "ws_www.h"

#include "ws_http.h"

#include <libwebsockets.h>
#include <string.h>

static const struct fb_ws_www_file *find(const char *path)
{
	for (size_t i = 0; i < fb_ws_www_count; i++)
		if (strcmp(fb_ws_www_files[i].path, path) == 0)
			return &fb_ws_www_files[i];
	return NULL;
}

/* A browser's Accept lists text/html; curl's is "*" "/" "*", scripts send
 * none or application/json: they keep the text reply. */
static int wants_html(struct lws *wsi)
{
	char accept[512];
	if (lws_hdr_copy(wsi, accept, sizeof(accept), WSI_TOKEN_HTTP_ACCEPT) <= 0)
		return 0;
	return strstr(accept, "text/html") != NULL;
}

int fb_ws_www_http(struct lws *wsi, const char *path)
{
	const struct fb_ws_www_file *f;
	if (strcmp(path, "/") == 0) {
		if (!wants_html(wsi))
			return 1;
		f = find("/ui/index.html");
	} else if (strncmp(path, "/ui/", 4) == 0) {
		f = find(path);
		if (!f)
			return fb_ws_http_error(wsi, 404, "not found", NULL, path) ? -1 : 0;
	} else {
		return 1;
	}
	if (fb_ws_http_method(wsi) != FB_WS_GET)
		return fb_ws_http_error(wsi, 405, "method not allowed", NULL, "use GET") ? -1 : 0;
	return f ? fb_ws_http_reply(wsi, 200, f->ctype, f->data, f->len) : 1;
}
