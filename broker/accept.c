/* accept.c - who may hold a descriptor: the budget split between the two
 * listeners, and the HTTP/WebSocket listener that hands sockets to lws.
 *
 * fabricbusd raises its soft RLIMIT_NOFILE towards what its settings ask for
 * (MaxAgents + MaxHttpConnections + FD_RESERVE), as Redis does. Whatever the
 * limit then is, less what is open at start, FD_RESERVE descriptors stay for
 * the broker itself (journal
 * segments and replay readers, Kafka's sockets, the lws pipe, logs), HTTP gets
 * MaxHttpConnections or a quarter of the rest, whichever is smaller, and
 * agents the remainder (at most MaxAgents). So a flood of agents can never
 * take the descriptor /status needs, nor the one the journal needs.
 *
 * Over its budget, the agent listener holds (agents wait in the backlog and
 * are served as connections close: ingest.c); an HTTP client over its budget
 * gets "503 Service Unavailable" at once (a TLS client a TLS alert), because a
 * browser or curl waiting in a backlog looks like a hung broker.
 */
#include "broker.h"

#include "fb_log.h"
#include "listener.h"
#include "ws_server.h"

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FD_RESERVE 64

/* Descriptors open now (inherited ones too): they are not the listeners' to use. */
static uint64_t open_fds(void)
{
	uint64_t n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n > 3 ? n - 3 : 0; /* ".", ".." and the directory's own descriptor */
}

static void split_budget(struct fb_broker *b)
{
	const struct fb_config *c = b->cfg;
	b->fd_limit = fb_listener_fd_limit(c->max_agents + c->max_http_connections + FD_RESERVE);
	uint64_t used = open_fds() + FD_RESERVE;
	uint64_t avail = b->fd_limit > used + 16 ? b->fd_limit - used : 16;
	uint64_t http = avail / 4 < 8 ? 8 : avail / 4;
	b->fd_http = c->max_http_connections < http ? c->max_http_connections : http;
	/* Not capped by MaxAgents: past MaxAgents an agent is refused (ERROR
	 * BUSY), past this it waits; both are checked in ingest.c. */
	b->fd_agents = avail > b->fd_http ? avail - b->fd_http : 1;
	if (b->fd_agents < c->max_agents || b->fd_http < c->max_http_connections)
		fb_log_warn("descriptor limit %llu (ulimit -n / LimitNOFILE) allows %llu agents and %llu "
			    "HTTP connections at once, below MaxAgents=%llu / MaxHttpConnections=%llu; "
			    "more agents wait to be accepted, more HTTP clients get 503",
			    (unsigned long long)b->fd_limit, (unsigned long long)b->fd_agents,
			    (unsigned long long)b->fd_http, (unsigned long long)c->max_agents,
			    (unsigned long long)c->max_http_connections);
}

/* A complete answer in one send: a new socket's send buffer always takes it.
 * The request is read first (as far as it has come) so that close() does not
 * reset the connection under the answer. */
static void refuse_http(evutil_socket_t fd)
{
#define BODY_503 "{\"error\":\"fabricbusd is at its HTTP connection limit; retry in a second\"}\n"
	char resp[256];
	int n = snprintf(resp, sizeof(resp),
			 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
			 "Retry-After: 1\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
			 sizeof(BODY_503) - 1, BODY_503);
	char sink[4096];
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	if (send(fd, resp, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fb_log_debug("503 not sent: %s", strerror(errno));
	shutdown(fd, SHUT_WR);
	evutil_closesocket(fd);
}

/* On a port that speaks TLS (HttpTls=optional/required) a plain-text 503
 * would reach a TLS client as a garbled ServerHello ("wrong version
 * number"). Completing the handshake first would need the loop to hold the
 * HTTP certificate and spend a handshake's CPU on each refusal, exactly when
 * the broker is busiest; lws cannot take the socket either (it is the
 * descriptor budget being refused). So a TLS client gets the one thing TLS
 * lets a server say before its ServerHello, in the clear: a fatal alert
 * record (internal_error, 80; TLS has no "try later"), then the close. A
 * plain client on an optional port still gets the 503. Which one it is, is
 * told by the first byte (0x16, a TLS handshake record), so the refusal waits
 * up to REFUSE_WAIT_S for it, at most REFUSALS_PENDING_MAX sockets at once
 * (more are closed at once: the budget is already spent). */
#define REFUSE_WAIT_S 2
#define REFUSALS_PENDING_MAX 16
#define TLS_HANDSHAKE_RECORD 0x16

static void refuse_tls_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fb_broker *b = arg;
	unsigned char first = 0;
	b->http_refusals_pending--;
	if (!(what & EV_READ) || recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) != 1) {
		evutil_closesocket(fd); /* silent or gone: nothing to answer */
		return;
	}
	if (first != TLS_HANDSHAKE_RECORD) {
		refuse_http(fd);
		return;
	}
	/* record: alert, TLS 1.2 record version, length 2; fatal, internal_error */
	static const unsigned char alert[] = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50 };
	char sink[4096];
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	if (send(fd, alert, sizeof(alert), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fb_log_debug("TLS alert not sent: %s", strerror(errno));
	shutdown(fd, SHUT_WR);
	evutil_closesocket(fd);
}

static void refuse(struct fb_broker *b, evutil_socket_t fd)
{
	if (b->cfg->http_tls == FB_AGENT_TLS_OFF) {
		refuse_http(fd);
		return;
	}
	struct timeval wait = { REFUSE_WAIT_S, 0 };
	if (b->http_refusals_pending >= REFUSALS_PENDING_MAX ||
	    event_base_once(b->base, fd, EV_READ, refuse_tls_cb, b, &wait)) {
		evutil_closesocket(fd);
		return;
	}
	b->http_refusals_pending++;
}

static void http_accept_cb(void *arg, evutil_socket_t fd, const char *peer)
{
	struct fb_broker *b = arg;
	if (fb_ws_http_open(b->ws) >= b->fd_http) {
		char why[96];
		snprintf(why, sizeof(why), "%llu HTTP connections open (the limit); answered %s",
			 (unsigned long long)b->fd_http,
			 b->cfg->http_tls == FB_AGENT_TLS_OFF ? "503" : "503 or a TLS alert");
		fb_listener_refused(b->http_listener, peer, why);
		refuse(b, fd);
		return;
	}
	/* Replies go out as two writes (headers, body): without TCP_NODELAY
	 * the body of a small reply waits for the client's delayed ACK, ~40 ms
	 * per request on a kept-alive connection (23 requests/s). */
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fb_ws_adopt(b->ws, fd) != 0) {
		fb_listener_refused(b->http_listener, peer, "out of memory");
		evutil_closesocket(fd);
	}
}

int fb_accept_http_listen(struct fb_broker *b)
{
	split_budget(b);
	int rc = fb_listener_open(b->base, "HttpListen", "HTTP listener", b->cfg->http_host,
				  b->cfg->http_port, http_accept_cb, b, &b->http_listener);
	if (rc == 0)
		fb_log_info("listening for HTTP/WebSocket on %s:%d, %s (at most %llu connections at once)",
			    b->cfg->http_host, b->cfg->http_port,
			    b->cfg->http_tls == FB_AGENT_TLS_REQUIRED   ? "HTTPS only"
			    : b->cfg->http_tls == FB_AGENT_TLS_OPTIONAL ? "HTTPS and plain HTTP"
									: "plain HTTP",
			    (unsigned long long)b->fd_http);
	return rc;
}

void fb_accept_http_close(struct fb_broker *b)
{
	fb_listener_free(b->http_listener);
	b->http_listener = NULL;
}
