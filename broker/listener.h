/* listener.h - a TCP listener on the libevent loop that survives running out
 * of file descriptors.
 *
 * Both of fabricbusd's ports (agents and HTTP/WebSocket) accept here. When
 * accept(2) fails for lack of descriptors or memory (EMFILE, ENFILE,
 * ENOBUFS, ENOMEM) the listener pauses instead of spinning on a socket that
 * stays readable, and a timer re-arms it (100 ms, doubling to 1 s while the
 * shortage lasts). Clients that connect meanwhile wait in the kernel's
 * backlog and are served as descriptors free up. The owner can also hold
 * the listener (fb_listener_hold) while it is at its own descriptor budget,
 * so that the last descriptors stay free for /status.
 *
 * Every log line about accept failures and refusals is rate-limited to one
 * a second, carrying the count of what it stands for.
 *
 * Loop thread only. The listener does not own accepted sockets: the accept
 * callback does.
 */
#ifndef FB_LISTENER_H
#define FB_LISTENER_H

#include <event2/event.h>
#include <stdint.h>

struct fb_listener;

/* fd is a new non-blocking, close-on-exec socket; peer is "ip:port". */
typedef void (*fb_listener_accept_fn)(void *arg, evutil_socket_t fd, const char *peer);

struct fb_listener_stats {
	int paused;            /* not accepting now (shortage or held) */
	int held;              /* paused by the owner (its budget), not by a failure */
	uint64_t accept_errors;/* failed accept(2) calls */
	uint64_t pauses;       /* times it paused for a shortage */
	uint64_t refused;      /* connections the owner refused (fb_listener_refused) */
	int last_errno;        /* of the last failed accept, 0 if none */
};

/* Bind and listen on host:port. key names the setting in errors
 * ("AgentListen"); what names the listener in logs ("agent listener").
 * Returns 0 or a negative errno / FB_ECONFIG, with the reason logged. */
int fb_listener_open(struct event_base *base, const char *key, const char *what, const char *host,
		     int port, fb_listener_accept_fn cb, void *arg, struct fb_listener **out);
void fb_listener_free(struct fb_listener *l);

/* Stop (hold=1) or resume (hold=0) accepting on the owner's behalf. */
void fb_listener_hold(struct fb_listener *l, int hold);

/* The owner closed a new connection over one of its limits: count it and log
 * at most one line a second naming the peer, why, and how many were refused. */
void fb_listener_refused(struct fb_listener *l, const char *peer, const char *why);

void fb_listener_get_stats(const struct fb_listener *l, struct fb_listener_stats *st);

/* The soft RLIMIT_NOFILE, raised towards `want` (up to the hard limit) the way
 * Redis does at start; returns the soft limit in force afterwards. */
uint64_t fb_listener_fd_limit(uint64_t want);

#endif
