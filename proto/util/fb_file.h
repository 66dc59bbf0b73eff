/* fb_file.h - writing files completely, and replacing them crash-safely.
 *
 * State that must survive a crash (the Kafka cursor, the Slurm adapter's
 * state file) is replaced, never rewritten in place: the new content goes to
 * "<path>.tmp", is fsync'ed, renamed over path, and the directory is fsync'ed
 * so that the rename itself is durable. A crash at any point leaves the old
 * file or the new one, whole; a reader never sees a mix.
 */
#ifndef FB_FILE_H
#define FB_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Write all n bytes to fd, going on after EINTR and short writes.
 * 0, -errno, or -EIO when write() returns 0. */
int fb_write_all(int fd, const void *data, size_t n);

/* Replace path with data as above; the file gets mode (before umask).
 * 0 or -errno; then *step (when step is not NULL) names what failed:
 * "create", "write", "fsync", "close", "rename", "fsync the directory of",
 * and "<path>.tmp" is gone (unless only the directory fsync failed, after
 * the rename: the new content is then in place but may not be durable). */
int fb_file_replace(const char *path, const void *data, size_t n, mode_t mode, const char **step);

/* mkdir -p: dir and every missing parent, each with mode (before umask); an
 * existing one is fine. A configured directory may be several levels deep
 * on a fresh host (e.g. /var/lib/fabricbus/journal). 0 or -errno. */
int fb_mkdir_p(const char *dir, mode_t mode);

#endif
