/*
 * exact: exact mode as the session wants it (session.h), asked of each
 * agent as it comes up; what the agents send is read in stream.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "retext.h"
#include "sbuf.h"
#include "session_priv.h"
#include "term.h"

/*
 * A pattern as typed, in the Erlang form the agent reads, into out:
 * mod:fun/N, mod:fun and mod:_ as they are; a function in Elixir form
 * (Shop.Cache.get/2, Shop.Cache.get, :ets.lookup) made Erlang; a module
 * alone (my_mod, :ets, Shop.Cache) is every function of it, mod:_.
 * False when it is none of these.
 */
static bool exact_norm(const char *in, struct sbuf *out)
{
	if (in[0] != ':' && strchr(in, ':')) {
		sbuf_addstr(out, in);
		return true;
	}
	bool arity = strchr(in, '/') != NULL;
	const char *dot = strrchr(in, '.');
	if (arity || (dot && islower((unsigned char)dot[1]))) {
		char mfa[SESSION_EXACT_LEN + 4];
		snprintf(mfa, sizeof(mfa), "%s%s", in, arity ? "" : "/0");
		size_t at = out->len;
		if (!retext_mfa(out, TERM_ELIXIR, TERM_ERLANG, mfa))
			return false;
		if (!arity && out->len >= at + 2) {
			out->len -= 2;    /* the "/0" it was read with */
			out->buf[out->len] = '\0';
		}
		return true;
	}
	char atom[RETEXT_ATOM_MAX];
	if (!retext_atom_parse(in, atom, sizeof(atom))) {
		/* a plain name: my_mod */
		if (!islower((unsigned char)in[0]))
			return false;
		for (const char *c = in; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_' && *c != '@')
				return false;
		snprintf(atom, sizeof(atom), "%s", in);
	}
	term_atom_text(out, TERM_ERLANG, atom);
	sbuf_addstr(out, ":_");
	return true;
}

int session_profile_calls(struct session *s, int node,
			  const char *const *patterns, int n, struct sbuf *err)
{
	if (n > SESSION_EXACT_MAX) {
		sbuf_addf(err, "exact mode takes at most %d patterns",
			  SESSION_EXACT_MAX);
		return -1;
	}
	char pat[SESSION_EXACT_MAX][SESSION_EXACT_LEN];
	for (int i = 0; i < n; i++) {
		struct sbuf norm = SBUF_INIT;
		bool good = patterns[i][0] &&
			strlen(patterns[i]) < SESSION_EXACT_LEN - 4 &&
			exact_norm(patterns[i], &norm) && norm.len > 0 &&
			norm.len < SESSION_EXACT_LEN;
		if (good)
			memcpy(pat[i], norm.buf, norm.len + 1);
		sbuf_release(&norm);
		if (!good) {
			sbuf_addf(err, "\"%s\": a function pattern is mod, "
				  "mod:fun or mod:fun/N (Mod.fun/N in Elixir "
				  "form), at most %d bytes", patterns[i],
				  SESSION_EXACT_LEN - 5);
			return -1;
		}
	}
	memcpy(s->exact_pat, pat, sizeof(pat[0]) * (size_t)n);
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
