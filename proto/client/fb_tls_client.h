/* fb_tls_client.h - the client side of TLS on the agent port: a context with
 * the agent's certificate and the CA the broker's certificate must chain to,
 * and one SSL per connection that checks the broker's name or address.
 * See docs/security.md for the certificates.
 */
#ifndef FB_TLS_CLIENT_H
#define FB_TLS_CLIENT_H

#include <stddef.h>

struct ssl_ctx_st;
struct ssl_st;

/* ca: PEM bundle to verify the broker; cert/key: the agent's certificate
 * (chain) and key, both or neither. 0, or FB_ECONFIG with the file and
 * OpenSSL's reason in err. */
int fb_tls_client_ctx(const char *ca, const char *cert, const char *key, struct ssl_ctx_st **out,
		      char *err, size_t errsz);
void fb_tls_client_ctx_free(struct ssl_ctx_st *ctx);
/* A new SSL that verifies host (a DNS name or an IP address) against the
 * broker's certificate. NULL on ENOMEM. */
struct ssl_st *fb_tls_client_ssl(struct ssl_ctx_st *ctx, const char *host);
/* OpenSSL's last error for a failed connection, or "" (the queue is cleared). */
void fb_tls_client_error(unsigned long e, char *out, size_t outsz);

#endif
