/* ib_mad.c - SMP queries over one local CA port (libibmad over umad). */
#include "ib_mad.h"

#include "fb_log.h"

#include <errno.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ib_mad {
	struct ibmad_port *port;
	int timeout_ms;
	void *umad;        /* receive buffer for Reports, umad_size() + IB_MAD_SIZE */
};

/* pma_query_via copies the answer's data part (from IB_PC_DATA_OFFS) here;
 * room for a whole MAD, as perfquery keeps. */
#define PMA_BUF_SZ 1024

int ib_mad_open(const char *ca, int port, int timeout_ms, int retries, struct ib_mad **out)
{
	/* IB_SA_CLASS: InformInfo subscriptions and the Reports they bring. */
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS, IB_SA_CLASS };
	struct ib_mad *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* libibmad takes a non-const name; keep our copy. */
	char name[UMAD_CA_NAME_LEN] = "";
	if (ca)
		snprintf(name, sizeof(name), "%s", ca);
	m->port = mad_rpc_open_port(ca ? name : NULL, port, classes,
				    (int)(sizeof(classes) / sizeof(classes[0])));
	if (!m->port) {
		fb_log_err("cannot open IB port %s:%d (is the CA present and umad loaded? "
			   "try --ca/--ca-port)", ca ? ca : "<first CA>", port);
		free(m);
		return -ENODEV;
	}
	m->umad = calloc(1, (size_t)umad_size() + IB_MAD_SIZE);
	if (!m->umad) {
		mad_rpc_close_port(m->port);
		free(m);
		return -ENOMEM;
	}
	mad_rpc_set_timeout(m->port, timeout_ms);
	mad_rpc_set_retries(m->port, retries);
	m->timeout_ms = timeout_ms;
	*out = m;
	return 0;
}

void ib_mad_close(struct ib_mad *m)
{
	if (!m)
		return;
	mad_rpc_close_port(m->port);
	free(m->umad);
	free(m);
}

int ib_dr_extend(const struct ib_dr *in, uint8_t port, struct ib_dr *out)
{
	if (in->n >= IB_DR_MAX_HOPS)
		return -E2BIG;
	*out = *in;
	out->hops[out->n++] = port;
	return 0;
}

void ib_dr_format(const struct ib_dr *dr, char *buf, unsigned bufsz)
{
	unsigned off = 0;
	int w = snprintf(buf, bufsz, "0");
	for (unsigned i = 0; w > 0 && (off += (unsigned)w) < bufsz && i < dr->n; i++)
		w = snprintf(buf + off, bufsz - off, ",%u", dr->hops[i]);
}

/* libibmad's DR path: p[0] is the (unused) local hop, p[1..cnt] the ports;
 * 0xffff source/destination LIDs mean "directed all the way". */
static void to_portid(const struct ib_dr *dr, ib_portid_t *id)
{
	memset(id, 0, sizeof(*id));
	id->drpath.cnt = dr->n;
	id->drpath.p[0] = 0;
	memcpy(&id->drpath.p[1], dr->hops, dr->n);
	id->drpath.drslid = 0xffff;
	id->drpath.drdlid = 0xffff;
}

static int query(struct ib_mad *m, const struct ib_dr *dr, unsigned attr, unsigned mod,
		 uint8_t buf[IB_SMP_DATA_SIZE])
{
	ib_portid_t id;
	to_portid(dr, &id);
	memset(buf, 0, IB_SMP_DATA_SIZE);
	int status = 0;
	if (!smp_query_status_via(buf, &id, attr, mod, 0, &status, m->port))
		return -ETIMEDOUT;
	return status ? -EPROTO : 0; /* a MAD status (bad attribute/port) is an answer, not a loss */
}

int ib_mad_node_info(struct ib_mad *m, const struct ib_dr *dr, struct ib_node_info *ni)
{
	uint8_t buf[IB_SMP_DATA_SIZE];
	int rc = query(m, dr, IB_ATTR_NODE_INFO, 0, buf);
	if (rc)
		return rc;
	ni->type = (uint8_t)mad_get_field(buf, 0, IB_NODE_TYPE_F);
	ni->nports = (uint8_t)mad_get_field(buf, 0, IB_NODE_NPORTS_F);
	ni->local_port = (uint8_t)mad_get_field(buf, 0, IB_NODE_LOCAL_PORT_F);
	ni->guid = mad_get_field64(buf, 0, IB_NODE_GUID_F);
	return 0;
}

int ib_mad_node_desc(struct ib_mad *m, const struct ib_dr *dr, char desc[IB_DESC_SZ])
{
	uint8_t buf[IB_SMP_DATA_SIZE];
	int rc = query(m, dr, IB_ATTR_NODE_DESC, 0, buf);
	if (rc)
		return rc;
	/* Bytes from the fabric: keep printable ASCII so logs and UTF-8 checks hold. */
	unsigned i;
	for (i = 0; i < IB_DESC_SZ - 1 && buf[i]; i++)
		desc[i] = buf[i] >= 0x20 && buf[i] < 0x7f ? (char)buf[i] : '?';
	desc[i] = '\0';
	return 0;
}

int ib_mad_port_info(struct ib_mad *m, const struct ib_dr *dr, unsigned port,
		     struct ib_port_info *pi)
{
	uint8_t buf[IB_SMP_DATA_SIZE];
	int rc = query(m, dr, IB_ATTR_PORT_INFO, port, buf);
	if (rc)
		return rc;
	pi->state = (uint8_t)mad_get_field(buf, 0, IB_PORT_STATE_F);
	pi->phys = (uint8_t)mad_get_field(buf, 0, IB_PORT_PHYS_STATE_F);
	pi->width = (uint8_t)mad_get_field(buf, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
	pi->speed = (uint8_t)mad_get_field(buf, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
	return 0;
}

int ib_mad_switch_lid(struct ib_mad *m, const struct ib_dr *dr, uint16_t *lid)
{
	uint8_t buf[IB_SMP_DATA_SIZE];
	int rc = query(m, dr, IB_ATTR_PORT_INFO, 0, buf);
	if (rc)
		return rc;
	*lid = (uint16_t)mad_get_field(buf, 0, IB_PORT_LID_F);
	return 0;
}

static int pma(struct ib_mad *m, uint16_t lid, unsigned port, unsigned attr,
	       uint8_t buf[PMA_BUF_SZ])
{
	ib_portid_t id;
	memset(&id, 0, sizeof(id));
	memset(buf, 0, PMA_BUF_SZ);
	if (ib_portid_set(&id, lid, 0, 0) != 0)
		return -EINVAL;
	if (!pma_query_via(buf, &id, (int)port, (unsigned)m->timeout_ms, attr, m->port))
		return -ETIMEDOUT;
	return 0;
}

int ib_mad_pma_capmask(struct ib_mad *m, uint16_t lid, uint16_t *capmask)
{
	uint8_t buf[PMA_BUF_SZ];
	int rc = pma(m, lid, 0, CLASS_PORT_INFO, buf);
	if (rc)
		return rc;
	*capmask = (uint16_t)mad_get_field(buf, 0, IB_CPI_CAPMASK_F);
	return 0;
}

int ib_mad_pma_counters(struct ib_mad *m, uint16_t lid, unsigned port,
			struct ib_pma_counters *pc)
{
	uint8_t buf[PMA_BUF_SZ];
	int rc = pma(m, lid, port, IB_GSI_PORT_COUNTERS, buf);
	if (rc)
		return rc;
	pc->symbol_error = mad_get_field(buf, 0, IB_PC_ERR_SYM_F);
	pc->link_error_recovery = mad_get_field(buf, 0, IB_PC_LINK_RECOVERS_F);
	pc->link_downed = mad_get_field(buf, 0, IB_PC_LINK_DOWNED_F);
	pc->rcv_errors = mad_get_field(buf, 0, IB_PC_ERR_RCV_F);
	pc->xmit_discards = mad_get_field(buf, 0, IB_PC_XMT_DISCARDS_F);
	pc->xmit_wait = mad_get_field(buf, 0, IB_PC_XMT_WAIT_F);
	return 0;
}

int ib_mad_pma_counters_ext(struct ib_mad *m, uint16_t lid, unsigned port,
			    struct ib_pma_ext *pe)
{
	uint8_t buf[PMA_BUF_SZ];
	int rc = pma(m, lid, port, IB_GSI_PORT_COUNTERS_EXT, buf);
	if (rc)
		return rc;
	pe->xmit_data = mad_get_field64(buf, 0, IB_PC_EXT_XMT_BYTES_F);
	pe->rcv_data = mad_get_field64(buf, 0, IB_PC_EXT_RCV_BYTES_F);
	pe->xmit_pkts = mad_get_field64(buf, 0, IB_PC_EXT_XMT_PKTS_F);
	pe->rcv_pkts = mad_get_field64(buf, 0, IB_PC_EXT_RCV_PKTS_F);
	return 0;
}

int ib_mad_local_sm(struct ib_mad *m, uint16_t *lid, uint16_t *sm_lid)
{
	struct ib_dr local = { 0 };
	struct ib_node_info ni;
	int rc = ib_mad_node_info(m, &local, &ni);
	if (rc)
		return rc;
	uint8_t buf[IB_SMP_DATA_SIZE];
	rc = query(m, &local, IB_ATTR_PORT_INFO, ni.local_port, buf);
	if (rc)
		return rc;
	*lid = (uint16_t)mad_get_field(buf, 0, IB_PORT_LID_F);
	*sm_lid = (uint16_t)mad_get_field(buf, 0, IB_PORT_SMLID_F);
	return 0;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int ib_mad_sa_inform(struct ib_mad *m, uint16_t sm_lid, uint16_t trap, int subscribe,
		     unsigned *status)
{
	/* InformInfo (IBA 14.2.5.12), big-endian: GID 0 and LIDRangeBegin 0xFFFF
	 * (all sources), IsGeneric, Subscribe, Type 0xFFFF (all), TrapNumber,
	 * QPN 1 (our GSI QP) | RespTimeValue, ProducerType 0xFFFFFF (all). */
	uint8_t buf[IB_SA_DATA_SIZE] = { 0 };
	put16(buf + 16, 0xffff);
	buf[22] = 1;
	buf[23] = subscribe ? 1 : 0;
	put16(buf + 24, 0xffff);
	put16(buf + 26, trap);
	buf[28] = 0;
	buf[29] = 0;
	buf[30] = 1;
	buf[31] = 18; /* RespTimeValue: 4.096 us * 2^18, about 1 s */
	buf[33] = buf[34] = buf[35] = 0xff;

	ib_rpc_t rpc;
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = IB_SA_CLASS;
	rpc.method = IB_MAD_METHOD_SET;
	rpc.attr.id = IB_SA_ATTR_INFORMINFO;
	rpc.attr.mod = 0;
	rpc.timeout = (unsigned)m->timeout_ms;
	rpc.datasz = IB_SA_DATA_SIZE;
	rpc.dataoffs = IB_SA_DATA_OFFS;
	ib_portid_t id;
	memset(&id, 0, sizeof(id));
	if (ib_portid_set(&id, sm_lid, 1, IB_DEFAULT_QP1_QKEY) != 0)
		return -EINVAL;
	*status = 0;
	uint8_t *p = mad_rpc(m->port, &rpc, &id, buf, buf);
	*status = (unsigned)rpc.rstatus;
	if (!p)
		return rpc.rstatus ? -EPROTO : -ETIMEDOUT;
	/* The SA echoes the InformInfo; Subscribe 0 there is a refusal too. */
	if (rpc.rstatus || (subscribe && buf[23] != 1))
		return -EPROTO;
	return 0;
}

int ib_mad_recv_report(struct ib_mad *m, struct ib_report *r)
{
	int fd = mad_rpc_portid(m->port);
	int agent = mad_rpc_class_agent(m->port, IB_SA_CLASS);
	int len = IB_MAD_SIZE;
	memset(m->umad, 0, (size_t)umad_size() + IB_MAD_SIZE);
	if (fd < 0 || agent < 0 || umad_recv(fd, m->umad, &len, 0) < 0)
		return 0; /* -EWOULDBLOCK: nothing waiting */
	if (len < IB_SA_DATA_OFFS + 20)
		return 0;
	uint8_t *mad = umad_get_mad(m->umad);
	if (mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F) != IB_SA_CLASS ||
	    mad_get_field(mad, 0, IB_MAD_METHOD_F) != IB_MAD_METHOD_REPORT ||
	    mad_get_field(mad, 0, IB_MAD_ATTRID_F) != IB_SA_ATTR_NOTICE)
		return 0; /* a late answer to one of our requests: mad_rpc gave up on it */
	uint8_t *notice = mad + IB_SA_DATA_OFFS;
	r->generic = (uint8_t)mad_get_field(notice, 0, IB_NOTICE_IS_GENERIC_F);
	r->trap = (uint16_t)mad_get_field(notice, 0, IB_NOTICE_TRAP_NUMBER_F);
	r->issuer_lid = (uint16_t)mad_get_field(notice, 0, IB_NOTICE_ISSUER_LID_F);
	/* The SA resends a Report until it sees the ReportResponse. */
	if (mad_respond_via(m->umad, NULL, 0, m->port) < 0)
		fb_log_debug("cannot send the ReportResponse for trap %u", r->trap);
	return 1;
}
