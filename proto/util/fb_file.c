/* fb_file.c - complete writes and crash-safe replacement (see fb_file.h). */
#include "fb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fb_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	int fd = open(dirname(buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) != 0 ? -errno : 0;
	close(fd);
	return rc;
}

int fb_file_replace(const char *path, const void *data, size_t n, mode_t mode, const char **step)
{
	const char *what = "create";
	char tmp[PATH_MAX];
	int rc;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = fb_write_all(fd, data, n)))
		what = "write";
	else if (fsync(fd) != 0)
		rc = -errno, what = "fsync";
	if (close(fd) != 0 && !rc)
		rc = -errno, what = "close";
	if (!rc && rename(tmp, path) != 0)
		rc = -errno, what = "rename";
	if (rc) {
		unlink(tmp);
		goto out;
	}
	if ((rc = fsync_dir_of(path)))
		what = "fsync the directory of";
out:
	if (step)
		*step = rc ? what : NULL;
	return rc;
}

int fb_mkdir_p(const char *dir, mode_t mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
