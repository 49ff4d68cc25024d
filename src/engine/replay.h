/*
 * replay: a recording as a source of the session engine (see session.h for
 * the calls: session_open_recording, session_replay and friends, which
 * live in replay.c).
 */
#ifndef BS_REPLAY_H
#define BS_REPLAY_H

struct replay;

#endif
