/* fb_tls_client.c - see fb_tls_client.h. */
#include "fb_tls_client.h"

#include "fb_err.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>

int fb_tls_client_ctx(const char *ca, const char *cert, const char *key, SSL_CTX **out, char *err,
		      size_t errsz)
{
	*out = NULL;
	if (!ca || !*ca)
		return fb_err_set(err, errsz, FB_ECONFIG, "--tls-ca is needed for TLS (the CA of the "
				  "broker's certificate)");
	if (!cert != !key || (cert && (!*cert || !*key)))
		return fb_err_set(err, errsz, FB_ECONFIG, "--tls-cert and --tls-key go together");
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	const char *what = NULL, *file = NULL;
	if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
		what = "TLS", file = "(context)";
	else if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		what = "--tls-ca", file = ca;
	else if (cert && SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
		what = "--tls-cert", file = cert;
	else if (key && SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
		what = "--tls-key", file = key;
	else if (cert && SSL_CTX_check_private_key(ctx) != 1)
		what = "--tls-key", file = key;
	if (what) {
		char why[200];
		fb_tls_client_error(ERR_peek_last_error(), why, sizeof(why));
		SSL_CTX_free(ctx);
		return fb_err_set(err, errsz, FB_ECONFIG, "%s %s: %s", what, file, why);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	*out = ctx;
	return 0;
}

void fb_tls_client_ctx_free(SSL_CTX *ctx)
{
	SSL_CTX_free(ctx);
}

SSL *fb_tls_client_ssl(SSL_CTX *ctx, const char *host)
{
	SSL *ssl = SSL_new(ctx);
	if (!ssl)
		return NULL;
	unsigned char bin[16];
	int is_ip = inet_pton(AF_INET, host, bin) == 1 || inet_pton(AF_INET6, host, bin) == 1;
	X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
	int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host)
		       : SSL_set1_host(ssl, host) && SSL_set_tlsext_host_name(ssl, host);
	if (!ok) {
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

void fb_tls_client_error(unsigned long e, char *out, size_t outsz)
{
	if (e)
		ERR_error_string_n(e, out, outsz);
	else
		snprintf(out, outsz, "unknown TLS error");
	ERR_clear_error();
}
