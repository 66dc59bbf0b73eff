/* fb_spank_file.c - write the map file atomically, safe in a shared /tmp. */
#include "fb_err.h"
#include "fb_spank_file.h"

#include "fb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MODE 0640

static int join(char *out, size_t outsz, const char *dir, const char *prefix, const char *name,
		const char *suffix)
{
	const char *sep = (dir[0] && dir[strlen(dir) - 1] == '/') ? "" : "/";
	int n = snprintf(out, outsz, "%s%s%s%s%s", dir, sep, prefix, name, suffix);
	return (n < 0 || (size_t)n >= outsz) ? -ENAMETOOLONG : 0;
}

/* Give the file to the job's user. As root: chown. Otherwise the file is
 * already the caller's, which must then be the user. */
static int give_to(int fd, uid_t uid, gid_t gid)
{
	if (geteuid() == 0)
		return fchown(fd, uid, gid) < 0 ? -errno : 0;
	return geteuid() == uid ? 0 : -EPERM;
}

int fb_spank_write_file(const char *dir, const char *name, const void *data, size_t len,
			uid_t uid, gid_t gid, char *err, size_t errsz)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	const char *step;
	int fd = -1, rc;
	if (strchr(name, '/') || !name[0])
		return fb_err_set(err, errsz, -EINVAL, "%s: bad file name '%s'", dir, name);
	if ((rc = join(path, sizeof(path), dir, "", name, "")) < 0 ||
	    (rc = join(tmp, sizeof(tmp), dir, ".", name, ".XXXXXX")) < 0) {
		return fb_err_set(err, errsz, rc, "%s/%s: path too long", dir, name);
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return fb_err_set(err, errsz, rc, "%s: create %s: %s", path, tmp, strerror(-rc));
	}
	if ((rc = fb_write_all(fd, data, len)) < 0) {
		step = "write";
		goto fail;
	}
	if ((rc = give_to(fd, uid, gid)) < 0) {
		step = "chown";
		goto fail;
	}
	if (fchmod(fd, FILE_MODE) < 0) {
		rc = -errno;
		step = "chmod";
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = -errno;
		step = "close";
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		rc = -errno;
		step = "rename";
		goto fail;
	}
	return 0;
fail:
	fb_err_set(err, errsz, rc, "%s: %s: %s", path, step, strerror(-rc));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc;
}

int fb_spank_remove_file(const char *dir, const char *name, char *err, size_t errsz)
{
	char path[PATH_MAX];
	int rc;
	if (strchr(name, '/') || !name[0])
		return fb_err_set(err, errsz, -EINVAL, "%s: bad file name '%s'", dir, name);
	if ((rc = join(path, sizeof(path), dir, "", name, "")) < 0)
		return fb_err_set(err, errsz, rc, "%s/%s: path too long", dir, name);
	if (unlink(path) < 0 && errno != ENOENT) {
		rc = -errno;
		return fb_err_set(err, errsz, rc, "%s: unlink: %s", path, strerror(-rc));
	}
	return 0;
}
