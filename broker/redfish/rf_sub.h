/* rf_sub.h - one Redfish EventDestination (a subscription): its validated
 * properties, what a client may write when, and its JSON.
 *
 * A subscription is kept as the JSON object of its stored properties (doc,
 * what the client sent, normalized, plus "Id" and "Status") and the views
 * decoded from it that delivery and matching read. The same validator takes
 * a POST body (create), a PATCH body (the writable subset, applied to a copy)
 * and a member of the store file (load: also Id and Status), so the store
 * can hold nothing a client could not have sent. Refusals are Redfish Base
 * messages (struct fb_rf_error) that the route turns into the error body.
 *
 * Pure: no I/O, no threads. The EventDestination schema is
 * proto/redfish/json-schema/EventDestination.v1_16_0.json.
 */
#ifndef FB_RF_SUB_H
#define FB_RF_SUB_H

#include "rf_sub_match.h"

#include <jansson.h>
#include <stddef.h>

#define FB_RF_SUB_ID_MAX 64
#define FB_RF_DEST_MAX 1024
#define FB_RF_CONTEXT_MAX 1024
#define FB_RF_HEADERS_MAX 16
#define FB_RF_LIST_MAX 64 /* items in one filter list */
#define FB_RF_SUBS_PATH "/redfish/v1/EventService/Subscriptions"
#define FB_RF_SUB_TYPE "#EventDestination.v1_16_0.EventDestination"

enum fb_rf_protocol { FB_RF_PROTO_REDFISH = 0, FB_RF_PROTO_KAFKA = 1 };
enum fb_rf_retry_policy {
	FB_RF_RETRY_TERMINATE = 0, /* TerminateAfterRetries: deleted */
	FB_RF_RETRY_SUSPEND = 1,   /* SuspendRetries: Status.State Disabled */
	FB_RF_RETRY_FOREVER = 2,   /* RetryForever, every DeliveryRetryIntervalSeconds */
	FB_RF_RETRY_BACKOFF = 3,   /* RetryForeverWithBackoff: the interval doubles */
};

/* A refusal in the Base registry's words: status, the message key
 * ("PropertyUnknown") and its MessageArgs. */
struct fb_rf_error {
	int status;
	const char *key;
	unsigned n_args;
	char args[2][192];
};

enum fb_rf_mode {
	FB_RF_SUB_CREATE, /* POST: every create-time property; no Id, no Status */
	FB_RF_SUB_PATCH,  /* PATCH: Context, HttpHeaders, retry, heartbeat, VerifyCertificate, Status.State */
	FB_RF_SUB_LOAD,   /* the store file: create's properties plus Id and Status */
};

struct fb_rf_sub {
	char id[FB_RF_SUB_ID_MAX];
	json_t *doc;             /* owned: the stored properties */
	const char *destination; /* the views point into doc */
	const char *context;     /* "" when none */
	int protocol;            /* enum fb_rf_protocol */
	int retry_policy;        /* enum fb_rf_retry_policy */
	int enabled;             /* Status.State: Enabled (1) or Disabled (0, suspended) */
	int send_heartbeat;
	unsigned heartbeat_minutes;
	int verify_certificate;
	int include_origin;
	size_t n_headers;
	char *headers[FB_RF_HEADERS_MAX]; /* owned "Name: value" lines */
	struct fb_rf_match match;
};

/* Validate body for mode and build *out (old: the subscription a PATCH
 * applies to, else NULL). On success out owns a new doc. On failure returns
 * a negative error, fills *err, and out is left empty (fb_rf_sub_free safe).
 * The Id is not assigned here (the store does). */
int fb_rf_sub_build(json_t *body, enum fb_rf_mode mode, const struct fb_rf_sub *old,
		    struct fb_rf_sub *out, struct fb_rf_error *err);
/* Parse a request body (bytes) first: MalformedJSON when it is not a JSON
 * object. */
int fb_rf_sub_build_text(const char *body, size_t len, enum fb_rf_mode mode,
			 const struct fb_rf_sub *old, struct fb_rf_sub *out, struct fb_rf_error *err);
void fb_rf_sub_free(struct fb_rf_sub *s);

/* Set the Id (also in doc) and Status.State. 0 or -ENOMEM. */
int fb_rf_sub_set_id(struct fb_rf_sub *s, const char *id);
int fb_rf_sub_set_enabled(struct fb_rf_sub *s, int enabled);

/* The member as a client sees it (GET): @odata.id/type, Id, Name, defaults
 * filled in, HttpHeaders as [] (write-only). New reference, NULL on ENOMEM. */
json_t *fb_rf_sub_render(const struct fb_rf_sub *s);

const char *fb_rf_retry_policy_name(int policy);

#endif
