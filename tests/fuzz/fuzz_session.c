/* fuzz_session.c - libFuzzer target for the client session state machine
 * (proto/client/fb_session.c), the agent side of the agent protocol that
 * every agent and `fabricbus publish` run: the input is everything "the
 * broker" sends on one connection (HELLO_ACK, ACKs, heartbeats, ERROR,
 * anything), written by this process into a real loopback TCP connection
 * that the session made, after it submitted a few events. The session must
 * neither crash, leak nor report an ack beyond what it sent. */
#include "fb_event_json.h"
#include "fb_log.h"
#include "fb_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define EVENTS 3

static int g_listen = -1, g_port;
static struct fb_event g_ev;

static void setup(void)
{
	fb_log_set_level(-1); /* quiet: a malformed frame is logged each time */
	g_listen = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (g_listen < 0 || bind(g_listen, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(g_listen, 16) < 0 || getsockname(g_listen, (struct sockaddr *)&a, &al) < 0)
		abort();
	g_port = ntohs(a.sin_port);
	json_error_t je;
	json_t *j = json_loads("{\"kind\":\"link_down\",\"link_class\":\"host\",\"switch\":\"leaf01\","
			       "\"port\":7,\"node\":\"node003\"}", 0, &je);
	char err[128];
	if (!j || fb_event_from_json(j, &g_ev, err, sizeof(err)) != 0)
		abort();
	json_decref(j);
}

static uint64_t g_max_ack;

static void on_ack(void *arg, uint64_t acked)
{
	(void)arg;
	if (acked > g_max_ack)
		g_max_ack = acked;
}

static void on_err(void *arg, int code, const char *text)
{
	(void)arg;
	(void)code;
	if (!text)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_listen < 0)
		setup();
	struct event_base *base = event_base_new();
	struct fb_session_opts o = { .host = "127.0.0.1", .port = g_port, .agent_id = "fuzz@leaf01",
				     .max_unacked = 16, .batch_events = 2, .heartbeat_ms = 1000 };
	struct fb_session *s = NULL;
	if (!base || fb_session_new(base, &o, &s) != 0)
		abort();
	g_max_ack = 0;
	fb_session_set_callbacks(s, on_ack, on_err, NULL);
	for (int i = 0; i < EVENTS; i++)
		if (fb_session_submit(s, &g_ev) != 0)
			abort();
	fb_session_start(s);
	int fd = -1;
	for (int i = 0; i < 2000 && fd < 0; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		fd = accept4(g_listen, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			abort();
	}
	if (fd < 0)
		abort(); /* the session never connected */
	/* Blocking write of the whole input; the session reads as we go. */
	size_t off = 0;
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	for (int i = 0; i < 100000 && off < size; i++) {
		ssize_t n = write(fd, data + off, size - off);
		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno != EAGAIN)
			break; /* the session hung up (a malformed frame) */
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 20; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	struct fb_session_stats st;
	fb_session_get_stats(s, &st);
	/* Acks only ever cover what the session numbered and sent. */
	if (st.acked > st.submitted)
		__builtin_trap();
	close(fd);
	fb_session_free(s);
	event_base_free(base);
	return 0;
}
