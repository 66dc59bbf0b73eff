/* pmix_steps.c - the step sockets (pmix_steps.h). */
#include "pmix_steps.h"

#include "fb_err.h"
#include "fb_log.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void step_close(struct fbp_step *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
}

/* One line from the step into line (NUL-terminated, no newline), waiting up
 * to FBP_STEP_TIMEOUT_MS. 0, or < 0 with why. */
static int read_line(struct fbp_step *st, char *line, size_t sz, char *err, size_t errsz)
{
	for (;;) {
		char *nl = memchr(st->buf, '\n', st->have);
		if (nl) {
			size_t len = (size_t)(nl - st->buf);
			snprintf(line, sz, "%.*s", (int)len, st->buf);
			st->have -= len + 1;
			memmove(st->buf, nl + 1, st->have);
			return 0;
		}
		if (st->have == sizeof(st->buf))
			return fb_err_set(err, errsz, -EPROTO,
					  "%s: line over %zu bytes", st->path, sizeof(st->buf));
		struct pollfd p = {st->fd, POLLIN, 0};
		int pr = poll(&p, 1, FBP_STEP_TIMEOUT_MS);
		if (pr == 0)
			return fb_err_set(err, errsz, -ETIMEDOUT,
					  "%s: no answer within %d ms", st->path, FBP_STEP_TIMEOUT_MS);
		ssize_t r = pr < 0 ? -1 : recv(st->fd, st->buf + st->have, sizeof(st->buf) - st->have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fb_err_set(err, errsz, r == 0 ? -EPIPE : -errno,
					  "%s: %s", st->path, r == 0 ? "closed (step ended)" : strerror(errno));
		st->have += (size_t)r;
	}
}

static int write_line(struct fbp_step *st, const char *s, char *err, size_t errsz)
{
	size_t len = strlen(s);
	char *line = malloc(len + 1);
	if (!line)
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	memcpy(line, s, len);
	line[len] = '\n';
	size_t off = 0;
	int rc = 0;
	while (off < len + 1) {
		ssize_t w = send(st->fd, line + off, len + 1 - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = fb_err_set(err, errsz, -errno, "%s: %s", st->path, strerror(errno));
			break;
		}
		off += (size_t)w;
	}
	free(line);
	return rc;
}

static struct fbp_step *open_step(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return NULL;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/* ECONNREFUSED: a socket left by a slurmstepd that is gone */
		fb_log_debug("steps: %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	struct fbp_step *st = calloc(1, sizeof(*st));
	if (!st) {
		close(fd);
		return NULL;
	}
	st->fd = fd;
	snprintf(st->path, sizeof(st->path), "%s", path);
	char line[sizeof(st->buf) + 1], err[512];
	if (read_line(st, line, sizeof(line), err, sizeof(err)) < 0 ||
	    fbp_hello_decode(line, strlen(line), &st->hello, err, sizeof(err)) < 0) {
		fb_log_warn("steps: %s: no usable hello: %s", path, err);
		step_close(st);
		free(st);
		return NULL;
	}
	st->position = st->told = st->hello.position;
	return st;
}

static int known(const struct fbp_steps *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i]->path, path) == 0)
			return 1;
	return 0;
}

int fbp_steps_scan(struct fbp_steps *s, int (*on_new)(void *arg, struct fbp_step *st), void *arg)
{
	DIR *d = opendir(s->dir);
	if (!d)
		return 0; /* no step has run here yet */
	int added = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[512];
		if (len < 6 || strcmp(e->d_name + len - 5, ".sock") ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name) >= sizeof(path) ||
		    known(s, path))
			continue;
		struct fbp_step *st = open_step(path);
		if (!st)
			continue;
		struct fbp_step **grown = realloc(s->v, (s->n + 1) * sizeof(*grown));
		if (grown)
			s->v = grown;
		if (!grown || on_new(arg, st) < 0) {
			step_close(st);
			fbp_view_free(&st->view);
			free(st);
			continue;
		}
		s->v[s->n++] = st;
		added++;
	}
	closedir(d);
	return added;
}

int fbp_step_send(struct fbp_step *st, const struct fbp_note *n, char *err, size_t errsz)
{
	char *line = NULL;
	char mark[64];
	if (n) {
		struct fbp_note copy = *n;
		copy.position = st->position;
		if (fbp_note_encode(&copy, &line) < 0)
			return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	} else {
		snprintf(mark, sizeof(mark), "{\"Position\":%" PRIu64 "}", st->position);
	}
	int rc = write_line(st, line ? line : mark, err, errsz);
	free(line);
	char ack[1024];
	if (rc == 0)
		rc = read_line(st, ack, sizeof(ack), err, errsz);
	if (rc < 0) {
		step_close(st);
		return rc;
	}
	json_t *a = json_loads(ack, 0, NULL);
	json_t *status = json_object_get(a, "Status");
	int st_rc = json_is_integer(status) ? (int)json_integer_value(status) : -EPROTO;
	if (st_rc != 0)
		fb_err_set(err, errsz, st_rc, "job %s.%s: %s", st->hello.job_id, st->hello.step_id,
			   json_is_string(json_object_get(a, "Error")) ?
			   json_string_value(json_object_get(a, "Error")) : "bad ack");
	json_decref(a);
	st->told = st->position;
	if (n && st_rc == 0)
		st->delivered++;
	return st_rc == 0 ? 0 : -EIO;
}

void fbp_steps_reap(struct fbp_steps *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct fbp_step *st = s->v[i];
		if (st->fd >= 0) {
			s->v[k++] = st;
			continue;
		}
		fb_log_info("steps: job %s.%s left (%" PRIu64 " events delivered)", st->hello.job_id,
			    st->hello.step_id, st->delivered);
		fbp_view_free(&st->view);
		free(st);
	}
	s->n = k;
}

void fbp_steps_free(struct fbp_steps *s)
{
	for (size_t i = 0; i < s->n; i++) {
		step_close(s->v[i]);
		fbp_view_free(&s->v[i]->view);
		free(s->v[i]);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
