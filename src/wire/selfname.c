/*
 * selfname: one of a few fixed node names, held by a lock file for the
 * life of the process.  Invariant: the name, once chosen, never changes;
 * the lock's descriptor stays open (never closed, never inherited) until
 * the process ends, which releases it.
 */
#include "selfname.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statedir.h"

static pthread_once_t chosen = PTHREAD_ONCE_INIT;
static char alive[64];

struct slot_age {
	int slot;            /* 1 .. SELFNAME_SLOTS */
	long long mtime;     /* ns; 0: never used */
};

/* The free slot used least lately, locked, or -1. */
static int take_slot(void)
{
	char dir[4096], path[4200];
	if (statedir_path(dir, sizeof(dir)) < 0)
		return -1;
	struct slot_age order[SELFNAME_SLOTS];
	for (int i = 0; i < SELFNAME_SLOTS; i++) {
		struct stat st;
		snprintf(path, sizeof(path), "%s/name-%d.lock", dir, i + 1);
		order[i].slot = i + 1;
		order[i].mtime = lstat(path, &st) == 0 ?
			(long long)st.st_mtim.tv_sec * 1000000000LL +
			st.st_mtim.tv_nsec : 0;
	}
	/* oldest first; eight of them */
	for (int i = 1; i < SELFNAME_SLOTS; i++)
		for (int j = i; j > 0 && order[j].mtime < order[j - 1].mtime; j--) {
			struct slot_age t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int i = 0; i < SELFNAME_SLOTS; i++) {
		snprintf(path, sizeof(path), "%s/name-%d.lock", dir,
			 order[i].slot);
		int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			      0600);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			futimens(fd, NULL);   /* used now: the last to take */
			return order[i].slot;   /* fd stays open: the lock */
		}
		close(fd);
	}
	return -1;
}

static void choose(void)
{
	int slot = take_slot();
	if (slot > 0)
		snprintf(alive, sizeof(alive), "beamscope_%u_%d",
			 (unsigned)getuid(), slot);
	else
		snprintf(alive, sizeof(alive), "beamscope_%u_%ld",
			 (unsigned)getuid(), (long)getpid());
}

void selfname_alive(char *out, size_t n)
{
	pthread_once(&chosen, choose);
	snprintf(out, n, "%s", alive);
}
