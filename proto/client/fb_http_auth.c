/* fb_http_auth.c - bearer token and HTTPS for the HTTP clients (fb_http_auth.h). */
#include "fb_http_auth.h"

#include "fb_err.h"
#include "fb_secret_file.h"
#include "fb_time.h"
#include "fb_tls_client.h"

#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fb_http_token_file_read(const char *path, char *out, size_t outsz, char *err, size_t errsz)
{
	char *text;
	size_t len;
	int rc = fb_secret_file_read(path, "a bearer token", 64 * 1024, &text, &len, err, errsz);
	if (rc)
		return rc;
	char *t = text + strspn(text, " \t\r\n");
	size_t n = strcspn(t, "\r\n");
	while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
		n--;
	int bad = !n || n >= outsz || memchr(t, ' ', n) || memchr(t, '\t', n);
	if (!bad)
		snprintf(out, outsz, "%.*s", (int)n, t);
	memset(text, 0, len);
	free(text);
	if (bad)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: expected one token (no blanks, at most "
				  "%zu characters) on the first line", path, outsz - 1);
	return 0;
}

/* Wait for what SSL asked for (e: SSL_ERROR_WANT_READ/WRITE) until deadline. */
static int ssl_wait(SSL *ssl, int e, int64_t deadline)
{
	return fb_http_wait_fd(SSL_get_fd(ssl), e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, deadline);
}

static void *tls_start(const struct fb_http_transport *t, int fd, const char *host,
		       int64_t deadline, char *err, size_t errsz)
{
	char name[256];
	size_t hl = strlen(host);
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']')
		snprintf(name, sizeof(name), "%.*s", (int)(hl - 2), host + 1);
	else
		snprintf(name, sizeof(name), "%s", host);
	SSL *ssl = fb_tls_client_ssl(t->arg, name);
	if (!ssl || !SSL_set_fd(ssl, fd)) {
		SSL_free(ssl);
		fb_err_set(err, errsz, -ENOMEM, "%s: out of memory for TLS", name);
		return NULL;
	}
	SSL_set_alpn_protos(ssl, (const unsigned char *)"\x08http/1.1", 9);
	for (;;) {
		int r = SSL_connect(ssl);
		if (r == 1)
			return ssl;
		int e = SSL_get_error(ssl, r);
		int rc = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? ssl_wait(ssl, e, deadline)
									       : -EPROTO;
		if (rc) {
			char why[256] = "timed out";
			long v = SSL_get_verify_result(ssl);
			if (rc != -ETIMEDOUT && v != X509_V_OK)
				snprintf(why, sizeof(why), "the broker's certificate: %s (is --tls-ca the CA "
					 "that signed it, and the host name or address in it?)",
					 X509_verify_cert_error_string(v));
			else if (rc != -ETIMEDOUT)
				fb_tls_client_error(ERR_peek_last_error(), why, sizeof(why));
			ERR_clear_error();
			SSL_free(ssl);
			fb_err_set(err, errsz, rc, "%s: TLS handshake failed: %s", name, why);
			return NULL;
		}
	}
}

static int tls_send_all(void *conn, const void *p, size_t n, int64_t deadline)
{
	SSL *ssl = conn;
	while (n) {
		int w = SSL_write(ssl, p, n > INT_MAX ? INT_MAX : (int)n);
		if (w > 0) {
			p = (const char *)p + w;
			n -= (size_t)w;
			continue;
		}
		int e = SSL_get_error(ssl, w);
		int rc = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? ssl_wait(ssl, e, deadline)
									       : -EPIPE;
		if (rc) {
			ERR_clear_error();
			return rc;
		}
	}
	return 0;
}

static long tls_recv(void *conn, void *p, size_t n, int64_t deadline)
{
	SSL *ssl = conn;
	int r = SSL_read(ssl, p, n > INT_MAX ? INT_MAX : (int)n);
	if (r > 0)
		return r;
	int e = SSL_get_error(ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		int rc = ssl_wait(ssl, e, deadline);
		return rc ? rc : -EAGAIN;
	}
	ERR_clear_error();
	/* a close without close_notify ends the stream too: the parser knows
	 * whether the response was complete */
	return e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL ? 0 : -EPROTO;
}

static void tls_end(void *conn)
{
	SSL_free(conn);
}

int fb_http_auth_init(struct fb_http_auth *a, const char *token_file, const char *tls_ca,
		      char *err, size_t errsz)
{
	memset(a, 0, sizeof(*a));
	int rc = 0;
	if (token_file && token_file[0])
		rc = fb_http_token_file_read(token_file, a->token, sizeof(a->token), err, errsz);
	if (!rc && tls_ca && tls_ca[0]) {
		rc = fb_tls_client_ctx(tls_ca, NULL, NULL, &a->tls, err, errsz);
		snprintf(a->tls_ca, sizeof(a->tls_ca), "%s", tls_ca);
	}
	if (rc) {
		fb_http_auth_free(a);
		return rc;
	}
	a->transport = (struct fb_http_transport){ .start = tls_start, .send_all = tls_send_all,
						   .recv = tls_recv, .end = tls_end, .arg = a->tls };
	a->client = (struct fb_http_client){ .token = a->token,
					     .transport = a->tls ? &a->transport : NULL };
	return 0;
}

void fb_http_auth_free(struct fb_http_auth *a)
{
	fb_tls_client_ctx_free(a->tls);
	memset(a, 0, sizeof(*a));
}

const char *fb_http_auth_scheme(const struct fb_http_auth *a, int websocket)
{
	return a && a->tls ? (websocket ? "wss" : "https") : (websocket ? "ws" : "http");
}
