/* fb_pmix_server.c - a real PMIx server for tests (libpmix's
 * PMIx_server_init), standing in for a resource manager that accepts tools
 * (as a PRRTE DVM does): it registers one namespace, forks its processes
 * locally, accepts tools, and waits for the processes to end.
 *
 *   fb_pmix_server --uri-file F --nspace NS --nodes node001,node002 --ppn 2 -- cmd args...
 *
 * Ranks are laid out by node in order (ppn per node), all forked here; the
 * node map tells PMIx (and PMIx_Resolve_peers) which rank is on which node.
 * Prints "fb_pmix_server: rank R exit S" per process; exit 0 when every
 * process exited 0, else 1. The URI a tool attaches to (PMIX_SERVER_URI41
 * from the clients' environment) is written to F once the server is up.
 */
#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pmix_status_t op_ok(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *cbd)
{
	(void)p, (void)o, (void)cb, (void)cbd;
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_abort(const pmix_proc_t *p, void *o, int st, const char msg[],
			      pmix_proc_t procs[], size_t n, pmix_op_cbfunc_t cb, void *cbd)
{
	(void)o, (void)procs, (void)n, (void)cb, (void)cbd;
	fprintf(stderr, "fb_pmix_server: rank %u aborted (%d): %s\n", p->rank, st, msg ? msg : "");
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_fence(const pmix_proc_t procs[], size_t n, const pmix_info_t info[],
			      size_t ni, char *data, size_t ndata, pmix_modex_cbfunc_t cb, void *cbd)
{
	(void)procs, (void)n, (void)info, (void)ni, (void)data, (void)ndata;
	if (cb)
		cb(PMIX_SUCCESS, NULL, 0, cbd, NULL, NULL); /* one host: nothing to exchange */
	return PMIX_SUCCESS;
}

/* A tool gets the identity it asked for (PMIX_TOOL_NSPACE/RANK), else one. */
static void on_tool(pmix_info_t *info, size_t n, pmix_tool_connection_cbfunc_t cb, void *cbd)
{
	pmix_proc_t p;
	PMIX_LOAD_PROCID(&p, "fb-pmix-server-tool", 0);
	for (size_t i = 0; i < n; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_TOOL_NSPACE))
			PMIX_LOAD_NSPACE(p.nspace, info[i].value.data.string);
		else if (PMIX_CHECK_KEY(&info[i], PMIX_TOOL_RANK))
			p.rank = info[i].value.data.rank;
	}
	fprintf(stderr, "fb_pmix_server: tool %s:%u connected\n", p.nspace, p.rank);
	cb(PMIX_SUCCESS, &p, cbd);
}

static pmix_server_module_t module = {
	.client_connected = op_ok, .client_finalized = op_ok, .abort = on_abort,
	.fence_nb = on_fence, .tool_connected = on_tool,
};

static void die(const char *what, pmix_status_t rc)
{
	fprintf(stderr, "fb_pmix_server: %s: %s\n", what, PMIx_Error_string(rc));
	exit(2);
}

/* "node001,node002" x ppn -> PMIx_generate_ppn input "0,1;2,3". */
static void ppn_list(int nnodes, int ppn, char *out, size_t sz)
{
	size_t o = 0;
	for (int n = 0; n < nnodes; n++)
		for (int k = 0; k < ppn; k++)
			o += (size_t)snprintf(out + o, sz - o, "%s%d", k ? "," : (n ? ";" : ""), n * ppn + k);
}

static void register_nspace(const char *ns, const char *nodes, int nnodes, int ppn)
{
	int np = nnodes * ppn;
	char *node_regex = NULL, *ppn_regex = NULL, ranks[1024], peers[1024] = "";
	ppn_list(nnodes, ppn, ranks, sizeof(ranks));
	for (int r = 0; r < np; r++)
		snprintf(peers + strlen(peers), sizeof(peers) - strlen(peers), "%s%d", r ? "," : "", r);
	if (PMIx_generate_regex(nodes, &node_regex) != PMIX_SUCCESS ||
	    PMIx_generate_ppn(ranks, &ppn_regex) != PMIX_SUCCESS)
		die("PMIx_generate_regex/ppn", PMIX_ERROR);
	size_t ninfo = 6 + (size_t)np, k = 0;
	pmix_info_t *info;
	PMIX_INFO_CREATE(info, ninfo);
	uint32_t u = (uint32_t)np;
	PMIX_INFO_LOAD(&info[k++], PMIX_UNIV_SIZE, &u, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[k++], PMIX_JOB_SIZE, &u, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_SIZE, &u, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
	PMIX_INFO_LOAD(&info[k++], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
	PMIX_INFO_LOAD(&info[k++], PMIX_PROC_MAP, ppn_regex, PMIX_REGEX);
	for (int r = 0; r < np; r++) {
		pmix_data_array_t *d;
		PMIX_DATA_ARRAY_CREATE(d, 3, PMIX_INFO);
		pmix_info_t *pi = d->array;
		pmix_rank_t rank = (pmix_rank_t)r;
		uint16_t lr = (uint16_t)(r % ppn), nr = (uint16_t)(r % ppn);
		PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
		PMIX_INFO_LOAD(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
		PMIX_INFO_LOAD(&pi[2], PMIX_NODE_RANK, &nr, PMIX_UINT16);
		PMIX_INFO_LOAD(&info[k++], PMIX_PROC_DATA, d, PMIX_DATA_ARRAY);
		PMIX_DATA_ARRAY_FREE(d);
	}
	pmix_status_t rc = PMIx_server_register_nspace(ns, np, info, ninfo, NULL, NULL);
	if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
		die("PMIx_server_register_nspace", rc);
	PMIX_INFO_FREE(info, ninfo);
	free(node_regex);
	free(ppn_regex);
}

int main(int argc, char **argv)
{
	const char *uri_file = NULL, *ns = "fbtest", *nodes = "node001";
	int ppn = 1, a = 1;
	for (; a < argc && strcmp(argv[a], "--"); a++) {
		if (!strcmp(argv[a], "--uri-file") && a + 1 < argc)
			uri_file = argv[++a];
		else if (!strcmp(argv[a], "--nspace") && a + 1 < argc)
			ns = argv[++a];
		else if (!strcmp(argv[a], "--nodes") && a + 1 < argc)
			nodes = argv[++a];
		else if (!strcmp(argv[a], "--ppn") && a + 1 < argc)
			ppn = atoi(argv[++a]);
	}
	if (a + 1 >= argc || !uri_file || ppn < 1) {
		fprintf(stderr, "usage: fb_pmix_server --uri-file F [--nspace NS] [--nodes a,b] [--ppn N] -- cmd...\n");
		return 2;
	}
	char **cmd = argv + a + 1;
	int nnodes = 1;
	for (const char *p = nodes; *p; p++)
		nnodes += *p == ',';
	bool yes = true;
	pmix_info_t sinfo[1];
	PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
	pmix_status_t rc = PMIx_server_init(&module, sinfo, 1);
	if (rc != PMIX_SUCCESS)
		die("PMIx_server_init", rc);
	register_nspace(ns, nodes, nnodes, ppn);
	int np = nnodes * ppn;
	pid_t *pids = calloc((size_t)np, sizeof(*pids));
	for (int r = 0; r < np; r++) {
		pmix_proc_t p;
		char **env = NULL;
		PMIX_LOAD_PROCID(&p, ns, (pmix_rank_t)r);
		rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
		if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
			die("PMIx_server_register_client", rc);
		if ((rc = PMIx_server_setup_fork(&p, &env)) != PMIX_SUCCESS)
			die("PMIx_server_setup_fork", rc);
		for (char **e = env; r == 0 && e && *e; e++)
			if (!strncmp(*e, "PMIX_SERVER_URI41=", 18)) {
				FILE *f = fopen(uri_file, "w");
				if (!f || fprintf(f, "%s\n", *e + 18) < 0 || fclose(f))
					die("writing the URI file", PMIX_ERROR);
			}
		if ((pids[r] = fork()) == 0) {
			for (char **e = env; e && *e; e++)
				putenv(*e);
			execvp(cmd[0], cmd);
			_exit(127);
		}
	}
	int bad = 0;
	for (int done = 0; done < np;) {
		int st;
		pid_t pid = wait(&st);
		if (pid < 0)
			break;
		for (int r = 0; r < np; r++)
			if (pids[r] == pid) {
				int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				printf("fb_pmix_server: rank %d exit %d\n", r, code);
				fflush(stdout);
				bad |= code != 0;
				done++;
			}
	}
	free(pids);
	PMIx_server_finalize();
	return bad ? 1 : 0;
}
