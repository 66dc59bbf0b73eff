/* ws_tls.c - HTTPS on HttpListen (see ws_tls.h). */
#include "ws_tls.h"

#include "fb_buf.h"
#include "fb_err.h"
#include "fb_log.h"
#include "fb_secret_file.h"
#include "ws_http.h"

#include <libwebsockets.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <stdio.h>
#include <string.h>

int fb_ws_tls_check(const char *cert, const char *key, const char *ca, char *err, size_t errsz)
{
	int rc = fb_secret_file_check(key, "the HTTPS private key", err, errsz);
	if (rc)
		return rc;
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	const char *k = NULL, *file = NULL;
	if (!ctx)
		k = "HttpTls", file = "(context)";
	else if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
		k = "HttpTlsCert", file = cert;
	else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
		 SSL_CTX_check_private_key(ctx) != 1)
		k = "HttpTlsKey", file = key;
	else if (ca && ca[0] && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		k = "HttpTlsCa", file = ca;
	SSL_CTX_free(ctx);
	if (!k)
		return 0;
	char why[256] = "unknown OpenSSL error";
	unsigned long e = ERR_get_error();
	if (e)
		ERR_error_string_n(e, why, sizeof(why));
	ERR_clear_error();
	return fb_err_set(err, errsz, FB_ECONFIG, "%s=%s: %s (docs/security.md)", k, file, why);
}

int fb_ws_tls_setup_ctx(void *ssl_ctx)
{
	SSL_CTX *ctx = ssl_ctx;
	if (!ctx)
		return 0;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	return 0;
}

static int has_credentials(struct lws *wsi)
{
	return lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 ||
	       lws_hdr_total_length(wsi, WSI_TOKEN_X_AUTH_TOKEN) > 0;
}

/* https://<Host><path>[?<query>] into b; 0, or -1 when there is no usable Host. */
static int https_url(struct lws *wsi, const char *path, struct fb_buf *b)
{
	char host[256], q[1024];
	int n = lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST);
	if (n <= 0 || strpbrk(host, " \t\r\n/\\?#@"))
		return -1;
	int rc = fb_buf_printf(b, "https://%s", host);
	/* only printable bytes without blanks go into Location */
	for (const char *p = path; !rc && *p; p++)
		rc = (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f ? fb_buf_put(b, p, 1)
									  : fb_buf_printf(b, "%%%02X", (unsigned char)*p);
	if (!rc && lws_hdr_copy(wsi, q, sizeof(q), WSI_TOKEN_HTTP_URI_ARGS) > 0 &&
	    !strpbrk(q, " \t\r\n"))
		rc = fb_buf_printf(b, "?%s", q);
	return rc;
}

int fb_ws_tls_refuse_plain(struct lws *wsi, const char *path)
{
	struct fb_buf url = FB_BUF_INIT;
	int ok_url = https_url(wsi, path, &url) == 0 && !fb_buf_put(&url, "", 1); /* NUL */
	const char *where = ok_url ? (const char *)url.data : "https://<this host and port>";
	int rc;
	enum fb_ws_method m = fb_ws_http_method(wsi);
	int get_or_head = m == FB_WS_GET || lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0;
	if (get_or_head && ok_url && !has_credentials(wsi) &&
	    !lws_hdr_total_length(wsi, WSI_TOKEN_UPGRADE)) {
		uint8_t head[LWS_PRE + 1400];
		uint8_t *start = head + LWS_PRE, *p = start, *end = head + sizeof(head) - 1;
		rc = lws_add_http_common_headers(wsi, HTTP_STATUS_MOVED_PERMANENTLY, "text/plain", 0, &p,
						 end) ||
				     lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_LOCATION,
								  (const uint8_t *)where,
								  (int)strlen(where), &p, end) ||
				     lws_finalize_write_http_header(wsi, start, &p, end)
			     ? -1
			     : 0;
	} else {
		char detail[1400];
		snprintf(detail, sizeof(detail),
			 "this port takes HTTPS only (HttpTls=required): use %s; anything sent in this "
			 "request (a password or token) crossed the network in the clear", where);
		rc = fb_ws_http_error(wsi, 403, "HTTPS required", NULL, detail);
	}
	fb_buf_free(&url);
	if (rc)
		return -1;
	/* a plain connection is served once: the body of a write is not read */
	return lws_http_transaction_completed(wsi) ? -1 : (get_or_head ? 0 : -1);
}
