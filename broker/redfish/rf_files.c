/* rf_files.c - lookups in the embedded data files (rf_files.h). */
#include "rf_files.h"

#include <stdio.h>
#include <string.h>

const struct fb_rf_file *fb_rf_file_find(const char *name)
{
	for (const struct fb_rf_file *f = fb_rf_files; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

int fb_rf_schema_served(const char *type)
{
	char name[128];
	if (!type || snprintf(name, sizeof(name), "json-schema/%s.json", type) >= (int)sizeof(name))
		return 0;
	return fb_rf_file_find(name) != NULL;
}
