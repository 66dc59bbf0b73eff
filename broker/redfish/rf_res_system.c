/* rf_res_system.c - /redfish/v1/Systems: a minimal ComputerSystem per node
 * of the fabric map (inventoried ports or registered jobs), linked to its
 * Endpoints, with one NetworkInterface per adapter (the node-side
 * OriginOfCondition: Systems/{node}/NetworkInterfaces/{device}). */
#include "rf_res.h"

#include "rf_service.h"

#include <stdio.h>
#include <string.h>

#define P_MAX 1024

static int add_interface(struct fb_rf_build *b, const char *sys, const char *dev, json_t *ports)
{
	char path[P_MAX];
	fb_rf_path_cat(path, sizeof(path), sys, "/NetworkInterfaces");
	fb_rf_path_append(path, sizeof(path), dev);
	(void)ports;
	json_t *o = json_pack("{s:s,s:s,s:s,s:{s:s}}", "@odata.type",
			      "#NetworkInterface.v1_2_3.NetworkInterface", "Id", dev, "Name", dev,
			      "Status", "State", "Enabled");
	return fb_rf_build_add(b, path, "NetworkInterface", o);
}

/* Ports of the node grouped by Device: {"mlx5_0": [port, ...]}. */
static json_t *by_device(const json_t *node)
{
	json_t *d = json_object();
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(node, "Ports"), i, p) {
		const char *dev = json_string_value(json_object_get(p, "Device"));
		if (!dev)
			continue;
		json_t *l = json_object_get(d, dev);
		if (!l) {
			l = json_array();
			json_object_set_new(d, dev, l);
		}
		json_array_append(l, p);
	}
	return d;
}

/* The Slurm jobs on the node, for people: "Slurm jobs: 12, 13". */
static void jobs_text(json_t *o, const json_t *jobs)
{
	char d[512] = "Slurm jobs: none";
	size_t n = strlen("Slurm jobs: "), i;
	json_t *j;
	json_array_foreach(jobs, i, j)
		if (n + 24 < sizeof(d))
			n += (size_t)snprintf(d + n, sizeof(d) - n, "%s%s", i ? ", " : "",
					      json_string_value(j) ? json_string_value(j) : "?");
	json_object_set_new(o, "Description", json_string(d));
}

static int add_system(struct fb_rf_build *b, const char *name, const json_t *node, json_t *members)
{
	const struct fb_rf_service *svc = fb_rf_build_service(b);
	char sys[P_MAX], nics[P_MAX], ep[P_MAX];
	snprintf(sys, sizeof(sys), "/redfish/v1/Systems");
	fb_rf_path_append(sys, sizeof(sys), name);
	fb_rf_path_cat(nics, sizeof(nics), sys, "/NetworkInterfaces");
	json_array_append_new(members, json_string(sys));
	json_t *eps = json_array(), *nic_paths = json_array(), *devs = by_device(node);
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(node, "Ports"), i, p) {
		fb_rf_endpoint_path(ep, sizeof(ep), svc->fabric, name, p);
		json_array_append_new(eps, fb_rf_ref(ep));
	}
	int rc = 0;
	const char *dev;
	json_object_foreach(devs, dev, p) {
		char np[P_MAX];
		snprintf(np, sizeof(np), "%s", nics);
		fb_rf_path_append(np, sizeof(np), dev);
		json_array_append_new(nic_paths, json_string(np));
		if (!rc)
			rc = add_interface(b, sys, dev, p);
	}
	json_decref(devs);
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s},s:o,s:{s:o}}", "@odata.type",
			      "#ComputerSystem.v1_27_0.ComputerSystem", "Id", name, "Name", name,
			      "SystemType", "Physical", "HostName", name, "Status", "State", "Enabled",
			      "NetworkInterfaces", fb_rf_ref(nics), "Links", "Endpoints", eps);
	jobs_text(o, json_object_get(node, "Jobs"));
	if (!rc)
		rc = fb_rf_build_add(b, sys, "ComputerSystem", o);
	else
		json_decref(o);
	if (!rc)
		rc = fb_rf_build_collection(b, nics, "NetworkInterfaceCollection", "Network interfaces",
					    nic_paths);
	else
		json_decref(nic_paths);
	return rc;
}

int fb_rf_res_systems(struct fb_rf_build *b, const json_t *map)
{
	json_t *members = json_array();
	const char *name;
	json_t *node;
	int rc = 0;
	json_object_foreach(json_object_get(map, "Nodes"), name, node) {
		rc = add_system(b, name, node, members);
		if (rc)
			break;
	}
	if (rc) {
		json_decref(members);
		return rc;
	}
	return fb_rf_build_collection(b, "/redfish/v1/Systems", "ComputerSystemCollection", "Systems",
				      members);
}
