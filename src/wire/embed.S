/* The compiled agent and its helper modules, tracer stub, Elixir head
 * reader and tracer NIF, as read-only data.
 * Paths come from the Makefile as string macros. */

	.section .rodata
	.balign 16
	.global bs_agent_beam, bs_agent_beam_end
bs_agent_beam:
	.incbin BS_AGENT_BEAM
bs_agent_beam_end:

	.balign 16
	.global bs_printer_beam, bs_printer_beam_end
bs_printer_beam:
	.incbin BS_PRINTER_BEAM
bs_printer_beam_end:

	.balign 16
	.global bs_info_beam, bs_info_beam_end
bs_info_beam:
	.incbin BS_INFO_BEAM
bs_info_beam_end:

	.balign 16
	.global bs_pattern_beam, bs_pattern_beam_end
bs_pattern_beam:
	.incbin BS_PATTERN_BEAM
bs_pattern_beam_end:

	.balign 16
	.global bs_prof_beam, bs_prof_beam_end
bs_prof_beam:
	.incbin BS_PROF_BEAM
bs_prof_beam_end:

	.balign 16
	.global bs_alarm_beam, bs_alarm_beam_end
bs_alarm_beam:
	.incbin BS_ALARM_BEAM
bs_alarm_beam_end:

	.balign 16
	.global bs_scan_beam, bs_scan_beam_end
bs_scan_beam:
	.incbin BS_SCAN_BEAM
bs_scan_beam_end:

	.balign 16
	.global bs_trace_beam, bs_trace_beam_end
bs_trace_beam:
	.incbin BS_TRACE_BEAM
bs_trace_beam_end:

	.balign 16
	.global bs_tracer_beam, bs_tracer_beam_end
bs_tracer_beam:
	.incbin BS_TRACER_BEAM
bs_tracer_beam_end:

	.balign 16
	.global bs_elixir_beam, bs_elixir_beam_end
bs_elixir_beam:
	.incbin BS_ELIXIR_BEAM
bs_elixir_beam_end:

	.balign 16
	.global bs_tracer_so, bs_tracer_so_end
bs_tracer_so:
	.incbin BS_TRACER_SO
bs_tracer_so_end:

	.section .note.GNU-stack,"",%progbits
