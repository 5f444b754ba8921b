#!/usr/bin/env bash
# TLS interoperability of the accel GnuTLS with OpenSSL and with stock GnuTLS
# over loopback: one session with a forced protocol version and cipher suite,
# BYTES bytes each way, compared byte for byte with what was sent.
#
# Usage: interop.sh PEERS PROTO CIPHER [BYTES]    (BYTES defaults to 4 MiB)
#
#   PEERS   cli-accel     accel gnutls-cli   -> tls-echo on the accel libgnutls
#           cli-openssl   accel gnutls-cli   -> openssl s_server
#           cli-stock     accel gnutls-cli   -> tls-echo on Debian's libgnutls
#           openssl-serv  openssl s_client   -> tls-echo on the accel libgnutls
#   PROTO   tls1.3 or tls1.2 (TLS 1.2: ECDHE-ECDSA suites)
#   CIPHER  AES-128-GCM, AES-256-GCM, CHACHA20-POLY1305, AES-128-CCM, and for
#           tls1.2 also AES-128-CBC-SHA1 (ECDHE-ECDSA-AES128-SHA) and
#           AES-256-CBC-SHA384 (ECDHE-ECDSA-AES256-SHA384)
#
# Environment:
#   ACCEL_BIN        directory of the accel gnutls-cli; its libgnutls is in
#                    ACCEL_BIN/../lib (the test is skipped when it is not set)
#   STOCK_LIB        directory of a stock libgnutls (cli-stock only; default:
#                    the system's, Debian's own build of the same release)
#   TLS_ECHO         the tls-echo program (tests/tls-echo.c; skipped if
#                    unset), the server of every case but cli-openssl
#   INTEROP_TIMEOUT  seconds after which the test is failed as hung
#                    (default 1800): a safety net only, nothing else here
#                    depends on time
#   AFALG_TEST_LOG   if set, the GnuTLS peers' stderr is appended to this file
#   GNUTLS_DEBUG_LEVEL  passed to the accel gnutls-cli as -d (tls-echo's
#                    library reads it itself; unset for the stock one)
#
# Each GnuTLS peer runs with LD_LIBRARY_PATH set to its own libgnutls
# directory, and the script checks in /proc that tls-echo has loaded it.
#
# Exit status: 0 pass, 1 fail, 77 skip (a tool or a directory is missing).
#
# How the data goes (an ECDSA P-256 self-signed certificate made by openssl):
# - Data is raw binary (all 256 byte values).
# - cli-accel, cli-stock and openssl-serv: tls-echo sends back every byte
#   as it arrives; server -> client is the echo of client -> server, and
#   tls-echo's count of echoed bytes must be BYTES.
# - cli-openssl: different random data each way. gnutls-cli sends its stdin
#   and writes what it receives to stdout unchanged (without --crlf);
#   openssl s_server -quiet does the same (-quiet also turns off its
#   one-letter commands and sends its other output to a null BIO). The
#   directions run one after the other: s_server gets its data once it has
#   received all of the client's, so that neither peer can block in a write
#   while the other does too.
# - openssl s_client runs with -nocommands (its 'Q', 'R' and 'K' commands
#   would otherwise fire on random data) and -brief, whose summary goes to
#   stderr.
#
# Notes on the tools:
# - gnutls-cli, at the end of its input, sends close_notify and keeps
#   reading, but gives up after 2 s without data; s_client ends the session
#   at the end of its input. Their input is therefore held open until all
#   the data has come back. s_server drops the session without
#   close_notify at the end of its input: its input is held open until it
#   has ended.
# - gnutls-cli writes what it receives one byte per write() (stdout is
#   unbuffered): it takes about 1 s per 4 MiB on a fast host.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

peers=${1:-}
proto=${2:-}
cipher=${3:-}
bytes=${4:-4194304}
limit=${INTEROP_TIMEOUT:-1800}

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
if [ "$bytes" -lt 1 ]; then
	echo "BYTES must be at least 1" >&2
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

# The peers and the libgnutls each GnuTLS peer runs on.
[ -n "${ACCEL_BIN:-}" ] || skip "ACCEL_BIN is not set"
accel_lib=$ACCEL_BIN/../lib
cli=$ACCEL_BIN/gnutls-cli
case $peers in
cli-stock)
	serv_lib=${STOCK_LIB:-$(ldconfig -p | awk '$1 == "libgnutls.so.30" && /x86-64/ { print $NF; exit }')}
	[ -n "$serv_lib" ] || skip "no libgnutls.so.30 of the system's"
	[ -d "$serv_lib" ] || serv_lib=$(dirname "$(readlink -f "$serv_lib")")
	server_name="tls-echo (Debian's libgnutls)"
	;;
cli-accel | openssl-serv)
	serv_lib=$accel_lib
	server_name="tls-echo (accel libgnutls)"
	;;
cli-openssl) server_name="openssl s_server" ;;
esac
if [ "$peers" != cli-openssl ]; then
	[ -n "${TLS_ECHO:-}" ] || skip "TLS_ECHO is not set"
	[ -x "$TLS_ECHO" ] || skip "$TLS_ECHO not found"
	[ -d "$serv_lib" ] || skip "$serv_lib not found"
fi
if [ "$peers" != openssl-serv ]; then
	[ -x "$cli" ] || skip "$cli not found"
	client_name=gnutls-cli
else
	client_name="openssl s_client"
fi
for tool in openssl timeout cmp head stat mktemp awk readlink; do
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
	stop_server
	# run-test reads the GnuTLS peers' logs (the AF_ALG module's
	# statistics).
	if [ -n "${AFALG_TEST_LOG:-}" ]; then
		[ "$peers" = openssl-serv ] ||
			cat "$tmp/cli.err" >>"$AFALG_TEST_LOG" 2>/dev/null
		[ "$peers" = cli-openssl ] ||
			cat "$tmp/serv.err" >>"$AFALG_TEST_LOG" 2>/dev/null
	fi
	# the feeders stop once $tmp is gone
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

deadline=$((SECONDS + limit))

hung() {
	fail "hung: $1 after INTEROP_TIMEOUT=$limit s"
}

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

# The last lines of a log, without the library's debug messages.
show_log() {
	local text

	text=$(grep -a -v -e '^gnutls\[' -e '^|<[0-9]*>|' "$1" 2>/dev/null |
		tail -n "${2:-5}" | cut -c 1-200 | LC_ALL=C tr -c '[:print:]\n' '?')
	[ -n "$text" ] || return 0
	echo "--- last lines of $(basename "$1"):"
	echo "$text"
}

make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 2 \
		-subj /CN=localhost \
		-addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
		>"$tmp/cert.log" 2>&1
}

# $1 gets exactly $bytes bytes of random data.
make_data() {
	head -c "$bytes" /dev/urandom >"$1" && [ "$(size "$1")" -eq "$bytes" ]
}

# Waits until $1 exists, $tmp is gone, or the deadline has passed.
hold() {
	while [ ! -e "$1" ] && [ -d "$tmp" ] && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
}

# Whether the server is still running.
server_alive() {
	[ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null
}

stop_server() {
	[ -n "$server_pid" ] || return 0
	kill "$server_pid" 2>/dev/null
	[ -z "$stopfile" ] || : >"$stopfile"
	wait "$server_pid" 2>/dev/null
	server_pid=
}

# The libgnutls file that process $1 has loaded.
loaded_lib() {
	awk '$6 ~ /\/libgnutls\.so/ { print $6; exit }' "/proc/$1/maps"
}

# tls-echo on the libgnutls of $serv_lib (GNUTLS_DEBUG_LEVEL is for the
# accel one, whose module logs its statistics); it writes its port to a
# file once it listens.
start_tls_echo() {
	local env=(env) so

	[ "$peers" != cli-stock ] || env+=(-u GNUTLS_DEBUG_LEVEL)
	"${env[@]}" LD_LIBRARY_PATH="$serv_lib" "$TLS_ECHO" "$tmp/cert.pem" \
		"$tmp/key.pem" "$priority" "$tmp/port" \
		</dev/null >"$tmp/serv.out" 2>"$tmp/serv.err" &
	server_pid=$!
	while [ ! -e "$tmp/port" ] && server_alive && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
	[ -e "$tmp/port" ] || return 1
	port=$(cat "$tmp/port")
	so=$(loaded_lib "$server_pid")
	[ "$(readlink -f "${so%/*}")" = "$(readlink -f "$serv_lib")" ] ||
		fail "tls-echo runs on ${so:-no libgnutls}, not on the one in $serv_lib"
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

# s_server's input: its data once it has received all of the client's,
# then nothing until it has ended (or the attempt is abandoned: $1 exists).
feed_s_server() {
	while [ ! -e "$1" ] && [ -d "$tmp" ] && [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(size "$tmp/serv.out")" -ge "$bytes" ] && break
		sleep 0.1
	done
	[ -e "$1" ] || cat "$tmp/s2c" 2>/dev/null
	hold "$1"
}

# s_server on a random port; returns 1 if the port was taken (it cannot
# report the port it was given, so it cannot pick one itself).
start_s_server() {
	: >"$tmp/serv.out"
	port=$((20000 + RANDOM % 40000))
	stopfile=$tmp/stop.$port
	feed_s_server "$stopfile" |
		openssl s_server -naccept 1 -quiet -accept "127.0.0.1:$port" \
			-cert "$tmp/cert.pem" -key "$tmp/key.pem" "${ossl_opts[@]}" \
			>"$tmp/serv.out" 2>"$tmp/serv.err" &
	server_pid=$!
	while ! listening "$server_pid" "$port" && server_alive &&
		[ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
	listening "$server_pid" "$port" && return 0
	grep -q "Address already in use" "$tmp/serv.err" && stop_server && return 1
	return 0
}

# Seconds left before the deadline, at least 1 (timeout 0 is no limit).
left() {
	local n=$((deadline - SECONDS))

	[ "$n" -gt 0 ] || n=1
	echo "$n"
}

# Clients. Their input is the data, then held open until everything has
# come back, the client has ended, or the deadline has passed.
feed_client() {
	cat "$1"
	while [ ! -e "$tmp/cli.rc" ] && [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(size "$tmp/cli.out")" -ge "$bytes" ] && break
		sleep 0.1
	done
}

# Runs the client, its command line in "$@", under timeout. It runs in the
# background, so that a signal is handled at once (cleanup ends it).
run_client() {
	: >"$tmp/cli.out"
	feed_client "$tmp/c2s" | {
		timeout "$(left)" "$@" <&0 >"$tmp/cli.out" 2>"$tmp/cli.err" &
		echo $! >"$tmp/cli.pid"
		wait $!
		echo $? >"$tmp/cli.rc"
	} &
	client_pid=$!
	wait "$client_pid"
	client_pid=
}

# Waits until the server has ended, or fails the test as hung; returns the
# server's exit status.
wait_server() {
	local status

	while server_alive && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
	done
	if server_alive; then
		show_log "$tmp/serv.err"
		hung "$server_name did not end"
	fi
	# s_server's feeder is part of the job: let it end before waiting
	[ -z "$stopfile" ] || : >"$stopfile"
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
make_data "$tmp/c2s" || fail "could not make $bytes bytes of data"
if [ "$peers" = cli-openssl ]; then
	make_data "$tmp/s2c" || fail "could not make $bytes bytes of data"
	for _ in $(seq 20); do
		start_s_server && break
	done
else
	start_tls_echo
fi
if ! server_alive; then
	show_log "$tmp/serv.err"
	fail "$server_name did not start for $proto $cipher"
fi
[ "$SECONDS" -lt "$deadline" ] || hung "$server_name did not start"

echo "interop: $peers $proto $cipher, $bytes bytes each way, port $port"
t0=$(usec)
case $peers in
cli-*)
	debug=()
	[ -z "${GNUTLS_DEBUG_LEVEL:-}" ] || debug=(-d "$GNUTLS_DEBUG_LEVEL")
	run_client env LD_LIBRARY_PATH="$accel_lib" "$cli" --insecure \
		-p "$port" --priority "$priority" "${debug[@]}" \
		--logfile="$tmp/cli.log" 127.0.0.1
	;;
openssl-serv)
	run_client openssl s_client -brief -nocommands \
		-connect "127.0.0.1:$port" "${ossl_opts[@]}"
	;;
esac
rc=$(cat "$tmp/cli.rc" 2>/dev/null || echo "?")
if [ "$rc" = 124 ]; then
	show_log "$tmp/cli.err"
	show_log "$tmp/serv.err"
	hung "$client_name did not end ($(size "$tmp/cli.out") of $bytes bytes back)"
fi
wait_server
serv_rc=$?
t1=$(usec)
elapsed=$(((t1 - t0) / 1000))
echo "interop: transfer took $((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s"

# What was negotiated, as each side saw it.
ok=1
case $peers in
cli-*)
	desc=$(sed -n 's/^- Description: //p' "$tmp/cli.log" 2>/dev/null | head -n 1)
	echo "interop: gnutls-cli negotiated ${desc:-nothing}"
	check_desc "$desc" || ok=0
	;;
openssl-serv)
	oproto=$(sed -n 's/^Protocol version: //p' "$tmp/cli.err" | head -n 1)
	osuite=$(sed -n 's/^Ciphersuite: //p' "$tmp/cli.err" | head -n 1)
	echo "interop: openssl s_client negotiated ${oproto:-nothing} ${osuite:-nothing}"
	if [ "$oproto" != "$ossl_version" ] || [ "$osuite" != "$ossl_suite" ]; then
		ok=0
	fi
	;;
esac
if [ "$peers" != cli-openssl ]; then
	sdesc=$(sed -n 's/^tls-echo: session //p' "$tmp/serv.out" | head -n 1)
	echo "interop: $server_name negotiated ${sdesc:-nothing}"
	check_desc "$sdesc" || ok=0
fi
if [ $ok = 0 ]; then
	show_log "$tmp/cli.err"
	show_log "$tmp/serv.err"
	fail "negotiated something else than $version with $want ($ossl_suite)"
fi

# The data, each way: $1 sent, $2 received, $3 the direction.
compare() {
	local got

	cmp -s "$1" "$2" && return 0
	got=$(size "$2")
	show_log "$tmp/cli.err"
	show_log "$tmp/serv.err" 3
	fail "$3: data differs: $got of $bytes bytes ($(cmp "$1" "$2" 2>&1 |
		head -n 1 | sed "s|$tmp/||g"))"
}

if [ "$peers" = cli-openssl ]; then
	compare "$tmp/c2s" "$tmp/serv.out" "client -> server"
	compare "$tmp/s2c" "$tmp/cli.out" "server -> client"
else
	compare "$tmp/c2s" "$tmp/cli.out" "client -> server -> client (echo)"
	echoed=$(sed -n 's/^tls-echo: echoed \([0-9]*\) bytes$/\1/p' "$tmp/serv.out")
	[ "$echoed" = "$bytes" ] ||
		fail "tls-echo echoed ${echoed:-no} bytes, not $bytes"
fi

if [ "$rc" != 0 ]; then
	show_log "$tmp/cli.err"
	fail "$client_name exited with status $rc after a correct transfer"
fi
if [ "$serv_rc" != 0 ]; then
	show_log "$tmp/serv.err"
	fail "$server_name exited with status $serv_rc after a correct transfer"
fi

case $peers in
cli-openssl) how="$bytes bytes each way, byte for byte" ;;
*) how="$bytes bytes echoed byte for byte" ;;
esac
echo "PASS: $peers: $how over ${desc:-$sdesc}"
exit 0
