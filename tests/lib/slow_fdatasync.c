/* slow_fdatasync.c - an LD_PRELOAD wrapper around the real fdatasync(2) for
 * test_journal_sync: it sleeps FB_SLOW_SYNC_MS before the sync (a slow disk,
 * so that a sync is reliably in flight while the test acts) and, after a
 * successful one, appends "<path> <size>" to FB_SYNC_LOG: the bytes of that
 * file that are durable from then on. It writes the line before fdatasync
 * returns, so before the broker can act on the sync (send an ack). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int fdatasync(int fd);

int fdatasync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	const char *ms = getenv("FB_SLOW_SYNC_MS");
	if (ms)
		usleep((useconds_t)atoi(ms) * 1000u);
	int r = real(fd);
	const char *log = getenv("FB_SYNC_LOG");
	if (r != 0 || !log)
		return r;
	char link[64], path[4096];
	struct stat sb;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || fstat(fd, &sb) != 0)
		return r;
	path[n] = '\0';
	int lf = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (lf >= 0) {
		dprintf(lf, "%s %lld\n", path, (long long)sb.st_size);
		close(lf);
	}
	return r;
}
