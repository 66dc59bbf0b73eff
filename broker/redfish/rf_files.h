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

/* The file of that name ("registries/Base.1.22.1.json"), or NULL. */
const struct fb_rf_file *fb_rf_file_find(const char *name);
/* 1 if /redfish/v1/JsonSchemas/<type>.json is served (the Link header may
 * name it), else 0. */
int fb_rf_schema_served(const char *type);

#endif
