#!/bin/sh
# Small hostile inputs: FIFOs as config and cookie files, registered names
# that need quoting, atoms with a NUL or cut inside a character, a --call
# pattern that ends too soon, junk that names a worker that does not exist.
. "$(dirname "$0")/lib.sh"

start_node bssmall || exit 1
node_eval "bs_work:victim()." >/dev/null

test_expect_success 'a FIFO as --cookie-file or as the config file: exit 2 at once' '
	mkfifo cf && timeout -s KILL 10 "$BEAMSCOPE" "$NODE" --batch --cookie-file cf 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -q "cookie file \"cf\" is not a file" err &&
	mkdir -p xdg/beamscope && mkfifo xdg/beamscope/config &&
	XDG_CONFIG_HOME=$TRASH/xdg timeout -s KILL 10 "$BEAMSCOPE" "$NODE" --batch \
		--cookie-file "$COOKIE_FILE" 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -q "config file \".*/config\" is not a file" err
'

test_expect_success '--pids: registered names with quotes and blanks, written quoted' '
	node_eval "[register(N, spawn(fun Loop() -> receive _ -> Loop() end end)) || N <- [list_to_atom(\"it'"'"'s\"), list_to_atom(\"my \\\"srv\\\"\")]], ok." &&
	bs_start --pids "'"'"'it\\'"'"'s'"'"','"'"'my \"srv\"'"'"'" --events receive --duration 0 &&
	bs_wait_attached && cat "$TRASH/bs.err" &&
	grep -q "of the chosen processes (2)" "$TRASH/bs.err" &&
	node_eval "list_to_atom(\"it'"'"'s\") ! one, list_to_atom(\"my \\\"srv\\\"\") ! two, ok." &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"receive\") | .name] | sort == [\"it'"'"'s\", \"my \\\"srv\\\"\"]" &&
	target_clean 2
'

test_expect_success 'an atom with a NUL shows it; a long quoted atom is cut between characters' '
	bs_start --events receive --pids bs_victim --duration 0 --payload-bytes 98 &&
	bs_wait_attached &&
	node_eval "bs_victim ! list_to_atom([\$a, 0, \$b]), bs_victim ! list_to_atom(lists:append(lists:duplicate(20, [1, 16#E9]))), ok." &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jq -c "select(.type == \"receive\")" "$TRASH/bs.json" &&
	jqs -e "any(.[]; .payload == \"'"'"'a\\\\000b'"'"'\" and .truncated == false)" &&
	! grep -qF "\\ufffd" "$TRASH/bs.json" &&
	jqs -e "any(.[]; .truncated and (.payload | startswith(\"'"'"'\\\\001é\")))" &&
	target_clean 2
'

test_expect_success 'a --call pattern that ends too soon: said so, at its end' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --call "lists:seq(A," \
		-o call.json 2>err; rc=$?
	cat err; expect "$rc" -eq 2 &&
	grep -qF "lists:seq(A,\": line 1, column 13: the pattern ends too soon" err &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --call "lists:seq(A) when" \
		-o call.json 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -q "ends too soon" err && ! grep -q "before: .->." err &&
	target_clean 2
'

test_expect_success 'junk naming a worker that does not exist is counted in unknown_messages' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	node_eval "[{bs_any, N} ! {beamscope_batch, 99, 0, 0, <<131,106>>} || N <- nodes(hidden), lists:prefix(\"beamscope\", atom_to_list(N))], ok." &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -c ".[-1].unknown_messages" && jqs -e ".[-1].unknown_messages >= 1" &&
	target_clean 2
'
test_done
