#!/bin/bash
# The kernels of 2026 (doc/kernels-2026.md), in Debian's own: what the
# backend does where the kernel refuses.
#
#  - Linux 7.2 (7524070f26d8) offers AF_ALG only implementations on the
#    CPU: a device's driver (QEMU's virtio-crypto engine, which
#    devel/vm-run adds) named in the settings is refused, said as a
#    refusal, not an absence; tried once per process; GnuTLS's answers.
#    afalgtool lists the engine and says the kernel refuses it through
#    AF_ALG; --calibrate measures no driver the kernel refuses, and says
#    why.
#  - a host hardened after Copy Fail (CVE-2026-31431) with algif_aead
#    blocked (Debian 12's 6.1 booted with module_blacklist=algif_aead):
#    an AEAD bind fails with ENOENT, said as AF_ALG's aead type missing,
#    tried once; the other families unaffected.
#  - Linux 7.3's /proc/sys/crypto/af_alg_restrict (2f204fe718f5), 1 by
#    default: a root process gets the kernel for the names the
#    allowlist gives the privileged, an unprivileged one (nobody) only
#    for xts(aes) and sha1; every refused name is one line and software;
#    at 2, socket(AF_ALG) fails: software, one line.  afalgtool run as
#    root says what an unprivileged process gets, and --calibrate says
#    where its settings reach the kernel for privileged processes only.
#
# Usage: kernels.sh [CHECK...]   (the kernel-7.2, kernel-7.3 and
# kernel-hardened suites: devel/test boots those kernels with
# VM_RUN_KERNEL, and 6.1 with VM_RUN_APPEND=module_blacklist=algif_aead)
# Environment: ACCEL_BIN, CONTRACT, CASES (tests/meson.build).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

case $(uname -r) in
7.2*) kver=7.2 ;;
7.3*) kver=7.3 ;;
*)
	kver=
	grep -q 'module_blacklist=algif_aead' /proc/cmdline 2>/dev/null &&
		kver=hardened
	;;
esac
if [ -z "$kver" ]; then
	echo "SKIP: for Linux 7.2 and 7.3, and a kernel booted with module_blacklist=algif_aead (devel/test boots them), this is $(uname -r)"
	exit 77
fi
tool=${ACCEL_BIN:?}/afalgtool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernels.XXXXXX") || exit 99
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
failed=0

pass() { echo "PASS $check: $*"; }
fail() { echo "FAIL $check: $*"; failed=$((failed + 1)); }

# as nobody, without capabilities
unprivileged() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# FAMILY ALG taken|refused [RUN...]: the contract case of kernels.cases,
# one algorithm in a process of its own; the library's log in $tmp/log.
contract() {
	local family=$1 alg=$2 what=$3 name
	shift 3
	name="$family: the kernel takes it"
	[ "$what" = refused ] && name="$family: the kernel refuses it, tried once"
	"$@" env GNUTLS_DEBUG_LEVEL=2 "${CONTRACT:?}" --case "$name" --alg "$alg" \
		"${CASES:?}/kernels.cases" >"$tmp/out" 2>"$tmp/log"
	grep -h 'afalg: ' "$tmp/log" >&2
	if ! grep -q "^PASS" "$tmp/out"; then
		fail "$alg ($what${1:+, $*}): $(grep -E '^(FAIL|SKIP)' "$tmp/out" | head -n 2) $(grep 'software for this process' "$tmp/log" | head -n 1)"
		return 1
	fi
}

family_of() {
	case $1 in
	*-CBC | *-XTS) echo cipher ;;
	*-GCM | *-CCM | CHACHA20-POLY1305) echo aead ;;
	*) echo hash ;;
	esac
}

# ALG... taken|refused WHY [RUN...]: each algorithm as expected; a refusal
# logged once, saying WHY.
expect() {
	local what=$1 why=$2 alg
	shift 2
	for alg in $algs; do
		contract "$(family_of "$alg")" "$alg" "$what" "$@" || return 1
		if [ "$what" = refused ] &&
			[ "$(grep -c "afalg: $alg: .*$why.*: software for this process" "$tmp/log")" != 1 ]; then
			fail "$alg: the refusal said: $(grep "afalg: $alg: " "$tmp/log" | head -n 2)"
			return 1
		fi
	done
}

# ---- Linux 7.2 --------------------------------------------------------

check_refused_engine() {
	[ -n "${AFALG_ENGINE:-}" ] || { fail "no engine in this VM (VM_RUN_ENGINE=1)"; return; }
	local e=$AFALG_ENGINE
	export GNUTLS_AFALG="kernel,AES-128-CBC=kernel@$e,AES-256-CBC=kernel@$e"
	algs="AES-128-CBC AES-256-CBC"
	expect refused "the kernel has $e but refuses it through AF_ALG: an asynchronous or driver-only implementation" || return
	# the kernel's own pick of the same name still works
	export GNUTLS_AFALG=kernel
	algs="AES-128-CBC AES-256-XTS AES-128-GCM CHACHA20-POLY1305 SHA256 SHA3-256 HMAC-SHA256"
	expect taken "" || return
	unset GNUTLS_AFALG
	pass "$e named in the settings: refused (one bind() per algorithm and process, one line that says the kernel refuses it), GnuTLS's answers; the kernel's own pick takes every family"
}

check_afalgtool_engine() {
	local e=${AFALG_ENGINE:-}
	GNUTLS_AFALG=auto "$tool" >"$tmp/out" 2>&1
	if ! sed -n '/^AES-128-CBC: /,/^[^ ]/p' "$tmp/out" |
		grep -q "$e (priority [0-9]*, module virtio_crypto, looks like a device; the kernel does not bind it through AF_ALG: .*Linux 7.2"; then
		fail "afalgtool: $(sed -n '/^AES-128-CBC: /,/^[^ ]/p' "$tmp/out" | head -n 4)"
		return
	fi
	if ! GNUTLS_AFALG=auto "$tool" --calibrate --algorithms=AES-128-CBC \
		--drivers=devices >"$tmp/out" 2>"$tmp/log"; then
		fail "afalgtool --calibrate: $(tail -n 3 "$tmp/log")"
		return
	fi
	if ! grep -q "^# AES-128-CBC, driver $e: the kernel has $e but refuses it through AF_ALG" "$tmp/out" ||
		grep -q "^AES-128-CBC = .*@$e" "$tmp/out"; then
		fail "afalgtool --calibrate: $(tr '\n' '|' <"$tmp/out" | head -c 600)"
		return
	fi
	pass "afalgtool lists $e and says the kernel does not bind it through AF_ALG; --calibrate measures it not and says why"
}

# ---- a hardened host: algif_aead blocked -----------------------------

check_aead_missing() {
	export GNUTLS_AFALG=kernel
	algs="AES-128-GCM AES-128-CCM CHACHA20-POLY1305"
	expect refused "AF_ALG's aead type is not available (algif_aead is not loaded" || return
	algs="AES-128-CBC AES-256-XTS SHA256 HMAC-SHA256"
	expect taken "" || return
	unset GNUTLS_AFALG
	pass "algif_aead blocked: AEAD refused once each, with one line that says AF_ALG's aead type is missing; ciphers, MACs and digests in the kernel"
}

# ---- Linux 7.3 --------------------------------------------------------

restrict=/proc/sys/crypto/af_alg_restrict

check_restrict_root() {
	[ "$(cat $restrict 2>/dev/null)" = 1 ] || { fail "af_alg_restrict is '$(cat $restrict 2>/dev/null)', not 1"; return; }
	export GNUTLS_AFALG=kernel
	algs="AES-128-CBC AES-256-XTS AES-128-CCM SHA256 HMAC-SHA256 AES-CMAC-128"
	expect taken "" || return
	algs="AES-128-GCM CHACHA20-POLY1305 SHA3-256"
	expect refused "not on AF_ALG's allowlist for it (/proc/sys/crypto/af_alg_restrict is 1)" || return
	unset GNUTLS_AFALG
	pass "root: the privileged allowlist's names in the kernel, GCM, ChaCha20-Poly1305 and SHA3 refused once each with one line"
}

check_restrict_nobody() {
	export GNUTLS_AFALG=kernel
	algs="AES-256-XTS SHA1"
	expect taken "" unprivileged || return
	algs="AES-128-CBC AES-128-CCM SHA256 HMAC-SHA256 AES-128-GCM"
	expect refused "not on AF_ALG's allowlist for it" unprivileged || return
	unset GNUTLS_AFALG
	pass "nobody: AES-XTS and SHA1 in the kernel; the others refused once each with one line"
}

check_restrict_2() {
	local old
	old=$(cat $restrict)
	echo 2 >$restrict || { fail "cannot set af_alg_restrict"; return; }
	export GNUTLS_AFALG=kernel
	algs="AES-128-CBC"
	contract cipher AES-128-CBC refused
	echo "$old" >$restrict
	unset GNUTLS_AFALG
	if ! grep -q "^PASS" "$tmp/out"; then
		return
	elif [ "$(grep -c 'afalg: AF_ALG is not available (socket: EAFNOSUPPORT)' "$tmp/log")" != 1 ]; then
		fail "af_alg_restrict=2: $(grep afalg: "$tmp/log" | grep -v registered | head -n 3)"
		return
	fi
	pass "af_alg_restrict=2: socket() refused once, software, one line"
}

check_afalgtool_restrict() {
	GNUTLS_AFALG=AES-128-CBC=kernel "$tool" >"$tmp/out" 2>&1
	if ! sed -n '/^AES-128-CBC: /,/^[^ ]/p' "$tmp/out" |
		grep -q "^  an unprivileged process: the kernel refuses cbc(aes) to this process"; then
		fail "afalgtool as root: $(sed -n '/^AES-128-CBC: /,/^[^ ]/p' "$tmp/out" | head -n 4)"
		return
	fi
	if ! GNUTLS_AFALG=AES-128-CBC=kernel "$tool" --calibrate \
		--algorithms=SHA1 >"$tmp/out" 2>"$tmp/log"; then
		fail "afalgtool --calibrate: $(tail -n 3 "$tmp/log")"
		return
	fi
	if ! grep -q "^# AES-128-CBC: for processes without CAP_NET_ADMIN the kernel refuses it" "$tmp/out" ||
		! grep -q "AES-128-CBC: only privileged processes get the kernel" "$tmp/log"; then
		fail "afalgtool --calibrate as root: $(tr '\n' '|' <"$tmp/out" | head -c 600) / $(cat "$tmp/log")"
		return
	fi
	pass "afalgtool as root says what an unprivileged process gets; --calibrate says where its settings reach the kernel for privileged processes only"
}

case $kver in
hardened) checks=(aead_missing) ;;
7.2) checks=(refused_engine afalgtool_engine) ;;
7.3) checks=(restrict_root restrict_nobody restrict_2 afalgtool_restrict) ;;
esac
[ $# -gt 0 ] && checks=("$@")
for check in "${checks[@]}"; do
	if declare -F "check_$check" >/dev/null; then
		"check_$check"
	else
		fail "no such check"
	fi
done
echo "kernels ($kver): $failed failed"
# the library under test reports itself (run-test looks for its lines)
GNUTLS_AFALG=kernel "$tool" >/dev/null 2>&1
[ "$failed" = 0 ]
