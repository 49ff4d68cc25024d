/* Unit tests: outfile, the one way beamscope writes files: links, the
 * input, temporaries beside the target, nothing emptied before the checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tap.h"

static char dir[] = "/tmp/bs-outfile.XXXXXX";

static const char *at(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");
	fputs(text, f);
	fclose(f);
}

static const char *get(const char *name)
{
	static char buf[256];
	buf[0] = '\0';
	FILE *f = fopen(at(name), "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Files in the directory: no temporary is ever left behind. */
static int files(void)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int write_all(struct outfile *o, const char *text)
{
	return fputs(text, outfile_file(o)) < 0 ? -1 : 0;
}

int main(void)
{
	struct outfile o;
	struct sbuf err = SBUF_INIT;
	struct stat st;

	plan(34);
	if (!mkdtemp(dir))
		return 1;

	/* a new file: written to a temporary, in place at the commit */
	ok(outfile_open(&o, at("new"), OUTFILE_REPLACE, -1, &err) == 0,
	   "a new file opens");
	ok(o.tmp && !strncmp(o.tmp, at("new.tmp"), strlen(at("new.tmp"))),
	   "through a temporary beside it");
	write_all(&o, "doc\n");
	ok(get("new") == NULL, "the file is not there before the commit");
	ok(outfile_commit(&o, &err) == 0, "commit");
	is(get("new"), "doc\n", "the file is there, whole");
	ok(stat(at("new"), &st) == 0 && (st.st_mode & 0777) == (0666 & ~(unsigned)umask(022)),
	   "with the mode a new file gets");
	is_num(files(), 1, "no temporary left");

	/* replacing: the old file stays until the commit, and after an abort */
	put("old", "old\n");
	chmod(at("old"), 0640);
	ok(outfile_open(&o, at("old"), OUTFILE_REPLACE, -1, &err) == 0,
	   "an existing file opens");
	write_all(&o, "half");
	is(get("old"), "old\n", "the old file is whole meanwhile");
	outfile_abort(&o);
	is(get("old"), "old\n", "and after an abort");
	is_num(files(), 2, "the aborted temporary is gone");
	ok(outfile_open(&o, at("old"), OUTFILE_REPLACE, -1, &err) == 0 &&
	   write_all(&o, "new\n") == 0 && outfile_commit(&o, &err) == 0,
	   "replaced");
	is(get("old"), "new\n", "with the new text");
	ok(stat(at("old"), &st) == 0 && (st.st_mode & 0777) == 0640,
	   "keeping its mode");

	/* a link to a file is refused, and the file is left alone */
	put("target", "keep\n");
	symlink(at("target"), at("link"));
	sbuf_reset(&err);
	ok(outfile_open(&o, at("link"), OUTFILE_REPLACE, -1, &err) < 0,
	   "a link to a file is refused (replace)");
	ok(strstr(sbuf_str(&err), "is a symbolic link") != NULL, "and says so");
	sbuf_reset(&err);
	ok(outfile_open(&o, at("link"), OUTFILE_STREAM, -1, &err) < 0,
	   "a link to a file is refused (stream)");
	is(get("target"), "keep\n", "the file it points to is whole");
	symlink(at("nowhere"), at("dangling"));
	sbuf_reset(&err);
	ok(outfile_open(&o, at("dangling"), OUTFILE_STREAM, -1, &err) < 0 &&
	   access(at("nowhere"), F_OK) < 0,
	   "a dangling link makes no file where it points");
	symlink("/dev/null", at("devlink"));
	ok(outfile_open(&o, at("devlink"), OUTFILE_REPLACE, -1, &err) == 0 &&
	   !o.tmp, "a link to a device is written through, as it is");
	ok(outfile_commit(&o, &err) == 0 && lstat(at("devlink"), &st) == 0 &&
	   S_ISLNK(st.st_mode), "and stays a link");

	/* the input is never the output, by any name */
	put("rec", "recording\n");
	link(at("rec"), at("hard"));
	symlink(at("rec"), at("soft"));
	int in = open(at("rec"), O_RDONLY);
	sbuf_reset(&err);
	ok(outfile_open(&o, at("rec"), OUTFILE_REPLACE, in, &err) < 0 &&
	   strstr(sbuf_str(&err), "is the recording being read"),
	   "the input itself is refused");
	ok(outfile_open(&o, at("hard"), OUTFILE_STREAM, in, &err) < 0,
	   "a hard link to it is refused");
	ok(outfile_open(&o, at("soft"), OUTFILE_STREAM, in, &err) < 0,
	   "a symbolic link to it is refused");
	is(get("rec"), "recording\n", "and it is whole");
	int saved = dup(STDOUT_FILENO);
	int app = open(at("rec"), O_WRONLY | O_APPEND);
	dup2(app, STDOUT_FILENO);
	sbuf_reset(&err);
	int r = outfile_open(&o, "-", OUTFILE_STREAM, in, &err);
	dup2(saved, STDOUT_FILENO);
	close(app);
	close(saved);
	ok(r < 0 && strstr(sbuf_str(&err), "standard output"),
	   "standard output that is the input is refused");
	close(in);

	/* a stream: in place, emptied only once checked */
	put("live", "before\n");
	ok(outfile_open(&o, at("live"), OUTFILE_STREAM, -1, &err) == 0 &&
	   !o.tmp, "a stream opens in place");
	is(get("live"), "", "emptied");
	write_all(&o, "line\n");
	fflush(outfile_file(&o));
	is(get("live"), "line\n", "and read as it grows");
	ok(outfile_commit(&o, &err) == 0, "closed");

	/* a directory, a missing directory */
	mkdir(at("sub"), 0755);
	sbuf_reset(&err);
	ok(outfile_open(&o, at("sub"), OUTFILE_REPLACE, -1, &err) < 0 &&
	   strstr(sbuf_str(&err), "is a directory"), "a directory is refused");
	sbuf_reset(&err);
	ok(outfile_open(&o, at("none/x"), OUTFILE_REPLACE, -1, &err) < 0 &&
	   strstr(sbuf_str(&err), "cannot write"), "a missing directory: cannot write");
	ok(!strchr(sbuf_str(&err), '\n'), "in one line");
	is_num(files(), 11, "no temporary left anywhere");

	sbuf_release(&err);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return done_testing();
}
