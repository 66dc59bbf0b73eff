/* ws_www.h - the live page (broker/http/www: index.html, app.js, app.css),
 * compiled into fabricbusd by www/embed.py and served by the lws thread:
 *   GET /            the page when the client asks for HTML (a browser's
 *                    Accept: text/html); curl and scripts keep the plain
 *                    text list of endpoints (ws_server.c)
 *   GET /ui/<file>   the page's files
 * Read-only, like /status and /metrics. docs/operations.md, "The live page". */
#ifndef FB_WS_WWW_H
#define FB_WS_WWW_H

#include <stddef.h>

struct lws;

struct fb_ws_www_file {
	const char *path;  /* "/ui/app.js" */
	const char *ctype;
	const unsigned char *data;
	size_t len;
};
extern const struct fb_ws_www_file fb_ws_www_files[];
extern const size_t fb_ws_www_count;

/* Answer path if it is the page's: 1 when it is not (the caller goes on),
 * else the reply's 0 or -1. */
int fb_ws_www_http(struct lws *wsi, const char *path);

#endif
