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
# Where AF_ALG is missing (the host) the module registers nothing: the
# checks that need the kernel say so and skip.
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
# no file of its own opened; with one algorithm set, one socket() call.
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
	env -u GNUTLS_DEBUG_LEVEL GNUTLS_AFALG=AES-128-GCM=kernel \
		strace -f -o "$tmp/trace" -e trace=socket "$cli" --version \
		>/dev/null 2>&1
	n=$(grep -c 'socket(AF_ALG' "$tmp/trace")
	if [ "$n" != 1 ]; then
		fail "with AES-128-GCM set to kernel: $n socket(AF_ALG) calls, expected 1"
		return
	fi
	pass "gnutls-cli --version: no AF_ALG socket and no file of the module's without settings; one socket() call with one algorithm set"
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
	"  setting 8192;"*" |   setting kernel;"*" |   setting never/4096;"*" |   setting off;"*" |   setting 16384/60000;"*) ;;
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
	pass "values for all and per algorithm, blanks, sizes per direction; six invalid entries logged and ignored"
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
	"  setting 4096;"*" |   setting kernel;"*" |   setting off;"*" |   setting 100/never;"*) ;;
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
	pass "[afalg] values; GNUTLS_AFALG wins; a malformed file gives nothing"
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
	if [ "$syms" = "_gnutls_afalg_info@@GNUTLS_PRIVATE_3_4 " ]; then
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
		! grep -q "the kernel has no AF_ALG" "$tmp/log" || [ -e "$tmp/written" ]; then
		fail "afalgtool --calibrate without AF_ALG: $(head -c 200 "$tmp/log")"
	else
		pass "afalgtool --calibrate without AF_ALG: '$(head -n 1 "$tmp/log")', nothing written"
	fi
}

# --calibrate measures in processes of its own and writes an [afalg]
# section into a file, keeping the file's other sections and its mode
# (through a symbolic link); the library then reads what was written.
# (--drivers=default: an engine in the VM is engine.sh's, which removes
# it.)
check_calibrate() {
	have_afalg || { skip "no AF_ALG here: nothing to measure"; return; }
	local written=$tmp/etc/config got
	mkdir -p "$tmp/etc"
	printf '# the operator'"'"'s own\n[overrides]\n\n[afalg]\nSHA256 = 7\nmode = off\n\n[priorities]\n' >"$written"
	chmod 0640 "$written"
	ln -s "$written" "$tmp/link"
	: >"$tmp/config"
	if ! env -u GNUTLS_DEBUG_LEVEL GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" \
		GNUTLS_AFALG=HMAC-SHA1=off "$tool" --calibrate --drivers=default \
		--algorithms=AES-128-CBC,SHA256 --output="$tmp/link" \
		>"$tmp/out" 2>"$tmp/log"; then
		fail "afalgtool --calibrate failed: $(tail -c 300 "$tmp/log")"
		return
	fi
	if [ ! -L "$tmp/link" ] || [ "$(stat -c %a "$written")" != 640 ] ||
		! grep -q "^# the operator's own" "$written" || ! grep -q '^\[overrides\]' "$written" ||
		! grep -q '^\[priorities\]' "$written" ||
		[ "$(grep -c '^\[afalg\]' "$written")" != 1 ] ||
		grep -q '^mode = off' "$written" ||
		! grep -q '^HMAC-SHA1 = off$' "$written" ||
		! grep -Eq '^AES-128-CBC = (auto|[0-9]+|[0-9]+/never|never/[0-9]+|[0-9]+/[0-9]+)$' "$written" ||
		! grep -q "^# AES-128-CBC, the kernel's pick" "$written" ||
		! grep -q '^#   encrypt:' "$written" ||
		! grep -q '^#   one-shot:' "$written" ||
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
	pass "measured AES-128-CBC and SHA256 ($got); other sections, mode 0640 and the link kept; HMAC-SHA1 off from the environment; read back by the library"
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
		[ "$(logged 'the kernel has no')" != 0 ]; then
		fail "cbc(aes-generic): $(head -c 300 "$tmp/out") $(grep afalg: "$tmp/log" | head -n 3)"
		return
	fi
	run_case "no-such-driver" "a driver the kernel lacks leaves software"
	if ! grep -q "^PASS" "$tmp/out" ||
		[ "$(logged 'the kernel has no no-such-driver: AES-128-CBC in software')" != 1 ]; then
		fail "no-such-driver: $(head -c 300 "$tmp/out") $(grep afalg: "$tmp/log" | head -n 3)"
		return
	fi
	info env GNUTLS_AFALG="AES-128-CBC=kernel@no-such-driver"
	if ! setting AES-128-CBC | grep -q "the kernel has no no-such-driver"; then
		fail "afalgtool on a missing driver: $(setting AES-128-CBC)"
		return
	fi
	# a driver of another algorithm is refused at start-up
	info env GNUTLS_AFALG="AES-128-CBC=kernel@ctr-aes-aesni,SHA256=kernel@sha512-generic"
	if [ "$(logged 'ctr-aes-aesni implements ctr(aes), not cbc(aes): AES-128-CBC in software')" != 1 ] ||
		[ "$(logged 'sha512-generic implements sha512, not sha256: SHA256 in software')" != 1 ] ||
		[ "$(logged 'registered cipher AES-128-CBC\|registered digest SHA256')" != 0 ]; then
		fail "drivers of other algorithms: $(grep 'afalg:.*\(implements\|registered cipher AES-128-CBC\|registered digest SHA256\)' "$tmp/log" | head -n 3)"
		return
	fi
	pass "VALUE@DRIVER read from both places, 63 characters taken; 64, blanks, unbalanced parentheses, off@ and an empty value ignored; cbc(aes-generic) does the work; a missing driver leaves software with one line; drivers of other algorithms refused"
}

checks=(startup labels variable file driver reinit fips no_files exports
	command_line calibrate_no_afalg calibrate)
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
