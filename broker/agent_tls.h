/* agent_tls.h - TLS with client certificates on the agent port.
 *
 * AgentTls=off       plain TCP only (the default; fabricbusd logs a warning
 *                    when the agent port listens on a non-loopback address).
 * AgentTls=required  every connection does TLS 1.2+ and presents a client
 *                    certificate that chains to AgentTlsCa; a plain
 *                    fabricbus frame gets ERROR FORBIDDEN.
 * AgentTls=optional  both: a connection whose first byte is a TLS handshake
 *                    gets TLS (and must present a valid certificate), any
 *                    other is plain TCP without an identity (a migration
 *                    step).
 * A verified certificate's names (agent_identity.h) say which agent ids the
 * connection may use, and prove the id for taking over a live session.
 *
 * Loop thread only.
 */
#ifndef FB_AGENT_TLS_H
#define FB_AGENT_TLS_H

#include "agent_identity.h"

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stddef.h>

struct fb_config;
struct fb_agent_tls;

#define FB_TLS_WHY_MAX 256

/* Load AgentTlsCert/Key/Ca into a server context. 0, or FB_ECONFIG with the
 * file and OpenSSL's reason in err. *out stays NULL when AgentTls=off. */
int fb_agent_tls_new(const struct fb_config *c, struct fb_agent_tls **out, char *err, size_t errsz);
void fb_agent_tls_free(struct fb_agent_tls *t);

/* A bufferevent that does the server side of the handshake on fd. Why a
 * verification failed is written into why (FB_TLS_WHY_MAX bytes, owned by the
 * caller and alive as long as the bufferevent). NULL on ENOMEM. */
struct bufferevent *fb_agent_tls_accept(struct fb_agent_tls *t, struct event_base *base,
				       evutil_socket_t fd, char *why);

/* After BEV_EVENT_CONNECTED: the verified peer certificate's names. 0, or
 * -1 when there is no certificate. */
int fb_agent_tls_peer(struct bufferevent *bev, struct fb_ident_names *names);

/* Why a handshake failed: the verification reason if any, else OpenSSL's
 * error queue for this bufferevent, else "connection closed". */
void fb_agent_tls_failure(struct bufferevent *bev, const char *why, char *out, size_t outsz);

#endif
