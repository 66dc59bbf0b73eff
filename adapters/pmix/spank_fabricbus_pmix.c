/* spank_fabricbus_pmix.c - fabric events into a Slurm step's PMIx handlers,
 * delivered from inside slurmstepd (docs/pmix.md).
 *
 * Why here: slurmstepd is the step's PMIx server (Slurm's mpi/pmix plugin
 * dlopens libpmix RTLD_GLOBAL and calls PMIx_server_init). A server's own
 * PMIx_Notify_event reaches its clients without any tool connecting, so no
 * process ever attaches to the step and then leaves (which kills it), and the
 * channel lives exactly as long as the step.
 *
 * What: at step start (init_post_opt, remote, root) it listens on
 * <dir>/<node>/<job>.<step>.sock (0600, directories 0700) and starts one
 * thread. fabricbus-pmix connects there (pmix_note.h protocol), gets a
 * hello, and sends notes; the thread turns each into PMIx_Notify_event and
 * acks it. A new connection replaces the old one (the adapter restarted).
 * slurm_spank_exit (after the tasks ended, before Slurm finalizes its PMIx
 * server) stops the thread and removes the socket.
 *
 * plugstack.conf: optional <path>/spank_fabricbus_pmix.so [dir=/run/fabricbus/pmix]
 * Never fails a step: every problem is one line in the slurmd log.
 */
#include "pmix_note.h"
#include "pmix_notify.h"

#include "fb_err.h"
#include "fb_spank_plugin.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pmix.h>
#include <poll.h>
#include <pthread.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Only the plugin's identity and callbacks are visible (fb_spank_plugin.h),
 * so no helper here interposes on slurmstepd's own symbols. */
FB_SPANK_PLUGIN(fabricbus_pmix);
FB_EXPORT int slurm_spank_init(spank_t sp, int ac, char **av);
FB_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char **av);
FB_EXPORT int slurm_spank_exit(spank_t sp, int ac, char **av);

#define DEFAULT_DIR "/run/fabricbus/pmix"
#define NOTIFY_TIMEOUT_MS 2000

/* One per slurmstepd: a step has one plugin instance. */
static struct step_chan {
	int running;
	pthread_t thread;
	int lfd, cfd, stop_pipe[2];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct fbp_hello hello;
	char buf[FBP_LINE_MAX + 1];
	size_t have;
} chan = {.lfd = -1, .cfd = -1, .stop_pipe = {-1, -1}};

static int parse_args(int ac, char **av, char *dir, size_t sz)
{
	snprintf(dir, sz, "%s", DEFAULT_DIR);
	for (int i = 0; i < ac; i++) {
		if (strncmp(av[i], "dir=", 4) == 0 && av[i][4] == '/') {
			snprintf(dir, sz, "%s", av[i] + 4);
		} else {
			slurm_error("fabricbus-pmix: plugstack.conf: unknown argument '%s' (known: dir=/ABSOLUTE/PATH)",
				    av[i]);
			return -1;
		}
	}
	return 0;
}

static int job_getenv(spank_t sp, const char *var, char *buf, size_t sz)
{
	return spank_getenv(sp, var, buf, (int)sz) == ESPANK_SUCCESS ? 0 : -1;
}

/* This node's name: the node at our index in the step's node list
 * (slurmstepd 22.05 has no SLURMD_NODENAME of its own). */
static int local_node(const char *list, uint32_t nodeid, char *out, size_t sz)
{
	hostlist_t hl = slurm_hostlist_create(list);
	if (!hl)
		return -1;
	char *h = NULL;
	for (uint32_t i = 0; i <= nodeid; i++) {
		free(h);
		if (!(h = slurm_hostlist_shift(hl)))
			break;
	}
	slurm_hostlist_destroy(hl);
	if (!h)
		return -1;
	snprintf(out, sz, "%s", h);
	free(h);
	return 0;
}

static int send_line(int fd, const char *s)
{
	size_t len = strlen(s);
	char *line = malloc(len + 1);
	if (!line)
		return -1;
	memcpy(line, s, len);
	line[len] = '\n';
	size_t off = 0;
	while (off <= len) {
		ssize_t w = send(fd, line + off, len + 1 - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			free(line);
			return -1;
		}
		off += (size_t)w;
	}
	free(line);
	return 0;
}

static void ack(uint64_t id, int status, const char *error)
{
	char line[600];
	char safe[400];
	size_t j = 0;
	for (size_t i = 0; error[i] && j + 1 < sizeof(safe); i++) /* no JSON escapes needed */
		safe[j++] = (error[i] == '"' || error[i] == '\\' || (unsigned char)error[i] < 0x20) ? '?' : error[i];
	safe[j] = '\0';
	snprintf(line, sizeof(line), "{\"Ack\":%" PRIu64 ",\"Status\":%d,\"Error\":\"%s\"}", id, status, safe);
	if (send_line(chan.cfd, line) < 0) {
		close(chan.cfd);
		chan.cfd = -1;
	}
}

static void handle_line(const char *line, size_t len)
{
	struct fbp_note n;
	char err[300] = "";
	int rc = fbp_note_decode(line, len, &n, err, sizeof(err));
	if (rc < 0) {
		slurm_error("fabricbus-pmix: job %s.%s: bad line from the adapter: %s", chan.hello.job_id,
			    chan.hello.step_id, err);
		ack(0, rc, err);
		return;
	}
	if (rc == 1) {
		if (!PMIx_Initialized()) {
			rc = fb_err_set(err, sizeof(err), -ENOTCONN,
					"no PMIx server in this step (srun --mpi=pmix)");
		} else {
			rc = fbp_notify(&n, chan.hello.nspace, NOTIFY_TIMEOUT_MS, NULL, err, sizeof(err));
		}
		if (rc < 0)
			slurm_error("fabricbus-pmix: job %s.%s: EventId %" PRIu64 " not delivered: %s",
				    chan.hello.job_id, chan.hello.step_id, n.event_id, err);
	}
	if (n.position > chan.hello.position)
		chan.hello.position = n.position;
	ack(n.event_id, rc < 0 ? rc : 0, err);
}

static void accept_one(void)
{
	int fd = accept4(chan.lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (chan.cfd >= 0) /* the adapter restarted: the newest connection wins */
		close(chan.cfd);
	chan.cfd = fd;
	chan.have = 0;
	chan.hello.pmix = PMIx_Initialized() ? 1 : 0;
	char *h = NULL;
	if (fbp_hello_encode(&chan.hello, &h) < 0 || send_line(fd, h) < 0) {
		close(fd);
		chan.cfd = -1;
	}
	free(h);
}

static void read_some(void)
{
	ssize_t r = recv(chan.cfd, chan.buf + chan.have, sizeof(chan.buf) - 1 - chan.have, 0);
	if (r <= 0) {
		if (r < 0 && errno == EINTR)
			return;
		close(chan.cfd);
		chan.cfd = -1;
		return;
	}
	chan.have += (size_t)r;
	char *start = chan.buf, *nl;
	while (chan.cfd >= 0 && (nl = memchr(start, '\n', chan.have - (size_t)(start - chan.buf)))) {
		handle_line(start, (size_t)(nl - start));
		start = nl + 1;
	}
	chan.have -= (size_t)(start - chan.buf);
	memmove(chan.buf, start, chan.have);
	if (chan.have == sizeof(chan.buf) - 1 && chan.cfd >= 0) { /* a line over the limit */
		close(chan.cfd);
		chan.cfd = -1;
	}
}

static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[3] = {{chan.stop_pipe[0], POLLIN, 0}, {chan.lfd, POLLIN, 0},
				      {chan.cfd, POLLIN, 0}};
		if (poll(p, chan.cfd >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			accept_one();
		if (chan.cfd >= 0 && p[2].revents)
			read_some();
	}
	return NULL;
}

static int listen_at(const char *dir, char *err, size_t errsz)
{
	char sub[sizeof(chan.path)];
	if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, chan.hello.node) >= sizeof(sub) ||
	    (size_t)snprintf(chan.path, sizeof(chan.path), "%s/%s.%s.sock", sub, chan.hello.job_id,
			     chan.hello.step_id) >= sizeof(chan.path))
		return fb_err_set(err, errsz, -1, "socket path under %s too long", dir);
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || (mkdir(sub, 0700) < 0 && errno != EEXIST))
		return fb_err_set(err, errsz, -1, "mkdir %s: %s", sub, strerror(errno));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", chan.path);
	unlink(chan.path); /* a step id is not reused while its job runs: a stale file */
	chan.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (chan.lfd < 0 || bind(chan.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(chan.path, 0600) < 0 || listen(chan.lfd, 4) < 0) {
		fb_err_set(err, errsz, -1, "listen on %s: %s", chan.path, strerror(errno));
		if (chan.lfd >= 0)
			close(chan.lfd);
		chan.lfd = -1;
		return -1;
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	char dir[256];
	return parse_args(ac, av, dir, sizeof(dir));
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	char dir[256], err[512], mpi[32] = "";
	uint32_t job = 0, step = 0, nodeid = 0;
	if (spank_context() != S_CTX_REMOTE || parse_args(ac, av, dir, sizeof(dir)) < 0)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS)
		return 0;
	/* Only steps whose tasks get a PMIx server from Slurm. */
	if (step == SLURM_BATCH_SCRIPT || step == SLURM_EXTERN_CONT || step == SLURM_INTERACTIVE_STEP ||
	    job_getenv(sp, "SLURM_MPI_TYPE", mpi, sizeof(mpi)) < 0 || strncmp(mpi, "pmix", 4))
		return 0;
	struct fbp_hello *h = &chan.hello;
	snprintf(h->job_id, sizeof(h->job_id), "%" PRIu32, job);
	snprintf(h->step_id, sizeof(h->step_id), "%" PRIu32, step);
	snprintf(h->nspace, sizeof(h->nspace), "slurm.pmix.%" PRIu32 ".%" PRIu32, job, step);
	if (job_getenv(sp, "SLURM_STEP_NODELIST", h->step_nodes, sizeof(h->step_nodes)) < 0 ||
	    local_node(h->step_nodes, nodeid, h->node, sizeof(h->node)) < 0) {
		slurm_error("fabricbus-pmix: job %s.%s: cannot tell this node's name; no fabric events for this step",
			    h->job_id, h->step_id);
		return 0;
	}
	if (listen_at(dir, err, sizeof(err)) < 0 || pipe2(chan.stop_pipe, O_CLOEXEC) < 0) {
		slurm_error("fabricbus-pmix: job %s.%s: %s; no fabric events for this step", h->job_id,
			    h->step_id, err);
		return 0;
	}
	if (pthread_create(&chan.thread, NULL, serve, NULL) != 0) {
		slurm_error("fabricbus-pmix: job %s.%s: cannot start a thread; no fabric events for this step",
			    h->job_id, h->step_id);
		return 0;
	}
	chan.running = 1;
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	if (spank_context() != S_CTX_REMOTE || !chan.running)
		return 0;
	/* Before Slurm's mpi/pmix finalizes its server (slurmstepd calls
	 * spank_fini first): no PMIx call after this. */
	if (write(chan.stop_pipe[1], "x", 1) == 1)
		pthread_join(chan.thread, NULL);
	chan.running = 0;
	unlink(chan.path);
	if (chan.cfd >= 0)
		close(chan.cfd);
	close(chan.lfd);
	close(chan.stop_pipe[0]);
	close(chan.stop_pipe[1]);
	return 0;
}
