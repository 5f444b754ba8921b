#!/bin/bash
# The backend on an asynchronous crypto engine: QEMU's virtio-crypto
# device, whose driver (virtio_crypto_aes_cbc, priority 150) the kernel
# never picks for cbc(aes) where the CPU has AES (cbc-aes-aesni, 400):
# the settings name it (AES-128-CBC=kernel@virtio_crypto_aes_cbc).
#
# Usage: engine.sh [CHECK...]   (the kernel suite; devel/test boots the
# VM with the device: VM_RUN_ENGINE=1, which sets AFALG_ENGINE)
# Environment: ACCEL_BIN, CONTRACT, CASES, DIFFERENTIAL, THREADS,
# WP_CIPHER, VECTORS (tests/meson.build).
#
# The device's work runs on the host; its requests complete by interrupt
# (/proc/interrupts, "virtio*-virtqueues"), which shows that the engine,
# not the CPU's driver, did the work.  The device removal check runs
# last: the engine is gone after it (and no other test of the suite
# binds it).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

if [ -z "${AFALG_ENGINE:-}" ]; then
	echo "SKIP: no crypto engine in this VM (devel/vm-run with VM_RUN_ENGINE=1 adds QEMU's virtio-crypto device)"
	exit 77
fi
engine=$AFALG_ENGINE
tool=${ACCEL_BIN:?}/afalgtool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/engine.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0

pass() { echo "PASS $check: $*"; }
fail() { echo "FAIL $check: $*"; failed=$((failed + 1)); }

# the AES-CBC algorithms on the engine, everything else as the test
# environment has it
on_engine="AES-128-CBC=kernel@$engine,AES-192-CBC=kernel@$engine,AES-256-CBC=kernel@$engine"
export GNUTLS_AFALG="${GNUTLS_AFALG:-kernel},$on_engine"

# the engine's virtio device (virtioN), bound to virtio_crypto
engine_dev() {
	local d
	for d in /sys/bus/virtio/drivers/virtio_crypto/virtio*; do
		[ -e "$d" ] && echo "${d##*/}" && return
	done
}
dev=$(engine_dev)
if [ -z "$dev" ]; then
	echo "FAIL: AFALG_ENGINE is set, but no device is bound to virtio_crypto"
	exit 1
fi

# requests the engine completed: its device's queue interrupts
engine_irqs() {
	awk -v dev="$dev" '$NF ~ "^" dev "-" { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i } END { print n + 0 }' /proc/interrupts
}

# Runs a command; fails unless it succeeded and the engine completed
# requests meanwhile.
on_the_engine() {
	local before after status
	before=$(engine_irqs)
	"$@" >"$tmp/out" 2>"$tmp/log"
	status=$?
	# the library's lines, for run-test's count of the kernel's work
	grep -h 'afalg: ' "$tmp/log" >&2
	if [ "$status" != 0 ]; then
		fail "$(tail -n 5 "$tmp/out" | tr '\n' ' ') $(grep -v '^gnutls\[' "$tmp/log" | tail -n 3)"
		return 1
	fi
	after=$(engine_irqs)
	if [ "$after" = "$before" ]; then
		fail "no request reached the engine ($engine)"
		return 1
	fi
	irqs=$((after - before))
}

# afalgtool lists the engine beside the CPU's driver, and names it as
# the driver in use once the settings do.
check_listed() {
	env GNUTLS_AFALG=auto "$tool" >"$tmp/out" 2>&1
	if ! sed -n '/^AES-128-CBC: /,/^[^ ]/p' "$tmp/out" |
		grep -q "^  also $engine (priority [0-9]*, module virtio_crypto, looks like a device)"; then
		fail "without settings: $(sed -n '/^AES-128-CBC: /,/^[^ ]/p' "$tmp/out" | head -n 4)"
		return
	fi
	"$tool" >"$tmp/out" 2>&1
	if ! grep -q "^AES-128-CBC: kernel cbc(aes), driver $engine (.*looks like a device)" "$tmp/out"; then
		fail "with $engine named: $(grep '^AES-128-CBC: ' "$tmp/out")"
		return
	fi
	pass "afalgtool lists $engine as a device beside the CPU's driver, and as the driver in use when named"
}

# Wycheproof's AES-CBC vectors through the engine.
check_wycheproof() {
	local alg n=0
	for alg in AES-128-CBC AES-192-CBC AES-256-CBC; do
		on_the_engine "${WP_CIPHER:?}" "$alg" "${VECTORS:?}/aes_cbc_pkcs5_test.json" || return
		n=$((n + irqs))
	done
	pass "Wycheproof AES-CBC (128, 192, 256) on the engine: $(grep -h 'passed' "$tmp/out" | tail -n 1), $n engine interrupts"
}

# Random operations against Nettle: sizes to 70000 bytes (requests of
# up to 64 KiB), in place, misaligned, chained across calls.
check_differential() {
	on_the_engine "${DIFFERENTIAL:?}" --ops 300 --max-size 70000 \
		AES-128-CBC AES-192-CBC AES-256-CBC || return
	pass "$(tail -n 1 "$tmp/out"), $irqs engine interrupts"
}

# Threads at once on the engine's contexts (its requests complete out of
# the callers' order).
check_threads() {
	on_the_engine "${THREADS:?}" --threads 8 --ops 200 --max-size 20000 || return
	pass "$(tail -n 1 "$tmp/out"), $irqs engine interrupts"
}

# The contract's engine cases: chaining, and more keyed contexts than
# the device has sessions (setkey fails from the 129th: software, the
# same answer).
check_contract() {
	local c n=0
	for c in "the engine does the work, and chains across calls" \
		"more keyed contexts than the engine has sessions"; do
		GNUTLS_DEBUG_LEVEL=2 on_the_engine "${CONTRACT:?}" --case "$c" "$CASES/engine.cases" || return
		if ! grep -q "^PASS" "$tmp/out" || grep -q "^SKIP\|^FAIL" "$tmp/out"; then
			fail "$c: $(grep -E '^(FAIL|SKIP)' "$tmp/out" | head -n 3)"
			return
		fi
		n=$((n + irqs))
	done
	# the contexts beyond the device's sessions were refused by it (a
	# failure of a call is logged once per algorithm)
	if ! grep -q "afalg: AES-128-CBC: setkey failed" "$tmp/log"; then
		fail "300 keyed contexts: no setkey failed (the device held them all?)"
		return
	fi
	pass "chaining across calls and requests; 300 keyed contexts at once, those beyond the device's sessions refused by it (setkey: $(grep -o 'setkey failed: [A-Z]*' "$tmp/log" | head -n 1)) and run in software: $n engine interrupts"
}

# afalgtool --calibrate measures the engine as well as the kernel's pick,
# by CPU time within a wall-clock bound.
check_calibrate() {
	if ! env GNUTLS_AFALG=auto "$tool" --calibrate --algorithms=AES-128-CBC \
		--criterion=cpu:1.5 >"$tmp/out" 2>"$tmp/log"; then
		fail "afalgtool --calibrate: $(tail -c 300 "$tmp/log")"
		return
	fi
	# the engine measured: its line, then its ratios (not a failure)
	if ! grep -A1 "^# AES-128-CBC, driver $engine\( (chosen)\)\?\$" "$tmp/out" | grep -q '^#   encrypt:' ||
		! grep -q "^# AES-128-CBC, the kernel's pick" "$tmp/out" ||
		! grep -Eq "^AES-128-CBC = [^@]+(@$engine)?$" "$tmp/out"; then
		fail "the section: $(tr '\n' '|' <"$tmp/out" | head -c 600)"
		return
	fi
	pass "both drivers measured: $(grep '^AES-128-CBC = ' "$tmp/out") ($(grep -A2 "^# AES-128-CBC, driver $engine" "$tmp/out" | tr '\n' ' '))"
}

# The device removed (its driver unbound) while no process has a socket
# on it: a driver named in the settings that the kernel no longer has
# leaves software, with one debug line.  Removal while a socket is open
# on it is not run: Debian's 6.1 kernel then faults (a general
# protection fault in crypto_transfer_request at the socket's next
# request; with a request in flight the caller blocks in the kernel for
# good and the kernel reports "Bad page map"): doc/engine.md.
check_removal() {
	if ! echo "$dev" >/sys/bus/virtio/drivers/virtio_crypto/unbind ||
		grep -q "^driver *: $engine\$" /proc/crypto; then
		fail "could not unbind the device '$dev' of $engine"
		return
	fi
	GNUTLS_DEBUG_LEVEL=2 timeout 300 "$CONTRACT" \
		--case "a named engine the kernel does not have leaves software" \
		"$CASES/engine.cases" >"$tmp/out" 2>"$tmp/log"
	grep -h 'afalg: ' "$tmp/log" >&2
	if ! grep -q "^PASS" "$tmp/out" || grep -q "^FAIL" "$tmp/out" ||
		[ "$(grep -c "AES-128-CBC: the kernel has no driver named $engine: software for this process" "$tmp/log")" != 1 ]; then
		fail "with the engine gone: $(grep -E '^(FAIL|PASS)' "$tmp/out" | head -n 2) $(grep 'afalg:' "$tmp/log" | head -n 3)"
		return
	fi
	pass "$dev unbound: the named driver gone is one debug line, and the same answers in software"
}

checks=(listed wycheproof differential threads contract calibrate removal)
[ $# -gt 0 ] && checks=("$@")
for check in "${checks[@]}"; do
	if declare -F "check_$check" >/dev/null; then
		"check_$check"
	else
		fail "no such check"
	fi
done
echo "engine: $failed failed"
[ "$failed" = 0 ]
