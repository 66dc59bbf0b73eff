/* rf_body.h - a request body as a JSON object, and the checks every
 * Redfish write makes on it, answered with the Base registry's messages:
 *   not JSON                      400 MalformedJSON
 *   JSON but not an object        400 UnrecognizedRequestBody
 *   a property not in the spec    400 PropertyUnknown
 *   a read-only property          400 PropertyNotWritable
 *   a value of the wrong type     400 PropertyValueTypeError
 *   a required one missing (POST) 400 CreateFailedMissingReqProperties
 * All problems are reported at once, one @Message.ExtendedInfo each.
 * "@odata.*" annotations are ignored (clients echo them back). Pure.
 */
#ifndef FB_RF_BODY_H
#define FB_RF_BODY_H

#include "rf_reply.h"
#include "rf_req.h"

#include <jansson.h>

/* What a property of a writable resource may hold. */
enum fb_rf_ptype {
	FB_RF_T_STRING = 1 << 0,
	FB_RF_T_INT = 1 << 1,   /* JSON integer */
	FB_RF_T_NUMBER = 1 << 2,/* integer or real */
	FB_RF_T_BOOL = 1 << 3,
	FB_RF_T_ARRAY = 1 << 4,
	FB_RF_T_OBJECT = 1 << 5,
	FB_RF_T_NULL = 1 << 6,
};

struct fb_rf_prop {
	const char *name;
	unsigned types;    /* enum fb_rf_ptype bits */
	unsigned flags;    /* FB_RF_P_* */
};
#define FB_RF_P_READONLY 1u /* shown, never written: PropertyNotWritable */
#define FB_RF_P_REQUIRED 2u /* on create */
/* The read-only properties every Redfish resource has (Resource.Resource). */
#define FB_RF_PROPS_RESOURCE                              \
	{ "Id", FB_RF_T_STRING, FB_RF_P_READONLY },       \
	{ "Name", FB_RF_T_STRING, FB_RF_P_READONLY },     \
	{ "Description", FB_RF_T_STRING, FB_RF_P_READONLY }

/* The body as a JSON object (new reference in *out), or 0 with *out NULL
 * and the error in rep. An empty body is an empty object. */
int fb_rf_body_object(const struct fb_rf_req *req, struct fb_rf_reply *rep, json_t **out);
/* Check obj against props (ended by a NULL name). create: also the
 * required ones. 1 if fine, 0 with the errors (all of them) in rep. */
int fb_rf_body_check(const json_t *obj, const struct fb_rf_prop *props, int create,
		     struct fb_rf_reply *rep);

#endif
