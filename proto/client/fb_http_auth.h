/* fb_http_auth.h - how a client proves itself to fabricbusd's HTTP port and
 * checks the broker: a bearer token read from a file (--token-file,
 * BrokerTokenFile) and HTTPS with the broker's certificate verified against
 * a CA bundle and the host name or address (--tls-ca, BrokerTlsCa).
 * docs/security.md, "HTTP and WebSocket".
 *
 * The token file holds the token on its first line (blanks around it are
 * cut) and, like every secret file, only its owner may read it
 * (fb_secret_file.h); a file others can read is refused with the chmod that
 * fixes it.
 */
#ifndef FB_HTTP_AUTH_H
#define FB_HTTP_AUTH_H

#include "fb_http.h"

#include <stddef.h>

#define FB_HTTP_TOKEN_MAX 512

struct ssl_ctx_st;

struct fb_http_auth {
	char token[FB_HTTP_TOKEN_MAX + 1]; /* "" = none */
	struct ssl_ctx_st *tls;            /* NULL = plain HTTP */
	char tls_ca[4096];                 /* for lws clients (client_ssl_ca_filepath) */
	struct fb_http_transport transport;
	struct fb_http_client client;      /* for fb_http_request_as */
};

/* token_file and tls_ca may be NULL or "". 0, or FB_ECONFIG / -errno with
 * "file: why; what to do" in err. */
int fb_http_auth_init(struct fb_http_auth *a, const char *token_file, const char *tls_ca,
		      char *err, size_t errsz);
/* The token from a file as above into out (outsz bytes). 0 or an error. */
int fb_http_token_file_read(const char *path, char *out, size_t outsz, char *err, size_t errsz);
void fb_http_auth_free(struct fb_http_auth *a);
/* "https" or "http", "wss" or "ws". */
const char *fb_http_auth_scheme(const struct fb_http_auth *a, int websocket);

#endif
