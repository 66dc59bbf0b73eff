/* fb_wire.h - the agent protocol: framing and the binary event encoding.
 *
 * Spec: proto/PROTOCOL.md. Every frame is an 8-byte header
 *   'F' 'B' <version u8> <type u8> <body length u32 BE>
 * followed by the body. Decoding is strict: fb_frame_peek() refuses bad magic,
 * unknown versions and bodies over the caller's maximum before any body byte
 * is looked at, and every body parser reads through struct fb_rd.
 *
 * The same event body encoding is used inside EVENTS frames and inside
 * journal records, so the broker never re-encodes what an agent sent.
 */
#ifndef FB_WIRE_H
#define FB_WIRE_H

#include "fb_buf.h"
#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define FB_PROTO_VERSION 1
#define FB_FRAME_HDR_LEN 8
#define FB_FRAME_MAX_DEFAULT (1u << 20) /* body bytes */
#define FB_FRAME_MAX_LIMIT (64u << 20)  /* no configuration may exceed this */

enum fb_frame_type {
	FB_FRAME_HELLO = 1,     /* agent -> broker */
	FB_FRAME_HELLO_ACK = 2, /* broker -> agent */
	FB_FRAME_EVENTS = 3,    /* agent -> broker */
	FB_FRAME_ACK = 4,       /* broker -> agent, cumulative */
	FB_FRAME_HEARTBEAT = 5, /* both ways */
	FB_FRAME_ERROR = 6,     /* both ways, then close */
};

/* Codes carried in ERROR frames. */
enum fb_wire_error {
	FB_WERR_VERSION = 1,   /* protocol version not supported */
	FB_WERR_MALFORMED = 2, /* a frame or event failed to decode */
	FB_WERR_TOO_BIG = 3,   /* frame over the broker's maximum */
	FB_WERR_PROTOCOL = 4,  /* frame not allowed in this state */
	FB_WERR_REPLACED = 5,  /* a newer connection took over this agent id */
	FB_WERR_SHUTDOWN = 6,  /* broker is stopping */
	FB_WERR_INTERNAL = 7,  /* broker could not store the events (e.g. disk) */
	FB_WERR_BUSY = 8,      /* broker at its connection limit: retry later */
	FB_WERR_IN_USE = 9,    /* the agent id has a live session; no proof to take it over */
	FB_WERR_SEQUENCE = 10, /* event seq too far above what the broker holds (MaxSeqGap) */
	FB_WERR_FORBIDDEN = 11,/* TLS required, or the certificate may not use this agent id */
};

struct fb_frame_hdr {
	uint8_t version;
	uint8_t type;
	uint32_t body_len;
};

/* Look at the start of buf. Returns 0 when a whole frame (header + body) is
 * present, FB_EAGAIN when more bytes are needed, FB_EMALFORMED for bad magic,
 * FB_EVERSION for a version other than FB_PROTO_VERSION, FB_ETOOBIG for a body
 * over max_body. *hdr is filled whenever the 8 header bytes are present. */
int fb_frame_peek(const uint8_t *buf, size_t len, uint32_t max_body, struct fb_frame_hdr *hdr);

/* Start a frame in out; returns the offset to pass to fb_frame_end(). */
size_t fb_frame_begin(struct fb_buf *out, uint8_t type);
/* Patch the body length; FB_ETOOBIG if the body exceeds FB_FRAME_MAX_LIMIT. */
int fb_frame_end(struct fb_buf *out, size_t start);

struct fb_hello {
	uint8_t version;                  /* highest version the agent speaks */
	char agent_id[FB_AGENT_ID_MAX];   /* non-empty, [A-Za-z0-9._:@-] */
	uint64_t last_acked;              /* last seq the agent saw acked (0 = none) */
};

struct fb_hello_ack {
	uint64_t last_seq;     /* highest seq the broker holds for this agent */
	uint32_t max_frame;    /* largest body the broker accepts */
	uint32_t heartbeat_ms; /* the broker drops connections silent for 3x this */
	uint64_t broker_epoch; /* changes when the journal is recreated */
};

struct fb_error_msg {
	uint16_t code;
	char text[256];
};

int fb_wire_put_hello(struct fb_buf *out, const struct fb_hello *h);
int fb_wire_put_hello_ack(struct fb_buf *out, const struct fb_hello_ack *a);
int fb_wire_put_ack(struct fb_buf *out, uint64_t seq);
int fb_wire_put_heartbeat(struct fb_buf *out, uint64_t ts_ns);
int fb_wire_put_error(struct fb_buf *out, uint16_t code, const char *text);

/* Body parsers: 0 or an fb_err. Trailing bytes after the known fields are
 * allowed (a later minor revision may append fields). */
int fb_wire_parse_hello(const uint8_t *body, size_t len, struct fb_hello *h);
int fb_wire_parse_hello_ack(const uint8_t *body, size_t len, struct fb_hello_ack *a);
int fb_wire_parse_ack(const uint8_t *body, size_t len, uint64_t *seq);
int fb_wire_parse_heartbeat(const uint8_t *body, size_t len, uint64_t *ts_ns);
int fb_wire_parse_error(const uint8_t *body, size_t len, struct fb_error_msg *e);

/* 1 if s is a valid agent id. */
int fb_agent_id_valid(const char *s);

/* One event body (no agent id, no length prefix). The trailing jobs field
 * is written only when ev->jobs is non-empty; a jobs list that
 * fb_event_jobs_check() refuses fails with FB_EMALFORMED. */
int fb_event_encode(struct fb_buf *out, const struct fb_event *ev);
/* Decode one event body; agent_id is left as the caller set it. The body
 * ends after the counters or after one str8 jobs field; anything else
 * there is FB_EMALFORMED. */
int fb_event_decode(const uint8_t *p, size_t len, struct fb_event *ev);
/* The same, and on FB_EMALFORMED or FB_ETOOBIG from a field check *why
 * (when why is non-NULL) names the field, as fb_event_check() does;
 * it is NULL for errors that fb_strerror() already explains (TRUNCATED,
 * an overlong or invalid UTF-8 string). Static storage. */
int fb_event_decode_why(const uint8_t *p, size_t len, struct fb_event *ev, const char **why);

/* EVENTS frames: u32 count, then count x (u16 length, event body). */
struct fb_events_writer {
	struct fb_buf *out;
	size_t frame_start;
	size_t count_off;
	uint32_t count;
};
int fb_events_begin(struct fb_events_writer *w, struct fb_buf *out);
int fb_events_add(struct fb_events_writer *w, const struct fb_event *ev);
int fb_events_end(struct fb_events_writer *w);

struct fb_events_reader {
	struct fb_rd rd;
	uint32_t count;
	uint32_t index;
};
/* Opens an EVENTS body. The count is checked against the body size. */
int fb_events_open(struct fb_events_reader *r, const uint8_t *body, size_t len);
/* 1 and *ev filled, 0 at the end, or an fb_err. The raw event body is
 * returned in *raw and *raw_len when those are non-NULL (for the journal). */
int fb_events_next(struct fb_events_reader *r, struct fb_event *ev, const uint8_t **raw, size_t *raw_len);

#endif
