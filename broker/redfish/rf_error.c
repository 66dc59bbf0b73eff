/* rf_error.c - see rf_error.h. The texts are copied from Base 1.22.1. */
#include "rf_error.h"

#include "fb_buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE "Base.1.22."

struct msg {
	const char *key;
	unsigned status;
	const char *sev;
	const char *text;
	const char *resolution;
};

static const struct msg msgs[FB_RF_MSG_COUNT] = {
	[FB_RF_RESOURCE_NOT_FOUND] = { "ResourceNotFound", 404, "Critical",
		"The requested resource of type %1 named '%2' was not found.",
		"Provide a valid resource identifier and resubmit the request." },
	[FB_RF_OPERATION_NOT_ALLOWED] = { "OperationNotAllowed", 405, "Critical",
		"The HTTP method is not allowed on this resource.", "None." },
	[FB_RF_MALFORMED_JSON] = { "MalformedJSON", 400, "Critical",
		"The request body submitted was malformed JSON and could not be parsed by the receiving service.",
		"Ensure that the request body is valid JSON and resubmit the request." },
	[FB_RF_UNRECOGNIZED_BODY] = { "UnrecognizedRequestBody", 400, "Warning",
		"The service detected a malformed request body that it was unable to interpret.",
		"Correct the request body and resubmit the request if it failed." },
	[FB_RF_PROPERTY_VALUE_TYPE_ERROR] = { "PropertyValueTypeError", 400, "Warning",
		"The value '%1' for the property %2 is not a type that the property can accept.",
		"Correct the value for the property in the request body and resubmit the request if the operation failed." },
	[FB_RF_PROPERTY_VALUE_NOT_IN_LIST] = { "PropertyValueNotInList", 400, "Warning",
		"The value '%1' for the property %2 is not in the list of acceptable values.",
		"Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed." },
	[FB_RF_PROPERTY_VALUE_FORMAT_ERROR] = { "PropertyValueFormatError", 400, "Warning",
		"The value '%1' for the property %2 is not a format that the property can accept.",
		"Correct the value for the property in the request body and resubmit the request if the operation failed." },
	[FB_RF_PROPERTY_VALUE_OUT_OF_RANGE] = { "PropertyValueOutOfRange", 400, "Warning",
		"The value '%1' for the property %2 is not in the supported range of acceptable values.",
		"Correct the value for the property in the request body and resubmit the request if the operation failed." },
	[FB_RF_PROPERTY_UNKNOWN] = { "PropertyUnknown", 400, "Warning",
		"The property %1 is not in the list of valid properties for the resource.",
		"Remove the unknown property from the request body and resubmit the request if the operation failed." },
	[FB_RF_PROPERTY_NOT_WRITABLE] = { "PropertyNotWritable", 400, "Warning",
		"The property %1 is a read-only property and cannot be assigned a value.",
		"Remove the property from the request body and resubmit the request if the operation failed." },
	[FB_RF_PROPERTY_MISSING] = { "PropertyMissing", 400, "Warning",
		"The property %1 is a required property and must be included in the request.",
		"Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed." },
	[FB_RF_CREATE_FAILED_MISSING_REQ] = { "CreateFailedMissingReqProperties", 400, "Critical",
		"The create operation failed because the required property %1 was missing from the request.",
		"Correct the body to include the required property with a valid value and resubmit the request if the operation failed." },
	[FB_RF_QUERY_PARAMETER_VALUE_ERROR] = { "QueryParameterValueError", 400, "Warning",
		"The value for the parameter %1 is invalid.",
		"Correct the value for the query parameter in the request and resubmit the request if the operation failed." },
	[FB_RF_QUERY_PARAMETER_UNSUPPORTED] = { "QueryParameterUnsupported", 400, "Warning",
		"Query parameter '%1' is not supported.",
		"Correct or remove the query parameter and resubmit the request." },
	[FB_RF_QUERY_PARAMETER_VALUE_FORMAT_ERROR] = { "QueryParameterValueFormatError", 400, "Warning",
		"The value '%1' for the parameter %2 is not a format that the parameter can accept.",
		"Correct the value for the query parameter in the request and resubmit the request if the operation failed." },
	[FB_RF_QUERY_PARAMETER_VALUE_TYPE_ERROR] = { "QueryParameterValueTypeError", 400, "Warning",
		"The value '%1' for the query parameter %2 is not a type that the parameter can accept.",
		"Correct the value for the query parameter in the request and resubmit the request if the operation failed." },
	[FB_RF_QUERY_NOT_IMPLEMENTED] = { "QueryParameterUnsupported", 501, "Warning",
		"Query parameter '%1' is not supported.",
		"Correct or remove the query parameter and resubmit the request." },
	[FB_RF_INSUFFICIENT_PRIVILEGE] = { "InsufficientPrivilege", 403, "Critical",
		"There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.",
		"Either abandon the operation or change the associated access rights and resubmit the request if the operation failed." },
	[FB_RF_PASSWORD_CHANGE_REQUIRED] = { "PasswordChangeRequired", 403, "Critical",
		"The password provided for this account must be changed before access is granted.  PATCH the Password property for this account located at the target URI '%1' to complete this process.",
		"Change the password for this account using a PATCH to the Password property at the URI provided." },
	[FB_RF_NO_VALID_SESSION] = { "NoValidSession", 401, "Critical",
		"There is no valid session established with the implementation.",
		"Establish a session before attempting any operations." },
	[FB_RF_PRECONDITION_FAILED] = { "PreconditionFailed", 412, "Critical",
		"The ETag supplied did not match the ETag required to change this resource.",
		"Try the operation again using the appropriate ETag." },
	[FB_RF_PAYLOAD_TOO_LARGE] = { "PayloadTooLarge", 413, "Critical",
		"The supplied payload exceeds the maximum size supported by the service.",
		"Check that the supplied payload is correct and supported by this service." },
	[FB_RF_HEADER_INVALID] = { "HeaderInvalid", 415, "Critical", "Header '%1' is invalid.",
		"Resubmit the request with a valid request header." },
	[FB_RF_HEADER_MISSING] = { "HeaderMissing", 411, "Critical",
		"Required header '%1' is missing in the request.",
		"Resubmit the request with the required request header." },
	[FB_RF_RESOURCE_ALREADY_EXISTS] = { "ResourceAlreadyExists", 409, "Critical",
		"The requested resource of type %1 with the property %2 with the value '%3' already exists.",
		"Do not repeat the create operation as the resource was already created." },
	[FB_RF_RESOURCE_CANNOT_BE_DELETED] = { "ResourceCannotBeDeleted", 405, "Critical",
		"The delete request failed because the resource requested cannot be deleted.",
		"Do not attempt to delete a non-deletable resource." },
	[FB_RF_RESOURCE_EXHAUSTION] = { "ResourceExhaustion", 503, "Critical",
		"The resource '%1' was unable to satisfy the request due to unavailability of resources.",
		"Ensure that the resources are available and resubmit the request." },
	[FB_RF_EVENT_SUBSCRIPTION_LIMIT] = { "EventSubscriptionLimitExceeded", 503, "Critical",
		"The event subscription failed due to the number of simultaneous subscriptions exceeding the limit of the implementation.",
		"Reduce the number of other subscriptions before trying to establish the event subscription or increase the limit of simultaneous subscriptions, if supported." },
	[FB_RF_SESSION_LIMIT_EXCEEDED] = { "SessionLimitExceeded", 503, "Critical",
		"The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.",
		"Reduce the number of other sessions before trying to establish the session or increase the limit of simultaneous sessions, if supported." },
	[FB_RF_SERVICE_TEMPORARILY_UNAVAILABLE] = { "ServiceTemporarilyUnavailable", 503, "Critical",
		"The service is temporarily unavailable.  Retry in %1 seconds.",
		"Wait for the indicated retry duration and retry the operation." },
	[FB_RF_ACTION_NOT_SUPPORTED] = { "ActionNotSupported", 400, "Critical",
		"The action %1 is not supported by the resource.",
		"Check the Actions property in the resource for the supported actions." },
	[FB_RF_ACTION_PARAMETER_MISSING] = { "ActionParameterMissing", 400, "Critical",
		"The action %1 requires the parameter %2 to be present in the request body.",
		"Supply the action with the required parameter in the request body when the request is resubmitted." },
	[FB_RF_ACTION_PARAMETER_UNKNOWN] = { "ActionParameterUnknown", 400, "Warning",
		"The action %1 was submitted with the invalid parameter %2.",
		"Correct the invalid action parameter and resubmit the request if the operation failed." },
	[FB_RF_ACTION_PARAMETER_VALUE_ERROR] = { "ActionParameterValueError", 400, "Warning",
		"The value for the parameter %1 in the action %2 is invalid.",
		"Correct the value for the parameter in the request body and resubmit the request if the operation failed." },
	[FB_RF_INTERNAL_ERROR] = { "InternalError", 500, "Critical",
		"The request failed due to an internal service error.  The service is still operational.",
		"Resubmit the request.  If the problem persists, consider resetting the service." },
	[FB_RF_NOT_IMPLEMENTED] = { "GeneralError", 501, "Critical",
		"A general error has occurred.  See Resolution for information on how to resolve the error, or @Message.ExtendedInfo if Resolution is not provided.",
		"None." },
	[FB_RF_SUCCESS] = { "Success", 200, "OK", "The request completed successfully.", "None." },
	[FB_RF_CREATED] = { "Created", 201, "OK", "The resource was created successfully.", "None." },
};

unsigned fb_rf_msg_status(enum fb_rf_msg m)
{
	return m < FB_RF_MSG_COUNT ? msgs[m].status : 500;
}

const char *fb_rf_msg_id(enum fb_rf_msg m)
{
	return m < FB_RF_MSG_COUNT ? msgs[m].key : "GeneralError";
}

/* "Base.1.22." + key into a buffer. */
static void full_id(enum fb_rf_msg m, char *out, size_t outsz)
{
	snprintf(out, outsz, BASE "%s", fb_rf_msg_id(m));
}

/* The text with %1..%9 replaced by args. */
static char *expand(const char *text, const char *const *args, int nargs)
{
	struct fb_buf b = FB_BUF_INIT;
	int rc = 0;
	for (const char *p = text; *p && !rc; p++) {
		if (p[0] == '%' && p[1] >= '1' && p[1] <= '9') {
			int i = p[1] - '1';
			rc = fb_buf_puts(&b, i < nargs && args[i] ? args[i] : "");
			p++;
		} else {
			rc = fb_buf_put(&b, p, 1);
		}
	}
	if (!rc)
		rc = fb_buf_put(&b, "", 1);
	if (rc) {
		fb_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

/* A JSON string of s; bytes that are not UTF-8 (a path from the network)
 * become '?' so that the message can always be rendered. */
static json_t *safe_string(const char *s)
{
	json_t *j = json_string(s ? s : "");
	if (j || !s)
		return j;
	char *c = strdup(s);
	for (char *p = c; p && *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = c ? json_string(c) : NULL;
	free(c);
	return j;
}

json_t *fb_rf_message(enum fb_rf_msg m, const char *const *args, int nargs)
{
	if (m >= FB_RF_MSG_COUNT)
		m = FB_RF_INTERNAL_ERROR;
	char id[96];
	full_id(m, id, sizeof(id));
	char *text = expand(msgs[m].text, args, nargs);
	json_t *t = safe_string(text), *a = json_array();
	for (int i = 0; a && i < nargs; i++)
		json_array_append_new(a, safe_string(args[i]));
	json_t *o = t && a ? json_pack("{s:s,s:s,s:O,s:O,s:s,s:s}", "@odata.type",
				       "#Message.v1_3_0.Message", "MessageId", id, "Message", t,
				       "MessageArgs", a, "MessageSeverity", msgs[m].sev, "Resolution",
				       msgs[m].resolution)
			   : NULL;
	json_decref(t);
	json_decref(a);
	free(text);
	return o;
}

int fb_rf_error_add(json_t **doc, enum fb_rf_msg m, const char *const *args, int nargs)
{
	json_t *msg = fb_rf_message(m, args, nargs);
	if (!msg)
		return -ENOMEM;
	if (!*doc) {
		*doc = json_pack("{s:{s:O,s:O,s:[]}}", "error", "code", json_object_get(msg, "MessageId"),
				 "message", json_object_get(msg, "Message"), "@Message.ExtendedInfo");
		if (!*doc) {
			json_decref(msg);
			return -ENOMEM;
		}
	}
	json_t *list = json_object_get(json_object_get(*doc, "error"), "@Message.ExtendedInfo");
	return json_array_append_new(list, msg) ? -ENOMEM : 0;
}
