/* rf_res_agg.c - /redfish/v1/AggregationService and its ConnectionMethods:
 * the one ConnectionMethod by which an aggregator (the OFMF core) reaches
 * this service. Its id (svc->cm_id) is unique per broker instance: the
 * core refuses a second discovery with the same one. */
#include "rf_res.h"

#include "rf_service.h"

#include <stdio.h>

#define AGG "/redfish/v1/AggregationService"

int fb_rf_res_aggregation(struct fb_rf_build *b)
{
	const struct fb_rf_service *svc = fb_rf_build_service(b);
	char cm[256];
	snprintf(cm, sizeof(cm), AGG "/ConnectionMethods");
	fb_rf_path_append(cm, sizeof(cm), svc->cm_id);
	json_t *agg = json_pack("{s:s,s:s,s:s,s:b,s:{s:s,s:s},s:o}", "@odata.type",
				"#AggregationService.v1_0_3.AggregationService", "Id",
				"AggregationService", "Name", "Aggregation Service", "ServiceEnabled", 1,
				"Status", "State", "Enabled", "Health", "OK", "ConnectionMethods",
				fb_rf_ref(AGG "/ConnectionMethods"));
	int rc = fb_rf_build_add(b, AGG, "AggregationService", agg);
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "@odata.type",
			      "#ConnectionMethod.v1_2_0.ConnectionMethod", "Id", svc->cm_id, "Name",
			      "fabricbus Redfish service", "ConnectionMethodType", "Redfish",
			      "ConnectionMethodVariant", "Fabricbus");
	if (!rc)
		rc = fb_rf_build_add(b, cm, "ConnectionMethod", o);
	else
		json_decref(o);
	if (!rc)
		rc = fb_rf_build_collection(b, AGG "/ConnectionMethods", "ConnectionMethodCollection",
					    "Connection methods", json_pack("[s]", cm));
	return rc;
}
