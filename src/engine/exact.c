/*
 * exact: exact mode as the session wants it (session.h), asked of each
 * agent as it comes up; what the agents send is read in stream.c.
 */
#include <stdio.h>
#include <string.h>

#include "sbuf.h"
#include "session_priv.h"

int session_profile_calls(struct session *s, int node,
			  const char *const *patterns, int n, struct sbuf *err)
{
	if (n > SESSION_EXACT_MAX) {
		sbuf_addf(err, "exact mode takes at most %d patterns",
			  SESSION_EXACT_MAX);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (!patterns[i][0] || strlen(patterns[i]) >= SESSION_EXACT_LEN) {
			sbuf_addf(err, "a function pattern is mod, mod:fun or "
				  "mod:fun/N, at most %d bytes",
				  SESSION_EXACT_LEN - 1);
			return -1;
		}
	for (int i = 0; i < n; i++) {
		/* a module alone is all of its functions */
		bool mod = !strchr(patterns[i], ':');
		snprintf(s->exact_pat[i], SESSION_EXACT_LEN, "%s%s", patterns[i],
			 mod && strlen(patterns[i]) < SESSION_EXACT_LEN - 2 ?
			 ":_" : "");
	}
	s->exact_n = n;
	s->exact_node = node;
	s->exact_gen++;
	return 0;
}

int session_exact(const struct session *s, const char **out, int max)
{
	int n = 0;
	for (; n < s->exact_n && n < max; n++)
		out[n] = s->exact_pat[n];
	return n;
}

/* Exact mode as the session wants it, asked of each agent once it is up;
 * a new agent has none (exact_asked 0); a node it is not wanted on is
 * told off once it was asked. */
void node_exact_reconcile(struct snode *n)
{
	struct session *s = n->s;
	if (!node_has_agent(n) || n->agent.gone || !n->present ||
	    n->exact_asked == s->exact_gen)
		return;
	bool here = s->exact_n > 0 && (s->exact_node < 0 ||
				       s->exact_node == n->idx);
	if (!here && n->exact_asked == 0) {
		n->exact_asked = s->exact_gen;
		return;
	}
	const char *pats[SESSION_EXACT_MAX];
	int np = here ? session_exact(s, pats, SESSION_EXACT_MAX) : 0;
	if (agent_profile_calls(&n->agent, pats, np) == 0)
		n->exact_asked = s->exact_gen;
}
