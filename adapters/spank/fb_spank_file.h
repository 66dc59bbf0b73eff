/* fb_spank_file.h - the job's map file: written whole or not at all.
 *
 * slurmstepd runs this as root in a directory that may be world-writable
 * (mapdir=/tmp), so the file is created under a fresh random name with
 * O_EXCL (no following a user's planted symlink), given to the job's user,
 * and renamed over the final name (rename replaces a symlink, it does not
 * follow it). A reader sees the old file or the new one, never half of one.
 */
#ifndef FB_SPANK_FILE_H
#define FB_SPANK_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Write len bytes as dir/name with mode 0640, owned by uid:gid (when running
 * as root; otherwise uid must be the caller's). name must not contain '/'.
 * Returns 0, or a negative errno with err naming the path and the step that
 * failed ("/tmp/x.json: rename: Permission denied"). Nothing is left behind
 * on failure. */
int fb_spank_write_file(const char *dir, const char *name, const void *data, size_t len,
			uid_t uid, gid_t gid, char *err, size_t errsz);

/* Remove dir/name; a missing file is not an error. 0 or a negative errno. */
int fb_spank_remove_file(const char *dir, const char *name, char *err, size_t errsz);

#endif
