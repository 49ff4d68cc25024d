#!/bin/sh
# Nodes as production runs them: the distribution on IPv6 alone
# (inet6_tcp on ::1, a long name), a node that epmd does not know (a
# fixed port, -start_epmd false), and an epmd of its own (ERL_EPMD_PORT):
# beamscope attaches to each, counts exactly, and leaves it clean.
. "$(dirname "$0")/lib.sh"

# a TCP port nothing listens on, from a range no ephemeral port takes
free_port() {
	while :; do
		p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 10000 ))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# --- IPv6 alone: inet6_tcp listening on ::1, the long name bsv6_...@::1
mkdir -p "$TRASH/ev6"
LONGNAMES=1 NODE_HOST=::1 NODE_EVAL_DIR=$TRASH/ev6
export NODE_EVAL_DIR
start_node bsv6 -proto_dist inet6_tcp \
	-kernel inet_dist_use_interface '{0,0,0,0,0,0,0,1}' \
	-eval "bs_fileeval:start(\"$TRASH/ev6\")" || exit 1

test_expect_success 'IPv6: the node listens on ::1 alone' '
	ss -Hltnp >socks && grep "pid=$NODE_PID," socks >mine && cat mine &&
	grep -q "\[::1\]:" mine && ! grep -q "0\.0\.0\.0:" mine
'

test_expect_success 'IPv6: attach by its long name on ::1, counts exact, clean' '
	BS_NODE=$NODE_FULL bs_start --counts --interval 0.3 --duration 0 &&
	counts_exact
'
stop_node
unset NODE_EVAL_DIR LONGNAMES NODE_HOST

# --- no epmd: a fixed port, -start_epmd false, and an ERL_EPMD_PORT at
# which nothing listens, so that epmd never hears of the node
PORT=$(free_port)
NOEPMD=$(free_port)
mkdir -p "$TRASH/evp"
NODE_EVAL_DIR=$TRASH/evp ERL_EPMD_PORT=$NOEPMD
export NODE_EVAL_DIR ERL_EPMD_PORT
start_node bsport -start_epmd false -erl_epmd_port "$PORT" \
	-eval "bs_fileeval:start(\"$TRASH/evp\")" || exit 1
unset ERL_EPMD_PORT
HOST=$(hostname -s)

test_expect_success 'a fixed port: epmd does not know the node' '
	! epmd -names | grep -q "name $NODE " &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 >out 2>err
	rc=$?; cat err &&
	expect "$rc" -eq 3 && grep -q "node \"$NODE@$HOST\" not found" err
'

test_expect_success 'a fixed port: NAME@HOST:PORT attaches, counts exact, clean' '
	BS_NODE=$NODE@$HOST:$PORT bs_start --counts --interval 0.3 --duration 0 &&
	counts_exact
'

test_expect_success 'a fixed port: --port attaches the same' '
	BS_NODE=$NODE bs_start --port "$PORT" --counts --interval 0.3 --duration 0 &&
	counts_exact
'

test_expect_success 'another name at the port: one line, exit 6, nothing left' '
	"$BEAMSCOPE" "other_$NODE@$HOST:$PORT" --batch --cookie-file "$COOKIE_FILE" \
		--duration 1 >out 2>err
	rc=$?; cat err &&
	expect "$rc" -eq 6 && expect "$(wc -l <err)" -eq 1 &&
	grep -qx "beamscope: port $PORT is node \"$NODE@$HOST\", not \"other_$NODE@$HOST\"; give the port of the node asked for" err &&
	target_clean 3
'

test_expect_success 'a port where nothing listens: one line, exit 3' '
	shut=$(free_port) &&
	"$BEAMSCOPE" "$NODE" --port "$shut" --batch --cookie-file "$COOKIE_FILE" \
		--duration 1 >out 2>err
	rc=$?; cat err &&
	expect "$rc" -eq 3 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "nothing accepts connections at port $shut, the port given" err
'

test_expect_success 'bad ports and --port with two nodes are refused' '
	expect_usage "$NODE@$HOST:0" --batch &&
	grep -qx "beamscope: bad node name \"$NODE@$HOST:0\": expected NAME@HOST:PORT, PORT from 1 to 65535" err &&
	expect_usage "$NODE" --port 70000 --batch &&
	expect_usage a b --port 4000 --batch &&
	grep -q "for more nodes, give each as NAME@HOST:PORT" err
'
stop_node
unset NODE_EVAL_DIR

# --- an epmd of its own: ERL_EPMD_PORT for the node, erl_call and beamscope
EPMD_PORT=$(free_port)
epmd -port "$EPMD_PORT" >"$TRASH/epmd.log" 2>&1 &
EPMD_PID=$!
echo "$EPMD_PID" >>"$TRASH/node.pids"
for _ in $(seq 1 50); do
	ss -Hltn "sport = :$EPMD_PORT" | grep -q . && break
	sleep 0.1
done
ERL_EPMD_PORT=$EPMD_PORT
export ERL_EPMD_PORT
start_node bsepmd || exit 1

test_expect_success 'ERL_EPMD_PORT: --list asks that epmd' '
	"$BEAMSCOPE" --list >out 2>err; cat out err &&
	grep -qx "$NODE" out
'

test_expect_success 'ERL_EPMD_PORT: attach, counts exact, clean' '
	bs_start --counts --interval 0.3 --duration 0 && counts_exact
'

test_expect_success 'without it, the usual epmd does not know the node' '
	(unset ERL_EPMD_PORT; "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" \
		--duration 1 >out 2>err); rc=$?; cat err &&
	expect "$rc" -eq 3 && grep -q "not found" err
'
stop_node
kill "$EPMD_PID" 2>/dev/null
test_done
