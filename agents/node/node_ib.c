/* node_ib.c - the local InfiniBand CA ports, read through libibumad. */
#include "node_ib.h"

#include "fb_log.h"

#include <endian.h>
#include <errno.h>
#include <infiniband/umad.h>
#include <stdio.h>
#include <string.h>

#define CAS_MAX 32

int node_ib_init(void)
{
	return umad_init() < 0 ? -EIO : 0;
}

static void fill_port(struct node_port *p, const umad_ca_t *ca, const umad_port_t *up)
{
	memset(p, 0, sizeof(*p));
	p->tech = FB_TECH_IB;
	snprintf(p->device, sizeof(p->device), "%s", ca->ca_name);
	p->port = (uint16_t)up->portnum;
	p->node_guid = be64toh(ca->node_guid);
	p->port_guid = be64toh(up->port_guid);
	p->lid = (uint16_t)up->base_lid;
	p->port_state = (uint8_t)up->state;
	p->phys_state = (uint8_t)up->phys_state;
	p->up = up->phys_state == 5; /* PhysPortState LinkUp */
}

int node_ib_scan(struct node_port *out, size_t max, size_t *n)
{
	char names[CAS_MAX][UMAD_CA_NAME_LEN];
	*n = 0;
	int ncas = umad_get_cas_names(names, CAS_MAX);
	if (ncas < 0)
		return -EIO;
	for (int i = 0; i < ncas; i++) {
		umad_ca_t ca;
		if (umad_get_ca(names[i], &ca) < 0) {
			fb_log_debug("CA %s: cannot read it from sysfs; skipped this round", names[i]);
			continue;
		}
		for (int pn = 0; pn < UMAD_CA_MAX_PORTS; pn++) {
			const umad_port_t *up = ca.ports[pn];
			if (!up)
				continue;
			if (*n == max) {
				fb_log_warn("more than %zu IB ports: the rest are not reported", max);
				break;
			}
			fill_port(&out[(*n)++], &ca, up);
		}
		umad_release_ca(&ca);
	}
	return 0;
}
