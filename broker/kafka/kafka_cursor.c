/* kafka_cursor.c - the durable Kafka cursor (see kafka_cursor.h). */
#include "kafka_cursor.h"

#include "fb_crc32c.h"
#include "fb_err.h"
#include "fb_file.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define CURSOR_NAME "kafka.cursor"
#define CURSOR_MAGIC "fabricbus-kafka-cursor 1"

static int body(char *out, size_t outsz, uint64_t epoch, uint64_t cursor)
{
	return snprintf(out, outsz, CURSOR_MAGIC " %016" PRIx64 " %" PRIu64, epoch, cursor);
}

int fb_kafka_cursor_write(const char *dir, uint64_t epoch, uint64_t cursor)
{
	char dst[PATH_MAX], line[128];
	snprintf(dst, sizeof(dst), "%s/" CURSOR_NAME, dir);
	int n = body(line, sizeof(line), epoch, cursor);
	n += snprintf(line + n, sizeof(line) - (size_t)n, " %08" PRIx32 "\n",
		      fb_crc32c(0, line, (size_t)n));
	/* kafka.cursor.tmp, fsync, rename, fsync of dir */
	return fb_file_replace(dst, line, (size_t)n, 0640, NULL);
}

int fb_kafka_cursor_read(const char *dir, uint64_t epoch, uint64_t *cursor, const char **why)
{
	char path[PATH_MAX], line[160];
	snprintf(path, sizeof(path), "%s/" CURSOR_NAME, dir);
	*why = NULL;
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(line, 1, sizeof(line) - 1, f);
	int err = ferror(f);
	fclose(f);
	if (err) {
		*why = "read error";
		return FB_ECORRUPT;
	}
	line[n] = '\0';
	uint64_t e, c;
	uint32_t crc;
	int used = 0;
	if (sscanf(line, CURSOR_MAGIC " %16" SCNx64 " %20" SCNu64 " %8" SCNx32 "%n", &e, &c, &crc,
		   &used) != 3 ||
	    strcmp(line + used, "\n") != 0) {
		*why = "not a cursor line";
		return FB_ECORRUPT;
	}
	char expect[128];
	int bn = body(expect, sizeof(expect), e, c);
	if (strncmp(line, expect, (size_t)bn) != 0 || fb_crc32c(0, expect, (size_t)bn) != crc) {
		*why = "checksum mismatch";
		return FB_ECORRUPT;
	}
	if (e != epoch) {
		*why = "written for another journal (epoch differs)";
		return FB_ECORRUPT;
	}
	*cursor = c;
	return 0;
}
