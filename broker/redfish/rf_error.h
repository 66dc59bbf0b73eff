/* rf_error.h - Redfish error bodies from the Base message registry.
 *
 *   {"error":{"code":"Base.1.22.ResourceNotFound","message":"...",
 *             "@Message.ExtendedInfo":[{"@odata.type":"#Message.v1_3_0.Message",
 *               "MessageId":"Base.1.22.ResourceNotFound","Message":"...",
 *               "MessageArgs":[...],"MessageSeverity":"Critical",
 *               "Resolution":"..."}, ...]}}
 *
 * One error may carry several messages (a PATCH with two bad properties):
 * fb_rf_error_add() appends; the first message gives code and message.
 * Texts are the registry's (proto/redfish/registries/Base.1.22.1.json),
 * with %1.. replaced by the arguments. Pure; the reply side is rf_reply.h.
 */
#ifndef FB_RF_ERROR_H
#define FB_RF_ERROR_H

#include <jansson.h>

enum fb_rf_msg {
	FB_RF_RESOURCE_NOT_FOUND,        /* 404 (type, name) */
	FB_RF_OPERATION_NOT_ALLOWED,     /* 405 */
	FB_RF_MALFORMED_JSON,            /* 400 */
	FB_RF_UNRECOGNIZED_BODY,         /* 400 (a body where none is taken, or not an object) */
	FB_RF_PROPERTY_VALUE_TYPE_ERROR, /* 400 (value, property) */
	FB_RF_PROPERTY_VALUE_NOT_IN_LIST,/* 400 (value, property) */
	FB_RF_PROPERTY_VALUE_FORMAT_ERROR,/* 400 (value, property) */
	FB_RF_PROPERTY_VALUE_OUT_OF_RANGE,/* 400 (value, property) */
	FB_RF_PROPERTY_UNKNOWN,          /* 400 (property) */
	FB_RF_PROPERTY_NOT_WRITABLE,     /* 400 (property) */
	FB_RF_PROPERTY_MISSING,          /* 400 (property) */
	FB_RF_CREATE_FAILED_MISSING_REQ, /* 400 (property) */
	FB_RF_QUERY_PARAMETER_VALUE_ERROR,/* 400 (parameter) */
	FB_RF_QUERY_PARAMETER_UNSUPPORTED,/* 400 (parameter) */
	FB_RF_QUERY_PARAMETER_VALUE_FORMAT_ERROR, /* 400 (value, parameter) */
	FB_RF_QUERY_PARAMETER_VALUE_TYPE_ERROR,   /* 400 (value, parameter) */
	FB_RF_QUERY_NOT_IMPLEMENTED,     /* 501 QueryParameterUnsupported (parameter): a "$" one */
	FB_RF_INSUFFICIENT_PRIVILEGE,    /* 403 */
	FB_RF_NO_VALID_SESSION,          /* 401 */
	FB_RF_PASSWORD_CHANGE_REQUIRED,  /* 403 (account URI) */
	FB_RF_PRECONDITION_FAILED,       /* 412 */
	FB_RF_PAYLOAD_TOO_LARGE,         /* 413 */
	FB_RF_HEADER_INVALID,            /* 415 when about Content-Type (header) */
	FB_RF_HEADER_MISSING,            /* 411 for Content-Length (header) */
	FB_RF_RESOURCE_ALREADY_EXISTS,   /* 409 (type, property, value) */
	FB_RF_RESOURCE_CANNOT_BE_DELETED,/* 405 */
	FB_RF_RESOURCE_EXHAUSTION,       /* 503 (resource) */
	FB_RF_EVENT_SUBSCRIPTION_LIMIT,  /* 503 */
	FB_RF_SESSION_LIMIT_EXCEEDED,    /* 503 */
	FB_RF_SERVICE_TEMPORARILY_UNAVAILABLE, /* 503 (seconds) */
	FB_RF_ACTION_NOT_SUPPORTED,      /* 400 (action) */
	FB_RF_ACTION_PARAMETER_MISSING,  /* 400 (action, parameter) */
	FB_RF_ACTION_PARAMETER_UNKNOWN,  /* 400 (action, parameter) */
	FB_RF_ACTION_PARAMETER_VALUE_ERROR, /* 400 (parameter, action) */
	FB_RF_INTERNAL_ERROR,            /* 500 */
	FB_RF_NOT_IMPLEMENTED,           /* 501 (GeneralError) */
	FB_RF_SUCCESS,                   /* 200: for @Message.ExtendedInfo of a success */
	FB_RF_CREATED,                   /* 201 */
	FB_RF_MSG_COUNT,
};

/* The HTTP status the message is usually answered with. */
unsigned fb_rf_msg_status(enum fb_rf_msg m);
/* The registry key, "ResourceNotFound" (the MessageId is "Base.1.22." + it). */
const char *fb_rf_msg_id(enum fb_rf_msg m);
/* One Message object (new reference; NULL on ENOMEM). args: as many as the
 * message takes (NULL ones shown as ""). */
json_t *fb_rf_message(enum fb_rf_msg m, const char *const *args, int nargs);
/* Append a message to the error document *doc (creating it). 0 or -ENOMEM. */
int fb_rf_error_add(json_t **doc, enum fb_rf_msg m, const char *const *args, int nargs);

#endif
