#!/bin/sh
# The config file: its settings take effect against a real node, the
# command line overrides them, --no-config ignores them, and a bad line is
# reported with its file and line.
. "$(dirname "$0")/lib.sh"

start_node bsconf || exit 1

export XDG_CONFIG_HOME="$TRASH/xdg"
CONF=$XDG_CONFIG_HOME/beamscope/config
mkdir -p "$XDG_CONFIG_HOME/beamscope"

# run_sink ARGS...: batch run with ARGS while bs_work:sink(100, 5) runs;
# it ends by itself (the config or ARGS set the duration).
run_sink() {
	bs_start "$@" && bs_wait_attached &&
	node_eval "bs_work:sink(100, 5), ok." >/dev/null &&
	bs_wait && echo "exit $BS_RC" && expect "$BS_RC" -eq 0
}

test_expect_success 'duration and events from the config file take effect' '
	cat >"$CONF" <<-EOT &&
	# what to trace by default
	events = spawn,exit

	  duration = 1.5
	payload-bytes=64
	EOT
	run_sink &&
	jqs -e ".[-1] | .ended == \"duration\" and .limits.duration_s == 1.5 and
		.limits.payload_bytes == 64" &&
	jqs -e "[.[:-1][].type] | unique == [\"exit\", \"spawn\", \"spawned\"]" &&
	jqs -e "[.[] | select(.type == \"spawn\")] | length >= 5"
'

test_expect_success 'the command line overrides the config file' '
	printf "events = spawn\nduration = 30\n" >"$CONF" &&
	run_sink --events receive --duration 1 &&
	jqs -e ".[-1] | .ended == \"duration\" and .limits.duration_s == 1" &&
	jqs -e "[.[:-1][].type] | unique - [\"timeout\"] == [\"receive\"]" &&
	jqs -e "[.[] | select(.type == \"receive\" and .name == \"bs_sink\")] | length == 101"
'

test_expect_success 'without XDG_CONFIG_HOME, ~/.config/beamscope/config is read' '
	mkdir -p "$HOME/.config/beamscope" &&
	echo "duration = 1.25" >"$HOME/.config/beamscope/config" &&
	(unset XDG_CONFIG_HOME; run_sink) &&
	jqs -e ".[-1].limits.duration_s == 1.25" &&
	rm "$HOME/.config/beamscope/config"
'

test_expect_success 'a bad line: exit 2, one line naming the file and the line' '
	printf "# ok\nduration = 1\ndurration = 2\n" >"$CONF" &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" >out 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 && [ ! -s out ] &&
	grep -qF "beamscope: $CONF:3: unknown option \"durration\"" err && target_clean 0
'

test_expect_success 'a bad value: exit 2, the file, the line and the value' '
	printf "duration = 1\n\nevents = send,sned\n" >"$CONF" &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 &&
	grep -qF "$CONF:3: --events: unknown kind \"sned\"" err
'

test_expect_success 'a command-line-only option in the file is refused' '
	echo "call = lists:seq/2" >"$CONF" &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -qF "$CONF:1: \"call\" is for the command line only" err
'

test_expect_success '--no-config ignores the file' '
	printf "durration = 2\n" >"$CONF" &&
	run_sink --no-config --duration 1 &&
	jqs -e "[.[:-1][].type] | unique - [\"timeout\"] == [\"exit\", \"receive\", \"send\", \"spawn\", \"spawned\"]"
'

test_expect_success '--help, --version and --list do not read it' '
	"$BEAMSCOPE" --help >/dev/null && "$BEAMSCOPE" --version >/dev/null &&
	"$BEAMSCOPE" --list | grep -qx "$NODE"
'

test_expect_success 'cookie-file from the config, with ~/ expanded' '
	cp "$COOKIE_FILE" "$HOME/node.cookie" &&
	printf "cookie-file = ~/node.cookie\nduration = 0.5\n" >"$CONF" &&
	"$BEAMSCOPE" "$NODE" --batch -o bs.json 2>err; rc=$?
	cat err; expect "$rc" -eq 0 && jq -s -e ".[-1].type == \"summary\"" bs.json
'
test_done
