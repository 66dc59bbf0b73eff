/* ws_tls.h - HTTPS and wss on HttpListen, with libwebsockets' own TLS
 * (OpenSSL). The loop still accepts the sockets (accept.c); lws does the
 * handshake on the one it adopts.
 *
 * HttpTls=off       plain HTTP only (the default; HttpListen must then be
 *                   a loopback address unless HttpAllowPlain=yes).
 * HttpTls=required  TLS 1.2+ only. A plain-HTTP request on the port is not
 *                   served: a GET or HEAD without credentials is redirected
 *                   (301) to the same URL over https; anything else (a write,
 *                   a request carrying a password or token, a WebSocket
 *                   upgrade) gets 403 naming the https URL, because its
 *                   secrets have already crossed the network in the clear.
 * HttpTls=optional  both served on the same port (the first byte tells them
 *                   apart): a migration step.
 * HttpTlsCa set     every TLS client must present a certificate that chains
 *                   to it (checked in the handshake). It admits the
 *                   connection; requests still need their token or login.
 *
 * Only HTTP/1.1 is offered (ALPN): the fan-out writes pre-framed bytes.
 */
#ifndef FB_WS_TLS_H
#define FB_WS_TLS_H

#include <stddef.h>

struct lws;

/* Load the files into a throwaway context, so that a bad one stops the start
 * with the key, the file and OpenSSL's reason (lws's own message does not
 * name them), and check that the key file only its owner may read
 * (fb_secret_file.h). ca may be "" or NULL. 0, or FB_ECONFIG/-errno. */
int fb_ws_tls_check(const char *cert, const char *key, const char *ca, char *err, size_t errsz);

/* lws's LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS: ssl_ctx is the
 * vhost's SSL_CTX: TLS 1.2 at least, no renegotiation. 0. */
int fb_ws_tls_setup_ctx(void *ssl_ctx);

/* A request that came in plain on a port with HttpTls=required: answer it
 * as said above. path is the request's path. Returns what the HTTP callback
 * returns (-1: close, the answer is out). */
int fb_ws_tls_refuse_plain(struct lws *wsi, const char *path);

#endif
