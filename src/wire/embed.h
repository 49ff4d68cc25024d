/*
 * embed: the target-side code carried inside the beamscope binary, so one
 * file is all that has to be copied to a jump host.  Built by embed.S.
 */
#ifndef BS_EMBED_H
#define BS_EMBED_H

#include <stdint.h>

extern const unsigned char bs_agent_beam[], bs_agent_beam_end[];
/* the agent's helper modules, sent with start/4 (nif/PROTOCOL.md) */
extern const unsigned char bs_printer_beam[], bs_printer_beam_end[];
extern const unsigned char bs_info_beam[], bs_info_beam_end[];
extern const unsigned char bs_pattern_beam[], bs_pattern_beam_end[];
extern const unsigned char bs_prof_beam[], bs_prof_beam_end[];
extern const unsigned char bs_alarm_beam[], bs_alarm_beam_end[];
extern const unsigned char bs_scan_beam[], bs_scan_beam_end[];
extern const unsigned char bs_trace_beam[], bs_trace_beam_end[];
extern const unsigned char bs_tracer_beam[], bs_tracer_beam_end[];
extern const unsigned char bs_elixir_beam[], bs_elixir_beam_end[];
extern const unsigned char bs_tracer_so[], bs_tracer_so_end[];

/* by address: the two symbols are not one C object */
#define EMBED_SIZE(sym) ((long)((uintptr_t)sym##_end - (uintptr_t)(sym))) // NOLINT(bugprone-macro-parentheses): pasted, not an expression

#endif
