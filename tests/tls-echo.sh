#!/usr/bin/env bash
# TLS round trip through gnutls-serv --echo and gnutls-cli over loopback:
# BYTES bytes sent by the client must come back byte for byte.
#
# Usage: tls-echo.sh PRIORITY-STRING [BYTES]     (BYTES defaults to 1 MiB)
#
# Environment:
#   GNUTLS_BIN        directory holding gnutls-cli, gnutls-serv and certtool
#                     of the build under test (default: found on PATH)
#   TLS_ECHO_TIMEOUT  overall limit in seconds (default 60)
#   AFALG_TEST_LOG    if set, the peers' stderr is appended to this file
#
# Exit status: 0 pass, 1 fail, 77 skip (a tool is missing).
#
# Notes on the tools (GnuTLS 3.7):
# - gnutls-serv --echo is line oriented: it echoes what it has received once
#   that holds a newline, copies it with strdup(), and rewrites a final CRLF
#   unless given --crlf. The data sent is therefore base64 text (no NUL, no
#   CR, no line starting with "**", which would be a server command) ending
#   in a newline.
# - gnutls-serv drops every connection 30 s after accepting it, whatever
#   TLS_ECHO_TIMEOUT says: on a very slow machine, send fewer BYTES.
# - gnutls-cli, at the end of its input, sends close_notify and keeps
#   reading, but gives up after 2 s without data. To be deterministic its
#   input is held open until all the data has come back.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

priority=${1:-}
bytes=${2:-1048576}
limit=${TLS_ECHO_TIMEOUT:-60}

if [ -z "$priority" ]; then
	echo "usage: $0 PRIORITY-STRING [BYTES]" >&2
	exit 99
fi
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

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

find_tool() {
	if [ -n "${GNUTLS_BIN:-}" ]; then
		[ -x "$GNUTLS_BIN/$1" ] && echo "$GNUTLS_BIN/$1"
	else
		command -v "$1"
	fi
}

for tool in gnutls-cli gnutls-serv certtool; do
	find_tool "$tool" >/dev/null ||
		skip "$tool not found${GNUTLS_BIN:+ in $GNUTLS_BIN}"
done
for tool in timeout base64 cmp head stat mktemp; do
	command -v "$tool" >/dev/null || skip "$tool not found"
done
cli=$(find_tool gnutls-cli)
serv=$(find_tool gnutls-serv)
certtool=$(find_tool certtool)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tls-echo.XXXXXX") || fail "mktemp failed"
server_pid=

# shellcheck disable=SC2317 # called from the trap
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	# run-test reads the peers' logs (the AF_ALG module's statistics)
	if [ -n "${AFALG_TEST_LOG:-}" ]; then
		grep -h 'afalg: ' "$tmp/serv.err" "$tmp/cli.err" \
			>>"$AFALG_TEST_LOG" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

now() {
	date +%s
}

deadline=$(($(now) + limit))

show_log() {
	[ -s "$1" ] || return 0
	echo "--- last lines of $(basename "$1"):"
	tail -n "${2:-5}" "$1" | cut -c 1-200
}

make_cert() {
	cat >"$tmp/cert.tmpl" <<-EOF
		cn = "localhost"
		dns_name = "localhost"
		ip_address = "127.0.0.1"
		serial = 1
		expiration_days = 2
		tls_www_server
		signing_key
	EOF
	"$certtool" --generate-privkey --key-type=ecdsa --curve=secp256r1 \
		--outfile "$tmp/key.pem" >"$tmp/certtool.log" 2>&1 &&
		"$certtool" --generate-self-signed --load-privkey "$tmp/key.pem" \
			--template "$tmp/cert.tmpl" --outfile "$tmp/cert.pem" \
			>>"$tmp/certtool.log" 2>&1
}

# Base64 lines of random data, exactly $bytes bytes, ending in a newline.
make_data() {
	head -c $((bytes * 3 / 4 + 64)) /dev/urandom | base64 -w 76 |
		head -c $((bytes - 1)) >"$tmp/data" &&
		echo >>"$tmp/data"
}

# Starts gnutls-serv on $port; 0 once it listens on 127.0.0.1, 1 if the
# port is taken, 2 if the server died or did not come up in 10 s.
start_server() {
	: >"$tmp/serv.err"
	"$serv" --echo --crlf --disable-client-cert -p "$port" \
		--x509certfile "$tmp/cert.pem" --x509keyfile "$tmp/key.pem" \
		--priority "$priority" >"$tmp/serv.out" 2>"$tmp/serv.err" &
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

stop_server() {
	kill "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
	server_pid=
}

pick_port_and_start() {
	local status

	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 40000))
		start_server
		status=$?
		[ $status -eq 0 ] && return 0
		[ $status -eq 2 ] && return 1
	done
	return 1
}

# Feeds the data, then holds the client's input open until everything has
# come back, the client has ended, or the deadline has passed.
feed() {
	cat "$tmp/data"
	while [ ! -e "$tmp/cli.rc" ] && [ "$(now)" -lt "$deadline" ]; do
		[ "$(stat -c %s "$tmp/out")" -ge "$bytes" ] && break
		sleep 0.1
	done
}

# gnutls-cli sets its own log level (-d): keep the AF_ALG module's
# statistics, which it logs at level 2 when the library is deinitialized.
debug=()
[ -z "${GNUTLS_DEBUG_LEVEL:-}" ] || debug=(-d "$GNUTLS_DEBUG_LEVEL")

run_client() {
	: >"$tmp/out"
	feed | {
		timeout $((deadline - $(now) + 1)) "$cli" --insecure \
			-p "$port" --priority "$priority" "${debug[@]}" \
			--logfile="$tmp/cli.log" 127.0.0.1 \
			>"$tmp/out" 2>"$tmp/cli.err"
		echo $? >"$tmp/cli.rc"
	}
}

make_cert || {
	show_log "$tmp/certtool.log"
	fail "certtool could not make a certificate"
}
make_data || fail "could not make $bytes bytes of data"

pick_port_and_start || {
	show_log "$tmp/serv.err"
	fail "gnutls-serv did not start with priority $priority"
}

run_client
rc=$(cat "$tmp/cli.rc" 2>/dev/null || echo "?")

description=$(sed -n 's/^- Description: //p' "$tmp/cli.log" 2>/dev/null)
echo "tls-echo: priority $priority, $bytes bytes, port $port"
echo "tls-echo: negotiated ${description:-nothing}"

if [ -z "$description" ]; then
	show_log "$tmp/cli.log"
	show_log "$tmp/cli.err"
	show_log "$tmp/serv.err"
	fail "no TLS session was established"
fi

got=$(stat -c %s "$tmp/out")
if ! cmp -s "$tmp/data" "$tmp/out"; then
	show_log "$tmp/cli.err"
	show_log "$tmp/serv.err" 3
	[ "$(now)" -ge "$deadline" ] &&
		fail "timed out after $limit s with $got of $bytes bytes back"
	grep -q "Scheduling inactive connection for close" "$tmp/serv.err" &&
		fail "gnutls-serv closed the connection at its 30 s limit with $got of $bytes bytes back: send fewer BYTES"
	fail "echo differs: $got of $bytes bytes back ($(cmp "$tmp/data" "$tmp/out" 2>&1 | head -n 1))"
fi
if [ "$rc" != 0 ]; then
	show_log "$tmp/cli.err"
	fail "gnutls-cli exited with status $rc after a correct echo"
fi

echo "PASS: $bytes bytes echoed byte for byte over $description"
exit 0
