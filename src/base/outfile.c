/*
 * outfile: see outfile.h.  The checks look at the name without following
 * it (lstat), and each file opened is looked at again once open (fstat):
 * what was checked is what is written, even if the name changed between.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static void closed(struct outfile *o)
{
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	o->fd = -1;
	o->f = NULL;
}

static int fail(struct outfile *o, int fd)
{
	if (fd >= 0)
		close(fd);
	closed(o);
	return -1;
}

static int cannot(struct outfile *o, int fd, struct sbuf *err)
{
	sbuf_addf(err, "cannot write \"%s\": %s", o->path, strerror(errno));
	return fail(o, fd);
}

/* Is fd (open, looked at in *st) the input? */
static bool is_input(const struct stat *st, const struct stat *in)
{
	return in && same_file(st, in);
}

/* A pipe, a terminal, a device: written as it is, never emptied. */
static int open_as_is(struct outfile *o, const struct stat *in,
		      struct sbuf *err)
{
	struct stat st;
	int fd = open(o->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return cannot(o, -1, err);
	if (fstat(fd, &st) < 0)
		return cannot(o, fd, err);
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		/* it was something else a moment ago */
		sbuf_addf(err, "\"%s\" changed while it was opened", o->path);
		return fail(o, fd);
	}
	if (is_input(&st, in)) {
		sbuf_addf(err, "\"%s\" is the recording being read", o->path);
		return fail(o, fd);
	}
	o->fd = fd;
	return 0;
}

/* The mode a new file gets: what open(2) with 0666 would give. */
static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* A temporary beside path, renamed over it at the end. */
static int open_temp(struct outfile *o, mode_t mode, struct sbuf *err)
{
	size_t n = strlen(o->path) + sizeof(".tmpXXXXXX");
	o->tmp = xmalloc(n);
	snprintf(o->tmp, n, "%s.tmpXXXXXX", o->path);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0)
		return cannot(o, -1, err);
	if (fchmod(fd, mode) < 0) {
		int e = errno;
		unlink(o->tmp);
		errno = e;
		return cannot(o, fd, err);
	}
	o->fd = fd;
	o->regular = true;
	return 0;
}

/* A regular file written in place: emptied only once it is known to be
 * the file that was checked. */
static int open_in_place(struct outfile *o, const struct stat *was,
			 struct sbuf *err)
{
	struct stat st;
	int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(o->path, was ? flags : flags | O_CREAT | O_EXCL, 0666);
	if (fd < 0 && errno == ELOOP) {
		sbuf_addf(err, "\"%s\" is a symbolic link, not followed", o->path);
		return fail(o, -1);
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		return cannot(o, fd, err);
	if (was && (!S_ISREG(st.st_mode) || !same_file(&st, was))) {
		sbuf_addf(err, "\"%s\" changed while it was opened", o->path);
		return fail(o, fd);
	}
	if (was && ftruncate(fd, 0) < 0)
		return cannot(o, fd, err);
	o->fd = fd;
	o->regular = true;
	return 0;
}

int outfile_open(struct outfile *o, const char *path, enum outfile_mode mode,
		 int input_fd, struct sbuf *err)
{
	struct stat in_st, st = { 0 }, lst;
	const struct stat *in = input_fd >= 0 && fstat(input_fd, &in_st) == 0 ?
		&in_st : NULL;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || !strcmp(path, "-")) {
		if (fstat(STDOUT_FILENO, &st) == 0 && is_input(&st, in)) {
			sbuf_addstr(err, "standard output is the recording being "
				    "read");
			return -1;
		}
		o->fd = STDOUT_FILENO;
		o->regular = S_ISREG(st.st_mode);
		return 0;
	}
	o->path = xstrdup(path);
	if (lstat(path, &lst) < 0) {
		if (errno != ENOENT)
			return cannot(o, -1, err);
		return mode == OUTFILE_REPLACE ?
			open_temp(o, new_file_mode(), err) :
			open_in_place(o, NULL, err);
	}
	if (S_ISLNK(lst.st_mode)) {
		/* through to a pipe or a device only: nothing is replaced */
		if (stat(path, &st) < 0 || S_ISREG(st.st_mode) ||
		    S_ISDIR(st.st_mode)) {
			sbuf_addf(err, "\"%s\" is a symbolic link, not followed",
				  path);
			return fail(o, -1);
		}
		return open_as_is(o, in, err);
	}
	if (S_ISDIR(lst.st_mode)) {
		sbuf_addf(err, "\"%s\" is a directory", path);
		return fail(o, -1);
	}
	if (is_input(&lst, in)) {
		sbuf_addf(err, "\"%s\" is the recording being read", path);
		return fail(o, -1);
	}
	if (!S_ISREG(lst.st_mode))
		return open_as_is(o, in, err);
	return mode == OUTFILE_REPLACE ? open_temp(o, lst.st_mode & 07777, err) :
		open_in_place(o, &lst, err);
}

FILE *outfile_file(struct outfile *o)
{
	if (!o->f && o->fd >= 0)
		o->f = o->path ? fdopen(o->fd, "w") : stdout;
	return o->f;
}

int outfile_commit(struct outfile *o, struct sbuf *err)
{
	int e = 0;
	if (o->f && (fflush(o->f) != 0 || ferror(o->f)))
		e = errno ? errno : EIO;
	/* what a disk that fills late (or NFS) says only now */
	if (!e && o->tmp && fsync(o->fd) != 0 && errno != EINVAL)
		e = errno;
	if (o->path) {
		int r = o->f ? fclose(o->f) : close(o->fd);
		if (r != 0 && !e)
			e = errno ? errno : EIO;
	}
	if (!e && o->tmp && rename(o->tmp, o->path) != 0)
		e = errno;
	if (e && o->tmp)
		unlink(o->tmp);
	if (e)
		sbuf_addf(err, "cannot write \"%s\": %s", outfile_name(o),
			  strerror(e));
	closed(o);
	errno = e;
	return e ? -1 : 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->path && o->f)
		fclose(o->f);
	else if (o->path && o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	closed(o);
}

const char *outfile_name(const struct outfile *o)
{
	return o->path ? o->path : "standard output";
}
