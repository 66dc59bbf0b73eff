/* rf_uuid.c - the service's UUID, stable for one broker instance: made
 * once from /dev/urandom (version 4) and kept in the state directory, so a
 * restart (and the OFMF core's view of us) keeps it. */
#include "rf_service.h"

#include "fb_err.h"
#include "fb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int valid_uuid(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == '-' ? s[i] != '-' : !strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return s[sizeof(shape) - 1] == '\0' || s[sizeof(shape) - 1] == '\n';
}

static int make_uuid(char out[37])
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, b, sizeof(b));
	close(fd);
	if (n != (ssize_t)sizeof(b))
		return -EIO;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
	return 0;
}

int fb_rf_uuid_load(const char *dir, char out[37])
{
	char path[4200], buf[64] = "";
	snprintf(path, sizeof(path), "%s/" FB_RF_UUID_FILE, dir);
	FILE *f = fopen(path, "re");
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (valid_uuid(buf)) {
			memcpy(out, buf, 36);
			out[36] = '\0';
			return 0;
		}
	}
	/* The journal would make it later, with the same mode; the service
	 * starts first. */
	int rc = fb_mkdir_p(dir, 0750);
	rc = rc ? rc : make_uuid(out);
	if (rc)
		return rc;
	char line[40];
	snprintf(line, sizeof(line), "%s\n", out);
	const char *step = NULL;
	return fb_file_replace(path, line, strlen(line), 0644, &step);
}
