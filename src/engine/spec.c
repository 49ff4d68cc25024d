/*
 * spec: what a front end asks the engine to trace, from the options, and
 * the changes the view makes to it while tracing (call patterns, :match),
 * each tried at the next start and taken back if the targets refuse it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callpat.h"
#include "opts.h"
#include "sbuf.h"
#include "session_priv.h"
#include "xalloc.h"

/* the view, without --duration: ten minutes */
#define VIEW_DEFAULT_DURATION 600

void session_spec_from_config(struct session_spec *sp,
			      const struct config *cfg, enum session_front front)
{
	memset(sp, 0, sizeof(*sp));
	sp->pids = (char *)(cfg->pids_arg ? cfg->pids_arg : "all");
	sp->follow = cfg->follow;
	for (int i = 0; i < cfg->ncalls; i++)
		sp->calls[sp->ncalls++] = (char *)cfg->calls[i];
	if (cfg->match)
		snprintf(sp->match, sizeof(sp->match), "%s", cfg->match);
	sp->payload = cfg->payload_bytes;
	sp->syntax = cfg->syntax;

	if (front == SESSION_VIEW) {
		/* receive timeouts too, unless --events says: the view ships
		 * the events of a few processes in focus */
		sp->kinds = cfg->events_set || cfg->open ? cfg->kinds :
			KIND_VIEW_DEFAULT | (cfg->kinds & KIND_CALL);
		/* gen calls are paired once the servers view asks (it costs
		 * the target a tracer call per send), with --gen-calls from
		 * the start, and always in a recording, which has them */
		sp->gen_calls = cfg->gen_calls || cfg->open;
		if (sp->gen_calls)
			sp->kinds |= KIND_GENCALL;
		sp->duration = cfg->duration_set ? cfg->duration :
			VIEW_DEFAULT_DURATION;
		sp->max_events = cfg->max_events_set ? cfg->max_events : 0;
		return;
	}

	sp->kinds = cfg->kinds;
	sp->duration = cfg->duration;
	/* a recording was limited when it was made: it is replayed whole
	 * unless a limit is asked for */
	sp->max_events = cfg->counts || (cfg->open && !cfg->max_events_set) ?
		0 : cfg->max_events;
	sp->counts_only = cfg->counts;
	sp->ship_all = !cfg->counts;
	if (cfg->gen_calls) {
		/* the records are written: the output reopens */
		sp->gen_calls = true;
		sp->kinds |= KIND_GENCALL;
		if (!cfg->events_set && !cfg->open) {
			/* every process counted, no message shipped */
			sp->ship_all = false;
			if (!cfg->max_events_set)
				sp->max_events = 0;
		}
	}
}

const struct session_spec *session_spec(const struct session *s)
{
	return &s->spec;
}

int session_add_call(struct session *s, const char *pattern, struct sbuf *why)
{
	struct session_spec *sp = &s->spec;
	if (sp->ncalls == SESSION_CALLS_MAX) {
		sbuf_addf(why, "at most %d call patterns; :uncall one first",
			  SESSION_CALLS_MAX);
		return -1;
	}
	struct sbuf erl = SBUF_INIT;
	int r = callpat_erlang(pattern, &erl, why);
	sbuf_release(&erl);
	if (r < 0)
		return -1;
	sp->calls[sp->ncalls++] = xstrdup(pattern);
	sp->kinds |= KIND_CALL;
	s->trial = SESSION_TRIAL_CALL;
	return 0;
}

int session_remove_call(struct session *s, const char *pattern)
{
	struct session_spec *sp = &s->spec;
	for (int i = 0; i < sp->ncalls; i++)
		if (!strcmp(sp->calls[i], pattern)) {
			free(sp->calls[i]);
			memmove(sp->calls + i, sp->calls + i + 1,
				sizeof(sp->calls[0]) * (size_t)(sp->ncalls - i - 1));
			if (!--sp->ncalls)
				sp->kinds &= ~KIND_CALL;
			return 0;
		}
	return -1;
}

void session_set_match(struct session *s, const char *pattern)
{
	struct session_spec *sp = &s->spec;
	snprintf(s->match_before, sizeof(s->match_before), "%s", sp->match);
	snprintf(sp->match, sizeof(sp->match), "%s", pattern);
	/* taking one off cannot be refused */
	s->trial = pattern[0] ? SESSION_TRIAL_MATCH : SESSION_TRIAL_NONE;
}

bool session_take_back(struct session *s)
{
	struct session_spec *sp = &s->spec;
	switch (s->trial) {
	case SESSION_TRIAL_CALL:
		free(sp->calls[--sp->ncalls]);
		if (!sp->ncalls)
			sp->kinds &= ~KIND_CALL;
		break;
	case SESSION_TRIAL_MATCH:
		snprintf(sp->match, sizeof(sp->match), "%s", s->match_before);
		break;
	default:
		return false;
	}
	s->trial = SESSION_TRIAL_NONE;
	return true;
}

void session_set_kinds(struct session *s, int kinds)
{
	struct session_spec *sp = &s->spec;
	sp->kinds = kinds | (sp->ncalls ? KIND_CALL : 0) |
		(sp->gen_calls ? KIND_GENCALL : 0);
}

void session_set_duration(struct session *s, double secs)
{
	s->spec.duration = secs;
}

void session_set_max_events(struct session *s, unsigned long n)
{
	s->spec.max_events = n;
}

void session_set_payload(struct session *s, unsigned bytes)
{
	s->spec.payload = bytes;
}

bool session_set_gen_calls(struct session *s, bool on)
{
	struct session_spec *sp = &s->spec;
	if (sp->gen_calls == on || s->rec)   /* a recording has its records */
		return false;
	sp->gen_calls = on;
	if (on)
		sp->kinds |= KIND_GENCALL;
	else
		sp->kinds &= ~KIND_GENCALL;
	return true;
}
