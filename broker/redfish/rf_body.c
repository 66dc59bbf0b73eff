/* rf_body.c - see rf_body.h. */
#include "rf_body.h"

#include <stdlib.h>
#include <string.h>

int fb_rf_body_object(const struct fb_rf_req *req, struct fb_rf_reply *rep, json_t **out)
{
	*out = NULL;
	if (!req->body.len) {
		*out = json_object();
		return 0;
	}
	json_error_t e;
	json_t *j = json_loadb((const char *)req->body.data, req->body.len, JSON_REJECT_DUPLICATES, &e);
	if (!j) {
		fb_rf_reply_error(rep, FB_RF_MALFORMED_JSON, NULL, 0);
		return 0;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		fb_rf_reply_error(rep, FB_RF_UNRECOGNIZED_BODY, NULL, 0);
		return 0;
	}
	*out = j;
	return 0;
}

static int type_ok(const json_t *v, unsigned types)
{
	switch (json_typeof(v)) {
	case JSON_STRING: return !!(types & FB_RF_T_STRING);
	case JSON_INTEGER: return !!(types & (FB_RF_T_INT | FB_RF_T_NUMBER));
	case JSON_REAL: return !!(types & FB_RF_T_NUMBER);
	case JSON_TRUE:
	case JSON_FALSE: return !!(types & FB_RF_T_BOOL);
	case JSON_ARRAY: return !!(types & FB_RF_T_ARRAY);
	case JSON_OBJECT: return !!(types & FB_RF_T_OBJECT);
	case JSON_NULL: return !!(types & FB_RF_T_NULL);
	}
	return 0;
}

static const struct fb_rf_prop *find(const struct fb_rf_prop *props, const char *name)
{
	for (; props->name; props++)
		if (strcmp(props->name, name) == 0)
			return props;
	return NULL;
}

/* The value as shown in a message: strings as is, others as JSON. */
static char *shown(const json_t *v)
{
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static int check_one(const char *name, const json_t *v, const struct fb_rf_prop *props, json_t **doc)
{
	const struct fb_rf_prop *p = find(props, name);
	const char *args[2] = { name, NULL };
	if (!p)
		return fb_rf_error_add(doc, FB_RF_PROPERTY_UNKNOWN, args, 1);
	if (p->flags & FB_RF_P_READONLY)
		return fb_rf_error_add(doc, FB_RF_PROPERTY_NOT_WRITABLE, args, 1);
	if (type_ok(v, p->types))
		return 0;
	char *s = shown(v);
	const char *targs[] = { s ? s : "", name };
	int rc = fb_rf_error_add(doc, FB_RF_PROPERTY_VALUE_TYPE_ERROR, targs, 2);
	free(s);
	return rc;
}

int fb_rf_body_check(const json_t *obj, const struct fb_rf_prop *props, int create,
		     struct fb_rf_reply *rep)
{
	json_t *doc = NULL;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
		if (strncmp(k, "@odata.", 7) != 0)
			check_one(k, v, props, &doc);
	for (const struct fb_rf_prop *p = props; create && p->name; p++)
		if ((p->flags & FB_RF_P_REQUIRED) && !json_object_get(obj, p->name)) {
			const char *args[] = { p->name };
			fb_rf_error_add(&doc, FB_RF_CREATE_FAILED_MISSING_REQ, args, 1);
		}
	if (!doc)
		return 1;
	fb_rf_reply_error_doc(rep, 400, doc);
	return 0;
}
