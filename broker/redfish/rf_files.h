/* rf_files.h - the data files the service serves, embedded at build time
 * (gen_files.py from proto/redfish/): "registries/<Prefix>.<x.y.z>.json"
 * and "json-schema/<Type>.json". Read-only. */
#ifndef FB_RF_FILES_H
#define FB_RF_FILES_H

#include <stddef.h>

struct fb_rf_file {
	const char *name;
	const unsigned char *data;
	size_t len;
};

/* Ended by a NULL name. */
extern const struct fb_rf_file fb_rf_files[];

#endif
