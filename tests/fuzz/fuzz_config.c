/* fuzz_config.c - libFuzzer target for fabricbusd's configuration file
 * (broker/config.c through proto/util/fb_conf.c): the bytes as a file,
 * loaded over the defaults, then checked and printed. A refusal must name
 * what is wrong. The file lives on tmpfs (/dev/shm) and /dev/null stays
 * open: a disk write and two opens per input made it ~10x slower. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char g_path[64];
static FILE *g_null;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g_path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(g_path, sizeof(g_path), "%s/fuzz_config.%d.conf", dir, (int)getpid());
		g_null = fopen("/dev/null", "w");
	}
	FILE *f = fopen(g_path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	static struct fb_config c; /* large: not on the stack */
	fb_config_defaults(&c);
	char err[512];
	err[0] = '\0';
	int rc = fb_config_load_file(&c, g_path, err, sizeof(err));
	if (rc != 0 && (!err[0] || !memchr(err, '\0', sizeof(err))))
		__builtin_trap();
	if (rc == 0 && fb_config_check(&c, err, sizeof(err)) == 0 && g_null)
		fb_config_print(&c, g_null);
	return 0;
}
