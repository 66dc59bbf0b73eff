/* test_topo_export.c - broker/cli/topo_export.c: the switch tree of a
 * fabric map as a Slurm topology.conf and JSON, its blast radius and diff;
 * and the map the broker renders (with its inter-switch links) through it. */
#include "fabric_map.h"
#include "fb_test.h"
#include "fb_test_fabric.h"
#include "inventory.h"
#include "topo_export.h"

#include <jansson.h>

/* Two leaves, two spines; spine2 did not report its port to leaf2 (one
 * end only); a switch whose description Slurm cannot take; spine3 with no
 * link (not in the tree); an unnamed host on leaf2[5]; leaf3 with only an
 * unnamed host (a leaf, not above the spines, and left out). */
static const char *MAP =
	"{\"Fabric\":\"ib0\",\"LastEventId\":9,"
	"\"Nodes\":{"
	" \"node001\":{\"Jobs\":[],\"Ports\":[{\"Device\":\"mlx5_0\",\"Port\":1,\"SwitchGUID\":\"0x01\",\"Switch\":\"leaf1\",\"SwitchPort\":1,\"LinkState\":\"up\",\"Technology\":\"IB\"}]},"
	" \"node002\":{\"Jobs\":[],\"Ports\":[{\"Device\":\"mlx5_0\",\"Port\":1,\"SwitchGUID\":\"0x01\",\"Switch\":\"leaf1\",\"SwitchPort\":2,\"LinkState\":\"down\",\"Technology\":\"IB\"}]},"
	" \"node003\":{\"Jobs\":[],\"Ports\":[{\"Device\":\"mlx5_0\",\"Port\":1,\"SwitchGUID\":\"0x01\",\"Switch\":\"leaf1\",\"SwitchPort\":3,\"LinkState\":\"up\",\"Technology\":\"IB\"}]},"
	" \"gpu7\":{\"Jobs\":[],\"Ports\":[{\"Device\":\"mlx5_0\",\"Port\":1,\"SwitchGUID\":\"0x02\",\"Switch\":\"MF0;l2:X\",\"SwitchPort\":1,\"LinkState\":\"up\",\"Technology\":\"IB\"}]},"
	" \"lonely\":{\"Jobs\":[\"4\"],\"Ports\":[{\"Device\":\"mlx5_0\",\"Port\":1,\"Technology\":\"IB\"}]}},"
	"\"Switches\":{"
	" \"0x01\":{\"Name\":\"leaf1\",\"Hosts\":[],\"Ports\":[{\"LinkState\":\"up\",\"Port\":1},{\"LinkState\":\"down\",\"Port\":2},{\"LinkState\":\"up\",\"Port\":3},"
	"   {\"LinkState\":\"up\",\"Peer\":\"0x11\",\"PeerPort\":1,\"Port\":33},{\"LinkState\":\"down\",\"Peer\":\"0x12\",\"PeerPort\":1,\"Port\":34}],\"Reachable\":true},"
	" \"0x02\":{\"Name\":\"MF0;l2:X\",\"Hosts\":[],\"Ports\":[{\"LinkState\":\"up\",\"Port\":1},{\"LinkState\":\"up\",\"Port\":5},"
	"   {\"LinkState\":\"up\",\"Peer\":\"0x11\",\"PeerPort\":2,\"Port\":33},{\"LinkState\":\"up\",\"Peer\":\"0x12\",\"PeerPort\":2,\"Port\":34}],\"Reachable\":true},"
	" \"0x03\":{\"Name\":\"leaf3\",\"Hosts\":[],\"Ports\":[{\"LinkState\":\"up\",\"Port\":1},{\"LinkState\":\"up\",\"Peer\":\"0x11\",\"PeerPort\":3,\"Port\":33}],\"Reachable\":true},"
	" \"0x11\":{\"Name\":\"spine1\",\"Hosts\":[],\"Ports\":[{\"LinkState\":\"up\",\"Peer\":\"0x01\",\"PeerPort\":33,\"Port\":1},{\"LinkState\":\"up\",\"Peer\":\"0x02\",\"PeerPort\":33,\"Port\":2},{\"LinkState\":\"up\",\"Peer\":\"0x03\",\"PeerPort\":33,\"Port\":3}],\"Reachable\":true},"
	" \"0x12\":{\"Name\":\"spine2\",\"Hosts\":[],\"Ports\":[{\"LinkState\":\"down\",\"Peer\":\"0x01\",\"PeerPort\":34,\"Port\":1}],\"Reachable\":true},"
	" \"0x13\":{\"Name\":\"spine3\",\"Hosts\":[],\"Ports\":[],\"Reachable\":true}}}";

static void slurm_form_is_the_switch_tree(void)
{
	json_t *map = json_loads(MAP, 0, NULL);
	CHECK(map);
	struct fb_topo_export_stats st;
	char err[200] = "";
	char *s = fb_topo_export_slurm(map, &st, err, sizeof(err));
	CHECK_STR(err, "");
	CHECK_STR(s, "# Slurm topology.conf (TopologyPlugin=topology/tree) written by `fabricbus topology` "
		     "from fabric \"ib0\":\n# 4 switches, 4 nodes.\n"
		     "SwitchName=leaf1 Nodes=node[001-003]\n"
		     "SwitchName=sw02 Nodes=gpu7\n"
		     "SwitchName=spine1 Switches=leaf1,sw02\n"
		     "SwitchName=spine2 Switches=leaf1,sw02\n");
	CHECK_EQ(st.switches, 6);
	CHECK_EQ(st.tree_switches, 4);
	CHECK_EQ(st.nodes, 4);          /* "lonely" has no switch port */
	CHECK_EQ(st.links, 5);          /* leaf1-spine1 once, though both ends said it */
	CHECK_EQ(st.unnamed_hosts, 2);  /* 0x02 port 5, leaf3 port 1 */
	/* Same map, same bytes. */
	char *again = fb_topo_export_slurm(map, NULL, err, sizeof(err));
	CHECK_STR(again, s);
	free(again);
	free(s);
	json_decref(map);
}

static void json_form_has_switches_links_and_node_ports(void)
{
	json_t *map = json_loads(MAP, 0, NULL);
	char err[200] = "";
	json_t *j = fb_topo_export_json(map, NULL, err, sizeof(err));
	CHECK(j);
	json_t *sws = json_object_get(j, "Switches");
	CHECK_EQ(json_array_size(sws), 6);
	json_t *l2 = json_array_get(sws, 1);
	CHECK_STR(json_string_value(json_object_get(l2, "Name")), "MF0;l2:X");
	CHECK_STR(json_string_value(json_object_get(l2, "SlurmName")), "sw02");
	CHECK_EQ(json_integer_value(json_object_get(l2, "Level")), 0);
	CHECK_EQ(json_integer_value(json_object_get(json_array_get(sws, 2), "Level")), 0); /* leaf3 */
	json_t *s3 = json_array_get(sws, 5);
	CHECK(json_is_null(json_object_get(s3, "Level")));
	json_t *s1 = json_array_get(sws, 3);
	CHECK_EQ(json_array_size(json_object_get(s1, "Switches")), 3); /* leaf3 too */
	json_t *links = json_object_get(j, "Links");
	CHECK_EQ(json_array_size(links), 5);
	json_t *l = json_array_get(links, 1); /* leaf1[34] - spine2[1] */
	CHECK_STR(json_string_value(json_object_get(l, "Switch")), "0x01");
	CHECK_EQ(json_integer_value(json_object_get(l, "Port")), 34);
	CHECK_STR(json_string_value(json_object_get(l, "PeerSwitch")), "0x12");
	CHECK_STR(json_string_value(json_object_get(l, "LinkState")), "down");
	json_t *nodes = json_object_get(j, "Nodes");
	CHECK_EQ(json_array_size(nodes), 4);
	CHECK_STR(json_string_value(json_object_get(json_array_get(nodes, 0), "Node")), "gpu7");
	CHECK_STR(json_string_value(json_object_get(json_array_get(nodes, 2), "LinkState")), "down");
	json_decref(j);
	json_decref(map);
	/* Not a map. */
	map = json_loads("{\"Nodes\":[]}", 0, NULL);
	CHECK(!fb_topo_export_json(map, NULL, err, sizeof(err)));
	CHECK(strstr(err, "not a fabric map"));
	json_decref(map);
}

static void check_blast(json_t *map, const char *what, const char *no_path, const char *degraded,
			json_int_t ok)
{
	char err[200] = "";
	json_t *b = fb_topo_blast_json(map, what, err, sizeof(err));
	CHECK(b);
	CHECK_STR(json_string_value(json_object_get(b, "NoPath")), no_path);
	CHECK_STR(json_string_value(json_object_get(b, "Degraded")), degraded);
	CHECK_EQ(json_integer_value(json_object_get(json_object_get(b, "Counts"), "ok")), ok);
	json_decref(b);
}

/* The map's own state (node002's port down, leaf1[34]-spine2 down), then
 * what-ifs on top of it. */
static void blast_radius_now_and_what_if(void)
{
	json_t *map = json_loads(MAP, 0, NULL);
	CHECK(map);
	check_blast(map, NULL, "node002", "node[001,003]", 1);
	/* leaf1's last uplink is to spine1: without it leaf1 is cut off. */
	check_blast(map, "spine1", "node[001-003]", "gpu7", 0);
	check_blast(map, "0x11", "node[001-003]", "gpu7", 0);
	check_blast(map, "MF0;l2:X:1", "gpu7,node002", "node[001,003]", 0);
	check_blast(map, "leaf1:33", "node[001-003]", "", 1);
	char err[200] = "";
	CHECK(!fb_topo_blast_json(map, "nosuch", err, sizeof(err)));
	CHECK(strstr(err, "no switch named \"nosuch\""));
	CHECK(!fb_topo_blast_json(map, "leaf1:17", err, sizeof(err)));
	CHECK(strstr(err, "port 17"));
	json_decref(map);
}

static void diff_lists_removed_then_added_lines(void)
{
	char *d = fb_topo_line_diff("# x\nA a\nB b\n", "# x\nB b\nC c\n");
	CHECK_STR(d, "-A a\n+C c\n");
	free(d);
	d = fb_topo_line_diff("same\n", "same\n");
	CHECK_STR(d, "");
	free(d);
	d = fb_topo_line_diff("", "new\n");
	CHECK_STR(d, "+new\n");
	free(d);
}

/* The broker's own render (fabric_render.c) carries the inter-switch links
 * the tree needs: node001..node008 on leaf1, leaf1[33] to a spine. */
static void broker_map_gives_a_two_level_tree(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "ibsim");
	CHECK(inv && m);
	learn_rig(inv, m);
	struct fb_event isl = isl_event(FB_KIND_TOPOLOGY, 0x0008f10400411c08ULL, "spine1", 1, LEAF1, 33, 4);
	fb_fabric_map_learn(m, &isl);
	size_t len;
	char *text = fb_fabric_map_render(m, 1, &len);
	json_t *map = text ? json_loadb(text, len, 0, NULL) : NULL;
	free(text);
	CHECK(map);
	char err[200] = "";
	struct fb_topo_export_stats st;
	char *s = fb_topo_export_slurm(map, &st, err, sizeof(err));
	json_decref(map);
	CHECK(s);
	CHECK(strstr(s, "\nSwitchName=leaf1 Nodes=node[001-008]\nSwitchName=spine1 Switches=leaf1\n"));
	CHECK_EQ(st.links, 1);
	free(s);
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

int main(void)
{
	RUN(slurm_form_is_the_switch_tree);
	RUN(json_form_has_switches_links_and_node_ports);
	RUN(blast_radius_now_and_what_if);
	RUN(diff_lists_removed_then_added_lines);
	RUN(broker_map_gives_a_two_level_tree);
	return TEST_DONE();
}
