/*
 * keys: the global keys, as one table.  It feeds the help view and the
 * man page check; the loop in ui.c dispatches them.
 */
#ifndef BS_KEYS_H
#define BS_KEYS_H

/*  key text        help */
#define GLOBAL_KEYS(X) \
	X("q",           "close the view; quit from the process table") \
	X("Q",           "quit at once") \
	X("?, F1",       "help") \
	X("/, F3",       "filter the process table") \
	X(":",           "command line (Tab completes)") \
	X("Enter",       "open the selected process's log") \
	X("t, F5",       "spawn tree") \
	X("c, F7",       "calls: one row per traced function; Enter jumps to its last caller") \
	X("p",           "pause or resume the display") \
	X("up, down, j, k", "move") \
	X("PgUp, PgDn, Home, End", "move by page, to the ends") \
	X("<, >, F6",    "sort by the previous or next column") \
	X("I",           "invert the sort order") \
	X("P, S, R, M",  "sort by pid, sends/s, receives/s, message queue") \
	X("F10",         "quit")

struct key_info {
	const char *keys;
	const char *help;
};

extern const struct key_info key_table[];
extern const int key_count;

#endif
