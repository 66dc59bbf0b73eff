/* pmix_note.h - one fabric event as fabricbus-pmix hands it to the process
 * that calls PMIx_Notify_event, and the line protocol that carries it from
 * the adapter to a Slurm step (docs/pmix.md, "The step socket").
 *
 * The step socket speaks newline-terminated JSON objects, each at most
 * FBP_LINE_MAX bytes:
 *   step -> adapter, once on accept (the hello):
 *     {"Fabricbus":"pmix-step/1","JobId":"12","StepId":"0","Node":"node001",
 *      "StepNodes":"node[001-002]","Namespace":"slurm.pmix.12.0",
 *      "Position":118,"Pmix":true}
 *   adapter -> step: a note (deliver this event), or a bare mark
 *     {"Position":130} (every event up to 130 is handled for this step)
 *   step -> adapter, one per line received: {"Ack":130,"Status":0,"Error":"..."}
 * Position is kept by the step, which lives exactly as long as it matters:
 * a restarted adapter resumes the broker's stream from the lowest Position of
 * the steps it finds, so events during its outage are delivered late, not lost.
 *
 * Pure (jansson only), any thread. The SPANK plugin compiles it too.
 */
#ifndef FBP_NOTE_H
#define FBP_NOTE_H

#include <stddef.h>
#include <stdint.h>

#define FBP_LINE_MAX 65536
#define FBP_NODES_MAX 64       /* affected nodes carried per note */
#define FBP_PROTO "pmix-step/1"

enum fbp_range {
	FBP_RANGE_SESSION = 0, /* every process the delivering server serves */
	FBP_RANGE_NODES = 1,   /* only the processes on the affected nodes (PMIX_RANGE_CUSTOM) */
};

/* The fabricbus.* info keys an event carries (docs/pmix.md, "Info keys"). */
#define FBP_KEY_MESSAGE_ID "fabricbus.message_id"
#define FBP_KEY_ORIGIN "fabricbus.origin"
#define FBP_KEY_SEVERITY "fabricbus.severity"
#define FBP_KEY_EVENT_ID "fabricbus.event_id"
#define FBP_KEY_KIND "fabricbus.kind"
#define FBP_KEY_NODES "fabricbus.nodes"

struct fbp_note {
	uint64_t event_id;      /* the broker's EventId */
	uint64_t position;      /* after delivery, everything up to this is handled */
	int code;               /* the PMIx event code */
	int range;              /* enum fbp_range */
	int64_t timestamp;      /* seconds since the epoch (PMIX_EVENT_TIMESTAMP) */
	char message[1024];     /* the Redfish Message (PMIX_EVENT_TEXT_MESSAGE) */
	char message_id[96];
	char origin[256];
	char severity[16];
	char kind[32];
	char nodes[FBP_NODES_MAX][64]; /* affected nodes */
	size_t n_nodes;
};

/* One line (no newline) for the note, malloc'd into *out; 0 or -ENOMEM. */
int fbp_note_encode(const struct fbp_note *n, char **out);
/* Parse one line from the adapter. Returns 1 for a note (n filled), 0 for a
 * bare mark (n->position set only), or FB_EMALFORMED with the reason in err. */
int fbp_note_decode(const char *line, size_t len, struct fbp_note *n, char *err, size_t errsz);

/* The hello a step sends. */
struct fbp_hello {
	char job_id[32], step_id[32], node[64], nspace[256];
	char step_nodes[4096];  /* a Slurm hostlist */
	uint64_t position;
	int pmix;               /* 1: the step's PMIx server is up (srun --mpi=pmix) */
};
int fbp_hello_encode(const struct fbp_hello *h, char **out);
int fbp_hello_decode(const char *line, size_t len, struct fbp_hello *h, char *err, size_t errsz);

/* A comma-joined list of the note's nodes into buf ("" when none). */
void fbp_note_nodes_joined(const struct fbp_note *n, char *buf, size_t sz);

#endif
