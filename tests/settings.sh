#!/bin/bash
# The operator's control: GNUTLS_AFALG, the [afalg] section of the
# system-wide configuration, afalgtool and its --calibrate, and what the
# library does not do (no system call at start-up without settings, no
# file written, no test hook exported).
#
# Usage: settings.sh CHECK...   (see the checks below; "all" runs them all)
# Environment: ACCEL_BIN (afalgtool, gnutls-cli), ACCEL_LIB (its
# libgnutls), CONTRACT (the contract program), CASES (the directory of
# the contract's case files).
#
# Where AF_ALG is missing (the host) the module registers what the
# settings name and finds AF_ALG missing at the first operation they send
# to the kernel: the checks that need the kernel say so and skip.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

tool=${ACCEL_BIN:?}/afalgtool
cli=$ACCEL_BIN/gnutls-cli
tmp=$(mktemp -d "${TMPDIR:-/tmp}/settings.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0
skipped=0

pass() { echo "PASS $check: $*"; }
fail() { echo "FAIL $check: $*"; failed=$((failed + 1)); }
skip() { echo "SKIP $check: $*"; skipped=$((skipped + 1)); }

# afalgtool's description (three lines or more per algorithm), with a
# clean environment but for what the check sets: the configuration file
# is $tmp/config.
info() {
	env -u GNUTLS_AFALG GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
		GNUTLS_DEBUG_LEVEL=2 "$@" "$tool" >"$tmp/out" 2>"$tmp/log"
}
# an algorithm's "setting ..." line
setting() { sed -n "/^$1: /,/^[^ ]/p" "$tmp/out" | grep '^  setting '; }
logged() { grep -c -- "$1" "$tmp/log"; }

have_afalg() {
	info env GNUTLS_AFALG=kernel
	! grep -q "AF_ALG is not available" "$tmp/log"
}

# Without settings the library asks the kernel nothing: no socket(), and
# no file of its own opened; with settings, nothing either: AF_ALG is
# first touched by an operation the settings send to the kernel (see the
# contract's sandbox cases), so that gnutls-cli --version makes no
# socket() call with every algorithm set.
check_startup() {
	local n
	command -v strace >/dev/null || { skip "strace not installed"; return; }
	env -u GNUTLS_AFALG -u GNUTLS_DEBUG_LEVEL HOME="$tmp/home" \
		strace -f -o "$tmp/trace" -e trace=socket,open,openat,mkdir \
		"$cli" --version >/dev/null 2>&1
	n=$(grep -c 'socket(AF_ALG' "$tmp/trace")
	if [ "$n" != 0 ] || grep -q "$tmp/home\|/proc/crypto\|/proc/cpuinfo\|cache/gnutls" "$tmp/trace"; then
		fail "without settings: $n socket(AF_ALG) calls; $(grep -c "$tmp/home\|/proc/crypto\|/proc/cpuinfo" "$tmp/trace") files of the module's opened"
		return
	fi
	env -u GNUTLS_DEBUG_LEVEL GNUTLS_AFALG=kernel \
		strace -f -o "$tmp/trace" -e trace=socket,open,openat "$cli" --version \
		>/dev/null 2>&1
	n=$(grep -c 'socket(AF_ALG\|socket(AF_NETLINK' "$tmp/trace")
	if [ "$n" != 0 ] || grep -q "/proc/crypto\|/proc/sys/crypto/af_alg\|/sys/module" "$tmp/trace"; then
		fail "with every algorithm set to kernel: $n socket(AF_ALG or AF_NETLINK) calls at start-up, expected 0"
		return
	fi
	pass "gnutls-cli --version: no AF_ALG socket and no file of the module's, without settings and with every algorithm set to kernel"
}

# The table's names are GnuTLS's (the module checks them at debug level).
check_labels() {
	info env GNUTLS_AFALG=kernel
	if grep -q "is not GnuTLS's name" "$tmp/log"; then
		fail "$(grep "is not GnuTLS's name" "$tmp/log" | head -n 3)"
	else
		pass "every name in the module's table is GnuTLS's"
	fi
}

# GNUTLS_AFALG: a value for every algorithm, entries for one, which win
# wherever they stand; blanks around names and values; sizes per
# direction; invalid entries logged and ignored.
check_variable() {
	: >"$tmp/config"
	info env GNUTLS_AFALG=" AES-128-GCM = 8192 , kernel,SHA256=never/4096,HMAC-SHA1=off,AES-128-CBC=16384/60000 "
	local got
	got="$(setting AES-128-GCM) | $(setting AES-256-GCM) | $(setting SHA256) | $(setting HMAC-SHA1) | $(setting AES-128-CBC)"
	case $got in
	"  setting 8192;"*" |   setting kernel;"*" |   setting 4096;"*" |   setting off;"*" |   setting 16384/60000;"*) ;;
	*) fail "settings read: $got"; return ;;
	esac
	info env GNUTLS_AFALG="kernel,bogus,AES-128-GCM=fast,NOSUCH=kernel,off SHA1=kernel,SHA256=12x,AES-128-CBC=1/2/3"
	got="$(setting AES-128-GCM) | $(setting SHA1)"
	if [ "$(logged "afalg: ignoring")" != 6 ]; then
		fail "$(logged "afalg: ignoring") invalid entries logged, expected 6: $(grep ignoring "$tmp/log" | head -c 400)"
		return
	fi
	case $got in
	"  setting kernel;"*" |   setting kernel;"*) ;;
	*) fail "invalid entries changed a setting: $got"; return ;;
	esac
	# "kernel @DRIVER" (a blank before @) is "kernel@DRIVER"; an
	# invalid entry's log line shows at most 64 characters of it
	info env GNUTLS_AFALG="AES-128-GCM=kernel @no-such-driver,SHA1=kernel@$(printf 'x%.0s' $(seq 5000))"
	case $(setting AES-128-GCM) in
	"  setting kernel@no-such-driver;"*) ;;
	*) fail "'kernel @DRIVER' read as: $(setting AES-128-GCM)"; return ;;
	esac
	if [ "$(grep 'afalg: ignoring' "$tmp/log" | wc -c)" -gt 250 ]; then
		fail "an invalid entry of 5000 characters logged in $(grep 'afalg: ignoring' "$tmp/log" | wc -c) bytes"
		return
	fi
	pass "values for all and per algorithm, blanks (before @ too), sizes per direction (a MAC's or digest's one-shot size); six invalid entries logged and ignored, a long one cut short in the log"
}

# The [afalg] section: the same values; the variable wins, entry by
# entry, and its value for all wins over the file's entries; a file
# GnuTLS rejects gives the module nothing.
check_file() {
	local got
	printf '[afalg]\nAES-128-GCM = 4096\nmode = kernel\nCHACHA20-POLY1305 = off\nSHA256 = 100/never\nmode =\n' >"$tmp/config"
	info env
	got="$(setting AES-128-GCM) | $(setting AES-128-CBC) | $(setting CHACHA20-POLY1305) | $(setting SHA256)"
	case $got in
	"  setting 4096;"*" |   setting kernel;"*" |   setting off;"*" |   setting auto;"*) ;;
	*) fail "[afalg]: $got"; return ;;
	esac
	if [ "$(logged "ignoring '' in \[afalg\]")" != 1 ]; then
		fail "an empty 'mode =' was not logged once"
		return
	fi
	info env GNUTLS_AFALG=auto,SHA256=kernel
	got="$(setting AES-128-GCM) | $(setting SHA256)"
	case $got in
	"  setting auto;"*" |   setting kernel;"*) ;;
	*) fail "GNUTLS_AFALG over [afalg]: $got"; return ;;
	esac
	printf '[afalg]\nAES-128-GCM = kernel\n[broken\n' >"$tmp/config"
	info env
	case $(setting AES-128-GCM) in
	"  setting auto;"*) ;;
	*) fail "a malformed file applied: $(setting AES-128-GCM)"; return ;;
	esac
	# an invalid entry fails the file where GnuTLS is told to be strict,
	# as for every other section
	printf '[afalg]\nAES-128-GCM = fast\n' >"$tmp/config"
	if env -u GNUTLS_AFALG GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
		GNUTLS_SYSTEM_PRIORITY_FAIL_ON_INVALID=1 "$cli" --version >/dev/null 2>&1; then
		fail "an invalid [afalg] entry passed GNUTLS_SYSTEM_PRIORITY_FAIL_ON_INVALID=1"
		return
	fi
	pass "[afalg] values (SHA256 = 100/never: one-shot calls never, auto); GNUTLS_AFALG wins; a malformed file gives nothing; an invalid entry fails a strict load"
}

# gnutls_global_deinit() and gnutls_global_init() (which the contract
# program does at start): the second initialisation takes the file's
# entries again.
check_reinit() {
	have_afalg || { skip "no AF_ALG here"; return; }
	printf '[afalg]\nAES-128-CBC = kernel\n' >"$tmp/config"
	env -u GNUTLS_AFALG GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
		GNUTLS_DEBUG_LEVEL=2 "$CONTRACT" \
		--case "the [afalg] settings survive a re-initialization" \
		"$CASES/settings.cases" >"$tmp/out" 2>"$tmp/log"
	if grep -q "^PASS" "$tmp/out" &&
		[ "$(logged 'registered cipher AES-128-CBC')" -ge 1 ]; then
		pass "[afalg] settings taken again after gnutls_global_deinit() and gnutls_global_init()"
	else
		fail "[afalg] after a re-initialization: $(cat "$tmp/out" | head -c 300)"
	fi
}

# FIPS mode: nothing registered, whatever the settings.
check_fips() {
	printf '[afalg]\nmode = kernel\n' >"$tmp/config"
	info env GNUTLS_AFALG=kernel GNUTLS_FORCE_FIPS_MODE=1 GNUTLS_SKIP_FIPS_INTEGRITY_CHECKS=1
	if grep -q "afalg: registered" "$tmp/log" ||
		! grep -q "FIPS mode registers nothing" "$tmp/out"; then
		fail "FIPS mode: $(setting AES-128-GCM) / $(grep -c 'afalg: registered' "$tmp/log") registered"
		return
	fi
	pass "FIPS mode: nothing registered, afalgtool says why"
}

# A long run of the library's work creates no file: the process runs
# with a home and cache directory of its own, which stay empty.
check_no_files() {
	mkdir -p "$tmp/home"
	env -u GNUTLS_AFALG HOME="$tmp/home" XDG_CACHE_HOME="$tmp/home/.cache" \
		"$CONTRACT" --case "20 MiB of AES-128-GCM in 16 KiB calls" \
		"$CASES/settings.cases" >"$tmp/out" 2>&1
	if ! grep -q "^PASS" "$tmp/out"; then
		fail "the case failed: $(head -c 300 "$tmp/out")"
	elif [ -n "$(find "$tmp/home" -mindepth 1 | head -n 1)" ]; then
		fail "files made: $(find "$tmp/home" -mindepth 1 | head -n 5 | tr '\n' ' ')"
	else
		pass "20 MiB of AES-128-GCM in 16 KiB calls: no file or directory made"
	fi
}

# The library exports afalgtool's entry point and nothing else of the
# module's (no test hook).
check_exports() {
	local syms
	syms=$(nm -D --defined-only "${ACCEL_LIB:?}/libgnutls.so.30" | awk '{ print $3 }' | grep -i afalg | tr '\n' ' ')
	if [ "$syms" = "_gnutls_afalg_report@@GNUTLS_PRIVATE_3_4 " ]; then
		pass "exported: $syms"
	else
		fail "exported: '$syms'"
	fi
}

check_command_line() {
	local args out run=(env -u GNUTLS_DEBUG_LEVEL)
	out=$("${run[@]}" "$tool" --version=v 2>&1)
	case $out in
	"afalgtool "[0-9]*.[0-9]*) ;;
	*) fail "--version=v printed '$(echo "$out" | head -c 200)'"; return ;;
	esac
	if ! "${run[@]}" "$tool" --help >"$tmp/out" 2>&1 ||
		! grep -q -- "--calibrate" "$tmp/out"; then
		fail "--help: $(head -c 200 "$tmp/out")"
		return
	fi
	for args in "--output=$tmp/o" "report" "--calibrate extra" "--debug=x" "--calibrate --criterion=speed" "--calibrate --criterion=cpu:0.5" "--calibrate --criterion=cpu:x" "--calibrate --drivers=fast" "--algorithms=SHA256"; do
		# shellcheck disable=SC2086 # the words are the arguments
		if "${run[@]}" "$tool" $args >"$tmp/out" 2>"$tmp/log"; then
			fail "afalgtool $args succeeded"
			return
		elif [ -s "$tmp/out" ] || ! grep -q "afalgtool" "$tmp/log" ||
			[ -e "$tmp/o" ]; then
			fail "afalgtool $args: stdout '$(head -c 100 "$tmp/out")', stderr '$(head -c 100 "$tmp/log")'"
			return
		fi
	done
	pass "--version, --help; an option without --calibrate, an argument, a bad number, criterion, bound or driver choice refused with a message, nothing printed or written"
}

# --calibrate without AF_ALG: a message, exit status 1, nothing written.
check_calibrate_no_afalg() {
	if have_afalg; then
		skip "this kernel has AF_ALG"
		return
	fi
	if env -u GNUTLS_DEBUG_LEVEL "$tool" --calibrate --output="$tmp/written" >"$tmp/out" 2>"$tmp/log" ||
		! grep -q "AF_ALG is not available" "$tmp/log" || [ -e "$tmp/written" ]; then
		fail "afalgtool --calibrate without AF_ALG: $(head -c 200 "$tmp/log")"
	else
		pass "afalgtool --calibrate without AF_ALG: '$(head -n 1 "$tmp/log")', nothing written"
	fi
}

# --calibrate measures in processes of its own and writes an [afalg]
# section into a file, keeping the file's other sections and its mode;
# the library then reads what was written.
# (--drivers=default: an engine in the VM is engine.sh's, which removes
# it.)
check_calibrate() {
	have_afalg || { skip "no AF_ALG here: nothing to measure"; return; }
	local written=$tmp/etc/config got
	mkdir -p "$tmp/etc"
	printf '# the operator'"'"'s own\n[overrides]\n\n[afalg]\nSHA256 = 7\nmode = off\n\n[priorities]\n' >"$written"
	chmod 0640 "$written"
	: >"$tmp/config"
	if ! env -u GNUTLS_DEBUG_LEVEL GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
		GNUTLS_AFALG=HMAC-SHA1=off "$tool" --calibrate --drivers=default \
		--algorithms=AES-128-CBC,SHA256 --output="$written" \
		>"$tmp/out" 2>"$tmp/log"; then
		fail "afalgtool --calibrate failed: $(tail -c 300 "$tmp/log")"
		return
	fi
	if [ "$(stat -c %a "$written")" != 640 ] ||
		! grep -q "^# the operator's own" "$written" || ! grep -q '^\[overrides\]' "$written" ||
		! grep -q '^\[priorities\]' "$written" ||
		[ "$(grep -c '^\[afalg\]' "$written")" != 1 ] ||
		grep -q '^mode = off' "$written" ||
		! grep -q '^HMAC-SHA1 = off$' "$written" ||
		! grep -Eq '^AES-128-CBC = (auto|[0-9]+|[0-9]+/never|never/[0-9]+|[0-9]+/[0-9]+)$' "$written" ||
		! grep -q "^# AES-128-CBC, the kernel's pick" "$written" ||
		! grep -q '^#   encrypt:' "$written" ||
		! grep -q '^#   one-shot:' "$written" || grep -q '^#   context:' "$written" ||
		grep -q '^AES-128-GCM' "$written"; then
		fail "the file written: $(tr '\n' '|' <"$written" | head -c 600)"
		return
	fi
	got=$(grep '^AES-128-CBC = \|^SHA256 = ' "$written" | tr '\n' ' ')
	cp "$written" "$tmp/config"
	info env
	case "$(setting AES-128-CBC)" in
	"  setting $(grep '^AES-128-CBC = ' "$written" | sed 's/.* = //');"*) ;;
	*) fail "read back: $(setting AES-128-CBC), written: $got"; return ;;
	esac
	pass "measured AES-128-CBC and SHA256 ($got); other sections and mode 0640 kept; HMAC-SHA1 off from the environment; read back by the library"
}

# VALUE@DRIVER binds an implementation by its driver's name, in the
# variable and in the file; a driver name with a blank or too long is
# invalid.  With AF_ALG: a driver the kernel can make does the work, one
# it lacks leaves GnuTLS's own code, with a line in the log.
check_driver() {
	local got long
	long=$(printf 'd%.0s' $(seq 64))
	printf '[afalg]\nSHA256 = kernel@sha256-generic\n' >"$tmp/config"
	info env GNUTLS_AFALG="AES-128-GCM=kernel@gcm_base(ctr(aes-generic),ghash-generic),AES-128-CBC=4096/never@cbc(aes-generic),SHA1=kernel@two words,SHA384=kernel@$long,SHA512=@x,HMAC-SHA1=off@x,SHA224=kernel@a(b,SHA3-256=4096@${long%d}"
	got="$(setting AES-128-GCM) | $(setting AES-128-CBC) | $(setting SHA256) | $(setting SHA1) | $(setting SHA384) | $(setting SHA512) | $(setting HMAC-SHA1) | $(setting SHA224) | $(setting SHA3-256)"
	case $got in
	"  setting kernel@gcm_base(ctr(aes-generic),ghash-generic);"*" |   setting 4096/never@cbc(aes-generic);"*" |   setting kernel@sha256-generic;"*" |   setting auto;"*" |   setting auto;"*" |   setting auto;"*" |   setting auto;"*" |   setting auto;"*" |   setting 4096@${long%d};"*) ;;
	*) fail "settings read: $got"; return ;;
	esac
	if [ "$(logged "afalg: ignoring")" != 5 ]; then
		fail "$(logged "afalg: ignoring") invalid entries logged, expected 5"
		return
	fi
	have_afalg || { skip "no AF_ALG here to bind a driver (the settings were read right)"; return; }
	run_case() {
		env -u GNUTLS_SYSTEM_PRIORITY_FILE GNUTLS_AFALG="AES-128-CBC=kernel@$1" \
			GNUTLS_DEBUG_LEVEL=2 "$CONTRACT" --case "$2" \
			"$CASES/settings.cases" >"$tmp/out" 2>"$tmp/log"
	}
	run_case "cbc(aes-generic)" "the driver the settings name does the work"
	if ! grep -q "^PASS" "$tmp/out" ||
		[ "$(logged 'registered cipher AES-128-CBC (driver cbc(aes-generic))')" = 0 ] ||
		[ "$(logged 'software for this process')" != 0 ]; then
		fail "cbc(aes-generic): $(head -c 300 "$tmp/out") $(grep afalg: "$tmp/log" | head -n 3)"
		return
	fi
	run_case "no-such-driver" "a driver the kernel lacks leaves software"
	if ! grep -q "^PASS" "$tmp/out" ||
		[ "$(logged 'AES-128-CBC: the kernel has no driver named no-such-driver: software for this process')" != 1 ]; then
		fail "no-such-driver: $(head -c 300 "$tmp/out") $(grep afalg: "$tmp/log" | head -n 3)"
		return
	fi
	info env GNUTLS_AFALG="AES-128-CBC=kernel@no-such-driver"
	if ! setting AES-128-CBC | grep -q "the kernel has no driver named no-such-driver"; then
		fail "afalgtool on a missing driver: $(setting AES-128-CBC)"
		return
	fi
	# a driver of another algorithm, or a name that is not a driver's
	# (an algorithm's, a template's), is refused at the first use
	info env GNUTLS_AFALG="AES-128-CBC=kernel@ctr-aes-aesni,SHA256=kernel@sha512-generic,SHA384=kernel@sha3-256,AES-256-CBC=kernel@cts(cbc(aes)),HMAC-SHA256=kernel@hmac(sha3-256),SHA512=kernel@sha512"
	if [ "$(logged 'AES-128-CBC: ctr-aes-aesni implements ctr(aes), not cbc(aes): software for this process')" != 1 ] ||
		[ "$(logged 'SHA256: sha512-generic implements sha512, not sha256: software for this process')" != 1 ] ||
		[ "$(logged 'SHA384: the kernel has no driver named sha3-256: software')" != 1 ] ||
		[ "$(logged 'AES-256-CBC: the kernel has no driver named cts(cbc(aes)): software')" != 1 ] ||
		[ "$(logged 'HMAC-SHA256: the kernel has no driver named hmac(sha3-256): software')" != 1 ] ||
		[ "$(logged 'SHA512: the kernel has no driver named sha512: software')" != 1 ]; then
		fail "drivers of other algorithms: $(grep 'afalg:.*\(implements\|driver named\)' "$tmp/log" | head -n 6)"
		return
	fi
	# the right answers, the kernel's requests only on the right driver
	run_case "cts(cbc(aes))" "a driver of another algorithm leaves software"
	if ! grep -q "^PASS" "$tmp/out"; then
		fail "cts(cbc(aes)): $(head -c 300 "$tmp/out")"
		return
	fi
	# no crypto netlink interface: even a right driver is refused
	run_case "cbc-aes-aesni" "a driver the kernel cannot confirm is refused"
	if ! grep -q "^PASS" "$tmp/out"; then
		fail "no crypto netlink: $(head -c 300 "$tmp/out")"
		return
	fi
	pass "VALUE@DRIVER read from both places, 63 characters taken; 64, blanks, unbalanced parentheses, off@ and an empty value ignored; cbc(aes-generic) does the work; a missing driver, a driver of another algorithm, an algorithm's name in place of a driver's, or a driver the kernel cannot confirm (no crypto netlink) leaves software with one line"
}

# --output never writes through a link, never replaces a file another
# package owns: Debian's plain /etc/gnutls/config is replaced through a
# new file (its other sections and mode kept); crypto-policies' layout
# (Fedora, RHEL, openSUSE: back-ends/gnutls.config a link into the
# policy package's file) gets a drop-in in local.d, with the advice to
# run update-crypto-policies; any other link, or a file with other hard
# links, is refused with one line and a non-zero exit, the target left
# byte-identical.  Each layout is built in a temporary root.
check_output() {
	have_afalg || { skip "no AF_ALG here: --calibrate measures nothing"; return; }
	local root=$tmp/root policy out
	calibrate_to() {
		env -u GNUTLS_DEBUG_LEVEL GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
			"$tool" --calibrate --drivers=default --algorithms=SHA1 \
			--output="$1" >"$tmp/out" 2>"$tmp/log"
	}
	: >"$tmp/config"
	# crypto-policies
	mkdir -p "$root/usr/share/crypto-policies/DEFAULT" \
		"$root/etc/crypto-policies/back-ends" "$root/etc/crypto-policies/local.d"
	policy=$root/usr/share/crypto-policies/DEFAULT/gnutls.txt
	printf '[global]\noverride-mode = blocklist\n\n[overrides]\ntls-disabled-version = ssl3.0\n' >"$policy"
	chown 65534:65534 "$policy" 2>/dev/null
	cp -p "$policy" "$tmp/policy.orig"
	ln -s ../../../usr/share/crypto-policies/DEFAULT/gnutls.txt \
		"$root/etc/crypto-policies/back-ends/gnutls.config"
	if ! calibrate_to "$root/etc/crypto-policies/back-ends/gnutls.config"; then
		fail "crypto-policies layout: $(tail -n 2 "$tmp/log")"
		return
	fi
	out=$root/etc/crypto-policies/local.d/gnutls-afalg.config
	if ! cmp -s "$policy" "$tmp/policy.orig" ||
		[ ! -L "$root/etc/crypto-policies/back-ends/gnutls.config" ] ||
		[ ! -f "$out" ] || ! grep -q '^\[afalg\]' "$out" ||
		! grep -q "update-crypto-policies" "$tmp/log"; then
		fail "crypto-policies layout: policy $(cmp -s "$policy" "$tmp/policy.orig" && echo kept || echo CHANGED), drop-in: $(tr '\n' '|' <"$out" 2>/dev/null | head -c 200), said: $(tail -n 1 "$tmp/log")"
		return
	fi
	# any other link: refused, its target byte-identical
	ln -s "$policy" "$tmp/other-link"
	if calibrate_to "$tmp/other-link" || [ "$(grep -c . "$tmp/log")" != 1 ] ||
		! grep -q "is a link" "$tmp/log" || ! cmp -s "$policy" "$tmp/policy.orig"; then
		fail "another link: status 0 or a changed target: $(head -c 300 "$tmp/log")"
		return
	fi
	# a file with another hard link: refused
	printf '[overrides]\n' >"$tmp/hard"
	ln "$tmp/hard" "$tmp/hard2"
	if calibrate_to "$tmp/hard" || [ "$(cat "$tmp/hard2")" != "[overrides]" ]; then
		fail "a file with another hard link was replaced"
		return
	fi
	# Debian's plain file: replaced in place, its other sections, owner,
	# mode and SELinux label kept (the label where this file system
	# takes one without SELinux loaded)
	mkdir -p "$root/etc/gnutls"
	printf '[overrides]\ntls-disabled-version = ssl3.0\n' >"$root/etc/gnutls/config"
	chown 65534:65534 "$root/etc/gnutls/config" 2>/dev/null
	# (set-id and group-exec: a change of owner after the mode would
	# clear the set-gid bit)
	chmod 2750 "$root/etc/gnutls/config"
	local label=system_u:object_r:etc_t:s0 labelled= before
	before=$(stat -c %u:%g:%a "$root/etc/gnutls/config")
	/usr/bin/python3 -c 'import os, sys; os.setxattr(sys.argv[1], "security.selinux", sys.argv[2].encode() + b"\0")' \
		"$root/etc/gnutls/config" "$label" 2>/dev/null && labelled=1
	if ! calibrate_to "$root/etc/gnutls/config" ||
		! grep -q '^\[overrides\]' "$root/etc/gnutls/config" ||
		! grep -q '^\[afalg\]' "$root/etc/gnutls/config"; then
		fail "a plain file: $(tr '\n' '|' <"$root/etc/gnutls/config" | head -c 200) $(tail -n 1 "$tmp/log")"
		return
	fi
	if [ "$(stat -c %u:%g:%a "$root/etc/gnutls/config")" != "$before" ]; then
		fail "a plain file: owner and mode $(stat -c %u:%g:%a "$root/etc/gnutls/config"), not $before"
		return
	fi
	if [ -n "$labelled" ] && [ "$(/usr/bin/python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "security.selinux").rstrip(b"\0").decode())' \
		"$root/etc/gnutls/config" 2>&1)" != "$label" ]; then
		fail "a plain file: its SELinux label was not kept"
		return
	fi
	# a file whose owner cannot be kept (root's, in a directory nobody
	# may write, replaced by nobody): refused, unchanged, no new file
	# left beside it
	local shared=$tmp/shared refused=
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		mkdir -p "$shared"
		chmod 0755 "$tmp"
		chown 65534:65534 "$shared"
		printf '[overrides]\n' >"$shared/config"
		if setpriv --reuid=65534 --regid=65534 --clear-groups \
			env -u GNUTLS_DEBUG_LEVEL GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
			"$tool" --calibrate --drivers=default --algorithms=SHA1 \
			--output="$shared/config" >"$tmp/out" 2>"$tmp/log" ||
			[ "$(cat "$shared/config")" != "[overrides]" ] ||
			[ "$(stat -c %u "$shared/config")" != 0 ] ||
			[ "$(find "$shared" -name 'config.*' | wc -l)" != 0 ] ||
			! grep -q "cannot be kept" "$tmp/log"; then
			fail "a file whose owner cannot be kept: $(tail -n 1 "$tmp/log"); left: $(ls "$shared" | tr '\n' ' ')"
			return
		fi
		refused="; a file whose owner cannot be kept refused, unchanged, no file left"
	fi
	pass "crypto-policies: the policy kept byte-identical, the drop-in written to local.d, update-crypto-policies advised; another link and a hard-linked file refused with one line; Debian's plain file replaced, its sections, owner and mode ($before)$([ -n "$labelled" ] && echo " and SELinux label kept" || echo " kept (its SELinux label not checked: this file system takes none without SELinux)")${refused:-; (not root: the refusal not checked)}"
}

checks=(startup labels variable file driver reinit fips no_files exports
	command_line calibrate_no_afalg calibrate output)
[ "${1:-all}" = all ] || checks=("$@")
for check in "${checks[@]}"; do
	if declare -F "check_$check" >/dev/null; then
		"check_$check"
	else
		fail "no such check"
	fi
done
echo "settings: $failed failed, $skipped skipped"
# The library under test reports itself (run-test checks that its log
# has the module's lines).
GNUTLS_AFALG=kernel "$tool" >/dev/null
[ "$failed" = 0 ] || exit 1
exit 0
