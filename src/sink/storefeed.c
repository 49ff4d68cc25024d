/* storefeed: see storefeed.h. */
#include "storefeed.h"

static void on_event(void *arg, int node, const struct event *ev)
{
	(void)node;
	store_add_event(arg, ev);
}

static void on_info(void *arg, int node, struct bs_pid pid,
		    const char *pid_text, const char *name, const char *current,
		    long mqlen)
{
	(void)node;
	store_set_info(arg, pid, pid_text, name, current, mqlen);
}

void store_feed_hooks(struct store *st, struct session_sink *out)
{
	*out = (struct session_sink){
		.event = on_event, .info = on_info, .arg = st,
	};
}
