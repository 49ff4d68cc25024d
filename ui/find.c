/*
 * find: the process a name or pid typed in the view stands for (:focus,
 * the prompt's Enter): one the store has, a registered one that has done
 * nothing yet, or a pid typed in full not seen yet.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "commands.h"
#include "control.h"
#include "pidtext.h"
#include "retext.h"
#include "xalloc.h"

/*
 * A pid typed in full that has done nothing we have seen yet (or whose
 * events are still on their way): watch it all the same; the target knows.
 */
static struct proc *pid_not_seen(struct app *a, const char *what,
				  bool *refused)
{
	struct pidtext pt;
	int k = 0;
	if (pidtext_parse(what, &pt) < 0)
		return NULL;
	unsigned num = pt.num, serial = pt.serial;
	char node[PIDTEXT_NODE_MAX + 1];
	memcpy(node, pt.node, pt.node_len);
	node[pt.node_len] = '\0';
	if (a->multi) {
		for (k = 0; k < session_nnodes(a->s); k++)
			if (!strcmp(app_node_name(a, k), node))
				break;
		if (k == session_nnodes(a->s))
			return NULL;
	} else if (pt.node_len) {
		return NULL;
	}
	if (k >= session_nnodes(a->s) || !session_node(a->s, k)->present)
		return NULL;
	struct bs_pid pid = { .node = (uint32_t)k, .num = num, .serial = serial };
	struct sbuf err = SBUF_INIT;
	if (session_check_pid(a->s, pid, ":focus", &err) < 0) {
		/* the target would drop the connection over it */
		app_msg(a, true, "%s", err.buf);
		sbuf_release(&err);
		*refused = true;
		return NULL;
	}
	char text[PIDTEXT_MAX];
	pidtext_format(text, sizeof(text), a->multi ? node : NULL, num, serial);
	store_set_info(&a->store, pid, text, NULL, NULL, -1);
	return store_proc(&a->store, pid);
}

/* The process a name or pid stands for; NULL, with *refused set when a
 * message says why already. */
struct proc *app_find_proc(struct app *a, const char *what, bool *refused)
{
	/* a name in either syntax: Shop.Cache, Elixir.Shop.Cache, :my_server,
	 * 'my server'; compared with the names as each node shows them */
	char atom[RETEXT_ATOM_MAX];
	retext_atom_parse(what, atom, sizeof(atom));
	struct sbuf *shown = xcalloc((size_t)(session_nnodes(a->s) ? session_nnodes(a->s) : 1),
				     sizeof(*shown));
	for (int k = 0; k < session_nnodes(a->s); k++)
		retext_name(&shown[k], TERM_ERLANG, session_node(a->s, k)->syn, atom);
	struct proc *found = NULL;
	for (size_t i = 0; !found && i < a->store.nprocs; i++) {
		struct proc *p = a->store.procs[i];
		int k = (int)p->pid.node;
		if (!strcmp(p->pid_text, what) || (p->name &&
		    (!strcmp(p->name, what) || (k < session_nnodes(a->s) &&
		     !strcmp(p->name, sbuf_str(&shown[k]))))))
			found = p;
	}
	for (int k = 0; k < session_nnodes(a->s); k++)
		sbuf_release(&shown[k]);
	free(shown);
	if (found)
		return found;
	/* a registered process that has not done anything yet */
	for (int k = 0; k < session_nnodes(a->s); k++) {
		const struct names *nt = session_node(a->s, k)->names;
		if (!session_node(a->s, k)->present)
			continue;
		for (size_t i = 0; i < names_slots(nt); i++) {
			struct bs_pid pid;
			const char *s = names_slot(nt, i, &pid);
			if (s && (!strcmp(s, what) || !strcmp(s, atom))) {
				char text[600];
				pid.node = (uint32_t)k;
				if (a->multi)
					snprintf(text, sizeof(text), "<%s.%u.%u>",
						 app_node_name(a, k), pid.num,
						 pid.serial);
				else
					app_local_pid(pid, text, sizeof(text));
				struct sbuf nm = SBUF_INIT;
				retext_name(&nm, TERM_ERLANG,
					    session_node(a->s, k)->syn, s);
				store_set_info(&a->store, pid, text,
					       sbuf_str(&nm), NULL, -1);
				sbuf_release(&nm);
				return store_proc(&a->store, pid);
			}
		}
	}
	return pid_not_seen(a, what, refused);
}

int app_focus_text(struct app *a, const char *what)
{
	bool refused = false;
	struct proc *p = app_find_proc(a, what, &refused);
	if (!p) {
		if (!refused)
			app_msg(a, true, "no process \"%s\" seen yet; Tab "
				"completes names and pids", what);
		return ACT_REDRAW;
	}
	return app_focus(a, p->pid, p->pid_text);
}
