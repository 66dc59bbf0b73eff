/* test_journal_files.h - file helpers for test_journal.c: segment paths,
 * sizes, raw reads/writes for damaging segments, listing, cleanup. */
#ifndef TEST_JOURNAL_FILES_H
#define TEST_JOURNAL_FILES_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void seg_file(char *out, size_t n, const char *dir, uint64_t first)
{
	snprintf(out, n, "%s/%020llu.fbj", dir, (unsigned long long)first);
}

static long long file_size(const char *dir, uint64_t first)
{
	char p[512];
	struct stat sb;
	seg_file(p, sizeof(p), dir, first);
	return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Sorted first ids of the segment files on disk; returns how many. */
static size_t list_segs(const char *dir, uint64_t *ids, size_t max)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL)
		if (n < max && strlen(de->d_name) == 24 && strstr(de->d_name, ".fbj"))
			ids[n++] = strtoull(de->d_name, NULL, 10);
	if (d)
		closedir(d);
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && ids[k - 1] > ids[k]; k--) {
			uint64_t t = ids[k];
			ids[k] = ids[k - 1];
			ids[k - 1] = t;
		}
	return n;
}

static int truncate_seg(const char *dir, uint64_t first, off_t size)
{
	char p[512];
	seg_file(p, sizeof(p), dir, first);
	return truncate(p, size);
}

static int write_at(const char *dir, uint64_t first, off_t off, const void *b, size_t n, int append)
{
	char p[512];
	seg_file(p, sizeof(p), dir, first);
	int fd = open(p, O_WRONLY | O_CREAT | (append ? O_APPEND : 0), 0640);
	if (fd < 0)
		return -1;
	ssize_t w = append ? write(fd, b, n) : pwrite(fd, b, n, off);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static int read_at(const char *dir, uint64_t first, off_t off, void *b, size_t n)
{
	char p[512];
	seg_file(p, sizeof(p), dir, first);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t got = pread(fd, b, n, off);
	close(fd);
	return got == (ssize_t)n ? 0 : -1;
}

/* Removes dir with its files and subdirectories (tests nest at most one). */
static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[512];
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (unlink(p) < 0 && (errno == EISDIR || errno == EPERM))
			rm_dir(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int set_mtime(const char *dir, uint64_t first, time_t t)
{
	char p[512];
	seg_file(p, sizeof(p), dir, first);
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };
	return utimensat(AT_FDCWD, p, ts, 0);
}

#endif
