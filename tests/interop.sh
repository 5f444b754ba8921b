#!/usr/bin/env bash
# TLS interoperability of the accel GnuTLS with OpenSSL and with stock GnuTLS
# over loopback: one session with a forced protocol version and cipher suite,
# BYTES bytes each way, compared byte for byte with what was sent.
#
# Usage: interop.sh PEERS PROTO CIPHER [BYTES]    (BYTES defaults to 4 MiB)
#
#   PEERS   cli-accel     accel gnutls-cli   -> accel gnutls-serv --echo
#           cli-openssl   accel gnutls-cli   -> openssl s_server
#           cli-stock     accel gnutls-cli   -> stock gnutls-serv --echo
#           openssl-serv  openssl s_client   -> accel gnutls-serv --echo
#   PROTO   tls1.3 or tls1.2 (TLS 1.2: ECDHE-ECDSA suites)
#   CIPHER  AES-128-GCM, AES-256-GCM, CHACHA20-POLY1305, AES-128-CCM, and for
#           tls1.2 also AES-128-CBC-SHA1 (ECDHE-ECDSA-AES128-SHA) and
#           AES-256-CBC-SHA384 (ECDHE-ECDSA-AES256-SHA384)
#
# Environment:
#   ACCEL_BIN        directory of the accel gnutls-cli and gnutls-serv (the
#                    test is skipped when it is not set)
#   STOCK_BIN        directory of the stock gnutls-serv (cli-stock only; the
#                    test is skipped when it is not set). It runs without
#                    LD_LIBRARY_PATH, so that it uses its own libgnutls.
#   INTEROP_TIMEOUT  overall limit in seconds (default 120)
#   AFALG_TEST_LOG   if set, the GnuTLS peers' stderr is appended to this file
#   GNUTLS_DEBUG_LEVEL  passed to the accel gnutls-cli/gnutls-serv as -d
#
# Exit status: 0 pass, 1 fail, 77 skip (a tool or a directory is missing).
#
# How the data goes (an ECDSA P-256 self-signed certificate made by openssl):
# - cli-openssl: both directions are raw binary (all 256 byte values), with
#   different random data each way. gnutls-cli sends its stdin and writes
#   what it receives to stdout unchanged (without --crlf); openssl s_server
#   -quiet does the same (-quiet also turns off its one-letter commands and
#   sends its other output to a null BIO). The directions run one after the
#   other: s_server gets its data once it has received all of the client's,
#   so that neither peer can block in a write while the other does too.
# - cli-accel, cli-stock and openssl-serv: gnutls-serv --echo is the only
#   way to make gnutls-serv send data. It is line oriented: it echoes what it has
#   received once that holds a newline, copies it with strdup() (a NUL ends
#   it), takes "**REHANDSHAKE**" and the like at its start as commands, and
#   rewrites a final CRLF unless given --crlf (it is). The data is therefore
#   random bytes with every value but NUL, '*' and space (253 of 256; no
#   space keeps the data, which gnutls-serv prints to stderr, apart from its
#   messages), ending in a newline. It is byte-exact both ways, and
#   server -> client is the echo of client -> server. openssl s_client runs with -nocommands (its 'Q', 'R'
#   and 'K' commands would otherwise fire on random data) and -brief, whose
#   summary goes to stderr.
#
# Notes on the tools:
# - gnutls-cli writes what it receives one byte per write() (stdout is
#   unbuffered): it takes about 1 s per 4 MiB on a fast host.
# - gnutls-cli, at the end of its input, sends close_notify and keeps
#   reading, but gives up after 2 s without data: its input (and that of
#   s_client, which ends the session at the end of its input) is held open
#   until all the data has come back. s_server drops the session without
#   close_notify at the end of its input: its input is held open until it
#   has ended. gnutls-cli exits normally, so the AF_ALG module logs its
#   statistics; gnutls-serv runs until it is killed and _exit()s from the
#   signal handler, so the module's exit statistics of gnutls-serv (accel in
#   openssl-serv) are never logged.
# - gnutls-serv drops every connection 30 s after accepting it, whatever
#   INTEROP_TIMEOUT says: on a very slow machine, send fewer BYTES.
# - gnutls-serv prints all the data it receives to stderr; AFALG_TEST_LOG
#   gets its stderr without it.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

peers=${1:-}
proto=${2:-}
cipher=${3:-}
bytes=${4:-4194304}
limit=${INTEROP_TIMEOUT:-120}

usage() {
	echo "usage: $0 cli-accel|cli-openssl|cli-stock|openssl-serv tls1.3|tls1.2 CIPHER [BYTES]" >&2
	exit 99
}

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

case $peers in
cli-accel | cli-openssl | cli-stock | openssl-serv) ;;
*) usage ;;
esac
case $bytes in
'' | *[!0-9]*)
	echo "BYTES must be a number of bytes" >&2
	exit 99
	;;
esac
if [ "$bytes" -lt 2 ]; then
	echo "BYTES must be at least 2" >&2
	exit 99
fi
case $limit in
'' | *[!0-9]*)
	echo "INTEROP_TIMEOUT must be a number of seconds" >&2
	exit 99
	;;
esac

# GnuTLS priority string, the OpenSSL suite name, and how the cipher (and
# MAC) end GnuTLS's session description.
case $proto in
tls1.3)
	version=TLS1.3
	ossl_version=TLSv1.3
	ossl_opts=(-tls1_3 -ciphersuites)
	base=NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL
	case $cipher in
	AES-128-GCM) ossl_suite=TLS_AES_128_GCM_SHA256 ;;
	AES-256-GCM) ossl_suite=TLS_AES_256_GCM_SHA384 ;;
	CHACHA20-POLY1305) ossl_suite=TLS_CHACHA20_POLY1305_SHA256 ;;
	AES-128-CCM) ossl_suite=TLS_AES_128_CCM_SHA256 ;;
	*) usage ;;
	esac
	priority=$base:+$cipher
	want="($cipher)"
	;;
tls1.2)
	version=TLS1.2
	ossl_version=TLSv1.2
	ossl_opts=(-tls1_2 -cipher)
	base=NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:-CIPHER-ALL
	priority=$base:+$cipher
	want="($cipher)"
	case $cipher in
	AES-128-GCM) ossl_suite=ECDHE-ECDSA-AES128-GCM-SHA256 ;;
	AES-256-GCM) ossl_suite=ECDHE-ECDSA-AES256-GCM-SHA384 ;;
	CHACHA20-POLY1305) ossl_suite=ECDHE-ECDSA-CHACHA20-POLY1305 ;;
	AES-128-CCM) ossl_suite=ECDHE-ECDSA-AES128-CCM ;;
	AES-128-CBC-SHA1)
		ossl_suite=ECDHE-ECDSA-AES128-SHA
		priority=$base:+AES-128-CBC:-MAC-ALL:+SHA1
		want="(AES-128-CBC)-(SHA1)"
		;;
	AES-256-CBC-SHA384)
		ossl_suite=ECDHE-ECDSA-AES256-SHA384
		priority=$base:+AES-256-CBC:-MAC-ALL:+SHA384
		want="(AES-256-CBC)-(SHA384)"
		;;
	*) usage ;;
	esac
	;;
*) usage ;;
esac
ossl_opts+=("$ossl_suite")

accel_bin=${ACCEL_BIN:-}
[ -n "$accel_bin" ] || skip "ACCEL_BIN is not set"
case $peers in
cli-*) cli=$accel_bin/gnutls-cli ;;
esac
case $peers in
cli-stock)
	[ -n "${STOCK_BIN:-}" ] || skip "STOCK_BIN is not set"
	serv=$STOCK_BIN/gnutls-serv
	;;
cli-accel | openssl-serv) serv=$accel_bin/gnutls-serv ;;
esac
for tool in ${cli:+"$cli"} ${serv:+"$serv"}; do
	[ -x "$tool" ] || skip "$tool not found"
done
for tool in openssl timeout cmp head tr stat mktemp awk readlink; do
	command -v "$tool" >/dev/null || skip "$tool not found"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/interop.XXXXXX") || fail "mktemp failed"
server_pid=
client_pid=
stopfile=

# shellcheck disable=SC2317 # called from the trap
cleanup() {
	if [ -n "$client_pid" ]; then
		# timeout passes the signal on to the client
		kill "$(cat "$tmp/cli.pid" 2>/dev/null)" 2>/dev/null
		# the feeder ends once cli.rc is there
		wait "$client_pid" 2>/dev/null
	fi
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		# s_server's feeder ends with it (wait waits for both)
		[ -z "$stopfile" ] || : >"$stopfile"
		wait "$server_pid" 2>/dev/null
	fi
	# run-test reads the GnuTLS peers' logs (the AF_ALG module's
	# statistics); gnutls-serv's stderr also holds the data it received.
	if [ -n "${AFALG_TEST_LOG:-}" ]; then
		case $peers in
		cli-*) cat "$tmp/cli.err" >>"$AFALG_TEST_LOG" 2>/dev/null ;;
		esac
		case $peers in
		cli-accel | cli-stock | openssl-serv) serv_text >>"$AFALG_TEST_LOG" ;;
		esac
	fi
	# the feeders stop once $tmp is gone
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

deadline=$((SECONDS + limit))

usec() {
	local t=${EPOCHREALTIME:-}
	if [ -n "$t" ]; then
		echo "${t//[.,]/}"
	else
		echo $((SECONDS * 1000000))
	fi
}

size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

# gnutls-serv's stderr without the data it received (it prints it there,
# after "received cmd: " and "*** Processing N bytes command: "): the data
# has no space, its messages are printable text with one.
serv_text() {
	LC_ALL=C grep -a -v -e '^received cmd: ' -e '^\*\*\* Processing ' \
		"$tmp/serv.err" 2>/dev/null |
		LC_ALL=C grep -a -x '[[:print:]]*[[:graph:]] [[:print:]]*'
}

show_log() {
	if [ "$1" = "$tmp/serv.err" ] && [ "$peers" != cli-openssl ]; then
		serv_text >"$tmp/serv.txt"
		set -- "$tmp/serv.txt" "${2:-5}"
	fi
	[ -s "$1" ] || return 0
	echo "--- last lines of $(basename "$1"):"
	tail -n "${2:-5}" "$1" | cut -c 1-200 | LC_ALL=C tr -c '[:print:]\n' '?'
}

make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 2 \
		-subj /CN=localhost \
		-addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
		>"$tmp/cert.log" 2>&1
}

# $1 gets exactly $bytes bytes of random data: raw, or for gnutls-serv's
# echo every byte value but NUL, '*' and space, ending in a newline.
make_data() {
	if [ "$2" = raw ]; then
		head -c "$bytes" /dev/urandom >"$1"
	else
		head -c $((bytes - 1)) /dev/urandom | LC_ALL=C tr '\000* ' '\001+!' >"$1" &&
			echo >>"$1"
	fi
	[ "$(size "$1")" -eq "$bytes" ]
}

# gnutls-cli and gnutls-serv set their own log level (-d): keep the AF_ALG
# module's messages, statistics included.
debug=()
[ -z "${GNUTLS_DEBUG_LEVEL:-}" ] || debug=(-d "$GNUTLS_DEBUG_LEVEL")

# Servers. Each returns 0 once it listens on $port, 1 if the port is taken,
# 2 if the server died or did not come up in 10 s.

# gnutls-serv --echo; the stock one runs with its own libgnutls.
start_gnutls_serv() {
	local env=() dbg=()

	if [ "$peers" = cli-stock ]; then
		env=(env -u LD_LIBRARY_PATH)
	else
		dbg=("${debug[@]}")
	fi
	: >"$tmp/serv.err"
	"${env[@]}" "$serv" --echo --crlf --disable-client-cert -p "$port" \
		--x509certfile "$tmp/cert.pem" --x509keyfile "$tmp/key.pem" \
		--priority "$priority" "${dbg[@]}" \
		</dev/null >"$tmp/serv.out" 2>"$tmp/serv.err" &
	server_pid=$!

	for _ in $(seq 100); do
		if grep -q "IPv4 0.0.0.0 port $port\.\.\.done" "$tmp/serv.err"; then
			return 0
		fi
		if grep -q "bind() failed" "$tmp/serv.err"; then
			stop_server
			return 1
		fi
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	stop_server
	return 2
}

# Whether process $1 has a TCP socket listening on port $2.
listening() {
	local inodes fd

	inodes=$(awk -v p="$(printf '%04X' "$2")" \
		'$4 == "0A" && $2 ~ (":" p "$") { printf " socket:[%s]", $10 }' \
		/proc/net/tcp)
	[ -n "$inodes" ] || return 1
	for fd in /proc/"$1"/fd/*; do
		case "$inodes " in
		*" $(readlink "$fd" 2>/dev/null) "*) return 0 ;;
		esac
	done
	return 1
}

# Holds until $1 exists, $tmp is gone, or the deadline has passed.
hold() {
	while [ ! -e "$1" ] && [ -d "$tmp" ] && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
}

# s_server's input: its data once it has received all of the client's,
# then nothing until it has ended (or the attempt is abandoned).
feed_s_server() {
	while [ ! -e "$1" ] && [ -d "$tmp" ] && [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(size "$tmp/serv.out")" -ge "$bytes" ] && break
		sleep 0.1
	done
	[ -e "$1" ] || cat "$tmp/s2c" 2>/dev/null
	hold "$1"
}

start_s_server() {
	: >"$tmp/serv.err"
	: >"$tmp/serv.out"
	feed_s_server "$tmp/stop.$port" |
		openssl s_server -naccept 1 -quiet -accept "127.0.0.1:$port" \
			-cert "$tmp/cert.pem" -key "$tmp/key.pem" "${ossl_opts[@]}" \
			>"$tmp/serv.out" 2>"$tmp/serv.err" &
	server_pid=$!
	stopfile=$tmp/stop.$port

	for _ in $(seq 100); do
		listening "$server_pid" "$port" && return 0
		if ! kill -0 "$server_pid" 2>/dev/null; then
			grep -q "Address already in use" "$tmp/serv.err" &&
				{ stop_server; return 1; }
			break
		fi
		sleep 0.1
	done
	stop_server
	return 2
}

stop_server() {
	[ -n "$server_pid" ] || return 0
	kill "$server_pid" 2>/dev/null
	[ -z "$stopfile" ] || : >"$stopfile"
	wait "$server_pid" 2>/dev/null
	server_pid=
}

pick_port_and_start() {
	local status

	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 40000))
		if [ "$peers" = cli-openssl ]; then
			start_s_server
		else
			start_gnutls_serv
		fi
		status=$?
		[ $status -eq 0 ] && return 0
		[ $status -eq 2 ] && return 1
	done
	return 1
}

# Seconds left before the deadline, at least 1 (timeout 0 is no limit).
left() {
	local n=$((deadline - SECONDS))

	[ "$n" -gt 0 ] || n=1
	echo "$n"
}

# Clients. Their input is the data, then held open until everything has
# come back ($2 holds $bytes bytes), the client has ended, or the deadline
# has passed.
feed_client() {
	cat "$1"
	while [ ! -e "$tmp/cli.rc" ] && [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(size "$2")" -ge "$bytes" ] && break
		sleep 0.1
	done
}

# Runs the client, its command line in "$@", under timeout. It runs in the
# background, so that a signal is handled at once (cleanup ends it).
run_client() {
	: >"$tmp/cli.out"
	feed_client "$tmp/c2s" "$tmp/cli.out" | {
		timeout "$(left)" "$@" <&0 >"$tmp/cli.out" 2>"$tmp/cli.err" &
		echo $! >"$tmp/cli.pid"
		wait $!
		echo $? >"$tmp/cli.rc"
	} &
	client_pid=$!
	wait "$client_pid"
	client_pid=
}

# Waits until the server has ended (s_server) or the deadline has passed;
# returns its exit status.
wait_server() {
	local status

	while kill -0 "$server_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
	kill -0 "$server_pid" 2>/dev/null && return 124
	# the feeder is part of the job: let it end before waiting
	: >"$stopfile"
	wait "$server_pid"
	status=$?
	server_pid=
	return $status
}

# Checks a GnuTLS session description ("(TLS1.3-X.509)-...-(AES-128-GCM)").
check_desc() {
	[[ $1 == "($version"[-\)]* && $1 == *"-$want" ]]
}

make_cert || {
	show_log "$tmp/cert.log"
	fail "openssl could not make a certificate"
}

case $peers in
cli-openssl)
	if ! make_data "$tmp/c2s" raw || ! make_data "$tmp/s2c" raw; then
		fail "could not make $bytes bytes of data"
	fi
	data_note="raw binary (all 256 byte values), different data each way, client -> server first"
	server_name="openssl s_server"
	;;
cli-accel | cli-stock | openssl-serv)
	make_data "$tmp/c2s" echo || fail "could not make $bytes bytes of data"
	data_note="253 byte values (no NUL, '*' or space), LF at the end, for gnutls-serv --echo; server -> client is the echo"
	server_name="$([ "$peers" = cli-stock ] && echo stock || echo accel) gnutls-serv"
	;;
esac

pick_port_and_start || {
	show_log "$tmp/serv.err"
	fail "$server_name did not start for $proto $cipher"
}

echo "interop: $peers $proto $cipher, $bytes bytes each way, port $port"
echo "interop: data: $data_note"
t0=$(usec)
case $peers in
cli-*)
	run_client "$cli" --insecure -p "$port" --priority "$priority" \
		"${debug[@]}" --logfile="$tmp/cli.log" 127.0.0.1
	;;
openssl-serv)
	run_client openssl s_client -brief -nocommands \
		-connect "127.0.0.1:$port" "${ossl_opts[@]}"
	;;
esac
rc=$(cat "$tmp/cli.rc" 2>/dev/null || echo "?")
serv_rc=
if [ "$peers" = cli-openssl ]; then
	wait_server
	serv_rc=$?
fi
t1=$(usec)
elapsed=$(((t1 - t0) / 1000))
echo "interop: transfer took $((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s"

# Fails if the time is up or gnutls-serv dropped the connection.
timed_out() {
	[ "$SECONDS" -ge "$deadline" ] &&
		fail "timed out after $limit s: $1"
	grep -aq "Scheduling inactive connection for close" "$tmp/serv.err" 2>/dev/null &&
		fail "gnutls-serv closed the connection at its 30 s limit: $1: send fewer BYTES"
}

# What was negotiated, as each side saw it.
ok=1
case $peers in
cli-*)
	desc=$(sed -n 's/^- Description: //p' "$tmp/cli.log" 2>/dev/null | head -n 1)
	echo "interop: gnutls-cli negotiated ${desc:-nothing}"
	if [ -z "$desc" ]; then
		show_log "$tmp/cli.log"
		show_log "$tmp/cli.err"
		show_log "$tmp/serv.err"
		timed_out "no TLS session was established (gnutls-cli does not flush its log when it is killed)"
		fail "no TLS session was established"
	fi
	check_desc "$desc" || ok=0
	;;
esac
case $peers in
cli-accel | cli-stock | openssl-serv)
	sdesc=$(LC_ALL=C sed -n 's/^- Description: //p' "$tmp/serv.out" | head -n 1)
	echo "interop: $server_name negotiated ${sdesc:-nothing}"
	if [ -z "$sdesc" ] || ! check_desc "$sdesc"; then
		ok=0
	fi
	;;
esac
if [ "$peers" = openssl-serv ]; then
	oproto=$(sed -n 's/^Protocol version: //p' "$tmp/cli.err" | head -n 1)
	osuite=$(sed -n 's/^Ciphersuite: //p' "$tmp/cli.err" | head -n 1)
	echo "interop: openssl s_client negotiated ${oproto:-nothing} ${osuite:-nothing}"
	if [ -z "$oproto" ] && [ -z "$sdesc" ]; then
		show_log "$tmp/cli.err"
		show_log "$tmp/serv.err"
		timed_out "no TLS session was established"
		fail "no TLS session was established"
	fi
	if [ "$oproto" != "$ossl_version" ] || [ "$osuite" != "$ossl_suite" ]; then
		ok=0
	fi
fi
[ $ok = 1 ] || fail "negotiated something else than $version with $want ($ossl_suite)"

# The data, each way: $1 sent, $2 received, $3 the direction.
compare() {
	local got

	cmp -s "$1" "$2" && return 0
	got=$(size "$2")
	show_log "$tmp/cli.err"
	show_log "$tmp/serv.err" 3
	timed_out "$3: $got of $bytes bytes"
	fail "$3: data differs: $got of $bytes bytes ($(cmp "$1" "$2" 2>&1 |
		head -n 1 | sed "s|$tmp/||g"))"
}

case $peers in
cli-openssl)
	compare "$tmp/c2s" "$tmp/serv.out" "client -> server"
	compare "$tmp/s2c" "$tmp/cli.out" "server -> client"
	;;
*)
	compare "$tmp/c2s" "$tmp/cli.out" "client -> server -> client (echo)"
	;;
esac

client_name=$([ "$peers" = openssl-serv ] && echo "openssl s_client" || echo gnutls-cli)
if [ "$rc" != 0 ]; then
	show_log "$tmp/cli.err"
	fail "$client_name exited with status $rc after a correct transfer"
fi
if [ -n "$serv_rc" ] && [ "$serv_rc" != 0 ]; then
	show_log "$tmp/serv.err"
	timed_out "openssl s_server did not end"
	fail "openssl s_server exited with status $serv_rc after a correct transfer"
fi
if [ -n "${AFALG_TEST_LOG:-}" ] && [ "$peers" = openssl-serv ]; then
	echo "interop: note: gnutls-serv is killed at the end and does not log the module's exit statistics"
fi

case $peers in
cli-openssl) how="$bytes bytes each way, byte for byte" ;;
*) how="$bytes bytes echoed byte for byte" ;;
esac
echo "PASS: $peers: $how over ${desc:-$sdesc}"
exit 0
