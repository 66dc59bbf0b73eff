/* ws_http.h - small HTTP helpers for the WebSocket server's lws callbacks:
 * complete replies (status line, headers, body in one go) and peer names.
 * Lws thread only. */
#ifndef FB_WS_HTTP_H
#define FB_WS_HTTP_H

#include <libwebsockets.h>

#include <stddef.h>

/* The request method, for routes that take more than GET. */
enum fb_ws_method { FB_WS_GET, FB_WS_POST, FB_WS_DELETE, FB_WS_OTHER };
enum fb_ws_method fb_ws_http_method(struct lws *wsi);
/* The request's Content-Length: 0 and *out set, or -1 if absent or not a
 * plain decimal number. */
int fb_ws_http_content_length(struct lws *wsi, unsigned long long *out);
/* The same on the header's value v (n bytes as lws_hdr_copy returned, v
 * NUL-terminated): 1..19 decimal digits only, else -1. Pure, for fuzzing. */
int fb_ws_http_parse_content_length(const char *v, int n, unsigned long long *out);
/* 1 if the request's Content-Type is application/json (parameters such as
 * "; charset=utf-8" allowed), else 0. */
int fb_ws_http_is_json(struct lws *wsi);
/* The same on a NUL-terminated Content-Type value. Pure. */
int fb_ws_http_ctype_is_json(const char *v);
/* Write a whole response (Content-Length set; len 0 sends headers only, as
 * for 204). Returns 0 or -1 (close). */
int fb_ws_http_reply(struct lws *wsi, unsigned code, const char *ctype, const void *body, size_t len);
/* The same with one more header, hdr: value (none when value is NULL). */
int fb_ws_http_reply_hdr(struct lws *wsi, unsigned code, const char *ctype, const void *body,
			 size_t len, enum lws_token_indexes hdr, const char *value);
/* {"error":..., "parameter":..., "detail":...} with the given status. Also
 * works while an upgrade request is being refused (before any 101). */
int fb_ws_http_error(struct lws *wsi, unsigned code, const char *error, const char *param,
		     const char *detail);
/* "ip:port" of the peer ("[v6]:port"; v4-mapped addresses shown as v4). */
void fb_ws_peer_name(struct lws *wsi, char *out, size_t outsz);

#endif
