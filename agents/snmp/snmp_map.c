/* snmp_map.c - one received trap (a parsed net-snmp PDU) -> one fb_event. */
#include "snmp_map.h"

#include "fb_err.h"
#include "snmp_ifcore.h"

#include <stdio.h>
#include <string.h>

/* IF-MIB and SNMPv2-MIB, numerically: Debian ships no MIB files. */
static const oid snmp_trap_oid0[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
static const oid snmp_traps[] = { 1, 3, 6, 1, 6, 3, 1, 1, 5 };     /* .3 linkDown, .4 linkUp */
static const oid if_entry[] = { 1, 3, 6, 1, 2, 1, 2, 2, 1 };       /* .1 ifIndex .2 ifDescr */
static const oid ifx_entry[] = { 1, 3, 6, 1, 2, 1, 31, 1, 1, 1 };  /* .1 ifName */
#define IF_INDEX 1
#define IF_DESCR 2
#define IF_ADMIN 7
#define IF_OPER 8
#define IFX_NAME 1
#define TRAP_LINK_DOWN 3
#define TRAP_LINK_UP 4
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

struct trap_vars {
	uint32_t ifindex;
	int admin, oper;
	const u_char *name, *descr;
	size_t name_len, descr_len;
};

static int has_prefix(const oid *o, size_t len, const oid *p, size_t plen)
{
	return len > plen && memcmp(o, p, plen * sizeof(oid)) == 0;
}

/* The column of a table entry OID "entry.col.index" with one index, or -1. */
static int column(const netsnmp_variable_list *v, const oid *entry, size_t elen, uint32_t *index)
{
	if (v->name_length != elen + 2 || !has_prefix(v->name, v->name_length, entry, elen))
		return -1;
	if (v->name[elen + 1] == 0 || v->name[elen + 1] > INT32_MAX)
		return -1;
	*index = (uint32_t)v->name[elen + 1];
	return (int)v->name[elen];
}

static int int_value(const netsnmp_variable_list *v, int *out)
{
	if (v->type != ASN_INTEGER || !v->val.integer || v->val_len < sizeof(long))
		return -1;
	*out = (int)*v->val.integer;
	return 0;
}

static void scan_vars(const netsnmp_variable_list *v, struct trap_vars *tv)
{
	for (; v; v = v->next_variable) {
		uint32_t idx;
		int col = column(v, if_entry, LEN(if_entry), &idx), val;
		if (col < 0) {
			if (column(v, ifx_entry, LEN(ifx_entry), &idx) == IFX_NAME &&
			    v->type == ASN_OCTET_STR && v->val.string) {
				tv->name = v->val.string;
				tv->name_len = v->val_len;
				tv->ifindex = tv->ifindex ? tv->ifindex : idx;
			}
			continue;
		}
		switch (col) {
		case IF_INDEX:
			if (int_value(v, &val) == 0 && val > 0)
				tv->ifindex = (uint32_t)val;
			break;
		case IF_DESCR:
			if (v->type == ASN_OCTET_STR && v->val.string) {
				tv->descr = v->val.string;
				tv->descr_len = v->val_len;
			}
			break;
		case IF_ADMIN:
			if (int_value(v, &val) == 0)
				tv->admin = val;
			break;
		case IF_OPER:
			if (int_value(v, &val) == 0)
				tv->oper = val;
			break;
		default: continue;
		}
		if (!tv->ifindex)
			tv->ifindex = idx;
	}
}

/* Printable ASCII of an OCTET STRING into a field (other bytes -> '?'). */
static void copy_text(char *dst, size_t dstsz, const u_char *s, size_t n)
{
	size_t i = 0;
	for (; i < n && i + 1 < dstsz && s[i]; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	dst[i] = '\0';
}

/* The trap's OID into buf; its length, or 0 when it has none. */
static size_t trap_oid(const netsnmp_pdu *pdu, oid *buf, size_t max)
{
	if (pdu->command == SNMP_MSG_TRAP) { /* v1: RFC 3584 section 3.1 */
		if (pdu->trap_type >= 0 && pdu->trap_type <= 5) {
			memcpy(buf, snmp_traps, sizeof(snmp_traps));
			buf[LEN(snmp_traps)] = (oid)pdu->trap_type + 1;
			return LEN(snmp_traps) + 1;
		}
		if (pdu->trap_type != 6 || !pdu->enterprise || pdu->enterprise_length + 2 > max ||
		    pdu->specific_type < 0)
			return 0;
		memcpy(buf, pdu->enterprise, pdu->enterprise_length * sizeof(oid));
		buf[pdu->enterprise_length] = 0;
		buf[pdu->enterprise_length + 1] = (oid)pdu->specific_type;
		return pdu->enterprise_length + 2;
	}
	for (const netsnmp_variable_list *v = pdu->variables; v; v = v->next_variable)
		if (v->name_length == LEN(snmp_trap_oid0) &&
		    memcmp(v->name, snmp_trap_oid0, sizeof(snmp_trap_oid0)) == 0) {
			if (v->type != ASN_OBJECT_ID || !v->val.objid || v->val_len % sizeof(oid) ||
			    v->val_len / sizeof(oid) > max || v->val_len == 0)
				return 0;
			memcpy(buf, v->val.objid, v->val_len);
			return v->val_len / sizeof(oid);
		}
	return 0;
}

static void fill_subject(const struct snmp_map_ctx *m, const char *sender,
			 const struct trap_vars *tv, struct fb_event *ev)
{
	const struct snmp_conf_switch *sw = m->conf ? snmp_conf_switch(m->conf, sender) : NULL;
	ev->tech = FB_TECH_ETH;
	ev->link_class = sw && sw->link_class != 0xff ? sw->link_class
						      : m->conf ? m->conf->link_class : 0;
	ev->ts_ns = fb_now_ns();
	if (m->fabric)
		(void)fb_strlcpy_field(ev->subj.fabric, sizeof(ev->subj.fabric), m->fabric);
	(void)fb_strlcpy_field(ev->subj.addr, sizeof(ev->subj.addr), sender);
	(void)fb_strlcpy_field(ev->subj.switch_name, sizeof(ev->subj.switch_name),
			       sw ? sw->name : sender);
	ev->subj.ifindex = tv->ifindex;
	if (tv->name && tv->name_len)
		copy_text(ev->subj.device, sizeof(ev->subj.device), tv->name, tv->name_len);
	else if (tv->descr && tv->descr_len)
		copy_text(ev->subj.device, sizeof(ev->subj.device), tv->descr, tv->descr_len);
	else if (m->ifname && tv->ifindex) {
		const char *n = m->ifname(m->ifname_arg, sender, tv->ifindex);
		if (n)
			copy_text(ev->subj.device, sizeof(ev->subj.device), (const u_char *)n,
				  strlen(n));
	}
	if (m->peer && tv->ifindex)
		snmp_ifc_put_peer(ev, m->peer(m->peer_arg, sender, tv->ifindex));
}

int snmp_map_trap(const struct snmp_map_ctx *m, const char *sender, const netsnmp_pdu *pdu,
		  struct fb_event *ev, const char **why)
{
	oid t[SNMP_CONF_OID_MAX];
	size_t tlen = trap_oid(pdu, t, LEN(t));
	struct trap_vars tv = { 0 };
	memset(ev, 0, sizeof(*ev));
	if (!tlen) {
		*why = "no snmpTrapOID.0 varbind (or a malformed one)";
		return FB_EMALFORMED;
	}
	scan_vars(pdu->variables, &tv);
	int link = tlen == LEN(snmp_traps) + 1 && has_prefix(t, tlen, snmp_traps, LEN(snmp_traps)) &&
		   (t[tlen - 1] == TRAP_LINK_DOWN || t[tlen - 1] == TRAP_LINK_UP) ? (int)t[tlen - 1] : 0;
	const struct snmp_conf_trap *rule = NULL;
	if (!link && m->conf) {
		uint32_t o32[SNMP_CONF_OID_MAX];
		for (size_t i = 0; i < tlen; i++)
			o32[i] = t[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)t[i];
		rule = snmp_conf_trap(m->conf, o32, tlen);
	}
	if (!link && !rule)
		return SNMP_MAP_IGNORED;
	if (link && !tv.ifindex) {
		*why = "linkDown/linkUp without an ifIndex";
		return FB_EMALFORMED;
	}
	fill_subject(m, sender, &tv, ev);
	if (tv.oper > 0 && tv.oper < 256)
		ev->port_state = (uint8_t)tv.oper;
	const char *port = ev->subj.device[0] ? ev->subj.device : "?";
	if (rule) {
		ev->kind = rule->kind;
		ev->severity = rule->severity;
		char o[64];
		size_t n = 0;
		o[0] = '\0';
		for (size_t i = 0; i < tlen && n + 12 < sizeof(o); i++)
			n += (size_t)snprintf(o + n, sizeof(o) - n, "%s%lu", i ? "." : "", (unsigned long)t[i]);
		snprintf(ev->text, sizeof(ev->text), "trap %s%s", o, n + 12 >= sizeof(o) ? "..." : "");
	} else if (link == TRAP_LINK_DOWN && tv.admin == 2) {
		ev->kind = FB_KIND_PORT_STATE;
		ev->severity = FB_SEV_OK;
		if (!ev->port_state)
			ev->port_state = 2;
		snprintf(ev->text, sizeof(ev->text), "linkDown: %s administratively down", port);
	} else if (link == TRAP_LINK_DOWN) {
		ev->kind = FB_KIND_LINK_DOWN;
		ev->severity = FB_SEV_WARNING;
		if (!ev->port_state)
			ev->port_state = 2;
		snprintf(ev->text, sizeof(ev->text), "linkDown: %s ifOperStatus %d ifAdminStatus %d",
			 port, tv.oper, tv.admin);
	} else {
		ev->kind = FB_KIND_LINK_UP;
		ev->severity = FB_SEV_OK;
		if (!ev->port_state)
			ev->port_state = 1;
		snprintf(ev->text, sizeof(ev->text), "linkUp: %s ifOperStatus %d ifAdminStatus %d", port,
			 tv.oper, tv.admin);
	}
	return 0;
}
