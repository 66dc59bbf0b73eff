/* listener.c - see listener.h. Why pause rather than log and go on: libevent
 * keeps a listener enabled after a failed accept, and a listening socket with
 * a connection in its backlog stays readable, so at EMFILE the loop woke,
 * failed and logged ~340,000 times a second while the waiting clients were
 * neither served nor refused. */
#include "listener.h"

#include "fb_err.h"
#include "fb_event.h"
#include "fb_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 1000
#define LOG_EVERY_NS 1000000000ull

/* One log line a second at most; what was not logged is counted into the next. */
struct ratelog {
	uint64_t last_ns;
	uint64_t unlogged;
};

struct fb_listener {
	struct evconnlistener *l;
	struct event *retry_ev;
	fb_listener_accept_fn cb;
	void *arg;
	char what[32];
	unsigned retry_ms;
	int short_paused; /* paused for a shortage, timer armed */
	int held;         /* paused by the owner */
	struct ratelog err_log, refuse_log;
	struct fb_listener_stats st;
};

/* 1 if a line may be written now; *n is then how many it stands for. */
static int ratelog_take(struct ratelog *r, uint64_t *n)
{
	uint64_t now = fb_now_ns();
	r->unlogged++;
	if (r->last_ns && now - r->last_ns < LOG_EVERY_NS)
		return 0;
	*n = r->unlogged;
	r->unlogged = 0;
	r->last_ns = now;
	return 1;
}

static void apply_enable(struct fb_listener *fl)
{
	if (fl->short_paused || fl->held)
		evconnlistener_disable(fl->l);
	else
		evconnlistener_enable(fl->l);
	fl->st.paused = fl->short_paused || fl->held;
	fl->st.held = fl->held;
}

static void format_peer(const struct sockaddr *sa, char *out, size_t outsz)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(out, outsz, "%s:%d", ip, ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(out, outsz, "[%s]:%d", ip, ntohs(s6->sin6_port));
	} else {
		snprintf(out, outsz, "unknown");
	}
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	(void)l;
	(void)salen;
	struct fb_listener *fl = arg;
	char peer[64];
	format_peer(sa, peer, sizeof(peer));
	/* A successful accept ends a shortage's back-off. */
	fl->retry_ms = RETRY_MIN_MS;
	fl->cb(fl->arg, fd, peer);
}

static int is_shortage(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_listener *fl = arg;
	fl->short_paused = 0;
	apply_enable(fl); /* if the shortage lasts, the next accept fails and pauses again */
}

static void error_cb(struct evconnlistener *l, void *arg)
{
	(void)l;
	struct fb_listener *fl = arg;
	int err = EVUTIL_SOCKET_ERROR();
	fl->st.accept_errors++;
	fl->st.last_errno = err;
	int shortage = is_shortage(err);
	uint64_t n;
	if (ratelog_take(&fl->err_log, &n))
		fb_log_err("%s: accept failed: %s (%llu failure%s in the last second)%s", fl->what,
			   strerror(err), (unsigned long long)n, n == 1 ? "" : "s",
			   shortage ? "; pausing accepts until descriptors free up (waiting clients stay "
				      "queued; raise LimitNOFILE / ulimit -n if this lasts)" : "");
	if (!shortage)
		return;
	fl->st.pauses++;
	fl->short_paused = 1;
	apply_enable(fl);
	struct timeval tv = { 0, (suseconds_t)fl->retry_ms * 1000 };
	event_add(fl->retry_ev, &tv);
	fl->retry_ms = fl->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : fl->retry_ms * 2;
}

int fb_listener_open(struct event_base *base, const char *key, const char *what, const char *host,
		     int port, fb_listener_accept_fn cb, void *arg, struct fb_listener **out)
{
	*out = NULL;
	if (host && (!*host || strcmp(host, "*") == 0))
		host = NULL; /* every address */
	struct evutil_addrinfo hints = { 0 }, *ai = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	char portstr[8];
	snprintf(portstr, sizeof(portstr), "%d", port);
	int rc = evutil_getaddrinfo(host, portstr, &hints, &ai);
	if (rc) {
		fb_log_err("%s=%s:%d: cannot resolve: %s", key, host ? host : "*", port,
			   evutil_gai_strerror(rc));
		return FB_ECONFIG;
	}
	struct fb_listener *fl = calloc(1, sizeof(*fl));
	if (!fl) {
		evutil_freeaddrinfo(ai);
		return -ENOMEM;
	}
	fl->cb = cb;
	fl->arg = arg;
	fl->retry_ms = RETRY_MIN_MS;
	snprintf(fl->what, sizeof(fl->what), "%s", what);
	fl->retry_ev = evtimer_new(base, retry_cb, fl);
	fl->l = evconnlistener_new_bind(base, accept_cb, fl,
					LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
					1024, ai->ai_addr, (int)ai->ai_addrlen);
	int err = errno;
	evutil_freeaddrinfo(ai);
	if (!fl->l || !fl->retry_ev) {
		if (!fl->retry_ev)
			err = ENOMEM;
		char hint[96] = "";
		if (err == EADDRINUSE)
			snprintf(hint, sizeof(hint), " (another fabricbusd? choose another port with %s=)", key);
		fb_log_err("%s=%s:%d: cannot listen: %s%s", key, host ? host : "*", port, strerror(err), hint);
		fb_listener_free(fl);
		return -err;
	}
	evconnlistener_set_error_cb(fl->l, error_cb);
	*out = fl;
	return 0;
}

void fb_listener_free(struct fb_listener *l)
{
	if (!l)
		return;
	if (l->l)
		evconnlistener_free(l->l);
	if (l->retry_ev)
		event_free(l->retry_ev);
	free(l);
}

void fb_listener_hold(struct fb_listener *l, int hold)
{
	if (l->held == !!hold)
		return;
	l->held = !!hold;
	apply_enable(l);
}

void fb_listener_refused(struct fb_listener *l, const char *peer, const char *why)
{
	l->st.refused++;
	uint64_t n;
	if (ratelog_take(&l->refuse_log, &n))
		fb_log_warn("%s: refused %s: %s (%llu refused in the last second, %llu since start)",
			    l->what, peer, why, (unsigned long long)n,
			    (unsigned long long)l->st.refused);
}

void fb_listener_get_stats(const struct fb_listener *l, struct fb_listener_stats *st)
{
	*st = l->st;
}

uint64_t fb_listener_fd_limit(uint64_t want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		struct rlimit up = rl;
		up.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want) ? want : rl.rlim_max;
		if (up.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
}
