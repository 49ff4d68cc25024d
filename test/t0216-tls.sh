#!/bin/sh
# TLS distribution (-proto_dist inet_tls) with certificates made here: a
# CA, the node's certificate, ours; the node checks ours (verify_peer,
# fail_if_no_peer_cert).  beamscope attaches with the node's own options
# file, or the same given one by one, traces exactly and leaves the node
# clean; a wrong CA, no certificate of ours, an expired one, plain TCP to
# the TLS node and TLS to a plain node each fail with their own line, and
# leave nothing on the node.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || test_skip_all "openssl is not installed"

HOST=$(hostname -s)
T=$TRASH/tls
mkdir -p "$T"
# ca NAME: a CA; cert NAME CA [SAN]: a certificate NAME signed by CA
ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/$1.key" \
		-out "$T/$1.pem" -days 30 -subj "/CN=beamscope test $1" 2>/dev/null
}
cert() {
	openssl req -newkey rsa:2048 -nodes -keyout "$T/$1.key" -out "$T/$1.csr" \
		-subj "/CN=$1" 2>/dev/null &&
	printf '%s\n' "${3:-basicConstraints=CA:FALSE}" >"$T/$1.ext" &&
	openssl x509 -req -in "$T/$1.csr" -CA "$T/$2.pem" -CAkey "$T/$2.key" \
		-CAcreateserial -out "$T/$1.pem" -days 30 -extfile "$T/$1.ext" 2>/dev/null
}
# an expired one: January 2020, through openssl ca (x509 cannot backdate)
expired() {
	: >"$T/index.txt" && echo 01 >"$T/serial" &&
	printf '%s\n' '[ca]' 'default_ca = d' '[d]' "database = $T/index.txt" \
		"new_certs_dir = $T" "serial = $T/serial" 'default_md = sha256' \
		'policy = p' '[p]' 'commonName = supplied' >"$T/ca.cnf" &&
	openssl req -newkey rsa:2048 -nodes -keyout "$T/$1.key" -out "$T/$1.csr" \
		-subj "/CN=$1" 2>/dev/null &&
	openssl ca -batch -config "$T/ca.cnf" -cert "$T/$2.pem" -keyfile "$T/$2.key" \
		-in "$T/$1.csr" -out "$T/$1.pem" -startdate 20200101000000Z \
		-enddate 20200201000000Z -notext 2>/dev/null
}
ca ca && ca other &&
cert node ca "subjectAltName=DNS:$HOST,DNS:localhost,IP:127.0.0.1,IP:::1" &&
cert client ca && expired old ca || { echo "openssl could not make the certificates"; exit 1; }

# the node's options file: the server part checks ours, the client part
# is what beamscope reads
cat >"$T/dist.conf" <<EOF
%% made by t0216
[{server, [{certfile, "$T/node.pem"}, {keyfile, "$T/node.key"},
           {cacertfile, "$T/ca.pem"}, {verify, verify_peer},
           {fail_if_no_peer_cert, true}]},
 {client, [{certfile, "$T/client.pem"}, {keyfile, "$T/client.key"},
           {cacertfile, "$T/ca.pem"}, {verify, verify_peer}]}].
EOF

mkdir -p "$TRASH/ev"
NODE_EVAL_DIR=$TRASH/ev
export NODE_EVAL_DIR
start_node bstls -proto_dist inet_tls -ssl_dist_optfile "$T/dist.conf" \
	-eval "bs_fileeval:start(\"$TRASH/ev\")" || exit 1
TLS_NODE=$NODE TLS_PID=$NODE_PID

# attach_fails RC TEXT ARGS...: beamscope ARGS exits RC with one line
# holding TEXT, and the node is clean
attach_fails() {
	want=$1 text=$2
	shift 2
	"$BEAMSCOPE" "$TLS_NODE" --batch --cookie-file "$COOKIE_FILE" \
		--duration 1 "$@" >out 2>err
	rc=$?
	cat err
	expect "$rc" -eq "$want" && expect "$(wc -l <err)" -eq 1 &&
	grep -qF -- "$text" err && target_clean 3
}

test_expect_success 'the node options file: attach, counts exact, clean' '
	bs_start --ssl-dist-optfile "$T/dist.conf" --counts --interval 0.3 \
		--duration 0 && counts_exact
'

test_expect_success 'the same given one by one, events traced' '
	bs_start --tls-ca "$T/ca.pem" --tls-cert "$T/client.pem" \
		--tls-key "$T/client.key" --events send --pids bs_tls_echo --duration 0 &&
	node_eval "register(bs_tls_echo, spawn(fun() -> receive go -> [self() ! I || I <- lists:seq(1, 50)] end end)), ok." >/dev/null &&
	bs_wait_attached && node_eval "bs_tls_echo ! go." >/dev/null &&
	eventually 5 jqs -e "[.[] | select(.type == \"send\")] | length == 50" &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && target_clean 3
'

test_expect_success 'the options file named in the config file' '
	mkdir -p "$HOME/.config/beamscope" &&
	echo "ssl-dist-optfile = $T/dist.conf" >"$HOME/.config/beamscope/config" &&
	"$BEAMSCOPE" "$TLS_NODE" --batch --cookie-file "$COOKIE_FILE" --counts \
		--duration 1 >out 2>err; rc=$?
	rm -f "$HOME/.config/beamscope/config"
	cat err && expect "$rc" -eq 0 && grep -q "attached to" err &&
	jq -s -e ".[-1].type == \"summary\"" out >/dev/null &&
	target_clean 3
'

test_expect_success 'a CA that did not sign the node: its own line, clean' '
	attach_fails 3 "the node'"'"'s certificate did not verify" \
		--tls-ca "$T/other.pem" --tls-cert "$T/client.pem" --tls-key "$T/client.key" &&
	grep -q "is --tls-ca the CA that signed" err
'

test_expect_success 'no certificate of ours: its own line, clean' '
	attach_fails 3 "the node wants a certificate of ours" --tls-ca "$T/ca.pem"
'

test_expect_success 'an expired certificate of ours: its own line, clean' '
	attach_fails 3 "certificate expired" --tls-ca "$T/ca.pem" \
		--tls-cert "$T/old.pem" --tls-key "$T/old.key"
'

test_expect_success 'plain TCP to the TLS node: its own line, clean' '
	attach_fails 3 "runs its distribution over TLS (inet_tls), and this was plain TCP"
'

test_expect_success 'the wrong cookie over TLS is said as such' '
	echo wrongcookie >"$TRASH/wrong" && chmod 400 "$TRASH/wrong" &&
	"$BEAMSCOPE" "$TLS_NODE" --batch --cookie-file "$TRASH/wrong" \
		--ssl-dist-optfile "$T/dist.conf" --duration 1 >out 2>err
	rc=$?; cat err &&
	expect "$rc" -eq 4 && grep -q "refused the cookie" err && target_clean 3
'

test_expect_success 'settings that cannot be used: one line, exit 2' '
	attach_fails 2 "cannot read the CA certificates \"$T/nothere.pem\": No such file or directory" --tls-ca "$T/nothere.pem" &&
	attach_fails 2 "cannot use the key \"$T/node.key\": key values mismatch" --tls-ca "$T/ca.pem" \
		--tls-cert "$T/client.pem" --tls-key "$T/node.key" &&
	printf "[{client, [{certfile, \"a\"}\n" >"$T/bad.conf" &&
	attach_fails 2 "bad.conf, line 2: the file ends inside a term" \
		--ssl-dist-optfile "$T/bad.conf" &&
	expect_usage "$TLS_NODE" --tls-verify maybe --batch
'

stop_node "$TLS_PID"

# TLS over IPv6 (inet6_tls) on ::1 alone: the certificate checked against
# the address
mkdir -p "$TRASH/ev6"
NODE_EVAL_DIR=$TRASH/ev6 LONGNAMES=1 NODE_HOST=::1
start_node bstls6 -proto_dist inet6_tls -ssl_dist_optfile "$T/dist.conf" \
	-kernel inet_dist_use_interface '{0,0,0,0,0,0,0,1}' \
	-eval "bs_fileeval:start(\"$TRASH/ev6\")" || exit 1
test_expect_success 'inet6_tls on ::1: attach, the address checked, clean' '
	BS_NODE=$NODE_FULL bs_start --ssl-dist-optfile "$T/dist.conf" --counts \
		--interval 0.3 --duration 0 && bs_wait_attached &&
	res=$(node_eval "{S, T} = bs_work:sink(100, 1), pid_to_list(T).") &&
	sender=$(echo "$res" | tr -d "\"") &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg t "$sender" "[.[] | select(.pid == \$t)] | last | .sends == 100" &&
	target_clean 3
'
stop_node
unset NODE_EVAL_DIR LONGNAMES NODE_HOST
start_node bsplain || exit 1
test_expect_success 'TLS asked of a plain node: its own line' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 \
		--ssl-dist-optfile "$T/dist.conf" >out 2>err
	rc=$?; cat err &&
	expect "$rc" -eq 3 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "no TLS answer in [0-9]* ms; does the node run its distribution over TLS" err &&
	target_clean 3
'
test_done
