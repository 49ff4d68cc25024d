/*
 * embed: the target-side code carried inside the beamscope binary, so one
 * file is all that has to be copied to a jump host.  Built by embed.S.
 */
#ifndef BS_EMBED_H
#define BS_EMBED_H

extern const unsigned char bs_agent_beam[], bs_agent_beam_end[];
extern const unsigned char bs_tracer_beam[], bs_tracer_beam_end[];
extern const unsigned char bs_tracer_so[], bs_tracer_so_end[];

#define EMBED_SIZE(sym) ((long)(sym##_end - sym))

#endif
