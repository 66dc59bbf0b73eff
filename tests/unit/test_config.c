/* test_config.c - configuration parsing: defaults, values, and every error
 * names the file and line. */
#include "fb_test.h"

#include "config.h"
#include "fb_conf.h"
#include "fb_err.h"
#include "fb_log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static const char *write_conf(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", fbt_dir(), name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void defaults_run_without_a_file(void)
{
	struct fb_config c;
	char err[256];
	fb_config_defaults(&c);
	CHECK_EQ(fb_config_check(&c, err, sizeof(err)), 0);
	CHECK_STR(c.agent_host, "127.0.0.1");
	CHECK_EQ(c.agent_port, 7411);
	CHECK_EQ(c.http_port, 7412);
	CHECK_STR(c.journal_dir, "fabricbus-journal");
	CHECK_EQ(c.sync_policy, FB_SYNC_BATCH);
}

static void file_values_are_applied(void)
{
	struct fb_config c;
	char err[256];
	fb_config_defaults(&c);
	const char *p = write_conf("good.conf",
				   "# fabricbus test\n"
				   "AgentListen=0.0.0.0:9000   # agents\n"
				   "httplisten = [::1]:9001\n"
				   "\n"
				   "JournalDir=/var/lib/fabricbus/journal\n"
				   "JournalSync=interval\n"
				   "JournalSyncInterval=25ms\n"
				   "JournalSegmentSize=16M\n"
				   "JournalRetainSize=2G\n"
				   "JournalRetainAge=3d\n"
				   "HeartbeatInterval=2s\n"
				   "WsQueueEvents=1000\n"
				   "FabricName=ib0\n"
				   "LogLevel=debug\n");
	int rc = fb_config_load_file(&c, p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ(rc, 0);
	CHECK_STR(c.agent_host, "0.0.0.0");
	CHECK_EQ(c.agent_port, 9000);
	CHECK_STR(c.http_host, "::1");
	CHECK_EQ(c.http_port, 9001);
	CHECK_EQ(c.sync_policy, FB_SYNC_INTERVAL);
	CHECK_EQ(c.sync_interval_ms, 25);
	CHECK_EQ(c.segment_bytes, 16ull << 20);
	CHECK_EQ(c.retain_bytes, 2ull << 30);
	CHECK_EQ(c.retain_age_s, 3 * 86400);
	CHECK_EQ(c.heartbeat_ms, 2000);
	CHECK_EQ(c.ws_queue_events, 1000);
	CHECK_STR(c.fabric_name, "ib0");
	CHECK_EQ(c.log_level, FB_LOG_DEBUG);
	CHECK_EQ(fb_config_check(&c, err, sizeof(err)), 0);
}

/* Load text and expect a failure whose message contains every needle. */
static int fails_naming(const char *text, const char *n1, const char *n2)
{
	struct fb_config c;
	char err[512] = "";
	fb_config_defaults(&c);
	const char *p = write_conf("bad.conf", text);
	if (fb_config_load_file(&c, p, err, sizeof(err)) != FB_ECONFIG) {
		fprintf(stderr, "  accepted: %s", text);
		return 0;
	}
	if (!strstr(err, n1) || (n2 && !strstr(err, n2))) {
		fprintf(stderr, "  message '%s' lacks '%s'/'%s'\n", err, n1, n2 ? n2 : "");
		return 0;
	}
	return 1;
}

static void unknown_key_names_the_line(void)
{
	CHECK(fails_naming("LogLevel=info\nAgentListn=1.2.3.4:5\n", "bad.conf:2", "unknown key 'AgentListn'"));
}

static void bad_values_name_key_and_line(void)
{
	static const struct {
		const char *text, *line, *key; /* the error names line and key */
	} cases[] = {
		{ "JournalSync=sometimes\n", "bad.conf:1", "JournalSync" },
		{ "\n\nAgentListen=localhost\n", "bad.conf:3", "HOST:PORT" },
		{ "AgentListen=1.2.3.4:70000\n", "bad.conf:1", "AgentListen" },
		{ "JournalSegmentSize=12Q\n", "bad.conf:1", "JournalSegmentSize" },
		{ "JournalSegmentSize=1K\n", "bad.conf:1", "between" },
		{ "HeartbeatInterval=-5s\n", "bad.conf:1", "HeartbeatInterval" },
		{ "WsQueueEvents=ten\n", "bad.conf:1", "whole number" },
		{ "FabricName=a/b\n", "bad.conf:1", "FabricName" },
		{ "LogTarget=file\n", "bad.conf:1", "stderr or syslog" },
		{ "JournalDir=\n", "bad.conf:1", "JournalDir" },
		{ "just words\n", "bad.conf:1", "Key=Value" },
		{ "JournalSegmentSize=99999999999999999999999\n", "bad.conf:1", "JournalSegmentSize" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(fails_naming(cases[i].text, cases[i].line, cases[i].key));
}

static void duplicate_key_is_refused(void)
{
	CHECK(fails_naming("LogLevel=info\nloglevel=debug\n", "bad.conf:2", "first at line 1"));
}

static void missing_file_is_an_error(void)
{
	struct fb_config c;
	char err[256];
	fb_config_defaults(&c);
	CHECK_EQ(fb_config_load_file(&c, "/nonexistent/fabricbus.conf", err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "/nonexistent/fabricbus.conf") != NULL);
}

static void override_and_cross_checks(void)
{
	struct fb_config c;
	char err[256];
	fb_config_defaults(&c);
	CHECK_EQ(fb_config_set(&c, "HttpListen=127.0.0.1:7411", "-o", err, sizeof(err)), 0);
	CHECK_EQ(fb_config_check(&c, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "must differ") != NULL);
	fb_config_defaults(&c);
	CHECK_EQ(fb_config_set(&c, "WsQueueEvents=100000", "-o", err, sizeof(err)), 0);
	CHECK_EQ(fb_config_check(&c, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "WsRingEvents") != NULL);
	CHECK_EQ(fb_config_set(&c, "Nope=1", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "-o: unknown key") != NULL);
}

static void unit_parsers(void)
{
	uint64_t v;
	CHECK_EQ(fb_parse_size("64M", &v), 0);
	CHECK_EQ(v, 64ull << 20);
	CHECK_EQ(fb_parse_size("10gb", &v), 0);
	CHECK_EQ(v, 10ull << 30);
	CHECK_EQ(fb_parse_size("", &v), FB_ECONFIG);
	CHECK_EQ(fb_parse_size("M", &v), FB_ECONFIG);
	CHECK_EQ(fb_parse_size("99999999999T", &v), FB_ECONFIG);
	CHECK_EQ(fb_parse_duration_ms("250ms", &v), 0);
	CHECK_EQ(v, 250);
	CHECK_EQ(fb_parse_duration_ms("7d", &v), 0);
	CHECK_EQ(v, 7ull * 86400000);
	CHECK_EQ(fb_parse_duration_ms("30", &v), 0);
	CHECK_EQ(v, 30000);
	CHECK_EQ(fb_parse_duration_ms("5 weeks", &v), FB_ECONFIG);
	char host[64];
	int port;
	CHECK_EQ(fb_parse_hostport("[fe80::1]:80", host, sizeof(host), &port), 0);
	CHECK_STR(host, "fe80::1");
	CHECK_EQ(port, 80);
	CHECK_EQ(fb_parse_hostport(":80", host, sizeof(host), &port), FB_ECONFIG);
	CHECK_EQ(fb_parse_hostport("h:0", host, sizeof(host), &port), FB_ECONFIG);
	CHECK_EQ(fb_parse_hostport("h:12ab", host, sizeof(host), &port), FB_ECONFIG);
}

/* AgentIdentity rules and the ids a certificate's names allow
 * (agent_identity.c; docs/security.md). */
static void agent_identity_rules(void)
{
	struct fb_config c;
	char err[512];
	fb_config_defaults(&c);
	CHECK_EQ(c.agent_tls, FB_AGENT_TLS_OFF);
	CHECK_EQ(fb_config_set(&c, "AgentIdentity=CN:leaf-*  ->  ib@leaf0*   ib@spine?", "-o", err,
			       sizeof(err)), 0);
	CHECK_EQ(fb_config_set(&c, "AgentIdentity=SAN:*.nodes.example.org -> node@*", "-o", err,
			       sizeof(err)), 0);
	CHECK_EQ(c.agent_identity.n, 2);
	CHECK_STR(c.agent_identity.r[0].ids, "ib@leaf0* ib@spine?");
	char rule[512];
	fb_ident_rule_format(&c.agent_identity.r[1], rule, sizeof(rule));
	CHECK_STR(rule, "SAN:*.nodes.example.org -> node@*");
	CHECK_EQ(fb_config_set(&c, "AgentIdentity=OU:x -> y", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fb_config_set(&c, "AgentIdentity=CN:x y", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fb_config_set(&c, "AgentIdentity=CN:x ->", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fb_config_set(&c, "AgentIdentity=CN:x -> a/b", "-o", err, sizeof(err)), FB_ECONFIG);

	struct fb_ident_names own = { "" }, group = { "" }, node = { "" };
	fb_ident_names_add(&own, 'C', "ib@leaf01");
	fb_ident_names_add(&group, 'C', "leaf-agents");
	fb_ident_names_add(&node, 'C', "n7");
	fb_ident_names_add(&node, 'S', "n7.nodes.example.org");
	CHECK(fb_ident_allows(&c.agent_identity, &own, "ib@leaf01"));   /* its own CN */
	CHECK(!fb_ident_allows(&c.agent_identity, &own, "ib@leaf02"));
	CHECK(!fb_ident_allows(NULL, &own, "ib@leaf011"));                /* whole match */
	CHECK(fb_ident_allows(&c.agent_identity, &group, "ib@leaf05"));
	CHECK(fb_ident_allows(&c.agent_identity, &group, "ib@spine1"));
	CHECK(!fb_ident_allows(&c.agent_identity, &group, "ib@spine12"));
	CHECK(!fb_ident_allows(&c.agent_identity, &group, "node@n1"));
	CHECK(fb_ident_allows(&c.agent_identity, &node, "node@n3"));       /* SAN rule */
	CHECK(!fb_ident_allows(&c.agent_identity, &node, "ib@leaf05"));    /* CN rule needs a CN */
	char shown[256];
	fb_ident_names_show(&node, shown, sizeof(shown));
	CHECK_STR(shown, "CN=n7, SAN=n7.nodes.example.org");
	/* TLS needs its three files. */
	CHECK_EQ(fb_config_set(&c, "AgentTls=required", "-o", err, sizeof(err)), 0);
	CHECK_EQ(fb_config_check(&c, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "AgentTlsCert") != NULL);
}

/* The engine itself, on a table of its own: "" of an FB_CONF_EMPTY_OK key is
 * "unset/off" and never reaches the key's ok check (which may well refuse
 * "", as a URL check does); without the flag "" is still refused. */
struct empty_cfg {
	char url[32], name[32];
};

static int url_ok(const char *v)
{
	return strncmp(v, "http://", 7) == 0;
}

static void empty_value_of_empty_ok_key_skips_its_check(void)
{
	static const struct fb_conf_key keys[] = {
		{ "Url", FB_CONF_STRING, offsetof(struct empty_cfg, url), 0, 32,
		  .flags = FB_CONF_EMPTY_OK, .ok = url_ok, .expect = "expected http://... (%zu)",
		  .def = "" },
		{ "Name", FB_CONF_STRING, offsetof(struct empty_cfg, name), 0, 32, .ok = url_ok,
		  .expect = "expected http://... (%zu)" },
	};
	static const struct fb_conf_table t = { keys, 2, { 0 }, "test", 0 };
	struct empty_cfg c = { "http://x", "http://y" };
	char err[256] = "";
	CHECK_EQ(fb_conf_apply_defaults(&t, &c, err, sizeof(err)), 0);
	CHECK_STR(c.url, "");
	CHECK_EQ(fb_conf_set(&t, &c, "Url", "http://h:1", "-o", err, sizeof(err)), 0);
	CHECK_EQ(fb_conf_set(&t, &c, "Url", "", "-o", err, sizeof(err)), 0);
	CHECK_STR(c.url, "");
	CHECK_EQ(fb_conf_set(&t, &c, "Url", "ftp://h", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(fb_conf_set(&t, &c, "Name", "", "-o", err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "Name: bad value ''") != NULL);
}

/* docs/configuration.md: OfmfCore and OfmfBaseUrl empty = off / derived. */
static void empty_ofmf_urls_mean_off(void)
{
	struct fb_config c;
	char err[256] = "";
	fb_config_defaults(&c);
	const char *p = write_conf("ofmf.conf", "OfmfCore=http://127.0.0.1:8000\nOfmfCore=\n");
	CHECK_EQ(fb_config_load_file(&c, p, err, sizeof(err)), FB_ECONFIG); /* set twice */
	p = write_conf("ofmf.conf", "OfmfCore=\nOfmfBaseUrl=\nOfmfConnectionMethodId=\n");
	CHECK_EQ(fb_config_load_file(&c, p, err, sizeof(err)), 0);
	CHECK_STR(c.ofmf_core, "");
	CHECK_STR(c.ofmf_base_url, "");
	CHECK_EQ(fb_config_check(&c, err, sizeof(err)), 0);
	CHECK_EQ(fb_config_set(&c, "OfmfCore=http://127.0.0.1:8000", "-o", err, sizeof(err)), 0);
	CHECK_EQ(fb_config_set(&c, "OfmfCore=", "-o", err, sizeof(err)), 0);
	CHECK_STR(c.ofmf_core, "");
	CHECK_EQ(fb_config_set(&c, "OfmfCore=core:8000", "-o", err, sizeof(err)), FB_ECONFIG);
}

/* What fb_config_print wrote, as one string (free it). */
static char *printed(const struct fb_config *c)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return NULL;
	fb_config_print(c, f);
	fclose(f);
	return text;
}

/* fabricbusd --check-config's output is a file fabricbusd takes back, and
 * reading it gives the same settings (ExecStartPre, docs: "keep it"). */
static int print_parses_back(const char *settings)
{
	struct fb_config c, back;
	char err[512] = "";
	fb_config_defaults(&c);
	if (fb_config_load_file(&c, write_conf("in.conf", settings), err, sizeof(err)) ||
	    fb_config_check(&c, err, sizeof(err))) {
		fprintf(stderr, "  input refused: %s\n", err);
		return 0;
	}
	char *first = printed(&c), *second = NULL;
	fb_config_defaults(&back);
	int ok = first && fb_config_load_file(&back, write_conf("rt.conf", first), err,
					      sizeof(err)) == 0 &&
		 fb_config_check(&back, err, sizeof(err)) == 0 && (second = printed(&back)) &&
		 strcmp(first, second) == 0;
	if (!ok)
		fprintf(stderr, "  round trip: %s\n--- printed\n%s--- printed again\n%s", err,
			first ? first : "", second ? second : "");
	free(first);
	free(second);
	return ok;
}

static void check_config_output_parses_back(void)
{
	CHECK(print_parses_back(""));
	CHECK(print_parses_back("OfmfCore=http://127.0.0.1:8000\nOfmfBaseUrl=https://fb.example:7412\n"
				"JournalSyncInterval=1500ms\nJournalRetainAge=2d\nLogLevel=debug\n"
				"AgentIdentity=CN:leaf-agents -> ib@leaf*\nKafkaBrokers=k1:9092,k2:9092\n"
				"KafkaSubscription=crit?severity=Critical\n"
				"kafka.security.protocol=SASL_SSL\nAgentTlsCert=/etc/c.pem\n"));
}

int main(void)
{
	RUN(defaults_run_without_a_file);
	RUN(file_values_are_applied);
	RUN(unknown_key_names_the_line);
	RUN(bad_values_name_key_and_line);
	RUN(duplicate_key_is_refused);
	RUN(missing_file_is_an_error);
	RUN(override_and_cross_checks);
	RUN(unit_parsers);
	RUN(agent_identity_rules);
	RUN(empty_value_of_empty_ok_key_skips_its_check);
	RUN(empty_ofmf_urls_mean_off);
	RUN(check_config_output_parses_back);
	return TEST_DONE();
}
