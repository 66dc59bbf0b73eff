/* snmp_trap.c - the trap receiver on the agent's libevent loop. */
#include "snmp_trap.h"

#include "fb_err.h"

#include <net-snmp/library/large_fd_set.h>
#include "fb_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

enum { RL_COMMUNITY, RL_V3, RL_MALFORMED, RL_DROP, RL_NOAUTH, RL__N };

/* At most one log line per reason per second, naming what was suppressed. */
struct ratelimit {
	time_t last;
	uint64_t suppressed;
};

/* net-snmp's counters of what it refused before our callback saw it. */
static const int v3_stats[] = { STAT_USMSTATSUNSUPPORTEDSECLEVELS, STAT_USMSTATSNOTINTIMEWINDOWS,
				STAT_USMSTATSUNKNOWNUSERNAMES, STAT_USMSTATSUNKNOWNENGINEIDS,
				STAT_USMSTATSWRONGDIGESTS, STAT_USMSTATSDECRYPTIONERRORS,
				STAT_SNMPUNKNOWNSECURITYMODELS };
#define N_V3 (sizeof(v3_stats) / sizeof(v3_stats[0]))

struct snmp_trap {
	struct snmp_trap_cfg cfg;
	void *sessp;
	netsnmp_transport *transport; /* owned by the session once added */
	struct event *ev;
	netsnmp_large_fd_set fds;
	int fd, paused;
	struct snmp_trap_stats st;
	uint32_t v3_base[N_V3];
	/* Datagrams read, and those net-snmp handed to on_pdu, since the last
	 * sync_stats(): the difference is what net-snmp refused. */
	uint64_t reads, handed;
	struct ratelimit rl[RL__N];
};

static int rl_ok(struct snmp_trap *t, int why, uint64_t *suppressed)
{
	struct ratelimit *r = &t->rl[why];
	time_t now = time(NULL);
	if (r->last == now) {
		r->suppressed++;
		return 0;
	}
	r->last = now;
	*suppressed = r->suppressed;
	r->suppressed = 0;
	return 1;
}

/* The sender's IP address as text (no port). */
static void sender_addr(const netsnmp_pdu *pdu, char *out, size_t outsz)
{
	snprintf(out, outsz, "unknown");
	if (!pdu->transport_data || pdu->transport_data_length < (int)sizeof(struct sockaddr_in))
		return;
	/* UDP's opaque is a netsnmp_indexed_addr_pair, UDP6's a sockaddr_in6;
	 * both start with the remote sockaddr. */
	const struct sockaddr *sa = pdu->transport_data;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)outsz);
	else if (sa->sa_family == AF_INET6 &&
		 pdu->transport_data_length >= (int)sizeof(struct sockaddr_in6))
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
			  (socklen_t)outsz);
}

static void ack_inform(struct snmp_trap *t, netsnmp_pdu *pdu)
{
	netsnmp_pdu *reply = snmp_clone_pdu(pdu);
	if (!reply)
		return;
	reply->command = SNMP_MSG_RESPONSE;
	reply->errstat = 0;
	reply->errindex = 0;
	if (snmp_sess_send(t->sessp, reply) == 0) {
		snmp_free_pdu(reply);
		fb_log_debug("could not acknowledge an INFORM: %s", snmp_api_errstring(snmp_errno));
		return;
	}
	t->st.informs_acked++;
}

/* v1/v2c: a listed community; v3: net-snmp checked the keys, we want authPriv. */
static int authorized(struct snmp_trap *t, const netsnmp_pdu *pdu, const char *from)
{
	uint64_t sup;
	if (pdu->version == SNMP_VERSION_3) {
		if (pdu->securityLevel == SNMP_SEC_LEVEL_AUTHPRIV)
			return 1;
		t->st.v3_rejected++;
		if (rl_ok(t, RL_NOAUTH, &sup))
			fb_log_warn("refused an SNMPv3 trap from %s by user '%.*s': not authPriv (%llu "
				    "more suppressed); configure the switch with auth and priv keys",
				    from, (int)pdu->securityNameLen,
				    pdu->securityName ? pdu->securityName : "", (unsigned long long)sup);
		return 0;
	}
	if (t->cfg.map.conf && pdu->community &&
	    snmp_conf_community_ok(t->cfg.map.conf, (const char *)pdu->community, pdu->community_len))
		return 1;
	t->st.bad_community++;
	if (rl_ok(t, RL_COMMUNITY, &sup))
		fb_log_warn("refused an SNMPv%s trap from %s: community not in the config's "
			    "Community= lines (%llu more suppressed)",
			    pdu->version == SNMP_VERSION_1 ? "1" : "2c", from, (unsigned long long)sup);
	return 0;
}

static int on_pdu(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu, void *magic)
{
	(void)sess;
	(void)reqid;
	struct snmp_trap *t = magic;
	char from[64];
	uint64_t sup;
	if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE)
		return 1;
	t->handed++;
	sender_addr(pdu, from, sizeof(from));
	if (pdu->command != SNMP_MSG_TRAP && pdu->command != SNMP_MSG_TRAP2 &&
	    pdu->command != SNMP_MSG_INFORM) {
		t->st.not_traps++;
		return 1;
	}
	if (!authorized(t, pdu, from))
		return 1;
	t->st.packets++;
	if (pdu->command == SNMP_MSG_INFORM)
		ack_inform(t, pdu);
	struct fb_event ev;
	const char *why = "";
	int rc = snmp_map_trap(&t->cfg.map, from, pdu, &ev, &why);
	if (rc == SNMP_MAP_IGNORED) {
		t->st.ignored++;
		return 1;
	}
	if (rc) {
		t->st.malformed++;
		if (rl_ok(t, RL_MALFORMED, &sup))
			fb_log_warn("trap from %s not used: %s (%llu more suppressed)", from, why,
				    (unsigned long long)sup);
		return 1;
	}
	if (t->cfg.deliver(t->cfg.deliver_arg, &ev) == 0) {
		t->st.events++;
		return 1;
	}
	t->st.dropped++;
	if (rl_ok(t, RL_DROP, &sup))
		fb_log_warn("dropped a %s event from %s ifIndex %u: session buffer full (%llu dropped "
			    "in all; is fabricbusd up?)", fb_kind_name(ev.kind), from,
			    ev.subj.ifindex, (unsigned long long)t->st.dropped);
	return 1;
}

/* What net-snmp refused before on_pdu saw it: its USM counters say how
 * much of it was v3 refusals; the rest did not decode. */
static void sync_stats(struct snmp_trap *t)
{
	uint64_t v3 = 0, sup;
	for (size_t i = 0; i < N_V3; i++) {
		uint32_t now = snmp_get_statistic(v3_stats[i]);
		v3 += (uint32_t)(now - t->v3_base[i]);
		t->v3_base[i] = now;
	}
	uint64_t refused = t->reads > t->handed ? t->reads - t->handed : 0;
	uint64_t parse = refused > v3 ? refused - v3 : 0;
	t->reads = t->handed = 0;
	t->st.v3_rejected += v3;
	t->st.malformed += parse;
	if (v3 && rl_ok(t, RL_V3, &sup))
		fb_log_warn("refused %llu SNMPv3 packet(s): unknown user or engine id, wrong key, or "
			    "outside the time window (%llu refused in all); check the User= lines",
			    (unsigned long long)v3, (unsigned long long)t->st.v3_rejected);
	if (parse && rl_ok(t, RL_MALFORMED, &sup))
		fb_log_warn("dropped %llu undecodable SNMP packet(s) (%llu malformed in all)",
			    (unsigned long long)parse, (unsigned long long)t->st.malformed);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct snmp_trap *t = arg;
	/* Level-triggered: what is left after a batch comes back next round,
	 * after the session has had its turn to send. */
	for (int i = 0; i < SNMP_TRAP_BATCH; i++) {
		if (t->cfg.room && !t->cfg.room(t->cfg.deliver_arg)) {
			event_del(t->ev);
			t->paused = 1;
			t->st.pauses++;
			break;
		}
		errno = 0;
		NETSNMP_LARGE_FD_SET(t->fd, &t->fds); /* net-snmp clears it after a read */
		if (snmp_sess_read2(t->sessp, &t->fds) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		t->reads++;
	}
	sync_stats(t);
}

static void set_rcvbuf(int fd, int bytes)
{
	/* FORCE passes net.core.rmem_max when we may (root); else the kernel
	 * caps SO_RCVBUF there and we say so. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	int got = 0;
	socklen_t len = sizeof(got);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0 && got < bytes)
		fb_log_warn("trap socket receive buffer is %d bytes, not %d: raise "
			    "net.core.rmem_max or run as root", got / 2, bytes);
}

int snmp_trap_open(struct event_base *base, const struct snmp_trap_cfg *cfg,
		   struct snmp_trap **out, char *err, size_t errsz)
{
	struct snmp_trap *t = calloc(1, sizeof(*t));
	if (!t)
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	t->cfg = *cfg;
	t->transport = netsnmp_transport_open_server("snmptrap", cfg->listen);
	if (!t->transport) {
		free(t);
		return fb_err_set(err, errsz, -EADDRNOTAVAIL, "cannot listen for traps on '%s' (bad "
				  "address, port in use, or port < 1024 without root)", cfg->listen);
	}
	t->fd = t->transport->sock;
	set_rcvbuf(t->fd, cfg->rcvbuf);
	int fl = fcntl(t->fd, F_GETFL);
	if (fl < 0 || fcntl(t->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		netsnmp_transport_free(t->transport);
		free(t);
		return fb_err_set(err, errsz, -e, "trap socket: %s", strerror(e));
	}
	netsnmp_session s;
	snmp_sess_init(&s);
	s.peername = SNMP_DEFAULT_PEERNAME;
	s.version = SNMP_DEFAULT_VERSION;
	s.community_len = SNMP_DEFAULT_COMMUNITY_LEN;
	s.retries = SNMP_DEFAULT_RETRIES;
	s.timeout = SNMP_DEFAULT_TIMEOUT;
	s.callback = on_pdu;
	s.callback_magic = t;
	s.authenticator = NULL;
	s.isAuthoritative = SNMP_SESS_UNKNOWNAUTH; /* like snmptrapd: v3 traps and informs */
	t->sessp = snmp_sess_add(&s, t->transport, NULL, NULL);
	if (!t->sessp) {
		free(t); /* snmp_sess_add freed the transport */
		return fb_err_set(err, errsz, -EIO, "cannot start the net-snmp trap session: %s",
				  snmp_api_errstring(snmp_errno));
	}
	netsnmp_large_fd_set_init(&t->fds, t->fd + 1);
	NETSNMP_LARGE_FD_SET(t->fd, &t->fds);
	for (size_t i = 0; i < N_V3; i++)
		t->v3_base[i] = snmp_get_statistic(v3_stats[i]);
	t->ev = event_new(base, t->fd, EV_READ | EV_PERSIST, on_read, t);
	if (!t->ev || event_add(t->ev, NULL)) {
		snmp_trap_free(t);
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	}
	*out = t;
	return 0;
}

void snmp_trap_get_stats(const struct snmp_trap *t, struct snmp_trap_stats *st)
{
	*st = t->st;
}

void snmp_trap_resume(struct snmp_trap *t)
{
	if (t && t->paused && t->ev && event_add(t->ev, NULL) == 0)
		t->paused = 0;
}

void snmp_trap_stop(struct snmp_trap *t)
{
	if (t && t->ev)
		event_del(t->ev);
	if (t)
		t->paused = 0;
}

uint64_t snmp_trap_kernel_drops(const struct snmp_trap *t)
{
	struct stat st;
	if (fstat(t->fd, &st) != 0)
		return 0;
	static const char *const files[] = { "/proc/self/net/udp", "/proc/self/net/udp6" };
	for (size_t f = 0; f < 2; f++) {
		FILE *fp = fopen(files[f], "r");
		char line[512];
		if (!fp)
			continue;
		while (fgets(line, sizeof(line), fp)) {
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref ptr drops */
			unsigned long long inode = 0, drops = 0;
			if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %*s %*s %llu", &inode,
				   &drops) == 2 && inode == (unsigned long long)st.st_ino) {
				fclose(fp);
				return drops;
			}
		}
		fclose(fp);
	}
	return 0;
}

void snmp_trap_free(struct snmp_trap *t)
{
	if (!t)
		return;
	if (t->ev)
		event_free(t->ev);
	if (t->sessp)
		snmp_sess_close(t->sessp);
	netsnmp_large_fd_set_cleanup(&t->fds);
	free(t);
}
