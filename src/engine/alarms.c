/*
 * alarms: the VM's alarms as the session wants them (session.h), asked of
 * each agent as it comes up; what the agents send is read in stream.c.
 */
#include "session_priv.h"

void session_alarms(struct session *s, const struct alarm_spec *sp)
{
	s->alarms_on = sp && alarm_spec_any(sp);
	if (s->alarms_on)
		s->alarms = *sp;
	s->alarm_gen++;
}

const struct alarm_spec *session_alarm_spec(const struct session *s)
{
	return s->alarms_on ? &s->alarms : NULL;
}

unsigned long session_alarm_count(const struct session *s,
				  unsigned long *suppressed)
{
	unsigned long n = 0, sup = 0;
	for (int i = 0; i < s->nnodes; i++) {
		n += s->nodes[i].alarms;
		sup += s->nodes[i].alarms_suppressed;
	}
	if (suppressed)
		*suppressed = sup;
	return n;
}

/* The alarms as the session wants them, asked of each agent once it is
 * up; a new agent has none on (alarm_asked 0). */
void node_alarms_reconcile(struct snode *n)
{
	struct session *s = n->s;
	if (!node_has_agent(n) || n->agent.gone || !n->present ||
	    n->alarm_asked == s->alarm_gen)
		return;
	if (!s->alarms_on && n->alarm_asked == 0) {
		n->alarm_asked = s->alarm_gen;
		return;
	}
	if (agent_alarms(&n->agent, s->alarms_on ? &s->alarms : NULL) == 0)
		n->alarm_asked = s->alarm_gen;
}
