/* ws_http.h - small HTTP helpers for the WebSocket server's lws callbacks:
 * complete replies (status line, headers, body in one go) and peer names.
 * Lws thread only. */
#ifndef FB_WS_HTTP_H
#define FB_WS_HTTP_H

#include <libwebsockets.h>

#include <stddef.h>

/* Write a whole response (Content-Length set). Returns 0 or -1 (close). */
int fb_ws_http_reply(struct lws *wsi, unsigned code, const char *ctype, const void *body, size_t len);
/* {"error":..., "parameter":..., "detail":...} with the given status. Also
 * works while an upgrade request is being refused (before any 101). */
int fb_ws_http_error(struct lws *wsi, unsigned code, const char *error, const char *param,
		     const char *detail);
/* "ip:port" of the peer ("[v6]:port"; v4-mapped addresses shown as v4). */
void fb_ws_peer_name(struct lws *wsi, char *out, size_t outsz);

#endif
