/* fb_secret_file.c - owner-only files for secrets (see fb_secret_file.h). */
#include "fb_secret_file.h"

#include "fb_err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_stat(const struct stat *st, const char *path, const char *what, char *err,
		      size_t errsz)
{
	if (!S_ISREG(st->st_mode))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: not a regular file", path);
	if (st->st_mode & (S_IRWXG | S_IRWXO))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: mode %04o lets group or others read or "
				  "write %s; run chmod 600 %s", path,
				  (unsigned)(st->st_mode & 07777), what, path);
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: owned by uid %u, not by this "
				  "program's user (uid %u) or root; chown it", path,
				  (unsigned)st->st_uid, (unsigned)geteuid());
	return 0;
}

int fb_secret_file_check(const char *path, const char *what, char *err, size_t errsz)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return fb_err_set(err, errsz, -errno, "%s: %s", path, strerror(errno));
	return check_stat(&st, path, what, err, errsz);
}

static int read_fd(int fd, const char *path, size_t max, char **data, size_t *len, char *err,
		   size_t errsz)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf)
			return fb_err_set(err, errsz, -ENOMEM, "%s: out of memory", path);
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return fb_err_set(err, errsz, -e, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			return fb_err_set(err, errsz, FB_ETOOBIG, "%s: larger than %zu bytes", path, max);
		}
		if (n == cap) {
			char *p = realloc(buf, 2 * cap + 1);
			if (!p)
				free(buf);
			buf = p;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int fb_secret_file_read(const char *path, const char *what, size_t max, char **data,
			size_t *len, char *err, size_t errsz)
{
	struct stat st;
	*data = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fb_err_set(err, errsz, -errno, "%s: %s", path, strerror(errno));
	int rc = fstat(fd, &st) != 0 ? fb_err_set(err, errsz, -errno, "%s: %s", path, strerror(errno))
				     : check_stat(&st, path, what, err, errsz);
	if (!rc)
		rc = read_fd(fd, path, max, data, len, err, errsz);
	close(fd);
	return rc;
}
