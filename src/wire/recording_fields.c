/*
 * recording_fields: the fields of a recording's JSON lines, read with
 * their types checked, and the nodes they name (recording.c,
 * recording_export.c).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pidtext.h"
#include "recording_priv.h"
#include "xalloc.h"

/* Fields.  Each returns false when the key is there with the wrong type
 * (or a number out of range) and leaves the default when it is absent. */

bool rec_get_str(const cJSON *o, const char *key, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = NULL;
	if (!v)
		return true;
	if (!cJSON_IsString(v) || !v->valuestring)
		return false;
	*out = v->valuestring;
	return true;
}

bool rec_get_bool(const cJSON *o, const char *key, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return true;
	if (!cJSON_IsBool(v))
		return false;
	*out = cJSON_IsTrue(v);
	return true;
}

/* An integer in [lo, hi) into *out: 1, 0 when absent, -1 when it is not
 * one.  JSON numbers are doubles here, exact up to 2^53. */
#define EXACT 9007199254740992.0   /* 2^53 */

int rec_get_num(const cJSON *o, const char *key, double lo, double hi,
		   double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v))
		return -1;
	double d = v->valuedouble;
	/* the bounds are powers of two, exactly representable; NaN fails;
	 * from 2^53 on every double is a whole number */
	if (!(d >= lo && d < hi))
		return -1;
	if (d > -EXACT && d < EXACT && d != (double)(long long)d)
		return -1;
	*out = d;
	return 1;
}

#define I64_LO (-9223372036854775808.0)
#define I64_HI 9223372036854775808.0

bool rec_get_i64(const cJSON *o, const char *key, int64_t *out)
{
	double d;
	int k = rec_get_num(o, key, I64_LO, I64_HI, &d);
	if (k > 0)
		*out = (int64_t)d;
	return k >= 0;
}

bool rec_get_long(const cJSON *o, const char *key, long *out)
{
	double d;
	int k = rec_get_num(o, key, (double)LONG_MIN, -(double)LONG_MIN, &d);
	if (k > 0)
		*out = (long)d;
	return k >= 0;
}

bool rec_get_ulong(const cJSON *o, const char *key, unsigned long *out)
{
	double d;
	int k = rec_get_num(o, key, 0, 2.0 * -(double)LONG_MIN, &d);
	if (k > 0)
		*out = (unsigned long)d;
	return k >= 0;
}

/* Nodes. */

/* Nodes. */

const char *recording_node(const struct recording *r, int idx)
{
	return idx >= 0 && idx < r->nnodes ? r->nodes[idx] : NULL;
}

/*
 * The index of node name[0..len); -1 when the recording names too many.
 * A new node is told to the sink only once something that names it is
 * delivered (tell_nodes); a line found malformed takes back the nodes it
 * added (forget_nodes), so that no node is made up from a broken line.
 */
static int node_index(struct recording *r, const char *name, size_t len)
{
	int i = r->last_node;
	if (i < r->nnodes && strlen(r->nodes[i]) == len &&
	    !memcmp(r->nodes[i], name, len))
		return i;
	for (i = 0; i < r->nnodes; i++)
		if (strlen(r->nodes[i]) == len && !memcmp(r->nodes[i], name, len))
			return r->last_node = i;
	if (r->nnodes >= RECORDING_NODES_MAX) {
		r->over_nodes = true;   /* the line is malformed for this */
		return -1;
	}
	r->nodes = xrealloc(r->nodes, (size_t)(r->nnodes + 1) * sizeof(*r->nodes));
	r->nodes[r->nnodes] = xstrndup(name, len);
	return r->last_node = r->nnodes++;
}

void rec_tell_nodes(struct recording *r, const struct recording_sink *s,
		       void *arg)
{
	for (; r->told < r->nnodes; r->told++)
		if (s->node)
			s->node(arg, r->told, r->nodes[r->told]);
}

void rec_forget_nodes(struct recording *r, int keep)
{
	while (r->nnodes > keep && r->nnodes > r->told)
		free(r->nodes[--r->nnodes]);
}

/* A line's "node", registered: its index, or -1. */
int rec_line_node(struct recording *r, const cJSON *o)
{
	const char *node;
	if (!rec_get_str(o, "node", &node) || !node || !*node)
		return -1;
	return node_index(r, node, strlen(node));
}

/* A pid text of something on node `node`: false when it is not one. */
bool rec_pid_of(struct recording *r, const char *text, int node,
		   struct bs_pid *pid)
{
	struct pidtext pt;
	if (pidtext_parse(text, &pt) < 0)
		return false;
	if (pt.node_len) {
		node = node_index(r, pt.node, pt.node_len);
		if (node < 0)
			return false;
	}
	pid->num = pt.num;
	pid->serial = pt.serial;
	pid->node = (uint32_t)node;
	return true;
}

/* Registers every name of a "nodes" array; false if it is not one. */
bool rec_nodes_array(struct recording *r, const cJSON *o)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "nodes"), *n;
	if (!a)
		return true;
	if (!cJSON_IsArray(a))
		return false;
	cJSON_ArrayForEach(n, a) {
		if (!cJSON_IsString(n) || !n->valuestring || !*n->valuestring ||
		    node_index(r, n->valuestring, strlen(n->valuestring)) < 0)
			return false;
	}
	return true;
}
