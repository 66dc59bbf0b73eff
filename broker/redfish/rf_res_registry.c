/* rf_res_registry.c - /redfish/v1/Registries: one MessageRegistryFile per
 * registry we emit or answer with (the DMTF ones and our OEM Fabricbus
 * registry), each file served at its Location, and the unversioned JSON
 * schemas at /redfish/v1/JsonSchemas/<Type>.json (the Link headers'
 * targets). The files are embedded (rf_files.h). */
#include "rf_res.h"

#include "rf_files.h"

#include <stdio.h>
#include <string.h>

#define REG "/redfish/v1/Registries"

/* "Base.1.22.1.json" -> id "Base.1.22.1", registry "Base.1.22". */
static void names(const char *file, char *id, size_t idsz, char *reg, size_t regsz)
{
	snprintf(id, idsz, "%.*s", (int)(strlen(file) - 5), file);
	const char *last = strrchr(id, '.');
	snprintf(reg, regsz, "%.*s", (int)(last - id), id);
}

static int add_registry(struct fb_rf_build *b, const struct fb_rf_file *f, json_t *members)
{
	const char *file = strchr(f->name, '/') + 1;
	char id[128], reg[128], path[256], uri[384];
	names(file, id, sizeof(id), reg, sizeof(reg));
	snprintf(path, sizeof(path), REG "/%s", id);
	fb_rf_path_cat(uri, sizeof(uri), path, "/");
	fb_rf_path_cat(uri, sizeof(uri), uri, file);
	json_array_append_new(members, json_string(path));
	json_t *o = json_pack("{s:s,s:s,s:s,s:[s],s:s,s:[{s:s,s:s}]}", "@odata.type",
			      "#MessageRegistryFile.v1_1_5.MessageRegistryFile", "Id", id, "Name",
			      id, "Languages", "en", "Registry", reg, "Location", "Language", "en",
			      "Uri", uri);
	int rc = fb_rf_build_add(b, path, "MessageRegistryFile", o);
	return rc ? rc : fb_rf_build_add_raw(b, uri, "application/json", (const char *)f->data, f->len);
}

static int add_schema(struct fb_rf_build *b, const struct fb_rf_file *f)
{
	char path[256];
	snprintf(path, sizeof(path), "/redfish/v1/JsonSchemas/%s", strchr(f->name, '/') + 1);
	return fb_rf_build_add_raw(b, path, "application/schema+json", (const char *)f->data, f->len);
}

int fb_rf_res_registries(struct fb_rf_build *b)
{
	json_t *members = json_array();
	int rc = 0;
	for (const struct fb_rf_file *f = fb_rf_files; !rc && f->name; f++)
		rc = strncmp(f->name, "registries/", 11) == 0 ? add_registry(b, f, members)
							       : add_schema(b, f);
	if (rc) {
		json_decref(members);
		return rc;
	}
	return fb_rf_build_collection(b, REG, "MessageRegistryFileCollection", "Registries", members);
}
