/* agent_tls.c - see agent_tls.h. The context is made once at start, so a
 * bad file is a start-up error naming the key and the file, not a failure
 * at the first agent. */
#include "agent_tls.h"

#include "config.h"
#include "fb_err.h"

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fb_agent_tls {
	SSL_CTX *ctx;
};

static void ssl_reason(char *out, size_t outsz)
{
	unsigned long e = ERR_get_error();
	if (e)
		ERR_error_string_n(e, out, outsz);
	else
		snprintf(out, outsz, "unknown OpenSSL error");
	ERR_clear_error();
}

/* Keep OpenSSL's verdict but remember why, for the log line that closes the connection. */
static int verify_cb(int ok, X509_STORE_CTX *x)
{
	if (ok)
		return 1;
	SSL *ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
	char *why = ssl ? SSL_get_app_data(ssl) : NULL;
	if (why && !why[0]) {
		char subj[128] = "?";
		X509 *cert = X509_STORE_CTX_get_current_cert(x);
		if (cert)
			X509_NAME_oneline(X509_get_subject_name(cert), subj, sizeof(subj));
		snprintf(why, FB_TLS_WHY_MAX, "client certificate %s: %s", subj,
			 X509_verify_cert_error_string(X509_STORE_CTX_get_error(x)));
	}
	return 0;
}

int fb_agent_tls_new(const struct fb_config *c, struct fb_agent_tls **out, char *err, size_t errsz)
{
	*out = NULL;
	if (c->agent_tls == FB_AGENT_TLS_OFF)
		return 0;
	const char *miss = !c->agent_tls_cert[0] ? "AgentTlsCert" : !c->agent_tls_key[0] ? "AgentTlsKey"
			   : !c->agent_tls_ca[0] ? "AgentTlsCa" : NULL;
	if (miss)
		return fb_err_set(err, errsz, FB_ECONFIG, "AgentTls=%s needs %s (docs/security.md)",
				  c->agent_tls == FB_AGENT_TLS_REQUIRED ? "required" : "optional", miss);
	struct fb_agent_tls *t = calloc(1, sizeof(*t));
	if (!t)
		return fb_err_set(err, errsz, -12, "out of memory");
	char why[256];
	const char *key = NULL, *file = NULL;
	t->ctx = SSL_CTX_new(TLS_server_method());
	if (!t->ctx) {
		key = "AgentTls", file = "(context)";
	} else if (SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION) != 1) {
		key = "AgentTls", file = "(TLS 1.2)";
	} else if (SSL_CTX_use_certificate_chain_file(t->ctx, c->agent_tls_cert) != 1) {
		key = "AgentTlsCert", file = c->agent_tls_cert;
	} else if (SSL_CTX_use_PrivateKey_file(t->ctx, c->agent_tls_key, SSL_FILETYPE_PEM) != 1) {
		key = "AgentTlsKey", file = c->agent_tls_key;
	} else if (SSL_CTX_check_private_key(t->ctx) != 1) {
		key = "AgentTlsKey", file = c->agent_tls_key;
	} else if (SSL_CTX_load_verify_locations(t->ctx, c->agent_tls_ca, NULL) != 1) {
		key = "AgentTlsCa", file = c->agent_tls_ca;
	}
	if (key) {
		ssl_reason(why, sizeof(why));
		fb_agent_tls_free(t);
		return fb_err_set(err, errsz, FB_ECONFIG, "%s=%s: %s", key, file, why);
	}
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verify_cb);
	SSL_CTX_set_verify_depth(t->ctx, 8);
	/* No session cache: every connection proves its certificate again. */
	SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	*out = t;
	return 0;
}

void fb_agent_tls_free(struct fb_agent_tls *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

struct bufferevent *fb_agent_tls_accept(struct fb_agent_tls *t, struct event_base *base,
				       evutil_socket_t fd, char *why)
{
	SSL *ssl = SSL_new(t->ctx);
	if (!ssl)
		return NULL;
	why[0] = '\0';
	SSL_set_app_data(ssl, why);
	struct bufferevent *bev = bufferevent_openssl_socket_new(base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
								 BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		return NULL;
	}
	/* An agent that closes without close_notify is an EOF, not an error. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

int fb_agent_tls_peer(struct bufferevent *bev, struct fb_ident_names *names)
{
	memset(names, 0, sizeof(*names));
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	X509 *cert = ssl ? SSL_get1_peer_certificate(ssl) : NULL;
	if (!cert)
		return -1;
	char cn[FB_IDENT_NAME_MAX] = "";
	int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
	/* A CN with a NUL inside it is not a name we can compare. */
	if (n > 0 && (size_t)n == strlen(cn))
		fb_ident_names_add(names, 'C', cn);
	GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
		if (g->type != GEN_DNS)
			continue;
		const unsigned char *d = ASN1_STRING_get0_data(g->d.dNSName);
		int len = ASN1_STRING_length(g->d.dNSName);
		char name[FB_IDENT_NAME_MAX];
		if (len <= 0 || (size_t)len >= sizeof(name) || memchr(d, 0, (size_t)len))
			continue;
		memcpy(name, d, (size_t)len);
		name[len] = '\0';
		fb_ident_names_add(names, 'S', name);
	}
	GENERAL_NAMES_free(sans);
	X509_free(cert);
	return 0;
}

void fb_agent_tls_failure(struct bufferevent *bev, const char *why, char *out, size_t outsz)
{
	if (why && why[0]) {
		snprintf(out, outsz, "%s", why);
		ERR_clear_error();
		return;
	}
	unsigned long e = bufferevent_get_openssl_error(bev);
	if (e) {
		char r[200];
		ERR_error_string_n(e, r, sizeof(r));
		snprintf(out, outsz, "%s", r);
		while (bufferevent_get_openssl_error(bev))
			;
	} else {
		snprintf(out, outsz, "connection closed during the TLS handshake");
	}
}
