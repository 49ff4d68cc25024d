# beamscope: one non-recursive Makefile.
#
#   make                  build build/beamscope (the NIF and .beam files inside)
#   make check            build and run every test under prove
#   make check OTP=27     the same with target nodes on OTP 27 (or 29)
#   make check-release OTP=29   what a release can change (no docs, lint...)
#   make check-core OTP=27      the same without the terminal views' tests
#   make DEVELOPER=1      warnings are errors
#   make SANITIZE=address,undefined check
#   make V=1              show full commands
#   make install [PREFIX=/usr/local] [DESTDIR=...]   binary, man page, completions
#   make uninstall [PREFIX=/usr/local] [DESTDIR=...]
#   make deb              build/beamscope_VERSION-1_ARCH.deb (scripts/mkdeb)
#   make lint             cppcheck and clang-tidy on src/ and ui/
#   make layers           each folder of src/ uses only the layers below it;
#                         no file or function grows past its size
#   make valgrind         the C unit tests under valgrind
#   make bench | soak | fuzz   benchmarks, soak run, libFuzzer run

PREFIX ?= /usr/local
BUILD  ?= build
CC     ?= cc
ERLC   ?= erlc
PROVE  ?= prove
PROVE_OPTS ?= --timer

VERSION := 0.1.0
.DEFAULT_GOAL := all

-include $(BUILD)/config.mk

$(BUILD)/config.mk: scripts/erl-config
	@mkdir -p $(BUILD)
	@scripts/erl-config > $@.tmp && mv $@.tmp $@

ifeq ($(V),1)
Q :=
quiet =
else
Q := @
quiet = @printf '  %-6s %s\n' $(1) $(2);
endif

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wpointer-arith -Wvla
ifdef DEVELOPER
WARN += -Werror
endif
ifdef SANITIZE
SAN := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

# src/ in layers, the lowest first: a folder's code uses only its own and
# the folders before it (make layers checks; CONTRIBUTING.md says what
# goes where).  main.c, batch/ and ui/ sit on top.
LAYERS := base term wire analyse model spec source engine sink
LAYER_INC := $(LAYERS:%=-Isrc/%)

CPPFLAGS_ALL := -D_GNU_SOURCE -D_REENTRANT $(LAYER_INC) -I$(EI_INCLUDE) -MMD -MP \
	-DBS_VERSION='"$(VERSION)"' -DBS_OTP_RELEASE='"$(OTP_RELEASE)"' \
	-DBS_OTP_ARCH='"$(OTP_ARCH)"'
CFLAGS_ALL := -std=c11 $(WARN) $(SAN) $(CFLAGS) $(CPPFLAGS_ALL) $(CPPFLAGS)
LDFLAGS_ALL := $(SAN) $(LDFLAGS)
LIBS := -L$(EI_LIB) -lei -lcjson -lssl -lcrypto -lpthread
UI_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo) -lreadline
UI_CFLAGS := $(shell pkg-config --cflags ncursesw 2>/dev/null) -Iui

# src/: the core (no curses, no mode); batch/ and ui/: the two front ends
CORE_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
BATCH_SRC := $(wildcard batch/*.c)
BATCH_OBJ := $(BATCH_SRC:%.c=$(BUILD)/%.o)
UI_SRC   := $(wildcard ui/*.c)
UI_OBJ   := $(UI_SRC:%.c=$(BUILD)/%.o)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o) $(BUILD)/src/wire/embed.o
MAIN_OBJ := $(BUILD)/src/main.o
# unit tests link the model only, not the code that talks to a node
UNIT_OBJ := $(filter-out $(addprefix $(BUILD)/src/,wire/agent.o \
	wire/agent_ops.o wire/agent_trace.o wire/agent_requests.o wire/conn.o \
	wire/embed.o source/attach.o engine/session.o engine/stream.o \
	engine/lifecycle.o engine/access.o engine/loop.o engine/replay.o engine/alarms.o \
	engine/exact.o \
	sink/jsonsink.o),$(CORE_OBJ))

EBIN  := $(BUILD)/ebin
# the agent and its helper modules, the tracer's module, the Elixir reader
AGENT_MODS := agent printer info pattern prof alarm scan trace
BEAMS := $(AGENT_MODS:%=$(EBIN)/beamscope_%.beam) \
	$(EBIN)/beamscope_tracer.beam $(EBIN)/beamscope_elixir.beam
NIFSO := $(BUILD)/nif/beamscope_tracer.so
# the tracer NIF: its C files make one library, linked in one go
NIF_SRC := $(wildcard nif/*.c)
# the NIF runs inside the target VM: never sanitized, always position-independent
NIF_CFLAGS := -std=c11 -O2 -g -fPIC -shared -fvisibility=hidden $(WARN) \
	-I$(ERTS_INCLUDE)

UNIT_SRC  := $(wildcard test/unit/*.c)
UNIT_BIN  := $(UNIT_SRC:test/unit/%.c=$(BUILD)/test/%.t)

all: $(BUILD)/beamscope
.PHONY: all check check-release check-core unit clean install uninstall deb demo bench fuzz lint layers valgrind soak

$(BUILD)/beamscope: $(MAIN_OBJ) $(CORE_OBJ) $(BATCH_OBJ) $(UI_OBJ)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(UI_LIBS) $(LIBS)

$(BUILD)/ui/%.o: ui/%.c $(BUILD)/config.mk Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) $(UI_CFLAGS) -c -o $@ $<

$(BUILD)/batch/%.o: batch/%.c $(BUILD)/config.mk Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/src/%.o: src/%.c $(BUILD)/config.mk Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/src/wire/embed.o: src/wire/embed.S $(BEAMS) $(NIFSO)
	@mkdir -p $(dir $@)
	$(call quiet,EMBED,$@)$(CC) -c -o $@ $< \
		-DBS_AGENT_BEAM='"$(EBIN)/beamscope_agent.beam"' \
		-DBS_PRINTER_BEAM='"$(EBIN)/beamscope_printer.beam"' \
		-DBS_INFO_BEAM='"$(EBIN)/beamscope_info.beam"' \
		-DBS_PATTERN_BEAM='"$(EBIN)/beamscope_pattern.beam"' \
		-DBS_PROF_BEAM='"$(EBIN)/beamscope_prof.beam"' \
		-DBS_ALARM_BEAM='"$(EBIN)/beamscope_alarm.beam"' \
		-DBS_SCAN_BEAM='"$(EBIN)/beamscope_scan.beam"' \
		-DBS_TRACE_BEAM='"$(EBIN)/beamscope_trace.beam"' \
		-DBS_TRACER_BEAM='"$(EBIN)/beamscope_tracer.beam"' \
		-DBS_ELIXIR_BEAM='"$(EBIN)/beamscope_elixir.beam"' \
		-DBS_TRACER_SO='"$(NIFSO)"'

$(EBIN)/%.beam: nif/%.erl $(wildcard nif/*.hrl)
	@mkdir -p $(EBIN)
	$(call quiet,ERLC,$@)$(ERLC) +warnings_as_errors +deterministic -o $(EBIN) $<

$(NIFSO): $(NIF_SRC) $(wildcard nif/*.h) $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(call quiet,NIF,$@)$(CC) $(NIF_CFLAGS) -o $@ $(NIF_SRC)

# the engine's test: the engine itself, and fake nodes in place of the
# code that talks to a real one (test/unit/fake)
ENGINE_OBJ := $(addprefix $(BUILD)/src/engine/,session.o stream.o lifecycle.o alarms.o exact.o \
	access.o loop.o replay.o) $(BUILD)/src/sink/jsonsink.o
$(BUILD)/test/engine.t: test/unit/engine.c test/unit/fake/node.c \
		test/unit/fake/fake.h test/unit/corpus.h test/unit/tap.h \
		$(UNIT_OBJ) $(ENGINE_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) -Itest/unit -o $@ \
		test/unit/engine.c test/unit/fake/node.c $(UNIT_OBJ) \
		$(ENGINE_OBJ) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/test/%.t: test/unit/%.c test/unit/tap.h $(UNIT_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) -Itest/unit -o $@ $< $(UNIT_OBJ) \
		$(LDFLAGS_ALL) $(LIBS)

unit: $(UNIT_BIN)

$(BUILD)/bench-decode: scripts/bench-decode.c $(UNIT_OBJ)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) -o $@ $< $(UNIT_OBJ) $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/bench-syntax: scripts/bench-syntax.c $(UNIT_OBJ)
	$(call quiet,CC,$@)$(CC) $(CFLAGS_ALL) -o $@ $< $(UNIT_OBJ) $(LDFLAGS_ALL) $(LIBS)

# libFuzzer targets for the decoder and the reader of recordings (clang);
# make fuzz FUZZ_RUNS=N runs them
# the sources of these modules, whichever layer holds them
srcs_of = $(foreach m,$(1),$(wildcard $(LAYERS:%=src/%/$(m).c)))
FUZZ_SRC := $(call srcs_of,wire decode decode_info term term_erl term_ex structs names hmap event json sbuf retext \
	xalloc stats recording recording_export recording_fields pidtext gencall gcrow nodestat spark alarm \
	decode_calls)
FUZZ_RUNS ?= 1000000
FUZZ_CC = clang -g -O1 -fsanitize=fuzzer,address,undefined \
	-D_GNU_SOURCE -D_REENTRANT $(LAYER_INC) -I$(EI_INCLUDE)
FUZZ_LIBS = -L$(EI_LIB) -lei -lcjson -lpthread
$(BUILD)/fuzz-decode: test/fuzz/fuzz_decode.c $(FUZZ_SRC) $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(call quiet,FUZZ,$@)$(FUZZ_CC) -o $@ $< $(FUZZ_SRC) $(FUZZ_LIBS)

# a read buffer of a few bytes: lines span reads all the time
$(BUILD)/fuzz-recording: test/fuzz/fuzz_recording.c $(FUZZ_SRC) $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(call quiet,FUZZ,$@)$(FUZZ_CC) -DRECORDING_RBUF_SIZE=61 -o $@ $< \
		$(FUZZ_SRC) $(FUZZ_LIBS)

# the parsers of the command line: options, numbers, --pids, pid texts
ARGS_FUZZ_SRC := $(call srcs_of,opts pidsel pidtext conffile event names hmap \
	sbuf xalloc esc wire callpat chart store alarm)
$(BUILD)/fuzz-args: test/fuzz/fuzz_args.c $(ARGS_FUZZ_SRC) $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(call quiet,FUZZ,$@)$(FUZZ_CC) -o $@ $< $(ARGS_FUZZ_SRC) $(FUZZ_LIBS)

fuzz: $(BUILD)/fuzz-decode $(BUILD)/fuzz-recording $(BUILD)/fuzz-args
	scripts/fuzz-seeds $(BUILD)/fuzz-corpus $(BUILD)/fuzz-corpus-recording
	$(BUILD)/fuzz-decode -runs=$(FUZZ_RUNS) -max_len=4096 $(BUILD)/fuzz-corpus
	$(BUILD)/fuzz-recording -runs=$(FUZZ_RUNS) -max_len=4096 \
		$(BUILD)/fuzz-corpus-recording
	$(BUILD)/fuzz-args -runs=$(FUZZ_RUNS) -max_len=512

# static checks: cppcheck, and clang-tidy with the checks in .clang-tidy
lint: $(BUILD)/config.mk
	cppcheck -j 2 --enable=warning,performance,portability --inline-suppr --quiet \
		--error-exitcode=1 -D_GNU_SOURCE $(LAYER_INC) -Iui \
		--suppress=missingIncludeSystem \
		--template='{file}:{line}: {severity}: {message} [{id}]' src batch ui
	@# two at a time: the machine's two cores
	printf '%s\n' $(wildcard src/*.c src/*/*.c batch/*.c ui/*.c) | xargs -P 2 -n 6 \
		sh -c 'clang-tidy --quiet "$$@" -- -std=c11 -D_GNU_SOURCE \
		-D_REENTRANT $(LAYER_INC) -Iui -I$(EI_INCLUDE)' clang-tidy

# each layer of src/ uses only those below it (LAYERS); no new file or
# function past its size (scripts/sizes)
layers:
	scripts/layers $(LAYERS)
	scripts/sizes

# the C unit tests under valgrind (in a build without SANITIZE)
valgrind: unit
	@set -e; for t in $(UNIT_BIN); do \
		echo "valgrind $$t"; \
		valgrind -q --error-exitcode=1 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect $$t >/dev/null; \
	done

# ten minutes at 100 000 events/s: beamscope's and the target's memory over time
soak: all
	scripts/soak

# the floor under any tracer, for scripts/bench
$(BUILD)/bench_floor.so: scripts/bench_floor.c $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(call quiet,NIF,$@)$(CC) $(NIF_CFLAGS) -o $@ $<

bench: all $(BUILD)/bench-decode $(BUILD)/bench-syntax $(BUILD)/bench_floor.so
	scripts/bench

# Tests: C unit tests, then shell tests against real nodes.  OTP=27 or
# OTP=29 runs the nodes (and erlc, elixir) on that release's runtime
# (scripts/otp-targets makes them); beamscope stays built on the host.
check: all unit
	$(PROVE) $(PROVE_OPTS) $(UNIT_BIN) test/t[0-9]*.sh

# What no release changes: the docs, installing, the fuzzers, lint and
# valgrind on the unit tests.  check-release runs everything else, for a
# second or third release: .ci/run runs check on the host's release, then
# check-release on the others.
ONCE := test/t0110-docs.sh test/t0140-install.sh test/t0145-deb.sh \
	test/t0600-fuzz.sh test/t0800-lint.sh test/t0805-layers.sh \
	test/t0810-valgrind.sh
check-release: all unit
	$(PROVE) $(PROVE_OPTS) $(UNIT_BIN) \
		$(filter-out $(ONCE),$(wildcard test/t[0-9]*.sh))

# The terminal views' tests (tmux, t*-ui-*) check how beamscope draws
# what its engine holds; a release changes what the agent and the tracer
# see, which the other tests check.  check-core leaves the views to the
# passes that run them (.ci/run: OTP 25 and OTP 29).
VIEWS := $(wildcard test/t[0-9]*-ui-*.sh)
check-core: all unit
	$(PROVE) $(PROVE_OPTS) $(UNIT_BIN) \
		$(filter-out $(ONCE) $(VIEWS),$(wildcard test/t[0-9]*.sh))

demo: all
	scripts/demo

# where Debian's shells look for completions
BINDIR  = $(PREFIX)/bin
MAN1DIR = $(PREFIX)/share/man/man1
BASHDIR = $(PREFIX)/share/bash-completion/completions
ZSHDIR  = $(PREFIX)/share/zsh/vendor-completions
FISHDIR = $(PREFIX)/share/fish/vendor_completions.d

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(BASHDIR) \
		$(DESTDIR)$(ZSHDIR) $(DESTDIR)$(FISHDIR)
	install -m 755 $(BUILD)/beamscope $(DESTDIR)$(BINDIR)/beamscope
	install -m 644 man/beamscope.1 $(DESTDIR)$(MAN1DIR)/beamscope.1
	install -m 644 completions/beamscope.bash $(DESTDIR)$(BASHDIR)/beamscope
	install -m 644 completions/_beamscope $(DESTDIR)$(ZSHDIR)/_beamscope
	install -m 644 completions/beamscope.fish $(DESTDIR)$(FISHDIR)/beamscope.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/beamscope $(DESTDIR)$(MAN1DIR)/beamscope.1 \
		$(DESTDIR)$(BASHDIR)/beamscope $(DESTDIR)$(ZSHDIR)/_beamscope \
		$(DESTDIR)$(FISHDIR)/beamscope.fish

# a Debian package of what make install puts in place, under /usr;
# scripts/mkdeb adds what Debian wants besides
DEB_REV := 1
DEB_STAGE = $(abspath $(BUILD))/deb
deb: all
	$(Q)rm -rf $(DEB_STAGE)
	$(Q)$(MAKE) -s install DESTDIR=$(DEB_STAGE) PREFIX=/usr >/dev/null
	$(Q)scripts/mkdeb $(DEB_STAGE) $(VERSION)-$(DEB_REV) $(BUILD)

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/src/*.d $(BUILD)/src/*/*.d $(BUILD)/batch/*.d $(BUILD)/ui/*.d $(BUILD)/test/*.d)
