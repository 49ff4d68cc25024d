/*
 * profile_feed: a sample of the profiler (decode.h) into a profile.  A
 * process that was not on a scheduler (waiting, suspended, collecting its
 * garbage, ...) gets its state as a last frame, "(waiting)", so that a
 * function's self samples are time it ran and the time a process waited
 * shows where it waited.
 */
#include "profile.h"

#include <stdio.h>
#include <string.h>

bool profile_on_cpu(const char *status)
{
	return !strcmp(status, "running") || !strcmp(status, "runnable");
}

void profile_add_sample(struct profile *p, const struct prof_sample *s,
			int64_t t_ms)
{
	const char *frames[PROF_FRAMES_MAX + 1];
	char state[sizeof(s->status) + 2];
	int n = 0;
	for (int i = 0; i < s->nframes; i++)
		frames[n++] = s->frames[i];
	if (!profile_on_cpu(s->status)) {
		snprintf(state, sizeof(state), "(%s)", s->status);
		frames[n++] = state;
	}
	profile_add(p, frames, n, t_ms);
}
