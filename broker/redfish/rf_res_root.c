/* rf_res_root.c - the service root, the OData service document and
 * $metadata. Links to other modules' resources are shown only once their
 * module serves them (its route's GET is no longer the 501 stub), so the
 * tree never points at a resource that is not there. */
#include "rf_res.h"

#include "fb_buf.h"
#include "rf_service.h"

#include <string.h>

#define V1 "/redfish/v1"

/* The schemas the tree uses, with the namespace version referenced in
 * $metadata (the DMTF CSDL files; the validators read them from their
 * schema directory, by the file name of these published URIs). */
static const char *const schemas[][2] = {
	{ "ServiceRoot", "ServiceRoot.v1_20_0" },
	{ "Fabric", "Fabric.v1_4_0" },
	{ "FabricCollection", NULL },
	{ "Switch", "Switch.v1_11_0" },
	{ "SwitchCollection", NULL },
	{ "Port", "Port.v1_18_0" },
	{ "PortCollection", NULL },
	{ "PortMetrics", "PortMetrics.v1_8_1" },
	{ "Endpoint", "Endpoint.v1_8_2" },
	{ "EndpointCollection", NULL },
	{ "ComputerSystem", "ComputerSystem.v1_27_0" },
	{ "ComputerSystemCollection", NULL },
	{ "NetworkInterface", "NetworkInterface.v1_2_3" },
	{ "NetworkInterfaceCollection", NULL },
	{ "AggregationService", "AggregationService.v1_0_3" },
	{ "ConnectionMethod", "ConnectionMethod.v1_2_0" },
	{ "ConnectionMethodCollection", NULL },
	{ "MessageRegistryFile", "MessageRegistryFile.v1_1_5" },
	{ "MessageRegistryFileCollection", NULL },
	{ "EventService", "EventService.v1_12_0" },
	{ "EventDestination", "EventDestination.v1_16_0" },
	{ "EventDestinationCollection", NULL },
	{ "SessionService", "SessionService.v1_2_0" },
	{ "Session", "Session.v1_8_0" },
	{ "SessionCollection", NULL },
	{ "AccountService", "AccountService.v1_18_1" },
	{ "ManagerAccount", "ManagerAccount.v1_14_1" },
	{ "ManagerAccountCollection", NULL },
	{ "Role", "Role.v1_3_3" },
	{ "RoleCollection", NULL },
	{ "Message", "Message.v1_3_0" },
	{ "Resource", "Resource.v1_23_0" },
	{ "Event", "Event.v1_13_0" },
	{ "Protocol", NULL },
};

/* 1 if the module owning path serves GET already. */
static int served(const char *path)
{
	struct fb_rf_ctx c;
	const struct fb_rf_route *r = fb_rf_route_find(fb_rf_routes, path, &c);
	return r && r->op[FB_RF_GET].fn && r->op[FB_RF_GET].fn != fb_rf_unimplemented;
}

static void link_if_served(json_t *root, const char *name, const char *path)
{
	if (served(path))
		json_object_set_new(root, name, fb_rf_ref(path));
}

static int service_root(struct fb_rf_build *b)
{
	const struct fb_rf_service *svc = fb_rf_build_service(b);
	json_t *links = json_object();
	json_t *root = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}",
				 "@odata.type", "#ServiceRoot.v1_20_0.ServiceRoot", "Id", "RootService",
				 "Name", "fabricbus Redfish service", "RedfishVersion", "1.20.0", "UUID",
				 svc->uuid, "Vendor", "fabricbus", "Fabrics", fb_rf_ref(V1 "/Fabrics"),
				 "Systems", fb_rf_ref(V1 "/Systems"), "AggregationService",
				 fb_rf_ref(V1 "/AggregationService"), "Registries",
				 fb_rf_ref(V1 "/Registries"), "Links", links);
	if (!root)
		return -1;
	json_object_set_new(root, "ProtocolFeaturesSupported",
			    json_pack("{s:b,s:{s:b},s:b}", "ExcerptQuery", 0, "ExpandQuery",
				      "ExpandAll", 0, "OnlyMemberQuery", 0));
	link_if_served(root, "EventService", V1 "/EventService");
	link_if_served(root, "SessionService", V1 "/SessionService");
	link_if_served(root, "AccountService", V1 "/AccountService");
	if (served(V1 "/SessionService/Sessions"))
		json_object_set_new(links, "Sessions", fb_rf_ref(V1 "/SessionService/Sessions"));
	return fb_rf_build_add(b, V1, "ServiceRoot", root);
}

static int odata(struct fb_rf_build *b)
{
	static const char *const top[][2] = {
		{ "Fabrics", V1 "/Fabrics" }, { "Systems", V1 "/Systems" },
		{ "AggregationService", V1 "/AggregationService" }, { "Registries", V1 "/Registries" },
		{ "EventService", V1 "/EventService" }, { "SessionService", V1 "/SessionService" },
		{ "AccountService", V1 "/AccountService" },
	};
	json_t *v = json_array();
	json_array_append_new(v, json_pack("{s:s,s:s,s:s}", "name", "Service", "kind", "Singleton",
					   "url", V1 "/"));
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (i < 4 || served(top[i][1]))
			json_array_append_new(v, json_pack("{s:s,s:s,s:s}", "name", top[i][0], "kind",
							   "Singleton", "url", top[i][1]));
	json_t *doc = json_pack("{s:s,s:s,s:o}", "@odata.context", V1 "/$metadata", "@odata.id",
				V1 "/odata", "value", v);
	/* not a Redfish resource: no @odata.type; the id is there for clients */
	return fb_rf_build_add(b, V1 "/odata", NULL, doc);
}

static int metadata(struct fb_rf_build *b)
{
	struct fb_buf x = FB_BUF_INIT;
	int rc = fb_buf_puts(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				 "<edmx:Edmx xmlns:edmx=\"http://docs.oasis-open.org/odata/ns/edmx\" "
				 "Version=\"4.0\">\n");
	for (size_t i = 0; !rc && i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		rc = fb_buf_printf(&x, "  <edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/%s_v1.xml\">\n"
				       "    <edmx:Include Namespace=\"%s\"/>\n",
				   schemas[i][0], schemas[i][0]);
		if (!rc && schemas[i][1])
			rc = fb_buf_printf(&x, "    <edmx:Include Namespace=\"%s\"/>\n", schemas[i][1]);
		if (!rc)
			rc = fb_buf_puts(&x, "  </edmx:Reference>\n");
	}
	if (!rc)
		rc = fb_buf_puts(&x, "  <edmx:DataServices>\n"
				     "    <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" "
				     "Namespace=\"Service\">\n"
				     "      <EntityContainer Name=\"Service\" "
				     "Extends=\"ServiceRoot.v1_20_0.ServiceContainer\"/>\n"
				     "    </Schema>\n  </edmx:DataServices>\n</edmx:Edmx>\n");
	if (!rc)
		rc = fb_rf_build_add_raw(b, V1 "/$metadata", "application/xml", (const char *)x.data, x.len);
	fb_buf_free(&x);
	return rc;
}

int fb_rf_res_root(struct fb_rf_build *b)
{
	int rc = service_root(b);
	if (!rc)
		rc = odata(b);
	if (!rc)
		rc = metadata(b);
	return rc;
}
