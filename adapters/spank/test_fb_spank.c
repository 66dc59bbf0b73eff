/* test_fb_spank.c - the SPANK plugin's parts that need no Slurm: its
 * plugstack.conf arguments, the job's view of /fabric/map (including bodies
 * that are not a map at all), the map file written into a shared directory,
 * and the error lines of its requests to whatever answers on the broker's
 * port. The Slurm side runs against the real slurmstepd in
 * tests/integration/test_spank.py. */
#include "fb_buf.h"
#include "fb_err.h"
#include "fb_spank_broker.h"
#include "fb_spank_conf.h"
#include "fb_spank_file.h"
#include "fb_spank_map.h"
#include "fb_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- arguments ---------------------------------------------------------- */

/* What a parsed configuration must hold, field by field. */
struct want {
	const char *host;
	int port;
	const char *broker;
	int timeout_ms, fail_on_down, fail_unreachable, do_register;
	const char *mapdir;
};

static void conf_is(const struct fb_spank_conf *c, struct want w)
{
	CHECK_STR(c->host, w.host);
	CHECK_EQ(c->port, w.port);
	CHECK_STR(c->broker, w.broker);
	CHECK_EQ(c->timeout_ms, w.timeout_ms);
	CHECK_EQ(c->fail_on_down, w.fail_on_down);
	CHECK_EQ(c->fail_unreachable, w.fail_unreachable);
	CHECK_EQ(c->do_register, w.do_register);
	CHECK_STR(c->mapdir, w.mapdir);
}

static void conf_defaults_as_documented(void)
{
	struct fb_spank_conf c;
	char err[256];
	CHECK_EQ(fb_spank_conf_parse(&c, 0, NULL, err, sizeof(err)), 0);
	conf_is(&c, (struct want){ "127.0.0.1", 7412, "127.0.0.1:7412", 2000, 0, 0, 1, "/tmp" });
	CHECK_STR(c.token_file, "");
	CHECK_STR(c.tls_ca, "");
	CHECK(c.client == NULL);
}

static void conf_takes_every_argument(void)
{
	char *av[] = {"broker=[::1]:9000", "timeout=150", "fail_on_down=yes",
		      "on_unreachable=fail", "mapdir=/run/fabricbus/", "register=no",
		      "token_file=/etc/fabricbus/spank.token", "tls_ca=/etc/fabricbus/ca.pem"};
	struct fb_spank_conf c;
	char err[256];
	CHECK_EQ(fb_spank_conf_parse(&c, 8, av, err, sizeof(err)), 0);
	CHECK_STR(c.token_file, "/etc/fabricbus/spank.token");
	CHECK_STR(c.tls_ca, "/etc/fabricbus/ca.pem");
	conf_is(&c, (struct want){ "::1", 9000, "[::1]:9000", 150, 1, 1, 0, "/run/fabricbus" });
	char *av2[] = {"broker=fabric-head:7412", "on_unreachable=continue", "fail_on_down=no"};
	CHECK_EQ(fb_spank_conf_parse(&c, 3, av2, err, sizeof(err)), 0);
	CHECK_STR(c.host, "fabric-head");
	CHECK_EQ(c.fail_unreachable, 0);
}

/* Each bad argument fails and the message names it. */
static void conf_refuses_typos_naming_the_argument(void)
{
	static char *bad[] = {
		"timout=500", "timeout=0", "timeout=60001", "timeout=5s", "timeout=-1",
		"broker=localhost", "broker=host:0", "broker=host:70000", "broker=::1:7412",
		"broker=a b:1", "fail_on_down=maybe", "on_unreachable=retry", "mapdir=tmp",
		"mapdir=", "register=", "fail_on_down", "=yes", "", "token_file=spank.token",
		"token_file=", "tls_ca=ca.pem", "tls_ca=",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fb_spank_conf c;
		char err[256] = "";
		char *av[] = {"timeout=100", bad[i]};
		int rc = fb_spank_conf_parse(&c, 2, av, err, sizeof(err));
		if (rc != FB_ECONFIG || (bad[i][0] && !strstr(err, bad[i]))) {
			fprintf(stderr, "  '%s': rc %d err '%s'\n", bad[i], rc, err);
			CHECK(0);
		}
		CHECK_EQ(c.timeout_ms, 2000); /* nothing half-applied */
	}
	struct fb_spank_conf c;
	char err[256];
	char *av[] = {"timout=500"};
	CHECK_EQ(fb_spank_conf_parse(&c, 1, av, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "unknown argument 'timout=500'") != NULL);
}

static void conf_refuses_an_argument_given_twice(void)
{
	struct fb_spank_conf c;
	char err[256];
	char *av[] = {"broker=a:1", "broker=b:2"};
	CHECK_EQ(fb_spank_conf_parse(&c, 2, av, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "'broker' given twice") != NULL);
}

/* ---- the job's view of /fabric/map ------------------------------------- */

#define PORT(sw, swguid, swport, lid, state)                                             \
	"{\"Technology\":\"IB\",\"Device\":\"ibsim0\",\"Port\":1,"                       \
	"\"PortGUID\":\"0x000200000000000" #swport "\",\"NodeGUID\":\"0x0001\",\"LID\":" #lid \
	",\"Switch\":\"" sw "\",\"SwitchGUID\":\"" swguid "\",\"SwitchPort\":" #swport     \
	",\"LinkState\":\"" state "\"}"

/* As fabricbusd renders it: "Switches" keyed by switch GUID. */
static const char MAP[] =
	"{\"Fabric\":\"ibsim\",\"LastEventId\":42,\"Nodes\":{"
	"\"node001\":{\"Ports\":[" PORT("leaf1", "0x00aa", 1, 11, "up") "],\"Jobs\":[]},"
	"\"node002\":{\"Ports\":[{\"Technology\":\"Ethernet\",\"Device\":\"eth0\"},"
	PORT("leaf1", "0x00aa", 2, 12, "up") "],\"Jobs\":[\"7\"]},"
	"\"node003\":{\"Ports\":[" PORT("leaf1", "0x00aa", 3, 13, "down") "],\"Jobs\":[]},"
	"\"node004\":{\"Ports\":[" PORT("leaf2", "0x00bb", 4, 14, "down") ","
	PORT("leaf2", "0x00bb", 5, 15, "down") "],\"Jobs\":[]}},"
	"\"Switches\":{\"0x00aa\":{\"Name\":\"leaf1\"},\"0x00bb\":{\"Name\":\"leaf2\"},"
	"\"0x00cc\":{\"Name\":\"spine1\"}}}";

static int build(const char *body, const char *const *nodes, size_t n, const char *local,
		 struct fb_spank_jobmap *m, char *err, size_t errsz)
{
	return fb_spank_map_build(body, strlen(body), nodes, n, local, "12", "127.0.0.1:7412", m,
				  err, errsz);
}

/* A build expected to succeed: its error, if any, on stderr. */
static int build_ok(const char *body, const char *const *nodes, size_t n, const char *local,
		    struct fb_spank_jobmap *m)
{
	char err[256] = "";
	int rc = build(body, nodes, n, local, m, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  build for %s: rc %d: %s\n", local, rc, err);
	return rc;
}

static void map_keeps_the_job_nodes_and_the_local_port(void)
{
	const char *nodes[] = {"node002", "node003", "node009"};
	struct fb_spank_jobmap m;
	CHECK_EQ(build_ok(MAP, nodes, 3, "node002", &m), 0);
	CHECK_EQ(m.local_known, 1);
	CHECK_STR(m.local.sw, "leaf1");
	CHECK_STR(m.local.sw_port, "2"); /* the IB port, not the Ethernet one before it */
	CHECK_STR(m.local.lid, "12");
	CHECK_STR(m.local.port_guid, "0x0002000000000002");
	CHECK_STR(m.local.sw_guid, "0x00aa");
	CHECK_STR(m.local.state, "up");
	CHECK_STR(m.nodes_env, "node002=leaf1:2,node003=leaf1:3");
	CHECK_EQ(m.n_known, 2);
	const json_t *doc = m.doc;
	CHECK_STR(json_string_value(json_object_get(doc, "JobId")), "12");
	CHECK_STR(json_string_value(json_object_get(doc, "Node")), "node002");
	CHECK_STR(json_string_value(json_object_get(doc, "Fabric")), "ibsim");
	CHECK_EQ(json_integer_value(json_object_get(doc, "LastEventId")), 42);
	const json_t *jn = json_object_get(doc, "Nodes");
	CHECK_EQ(json_object_size(jn), 2);
	CHECK(json_object_get(jn, "node001") == NULL);
	/* the broker's node objects, unchanged */
	json_t *orig = json_loads(MAP, 0, NULL);
	CHECK(orig != NULL);
	int same = json_equal(json_object_get(jn, "node003"),
			      json_object_get(json_object_get(orig, "Nodes"), "node003"));
	json_decref(orig);
	CHECK(same);
	CHECK_EQ(json_array_size(json_object_get(doc, "Unknown")), 1);
	CHECK_STR(json_string_value(json_array_get(json_object_get(doc, "Unknown"), 0)), "node009");
	CHECK_EQ(json_array_size(json_object_get(doc, "JobNodes")), 3);
	const json_t *sw = json_object_get(doc, "Switches");
	CHECK_EQ(json_object_size(sw), 1); /* only the switch the job hangs off */
	CHECK_STR(json_string_value(json_object_get(json_object_get(sw, "0x00aa"), "Name")),
		  "leaf1");
	fb_spank_jobmap_free(&m);
	CHECK(m.doc == NULL && m.nodes_env == NULL);
}

static void map_names_the_first_down_port_of_the_job(void)
{
	const char *nodes[] = {"node001", "node004", "node003"};
	struct fb_spank_jobmap m;
	CHECK_EQ(build_ok(MAP, nodes, 3, "node001", &m), 0);
	CHECK_EQ(m.n_down, 3);
	CHECK_STR(m.down, "node004 port leaf2/4"); /* job order, not map order */
	CHECK_STR(m.local.state, "up");
	CHECK_EQ(json_object_size(json_object_get(m.doc, "Switches")), 2);
	fb_spank_jobmap_free(&m);
	const char *up[] = {"node001", "node002"};
	CHECK_EQ(build_ok(MAP, up, 2, "node001", &m), 0);
	CHECK_EQ(m.n_down, 0);
	CHECK_STR(m.down, "");
	fb_spank_jobmap_free(&m);
}

/* Wrong types, control bytes, out-of-range numbers: unknown, not an error. */
static void map_treats_bad_fields_as_unknown(void)
{
	static const char body[] =
		"{\"Nodes\":{\"n1\":{\"Ports\":[{\"Technology\":\"IB\",\"Switch\":\"le\\naf\","
		"\"SwitchPort\":\"3\",\"LID\":-1,\"PortGUID\":7,\"LinkState\":\"up\","
		"\"SwitchGUID\":\"" /* 300 bytes: longer than a value may be */
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"\"}]},\"n2\":{\"Ports\":\"none\"},\"n3\":[],\"n4\":{\"Ports\":[{\"Technology\":\"IB\","
		"\"Switch\":\"a,b\",\"SwitchPort\":1,\"LinkState\":\"down\"}]}}}";
	const char *nodes[] = {"n1", "n2", "n3", "n4"};
	struct fb_spank_jobmap m;
	CHECK_EQ(build_ok(body, nodes, 4, "n1", &m), 0);
	CHECK_EQ(m.local_known, 1);
	CHECK_STR(m.local.sw, "");
	CHECK_STR(m.local.sw_port, "");
	CHECK_STR(m.local.lid, "");
	CHECK_STR(m.local.port_guid, "");
	CHECK_STR(m.local.sw_guid, "");
	CHECK_STR(m.local.state, "up");
	CHECK_STR(m.nodes_env, ""); /* n4's switch name would break the list */
	CHECK_EQ(m.n_known, 3);     /* n3 is not an object */
	CHECK_EQ(m.n_down, 1);
	CHECK_STR(m.down, "n4 port a,b/1");
	fb_spank_jobmap_free(&m);
}

static void map_refuses_bodies_that_are_not_a_map(void)
{
	static const char *bad[] = {
		"", "<html>502 Bad Gateway</html>", "[]", "{}", "{\"Nodes\":[]}",
		"{\"Nodes\":{}", "{\"Nodes\":{},\"Nodes\":{}}", "null", "{\"Nodes\":{\"a\":1}} x",
	};
	const char *nodes[] = {"node001"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fb_spank_jobmap m;
		char err[256] = "";
		int rc = build(bad[i], nodes, 1, "node001", &m, err, sizeof(err));
		if (rc != FB_EMALFORMED || !err[0] || m.doc || m.nodes_env) {
			fprintf(stderr, "  body '%s': rc %d err '%s'\n", bad[i], rc, err);
			CHECK(0);
		}
	}
	/* NUL bytes inside the body are not read past */
	static const char nul[] = "{\"Nodes\":{}}\0garbage";
	struct fb_spank_jobmap m;
	char err[256];
	CHECK_EQ(fb_spank_map_build(nul, sizeof(nul) - 1, nodes, 1, "node001", "1", "b", &m, err,
				    sizeof(err)), FB_EMALFORMED);
}

static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* The reason goes to slurmd's log and, refused, to the user's terminal;
 * jansson quotes the byte it stopped at. */
static void map_error_quotes_no_control_bytes(void)
{
	static const char *bad[] = {"[1,\x01]", "{\"Nodes\":{\"a\\\x1b\"}}", "\x1b[2J"};
	const char *nodes[] = {"node001"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fb_spank_jobmap m;
		char err[256] = "";
		CHECK_EQ(build(bad[i], nodes, 1, "node001", &m, err, sizeof(err)), FB_EMALFORMED);
		CHECK(strncmp(err, "not JSON: ", 10) == 0);
		if (!printable(err))
			fprintf(stderr, "  case %zu: control byte in '%s'\n", i, err);
		CHECK(printable(err));
	}
}

/* FABRICBUS_NODES is left out past 64 KiB; the document keeps every node. */
static void map_leaves_out_a_nodes_variable_over_64k(void)
{
	enum { N = 5000 };
	struct fb_buf b = FB_BUF_INIT;
	static char names[N][16];
	static const char *nodes[N];
	CHECK_EQ(fb_buf_puts(&b, "{\"Nodes\":{"), 0);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "node%05d", i);
		nodes[i] = names[i];
		CHECK_EQ(fb_buf_printf(&b, "%s\"%s\":{\"Ports\":[{\"Technology\":\"IB\","
				       "\"Switch\":\"leaf%d\",\"SwitchPort\":%d}]}", i ? "," : "",
				       names[i], i / 36, i % 36 + 1), 0);
	}
	CHECK_EQ(fb_buf_puts(&b, "}}"), 0);
	struct fb_spank_jobmap m;
	char err[256];
	int rc = fb_spank_map_build((const char *)b.data, b.len, nodes, N, "node00000", "1", "b",
				    &m, err, sizeof(err));
	fb_buf_free(&b);
	CHECK_EQ(rc, 0);
	CHECK(m.nodes_env == NULL);
	CHECK_EQ(json_object_size(json_object_get(m.doc, "Nodes")), N);
	CHECK_STR(m.local.sw, "leaf0");
	fb_spank_jobmap_free(&m);
	/* a short list is kept */
	CHECK_EQ(fb_buf_puts(&b, "{\"Nodes\":{\"a\":{\"Ports\":[{\"Technology\":\"IB\","
				 "\"Switch\":\"s\",\"SwitchPort\":1}]}}}"), 0);
	const char *one[] = {"a"};
	rc = fb_spank_map_build((const char *)b.data, b.len, one, 1, "x", "1", "b", &m, err,
				sizeof(err));
	fb_buf_free(&b);
	CHECK_EQ(rc, 0);
	CHECK_STR(m.nodes_env, "a=s:1");
	CHECK_EQ(m.local_known, 0);
	fb_spank_jobmap_free(&m);
}

/* ---- the map file ------------------------------------------------------- */

static int read_file(const char *path, char *out, size_t outsz)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, out, outsz - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return (int)n;
}

static int count_entries(const char *dir)
{
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void file_replaces_a_planted_symlink_without_following_it(void)
{
	char dir[] = "/tmp/fb-spank-test-XXXXXX", path[PATH_MAX], victim[PATH_MAX], buf[256];
	char err[512];
	struct stat st;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(path, sizeof(path), "%s/fabricbus-12.node003.json", dir);
	FILE *f = fopen(victim, "w");
	CHECK(f != NULL);
	fputs("keep me\n", f);
	fclose(f);
	CHECK_EQ(symlink(victim, path), 0);
	CHECK_EQ(fb_spank_write_file(dir, "fabricbus-12.node003.json", "{\"a\":1}\n", 8, getuid(),
				     getgid(), err, sizeof(err)), 0);
	CHECK_EQ(read_file(victim, buf, sizeof(buf)), 8);
	CHECK_STR(buf, "keep me\n");
	CHECK_EQ(lstat(path, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK_EQ(st.st_uid, getuid());
	CHECK_EQ(read_file(path, buf, sizeof(buf)), 8);
	CHECK_STR(buf, "{\"a\":1}\n");
	CHECK_EQ(count_entries(dir), 2); /* no temporary file left */
	/* rewritten by a later step: replaced whole */
	CHECK_EQ(fb_spank_write_file(dir, "fabricbus-12.node003.json", "{}\n", 3, getuid(),
				     getgid(), err, sizeof(err)), 0);
	CHECK_EQ(read_file(path, buf, sizeof(buf)), 3);
	CHECK_EQ(fb_spank_remove_file(dir, "fabricbus-12.node003.json", err, sizeof(err)), 0);
	CHECK_EQ(fb_spank_remove_file(dir, "fabricbus-12.node003.json", err, sizeof(err)), 0);
	CHECK_EQ(unlink(victim), 0);
	CHECK_EQ(rmdir(dir), 0);
}

static void file_failure_names_the_path_and_leaves_nothing(void)
{
	char dir[] = "/tmp/fb-spank-test-XXXXXX", sub[PATH_MAX], err[512];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/fabricbus-1.n.json", dir);
	CHECK_EQ(mkdir(sub, 0700), 0); /* a directory where the file goes */
	int rc = fb_spank_write_file(dir, "fabricbus-1.n.json", "x", 1, getuid(), getgid(), err,
				     sizeof(err));
	CHECK(rc < 0);
	CHECK(strstr(err, sub) != NULL && strstr(err, "rename") != NULL);
	CHECK_EQ(count_entries(dir), 1);
	CHECK_EQ(rmdir(sub), 0);
	rc = fb_spank_write_file("/nonexistent-fb-dir", "f.json", "x", 1, getuid(), getgid(), err,
				 sizeof(err));
	CHECK_EQ(rc, -ENOENT);
	CHECK(strstr(err, "/nonexistent-fb-dir/f.json") != NULL);
	CHECK(fb_spank_write_file(dir, "../escape.json", "x", 1, getuid(), getgid(), err,
				  sizeof(err)) < 0);
	CHECK(fb_spank_remove_file(dir, "../escape.json", err, sizeof(err)) < 0);
	CHECK_EQ(rmdir(dir), 0);
}

/* ---- the requests -------------------------------------------------------- */

/* A peer on 127.0.0.1 (a child process) that answers n connections in turn
 * with replies[i] and, when out >= 0, writes each request's first line to
 * the pipe fd out. Returns its pid, or -1. */
static pid_t fake_broker(const char *const *replies, int n, uint16_t *port, int out)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 4) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		if (ls >= 0)
			close(ls);
		return -1;
	}
	*port = ntohs(a.sin_port);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < n; i++) {
			char buf[8192];
			int c = accept(ls, NULL, NULL);
			ssize_t got = c >= 0 ? read(c, buf, sizeof(buf) - 1) : -1;
			if (got <= 0)
				_exit(1);
			buf[got] = '\0';
			size_t line = strcspn(buf, "\r");
			buf[line] = '\n';
			if ((out >= 0 && write(out, buf, line + 1) < 0) ||
			    write(c, replies[i], strlen(replies[i])) < 0)
				_exit(1);
			close(c);
		}
		_exit(0);
	}
	close(ls);
	return pid;
}

/* Whatever answers on the broker's port (a stray daemon, or a user's
 * listener on 127.0.0.1:7412 where fabricbusd does not run) must not put
 * escape sequences into slurmd's log or the user's terminal: fb_http quotes
 * a bad status line as received. */
static void broker_errors_quote_no_control_bytes(void)
{
	static const char *replies[] = {
		"HTTP/1.1 2\x1b]0;owned\a00 OK\r\n\r\n", /* a terminal title */
		"\x1b[2J\x1b[H\r\n\r\n",
		"HTTP/1.1 503 Busy\r\nContent-Length: 9\r\n\r\nbusy\x1b[2J\n",
	};
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		struct fb_spank_conf c;
		struct fb_http_resp r;
		char err[512] = "";
		uint16_t port = 0;
		pid_t pid = fake_broker(&replies[i], 1, &port, -1);
		CHECK(pid > 0);
		fb_spank_conf_defaults(&c);
		c.port = port;
		snprintf(c.broker, sizeof(c.broker), "127.0.0.1:%u", (unsigned)port);
		int rc = fb_spank_fetch_map(&c, NULL, &r, NULL, err, sizeof(err));
		CHECK_EQ(waitpid(pid, NULL, 0), pid);
		CHECK(rc < 0);
		CHECK(strstr(err, c.broker) != NULL);
		if (!printable(err))
			fprintf(stderr, "  reply %zu: control byte in '%s'\n", i, err);
		CHECK(printable(err));
	}
}

/* fb_spank_fetch_map for nodes against a fake broker giving the n replies:
 * its result in *r and *filtered, and the request lines the broker read
 * in lines. The fetch's return value (-100 when the rig failed). */
static int fetch_from_fake(const char *const *replies, int n, const char *nodes,
			   struct fb_http_resp *r, int *filtered, char *lines, size_t linesz)
{
	struct fb_spank_conf c;
	char err[512] = "";
	int fds[2];
	uint16_t port = 0;
	if (pipe(fds) != 0)
		return -100;
	pid_t pid = fake_broker(replies, n, &port, fds[1]);
	close(fds[1]);
	if (pid <= 0) {
		close(fds[0]);
		return -100;
	}
	fb_spank_conf_defaults(&c);
	c.port = port;
	*filtered = -1;
	int rc = fb_spank_fetch_map(&c, nodes, r, filtered, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  fetch %s: rc %d: %s\n", nodes, rc, err);
	int ok = waitpid(pid, NULL, 0) == pid;
	ssize_t got = read(fds[0], lines, linesz - 1);
	close(fds[0]);
	lines[got > 0 ? got : 0] = '\0';
	return ok && got > 0 ? rc : -100;
}

/* The job's nodes are asked for, percent-encoded as lws decodes them; a
 * broker that refuses the query (400) is asked for the whole map, once; a
 * list too long for the broker's request line gets the whole map at once. */
static void fetch_asks_for_the_job_nodes_and_falls_back_on_400(void)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"Nodes\":{}}";
	static const char bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\n{}";
	const char *const cases[][2] = { { ok, NULL }, { bad, ok } };
	const char *const want[] = {
		"GET /fabric/map?nodes=node%5B001-003%5D,a%2Bb HTTP/1.1\n",
		"GET /fabric/map?nodes=node%5B001-003%5D,a%2Bb HTTP/1.1\nGET /fabric/map HTTP/1.1\n",
	};
	struct fb_http_resp r;
	char lines[512];
	int filtered;
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(fetch_from_fake(cases[i], i + 1, "node[001-003],a+b", &r, &filtered, lines,
					 sizeof(lines)), 0);
		CHECK_EQ(r.status, 200);
		fb_http_resp_free(&r);
		CHECK_STR(lines, want[i]);
		CHECK_EQ(filtered, i == 0);
	}
	char *longlist = malloc(FB_SPANK_QUERY_PATH_MAX);
	CHECK(longlist);
	memset(longlist, 'n', FB_SPANK_QUERY_PATH_MAX - 1);
	longlist[FB_SPANK_QUERY_PATH_MAX - 1] = '\0';
	const char *const one[] = { ok };
	CHECK_EQ(fetch_from_fake(one, 1, longlist, &r, &filtered, lines, sizeof(lines)), 0);
	free(longlist);
	fb_http_resp_free(&r);
	CHECK_STR(lines, "GET /fabric/map HTTP/1.1\n");
	CHECK_EQ(filtered, 0);
}

int main(void)
{
	RUN(conf_defaults_as_documented);
	RUN(conf_takes_every_argument);
	RUN(conf_refuses_typos_naming_the_argument);
	RUN(conf_refuses_an_argument_given_twice);
	RUN(map_keeps_the_job_nodes_and_the_local_port);
	RUN(map_names_the_first_down_port_of_the_job);
	RUN(map_treats_bad_fields_as_unknown);
	RUN(map_refuses_bodies_that_are_not_a_map);
	RUN(map_error_quotes_no_control_bytes);
	RUN(map_leaves_out_a_nodes_variable_over_64k);
	RUN(file_replaces_a_planted_symlink_without_following_it);
	RUN(file_failure_names_the_path_and_leaves_nothing);
	RUN(broker_errors_quote_no_control_bytes);
	RUN(fetch_asks_for_the_job_nodes_and_falls_back_on_400);
	return TEST_DONE();
}
