#include "ws_http.h"

#include "fb_buf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

int fb_ws_http_reply_hdr(struct lws *wsi, unsigned code, const char *ctype, const void *body,
			 size_t len, enum lws_token_indexes hdr, const char *value)
{
	uint8_t head[LWS_PRE + 512];
	uint8_t *start = head + LWS_PRE, *p = start, *end = head + sizeof(head) - 1;
	if (lws_add_http_common_headers(wsi, code, ctype, len, &p, end) ||
	    (value && lws_add_http_header_by_token(wsi, hdr, (const uint8_t *)value,
						   (int)strlen(value), &p, end)) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
					 (const uint8_t *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	if (!len)
		return 0;
	uint8_t *buf = malloc(LWS_PRE + len + 1);
	if (!buf)
		return -1;
	memcpy(buf + LWS_PRE, body, len);
	int rc = lws_write(wsi, buf + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
	free(buf);
	return rc < 0 ? -1 : 0;
}

int fb_ws_http_reply(struct lws *wsi, unsigned code, const char *ctype, const void *body, size_t len)
{
	return fb_ws_http_reply_hdr(wsi, code, ctype, body, len, WSI_TOKEN_HTTP_CACHE_CONTROL, NULL);
}

enum fb_ws_method fb_ws_http_method(struct lws *wsi)
{
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0)
		return FB_WS_GET;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
		return FB_WS_POST;
#if defined(LWS_WITH_HTTP_UNCOMMON_HEADERS) || defined(LWS_HTTP_HEADERS_ALL)
	if (lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0)
		return FB_WS_DELETE;
#endif
	return FB_WS_OTHER;
}

int fb_ws_http_parse_content_length(const char *v, int n, unsigned long long *out)
{
	if (n <= 0 || n > 19 || strspn(v, "0123456789") != (size_t)n)
		return -1;
	*out = strtoull(v, NULL, 10);
	return 0;
}

int fb_ws_http_content_length(struct lws *wsi, unsigned long long *out)
{
	char v[24];
	int n = lws_hdr_copy(wsi, v, sizeof(v), WSI_TOKEN_HTTP_CONTENT_LENGTH);
	return fb_ws_http_parse_content_length(v, n, out);
}

int fb_ws_http_ctype_is_json(const char *v)
{
	static const char want[] = "application/json";
	if (strncasecmp(v, want, sizeof(want) - 1) != 0)
		return 0;
	char c = v[sizeof(want) - 1];
	return c == '\0' || c == ';' || c == ' ' || c == '\t';
}

int fb_ws_http_is_json(struct lws *wsi)
{
	char v[128];
	return lws_hdr_copy(wsi, v, sizeof(v), WSI_TOKEN_HTTP_CONTENT_TYPE) > 0 &&
	       fb_ws_http_ctype_is_json(v);
}

/* For refusing an upgrade: lws 4.1 never parsed the request version on the
 * upgrade path and would answer "HTTP/1.0", which WebSocket clients reject,
 * so the status line and headers are written here, raw. */
static int upgrade_refused(struct lws *wsi, unsigned code, const void *body, size_t len)
{
	const char *text = code == 400 ? "Bad Request" : code == 404 ? "Not Found"
			   : code == 401 ? "Unauthorized" : code == 403 ? "Forbidden"
			   : code == 503 ? "Service Unavailable" : "Error";
	struct fb_buf b = FB_BUF_INIT;
	static const uint8_t pre[LWS_PRE];
	int rc = fb_buf_put(&b, pre, sizeof(pre));
	if (!rc)
		rc = fb_buf_printf(&b,
				   "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
				   "Content-Length: %zu\r\nCache-Control: no-store\r\n%s"
				   "Connection: close\r\n\r\n",
				   code, text, len,
				   code == 401 ? "WWW-Authenticate: Basic realm=\"fabricbus\", "
						 "charset=\"UTF-8\"\r\n" : "");
	if (!rc)
		rc = fb_buf_put(&b, body, len);
	if (!rc)
		rc = lws_write(wsi, b.data + LWS_PRE, b.len - LWS_PRE, LWS_WRITE_HTTP) < 0 ? -1 : 0;
	fb_buf_free(&b);
	return rc;
}

int fb_ws_http_error(struct lws *wsi, unsigned code, const char *error, const char *param,
		      const char *detail)
{
	struct fb_buf b = FB_BUF_INIT;
	int rc = fb_buf_puts(&b, "{\"error\":");
	if (!rc)
		rc = fb_buf_put_json_str(&b, error);
	if (!rc && param) {
		rc = fb_buf_puts(&b, ",\"parameter\":");
		if (!rc)
			rc = fb_buf_put_json_str(&b, param);
	}
	if (!rc && detail) {
		rc = fb_buf_puts(&b, ",\"detail\":");
		if (!rc)
			rc = fb_buf_put_json_str(&b, detail);
	}
	if (!rc)
		rc = fb_buf_puts(&b, "}\n");
	if (!rc)
		rc = lws_hdr_total_length(wsi, WSI_TOKEN_UPGRADE) > 0
			     ? upgrade_refused(wsi, code, b.data, b.len)
			     : fb_ws_http_reply(wsi, code, "application/json", b.data, b.len);
	fb_buf_free(&b);
	return rc;
}

void fb_ws_peer_name(struct lws *wsi, char *out, size_t outsz)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	snprintf(out, outsz, "?");
	if (getpeername(lws_get_socket_fd(wsi), (struct sockaddr *)&ss, &sl) != 0)
		return;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		port = ntohs(a->sin_port);
		snprintf(out, outsz, "%s:%u", ip, port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
		port = ntohs(a->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) { /* lws listens dual-stack */
			inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], ip, sizeof(ip));
			snprintf(out, outsz, "%s:%u", ip, port);
			return;
		}
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		snprintf(out, outsz, "[%s]:%u", ip, port);
	}
}
