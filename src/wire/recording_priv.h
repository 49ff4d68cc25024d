/*
 * recording_priv: what the reader of recordings (recording.c) and of
 * JSON exports (recording_export.c) share, for src/wire/ only.
 */
#ifndef BS_RECORDING_PRIV_H
#define BS_RECORDING_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "recording.h"

/* an export being handed out */
struct recording_export {
	cJSON *doc;
	const cJSON *proc;       /* the next process entry, or NULL */
	const cJSON *event;      /* the next event, or NULL */
	int node;                /* the export's "node" */
	unsigned long line;      /* where it is, for malformed entries */
};

/* which array of a streamed export an entry is in */
enum { ARRAY_PROCS = 1, ARRAY_EVENTS = 2 };

/* what scan_stream found */
enum { STREAM_MORE, STREAM_ENTRY, STREAM_EOL };

/* What next_line found. */
enum {
	NEXT_ERROR = -1, NEXT_END = 0, NEXT_LINE = 1, NEXT_LATER = 2,
	NEXT_HEADER = 3,   /* a streamed export's header: stream_header */
	NEXT_ENTRY = 4,    /* an entry of it in p, n: take_entry */
};

/* ---- shared by recording.c and recording_export.c ---- */

void rec_deliver_event(struct recording *r, int node, const struct event *ev,
                       const struct recording_sink *s, void *arg);
int rec_event_type_of(const char *json);
void rec_export_done(struct recording *r);
int rec_export_step(struct recording *r, int n, const struct recording_sink *s,
                    void *arg);
void rec_forget_nodes(struct recording *r, int keep);
bool rec_get_i64(const cJSON *o, const char *key, int64_t *out);
bool rec_get_str(const cJSON *o, const char *key, const char **out);
int rec_line_node(struct recording *r, const cJSON *o);
void rec_line_reset(struct recording *r);
void rec_malformed(struct recording *r, unsigned long line, const char *why);
bool rec_nodes_array(struct recording *r, const cJSON *o);
const char *rec_parse_event(struct recording *r, const cJSON *o, int t,
                            struct event *ev, int *node);
const char *rec_parse_proc(struct recording *r, const cJSON *o, int *node,
                           struct recording_proc *p);
size_t rec_scan_detect(struct recording_scan *sc, const char *p, size_t n,
                       size_t at, bool *opens);
void rec_scan_reset(struct recording_scan *sc);
size_t rec_scan_stream(struct recording *r, const char *p, size_t n,
                       int *what);
bool rec_stream_begin(struct recording *r);
void rec_stream_end(struct recording *r, bool last);
void rec_stream_header(struct recording *r, const struct recording_sink *s,
                       void *arg);
void rec_take_entry(struct recording *r, const char *p, size_t n,
                    const struct recording_sink *s, void *arg);
const char *rec_take_export(struct recording *r, cJSON *doc,
                            const struct recording_sink *s, void *arg);
void rec_tell_nodes(struct recording *r, const struct recording_sink *s,
                    void *arg);

/* Fields (recording_fields.c).  Each returns false when the key is there
 * with the wrong type (or a number out of range) and leaves the default
 * when it is absent. */
bool rec_get_bool(const cJSON *o, const char *key, bool *out);
int rec_get_num(const cJSON *o, const char *key, double lo, double hi, double *out);
bool rec_get_long(const cJSON *o, const char *key, long *out);
bool rec_get_ulong(const cJSON *o, const char *key, unsigned long *out);
/* The pid a text names, on node (or the node it names). */
bool rec_pid_of(struct recording *r, const char *text, int node, struct bs_pid *pid);
#endif
