/* fb_test_broker.h - run the built fabricbusd and `fabricbus publish` from a
 * C unit test, as tests/lib/fbtest.py does for the Python ones: each broker
 * has its own work directory (journal/, fabricbusd.log) and free ports, and
 * every child is killed by pid at exit, even when a test fails.
 *
 * The binaries are found under $FB_BUILD (the meson build root, set by
 * tests/meson.build). libc and proto/util only: test_http links nothing but
 * fb_http and proto/util. */
#ifndef FB_TEST_BROKER_H
#define FB_TEST_BROKER_H

#include "fb_time.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fbt_broker {
	pid_t pid;
	uint16_t agent_port, http_port;
	char dir[128];                 /* work directory */
	char agent_addr[32], http_addr[32];
	const char *extra[8];          /* more "-o Key=Value" options, NULL-terminated */
};

static pid_t fbt_pids[32];

static inline void fbt_kill_all(void)
{
	for (size_t i = 0; i < sizeof(fbt_pids) / sizeof(fbt_pids[0]); i++)
		if (fbt_pids[i] > 0) {
			kill(fbt_pids[i], SIGKILL);
			waitpid(fbt_pids[i], NULL, 0);
			fbt_pids[i] = 0;
		}
}

static inline void fbt_track(pid_t pid, int add)
{
	static int registered;
	if (!registered) {
		atexit(fbt_kill_all);
		registered = 1;
	}
	for (size_t i = 0; i < sizeof(fbt_pids) / sizeof(fbt_pids[0]); i++)
		if (fbt_pids[i] == (add ? 0 : pid)) {
			fbt_pids[i] = add ? pid : 0;
			return;
		}
}

static inline void fbt_path(char *out, size_t n, const char *rel)
{
	const char *b = getenv("FB_BUILD");
	snprintf(out, n, "%s/%s", b && *b ? b : ".", rel);
}

/* A port nothing listens on right now. */
static inline uint16_t fbt_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint16_t port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &l) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static inline int fbt_port_open(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Work directory and ports; extra options may be set afterwards. */
static inline int fbt_broker_init(struct fbt_broker *b)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/fb-unit-XXXXXX");
	if (!mkdtemp(b->dir))
		return -1;
	b->agent_port = fbt_free_port();
	b->http_port = fbt_free_port();
	snprintf(b->agent_addr, sizeof(b->agent_addr), "127.0.0.1:%u", b->agent_port);
	snprintf(b->http_addr, sizeof(b->http_addr), "127.0.0.1:%u", b->http_port);
	return b->agent_port && b->http_port ? 0 : -1;
}

/* Start (or restart, same ports and journal) and wait for both ports. */
static inline int fbt_broker_start(struct fbt_broker *b)
{
	char bin[512], log[256], o[4][200];
	const char *argv[32];
	int n = 0;
	fbt_path(bin, sizeof(bin), "broker/fabricbusd");
	snprintf(log, sizeof(log), "%s/fabricbusd.log", b->dir);
	snprintf(o[0], sizeof(o[0]), "AgentListen=%s", b->agent_addr);
	snprintf(o[1], sizeof(o[1]), "HttpListen=%s", b->http_addr);
	snprintf(o[2], sizeof(o[2]), "JournalDir=%s/journal", b->dir);
	snprintf(o[3], sizeof(o[3]), "HeartbeatInterval=1s");
	argv[n++] = bin;
	for (int i = 0; i < 4; i++) {
		argv[n++] = "-o";
		argv[n++] = o[i];
	}
	for (int i = 0; i < 8 && b->extra[i]; i++) {
		argv[n++] = "-o";
		argv[n++] = b->extra[i];
	}
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (chdir(b->dir) == 0)
			execv(bin, (char *const *)argv);
		_exit(127);
	}
	b->pid = pid;
	fbt_track(pid, 1);
	for (int64_t end = fb_time_ms() + 30000; fb_time_ms() < end; usleep(20000)) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "  fabricbusd (%s) exited at start; see %s\n", bin, log);
			fbt_track(pid, 0);
			b->pid = 0;
			return -1;
		}
		if (fbt_port_open(b->agent_port) && fbt_port_open(b->http_port))
			return 0;
	}
	fprintf(stderr, "  fabricbusd did not open its ports within 30 s; see %s\n", log);
	return -1;
}

static inline void fbt_broker_kill9(struct fbt_broker *b)
{
	if (b->pid <= 0)
		return;
	kill(b->pid, SIGKILL);
	waitpid(b->pid, NULL, 0);
	fbt_track(b->pid, 0);
	b->pid = 0;
}

/* SIGTERM and wait: the exit status (sanitizer reports make it non-zero),
 * or -1 when it had to be killed. */
static inline int fbt_broker_stop(struct fbt_broker *b)
{
	int st = 0;
	if (b->pid <= 0)
		return 0;
	kill(b->pid, SIGTERM);
	for (int64_t end = fb_time_ms() + 30000; fb_time_ms() < end; usleep(10000))
		if (waitpid(b->pid, &st, WNOHANG) == b->pid) {
			fbt_track(b->pid, 0);
			b->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
	fbt_broker_kill9(b);
	return -1;
}

static inline int fbt_rm(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Stop if running and remove the work directory. */
static inline void fbt_broker_cleanup(struct fbt_broker *b)
{
	fbt_broker_kill9(b);
	if (b->dir[0])
		nftw(b->dir, fbt_rm, 16, FTW_DEPTH | FTW_PHYS);
	b->dir[0] = '\0';
}

/* `fabricbus publish --count count [--template tmpl]` as agent_id (tmpl NULL:
 * the built-in test event); its exit status. The command returns once the
 * broker has acked (journaled) every event. */
static inline int fbt_publish_tmpl(const struct fbt_broker *b, const char *agent_id, unsigned count,
			    const char *tmpl)
{
	char bin[512], n[16];
	int st = 0;
	fbt_path(bin, sizeof(bin), "broker/cli/fabricbus");
	snprintf(n, sizeof(n), "%u", count);
	const char *argv[] = { bin, "publish", "--broker", b->agent_addr, "--agent-id", agent_id,
			       "--quiet", "--timeout", "60", "--count", n,
			       tmpl ? "--template" : NULL, tmpl, NULL };
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	fbt_track(pid, 1);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	fbt_track(pid, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int fbt_publish(const struct fbt_broker *b, const char *agent_id, unsigned count)
{
	return fbt_publish_tmpl(b, agent_id, count, NULL);
}

#endif
