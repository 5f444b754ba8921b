#!/bin/bash
# The operator's control and the per-operation choice (GNUTLS_AFALG, the
# [afalg] section of the system-wide configuration, the threshold cache,
# start-up), checked through afalgtool, gnutls-cli and the contract test.
#
# Usage: policy.sh CHECK...   (see the checks below; "all" runs them all)
# Environment: ACCEL_BIN (afalgtool, gnutls-cli), CONTRACT (the contract
# program), CASES (tests/contract/policy.cases), DIFFERENTIAL (the
# differential test).
#
# Where AF_ALG is missing the module registers nothing but what a cache
# keeps in software: every check but start-up, labels, config_once, parse,
# cache_write and lost_afalg (which needs a kernel without AF_ALG) then
# skips.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u

tool=${ACCEL_BIN:?}/afalgtool
cli=$ACCEL_BIN/gnutls-cli
tmp=$(mktemp -d "${TMPDIR:-/tmp}/policy.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0
skipped=0

pass() { echo "PASS $check: $*"; }
fail() { echo "FAIL $check: $*"; failed=$((failed + 1)); }
skip() { echo "SKIP $check: $*"; skipped=$((skipped + 1)); }

# afalgtool's description of one algorithm (two lines), with a clean
# environment but for what the check sets.
info() {
	env -u GNUTLS_AFALG XDG_CACHE_HOME="$tmp/cache" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/system" \
		GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" GNUTLS_DEBUG_LEVEL=2 \
		"$@" "$tool" >"$tmp/out" 2>"$tmp/log"
}
about() { grep -A1 "^$1:" "$tmp/out" | tr '\n' ' '; }
logged() { grep -c -- "$1" "$tmp/log"; }

# Whether /proc/crypto can be replaced (root, mount namespaces); the
# command that runs CMD... in a mount namespace of its own with FILE
# over /proc/crypto: "${with_proc_crypto[@]}" FILE CMD...
can_fake_proc_crypto() { [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; }
with_proc_crypto=(unshare -m sh -c 'mount --bind "$0" /proc/crypto && exec "$@"')

have_afalg() {
	info env
	! grep -q "no algorithm registered" "$tmp/out"
}

check_startup() {
	local sockets
	command -v strace >/dev/null || { skip "strace not installed"; return; }
	env -u GNUTLS_DEBUG_LEVEL strace -f -o "$tmp/trace" \
		-e trace=socket,getrlimit,prlimit64 \
		"$cli" --version >/dev/null 2>"$tmp/err"
	sockets=$(grep -c 'socket(AF_ALG' "$tmp/trace")
	if [ "$sockets" -gt 1 ]; then
		fail "gnutls-cli --version made $sockets AF_ALG socket calls"
	elif grep -q 'RLIMIT_NOFILE' "$tmp/trace"; then
		# the descriptor limit is read when the first one is opened
		fail "start-up read the descriptor limit: $(grep RLIMIT_NOFILE "$tmp/trace" | head -1)"
	elif [ -s "$tmp/err" ]; then
		fail "gnutls-cli --version printed to stderr: $(head -c 200 "$tmp/err")"
	else
		pass "gnutls-cli --version: $sockets AF_ALG socket call, nothing printed"
	fi
}

# The table's labels, matched by the settings and the cache, are
# GnuTLS's names (checked by the module when debugging).
check_labels() {
	info env
	if [ "$(logged "afalg:")" = 0 ]; then
		fail "no debug log from the module"
	elif [ "$(logged "is not GnuTLS's name")" != 0 ]; then
		fail "$(grep "is not GnuTLS's name" "$tmp/log" | head -n 3 | tr '\n' ' ')"
	else
		pass "every label in the table is GnuTLS's name"
	fi
}

check_off() {
	info env GNUTLS_AFALG=off
	if grep -q "no algorithm registered" "$tmp/out" &&
		[ "$(logged 'afalg: registered')" = 0 ]; then
		pass "GNUTLS_AFALG=off registers nothing"
	else
		fail "GNUTLS_AFALG=off: $(head -n 2 "$tmp/out")"
	fi
}

check_default() {
	info env
	case $(about AES-128-GCM) in
	*"mode auto; thresholds encrypt never, decrypt never (from default)"*)
		pass "auto by default, software until measured" ;;
	*) fail "default: $(about AES-128-GCM)" ;;
	esac
}

check_overrides() {
	info env GNUTLS_AFALG=auto,AES-128-CBC=kernel,HMAC-SHA256=off,SHA256=4096
	if about AES-128-CBC | grep -q "mode kernel; thresholds encrypt 0, decrypt 0 (from override)" &&
		about HMAC-SHA256 | grep -q "mode off; off: set by the operator" &&
		about SHA256 | grep -q "message 4096, one-shot 4096 (from override)" &&
		about AES-128-GCM | grep -q "mode auto"; then
		pass "per-algorithm modes and sizes"
	else
		fail "overrides: $(about AES-128-CBC) / $(about SHA256)"
	fi
	# blanks around a name or a value are the entry's own; an entry for
	# one algorithm wins over a mode for every algorithm, whichever
	# comes first; a size the operator set is said to be the operator's
	# (18446744073709551615: SIZE_MAX, "never", where size_t has 64 bits)
	info env "GNUTLS_AFALG=SHA256 = off , kernel,HMAC-SHA1=18446744073709551615"
	if about SHA256 | grep -q "mode off" &&
		about AES-128-GCM | grep -q "mode kernel" &&
		about HMAC-SHA1 | grep -q "(from override); software: set by the operator"; then
		pass "blanks in an entry, an entry for one algorithm before a mode for all, a size of never"
	else
		fail "'SHA256 = off , kernel': $(about SHA256) / $(about AES-128-GCM) / $(about HMAC-SHA1)"
	fi
}

check_invalid() {
	info env GNUTLS_AFALG=bogus,AES-128-GCM=fast,NOSUCH=kernel,=off
	if [ "$(logged "ignoring 'bogus'")" = 1 ] &&
		[ "$(logged "ignoring 'AES-128-GCM=fast'")" = 1 ] &&
		[ "$(logged "ignoring 'NOSUCH=kernel'")" = 1 ] &&
		[ "$(logged "ignoring '=off'")" = 1 ] &&
		about AES-128-GCM | grep -q "mode auto"; then
		pass "invalid entries: one log line each, the default kept"
	else
		fail "invalid entries: $(grep ignoring "$tmp/log" | head -n 3)"
	fi
	# entries are separated by commas only: a space does not end one
	info env "GNUTLS_AFALG=off SHA256=kernel"
	if [ "$(logged "ignoring 'off SHA256=kernel'")" = 1 ] &&
		about AES-128-GCM | grep -q "mode auto" &&
		about SHA256 | grep -q "mode auto"; then
		pass "two entries without a comma: one invalid entry, ignored"
	else
		fail "'off SHA256=kernel': $(grep ignoring "$tmp/log" | head -n 3) $(about SHA256)"
	fi
}

check_config() {
	printf '[afalg]\nmode = kernel\nAES-128-GCM = 8192\nCHACHA20-POLY1305 = off\n' >"$tmp/config"
	info env
	if about AES-128-CBC | grep -q "mode kernel" &&
		about AES-128-GCM | grep -q "encrypt 8192, decrypt 8192 (from override)" &&
		about CHACHA20-POLY1305 | grep -q "mode off"; then
		info env GNUTLS_AFALG=auto,AES-128-GCM=kernel
		if about AES-128-CBC | grep -q "mode auto" &&
			about AES-128-GCM | grep -q "mode kernel"; then
			pass "[afalg] in the system configuration; GNUTLS_AFALG wins"
		else
			fail "GNUTLS_AFALG over [afalg]: $(about AES-128-GCM)"
		fi
	else
		fail "[afalg]: $(about AES-128-GCM)"
	fi
	# "mode" is the default of the section wherever it stands; an empty
	# one is an invalid entry
	printf '[afalg]\nHMAC-SHA256 = off\nmode = kernel\nmode =\n' >"$tmp/config"
	info env
	if about HMAC-SHA256 | grep -q "mode off" &&
		about AES-128-CBC | grep -q "mode kernel" &&
		[ "$(logged "ignoring '' in \[afalg\]")" = 1 ]; then
		pass "[afalg]: an entry for one algorithm before 'mode' stands; an empty mode is logged"
	else
		fail "[afalg] entry before 'mode': $(about HMAC-SHA256)"
	fi
	config_fips
	config_reinit
	rm -f "$tmp/config"
}

# In FIPS mode the module reads the file itself, before the self-tests,
# which then run over what it registers.
config_fips() {
	local seen
	printf '[afalg]\nAES-128-GCM = kernel\n' >"$tmp/config"
	info env GNUTLS_FORCE_FIPS_MODE=1 GNUTLS_SKIP_FIPS_INTEGRITY_CHECKS=1
	# afalgtool leaves out what is off and not named
	seen="$(about AES-128-GCM) / $(about AES-128-CBC)"
	case $seen in
	*"mode kernel"*" / ")
		pass "[afalg] in FIPS mode: only what it sets to kernel" ;;
	*) fail "[afalg] in FIPS mode: $seen" ;;
	esac
	# a file GnuTLS rejects gives the module nothing either, not even
	# the entries before the fault
	printf '[afalg]\nAES-128-GCM = kernel\n[broken\n' >"$tmp/config"
	info env
	seen=$(about AES-128-GCM)
	info env GNUTLS_FORCE_FIPS_MODE=1 GNUTLS_SKIP_FIPS_INTEGRITY_CHECKS=1
	seen="$seen / $(about AES-128-GCM)"
	case $seen in
	*"mode auto"*" / ")
		pass "a malformed configuration file is not applied, in FIPS mode either" ;;
	*) fail "a malformed configuration file, without and in FIPS mode: $seen" ;;
	esac
}

# GnuTLS reads the file (stat(), then fopen() if it is there) and hands
# the module its [afalg] entries: the module opens it only in FIPS mode.
check_config_once() {
	local opens f
	command -v strace >/dev/null || { skip "strace not installed"; return; }
	printf '[afalg]\nAES-128-CBC = kernel\n' >"$tmp/config"
	for f in "$tmp/config" "$tmp/noconfig"; do
		env GNUTLS_SYSTEM_PRIORITY_FILE="$f" strace -f -o "$tmp/trace" \
			-e trace=open,openat "$cli" --version >/dev/null 2>&1
		opens=$(grep -c -- "$f\"" "$tmp/trace")
		if [ "$f" = "$tmp/config" ] && [ "$opens" != 1 ]; then
			fail "an existing configuration file was opened $opens times"
			return
		elif [ "$f" != "$tmp/config" ] && [ "$opens" != 0 ]; then
			fail "a missing configuration file was opened $opens times"
			return
		fi
	done
	pass "the configuration file is opened once (by GnuTLS), not by the module"
}

# gnutls_global_deinit() and gnutls_global_init() again (which the
# contract program does at start): the second initialisation takes the
# file's entries again.
config_reinit() {
	printf '[afalg]\nAES-128-CBC = kernel\n' >"$tmp/config"
	GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/config" policy_case cache10 "" \
		"the [afalg] settings survive a re-initialization"
	if grep -q "^PASS" "$tmp/out" &&
		[ "$(logged 'registered cipher AES-128-CBC (cbc(aes)), mode kernel')" = 2 ] &&
		grep -q 'stats cipher AES-128-CBC: [1-9][0-9]* kernel' "$tmp/log"; then
		pass "[afalg] settings taken again after gnutls_global_deinit() and gnutls_global_init()"
	else
		fail "[afalg] after a re-initialization: $(grep -E 'registered cipher AES-128-CBC|stats cipher AES-128-CBC' "$tmp/log" | sed 's/.*afalg: //' | tr '\n' ' ')"
	fi
}

# Calibration of two algorithms; the thresholds land in the user's cache
# and a second process takes them from there.
check_cache() {
	local only=off,AES-128-GCM=auto,SHA256=auto
	env XDG_CACHE_HOME="$tmp/cache" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/system" \
		GNUTLS_AFALG=$only "$tool" --calibrate >"$tmp/out" 2>&1
	if [ ! -s "$tmp/cache/gnutls/afalg" ]; then
		fail "no cache written: $(head -n 3 "$tmp/out")"
		return
	fi
	if [ "$(stat -c %a "$tmp/cache/gnutls/afalg")" != 600 ]; then
		fail "the cache is not private: $(stat -c %a "$tmp/cache/gnutls/afalg")"
		return
	fi
	info env GNUTLS_AFALG=$only
	if about AES-128-GCM | grep -q "(from cache)" &&
		about SHA256 | grep -q "(from cache)" &&
		[ "$(logged 'thresholds from the user cache')" = 2 ]; then
		pass "a second process takes the thresholds from the cache: $(about AES-128-GCM | sed 's/.*thresholds/thresholds/')"
	else
		fail "second process: $(about AES-128-GCM)"
		return
	fi
	# the user's cache has every algorithm in auto mode: the system-wide
	# one could add nothing and is not opened
	command -v strace >/dev/null || { skip "strace not installed"; return; }
	: >"$tmp/system"
	info env GNUTLS_AFALG=$only strace -f -o "$tmp/trace" -e trace=open,openat
	if grep -q "$tmp/system" "$tmp/trace"; then
		fail "the system cache was opened though the user's has every algorithm: $(grep "$tmp/system" "$tmp/trace" | head -n 1)"
	else
		pass "with every algorithm in the user's cache, the system cache is not opened"
	fi
	# a cache was made under this kernel, with AF_ALG: start-up does not
	# ask the kernel again
	env XDG_CACHE_HOME="$tmp/cache" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/system" \
		GNUTLS_AFALG=$only strace -f -o "$tmp/trace" \
		-e trace=socket,getrlimit,prlimit64 \
		"$cli" --version >/dev/null 2>&1
	if grep -q 'socket(AF_ALG' "$tmp/trace"; then
		fail "start-up with a cache asked the kernel: $(grep 'socket(AF_ALG' "$tmp/trace" | head -n 1)"
	elif grep -q 'RLIMIT_NOFILE' "$tmp/trace"; then
		fail "start-up with a cache read the descriptor limit: $(grep RLIMIT_NOFILE "$tmp/trace" | head -n 1)"
	else
		pass "start-up with a cache makes no AF_ALG socket call and reads no descriptor limit"
	fi
}

# A cache that is corrupt, foreign, or writable by others is not read.
check_bad_cache() {
	local only=off,AES-128-GCM=auto f=$tmp/cache/gnutls/afalg
	mkdir -p "$tmp/cache/gnutls"
	env XDG_CACHE_HOME="$tmp/cache" GNUTLS_AFALG=$only "$tool" --calibrate >/dev/null 2>&1
	cp "$f" "$tmp/good"
	printf 'garbage\n' >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a corrupt cache was read"
	sed '2s/kernel [^|]*/kernel 0.0.0-other/' "$tmp/good" >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a foreign cache was read"
	sed 's/^\(AES-128-GCM [^ ]*\) .*/\1 12x never/' "$tmp/good" >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a malformed line was read"
	sed 's/^\(AES-128-GCM .*\)/\1 4096/' "$tmp/good" >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a line with five fields was read"
	sed 's/^\(AES-128-GCM\) [^ ]*/\1 '"$(printf 'd%.0s' $(seq 200))"'/' "$tmp/good" >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a line with an overlong driver was read"
	{ cat "$tmp/good"; head -c 70000 /dev/zero | tr '\0' '#'; } >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "an oversized cache was read"
	head -c -1 "$tmp/good" >"$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a cache without its last newline (cut short) was read"
	cp "$tmp/good" "$f"
	chmod 666 "$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from default)" || fail "a world-writable cache was read"
	chmod 600 "$f"
	info env GNUTLS_AFALG=$only
	about AES-128-GCM | grep -q "(from cache)" || fail "the good cache was not read"
	[ "$failed" = 0 ] && pass "corrupt, foreign, malformed and world-writable caches are ignored"
}

# The cache's parser, where AF_ALG is missing too (start-up reads the
# caches before it asks the kernel): a row that keeps AES-128-GCM in
# software at every size is taken from a well-formed file, and nothing of
# a corrupt, foreign, malformed, oversized or world-writable one.  The
# key is the one the module logs when it ignores a foreign cache.
# The cache key this machine's processes want: a foreign cache written
# at FILE, then the line afalgtool (run by INFO...) logs about it.
wanted_key() { # wanted_key FILE INFO...
	local f=$1
	shift
	mkdir -p "$(dirname "$f")"
	printf 'gnutls-afalg-cache 1\nkernel x\n' >"$f"
	chmod 600 "$f"
	"$@"
	sed -n "s|.*afalg: ignoring $f: another format, kernel, CPU or library than ||p" "$tmp/log"
}

check_parse() {
	local f=$tmp/parse/gnutls/afalg key long before=$failed
	key=$(wanted_key "$f" parse_info)
	if [ -z "$key" ]; then
		fail "no key logged for a foreign cache: $(grep -m 3 'afalg: ' "$tmp/log" | tr '\n' ' ')"
		return
	fi
	long=$(printf 'd%.0s' $(seq 127))
	rows() { printf 'gnutls-afalg-cache 1\n%s\n' "$key"; printf '%s\n' "$@"; }
	gcm="AES-128-GCM gcm-generic never never"
	parsed taken "well formed" < <(rows "SHA256 sha256-generic 0 4096" "$gcm")
	parsed taken "with tabs and runs of spaces" < <(rows "AES-128-GCM	  gcm-generic  never	never  ")
	parsed taken "with a row for an algorithm it does not know" < <(rows "NEWER-ALG x 1 2" "$gcm")
	[ "$(logged 'ignoring the row of NEWER-ALG: no such algorithm')" = 1 ] ||
		fail "a row of an unknown algorithm was passed over without a word"
	parsed taken "with a second row for an algorithm" < <(rows "$gcm" "AES-128-GCM gcm-generic 0 0")
	if [ "$(logged 'ignoring a second row of AES-128-GCM')" != 1 ] ||
		! about AES-128-GCM | grep -q "encrypt never, decrypt never"; then
		fail "a second row: $(about AES-128-GCM) $(grep -m 1 'second row' "$tmp/log")"
	fi
	parsed taken "with a driver of 127 bytes" < <(rows "AES-128-GCM $long never never")
	parsed ignored "garbage" < <(printf 'garbage\n')
	parsed ignored "cut short in its last row" < <(rows "$gcm" "SHA256 x 16384 60000" | head -c -3)
	parsed ignored "without its last newline" < <(rows "$gcm" | head -c -1)
	parsed ignored "of another format" < <(rows "$gcm" | sed '1s/1$/2/')
	parsed ignored "of another kernel" < <(rows "$gcm" | sed '2s/^kernel [^|]*/kernel 0.0.0-other/')
	parsed ignored "with a longer key" < <(rows "$gcm" | sed '2s/$/x/')
	parsed ignored "with a threshold that is not a size" < <(rows "$gcm" "SHA256 x 12x never")
	parsed ignored "with a threshold past SIZE_MAX" < <(rows "$gcm" "SHA256 x 99999999999999999999999 0")
	parsed ignored "with five fields" < <(rows "$gcm 4096")
	parsed ignored "with three fields" < <(rows "AES-128-GCM gcm-generic never")
	parsed ignored "with a driver of 128 bytes" < <(rows "AES-128-GCM ${long}d never never")
	parsed ignored "with an empty line" < <(rows "$gcm" "" "SHA256 x 0 0")
	parsed ignored "with a NUL" < <(rows "$gcm"; printf 'SHA256 x 0\0000\n')
	parsed ignored "over 8192 bytes" < <(rows "$gcm"; head -c 9000 /dev/zero | tr '\0' '#')
	parsed ignored "writable by others" 666 < <(rows "$gcm")
	[ "$failed" = "$before" ] &&
		pass "the cache parser takes well-formed files and nothing of bad ones"
}

# afalgtool with GNUTLS_AFALG=off,AES-128-GCM=auto and the cache of
# check_parse alone.
parse_info() {
	info env XDG_CACHE_HOME="$tmp/parse" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" \
		GNUTLS_AFALG=off,AES-128-GCM=auto
}

# The cache on stdin, with mode MODE (600): is its AES-128-GCM row taken
# or is the file ignored (with a line in the debug log saying so)?  (Fed
# by a process substitution, not a pipe: fail() must count here.)
parsed() { # parsed taken|ignored WHAT [MODE]
	local f=$tmp/parse/gnutls/afalg
	cat >"$f"
	chmod "${3:-600}" "$f"
	parse_info
	if [ "$1" = taken ]; then
		about AES-128-GCM | grep -q "(from cache)" ||
			fail "a cache $2 was not read: $(about AES-128-GCM) $(grep -m 1 "ignoring $f" "$tmp/log")"
	elif about AES-128-GCM | grep -q "(from cache)" || ! grep -q "afalg: ignoring $f" "$tmp/log"; then
		fail "a cache $2 was read: $(about AES-128-GCM)"
	fi
}

check_system_cache() {
	local only=off,SHA256=auto long rc key
	env XDG_CACHE_HOME="$tmp/none" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/system" \
		GNUTLS_AFALG=$only "$tool" --calibrate --system >/dev/null 2>&1
	rm -rf "$tmp/cache"
	info env GNUTLS_AFALG=$only
	if [ "$(stat -c %a "$tmp/system" 2>/dev/null)" = 644 ] &&
		about SHA256 | grep -q "(from cache)"; then
		pass "afalgtool --calibrate --system precomputes the system-wide cache"
	else
		fail "system cache: $(about SHA256)"
		return
	fi
	# a user's cache without SHA256: the system-wide one gives it
	env XDG_CACHE_HOME="$tmp/cache6" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" \
		GNUTLS_AFALG=off,AES-128-GCM=auto "$tool" --calibrate >/dev/null 2>&1
	info env XDG_CACHE_HOME="$tmp/cache6" GNUTLS_AFALG=off,AES-128-GCM=auto,SHA256=auto
	if [ "$(logged 'AES-128-GCM: thresholds from the user cache')" = 1 ] &&
		[ "$(logged 'SHA256: thresholds from the system cache')" = 1 ]; then
		pass "the system-wide cache gives what the user's lacks"
	else
		fail "user and system caches: $(grep 'thresholds from' "$tmp/log" | tr '\n' ' ')"
	fi
	# a user's cache with AES-128-GCM and a malformed line after it
	# counts for nothing, though the system-wide cache is read after it
	mkdir -p "$tmp/cache7/gnutls"
	{ cat "$tmp/cache6/gnutls/afalg"; echo "SHA256 x 12x never"; } >"$tmp/cache7/gnutls/afalg"
	chmod 600 "$tmp/cache7/gnutls/afalg"
	info env XDG_CACHE_HOME="$tmp/cache7" GNUTLS_AFALG=off,AES-128-GCM=auto,SHA256=auto
	if [ "$(logged 'SHA256: thresholds from the system cache')" = 1 ] &&
		[ "$(logged 'thresholds from the user cache')" = 0 ] &&
		about AES-128-GCM | grep -q "(from default)"; then
		pass "a malformed user's cache gives nothing, not even its lines before the fault"
	else
		fail "malformed user's cache: $(grep 'thresholds from' "$tmp/log" | tr '\n' ' ')"
	fi
	# a process that measures one algorithm and takes another from the
	# system-wide cache saves only its own in the user's, which would
	# hide the system-wide cache's next measurement of the other
	key=$(wanted_key "$tmp/cache14/gnutls/afalg" info env \
		XDG_CACHE_HOME="$tmp/cache14" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none")
	rm -f "$tmp/cache14/gnutls/afalg"
	printf 'gnutls-afalg-cache 1\n%s\nSHA256 sha256-x never never\n' "$key" >"$tmp/system8"
	chmod 644 "$tmp/system8"
	system_cache=$tmp/system8 policy_case cache14 off,AES-128-GCM=auto,SHA256=auto \
		"auto calibrates after 16 MiB"
	if ! grep -q "^PASS" "$tmp/out" ||
		[ "$(logged 'SHA256: thresholds from the system cache')" = 0 ] ||
		! grep -q '^AES-128-GCM ' "$tmp/cache14/gnutls/afalg"; then
		fail "calibration beside the system-wide cache: $(grep -E 'thresholds (from|saved)' "$tmp/log" | tr '\n' ' ')"
	elif grep -q '^SHA256 ' "$tmp/cache14/gnutls/afalg"; then
		fail "the system-wide cache's row was copied into the user's: $(tail -n +3 "$tmp/cache14/gnutls/afalg" | tr '\n' ' ')"
	else
		pass "a save writes the measurements of its own process, not the system-wide cache's"
	fi
	# a name longer than the save takes (over 511 bytes): an error, and
	# no file of part of the name
	long=$tmp/long/$(printf 'a%.0s' $(seq 200))/$(printf 'b%.0s' $(seq 200))
	mkdir -p "$long"
	env XDG_CACHE_HOME="$tmp/none" GNUTLS_AFALG=$only GNUTLS_DEBUG_LEVEL=2 \
		GNUTLS_AFALG_SYSTEM_CACHE="$long/$(printf 'c%.0s' $(seq 200))" \
		"$tool" --calibrate --system >/dev/null 2>"$tmp/log"
	rc=$?
	if [ "$rc" = 0 ] || [ -n "$(find "$tmp/long" -type f)" ]; then
		fail "a system-wide cache of a long name: rc $rc, $(find "$tmp/long" -type f | head -c 100)"
	else
		pass "a system-wide cache of a name too long is refused: $(grep -o 'no cache saved in .\{16\}' "$tmp/log")...: $(grep -o 'its name: .*' "$tmp/log")"
	fi
}

# Where the caches are, and what afalgtool says when it cannot save:
# - the system-wide cache's directory is made if missing (a fresh
#   installation has no /var/cache/gnutls), readable by everyone;
# - a save that fails still prints what was measured, and exits with 1;
# - without HOME (and XDG_CACHE_HOME) the log says why nothing is saved;
# - a GNUTLS_AFALG_SYSTEM_CACHE that is not the absolute path of a
#   file is no cache: neither read nor written, and the log says so;
# - a user's cache that is a symbolic link is ignored with a line.
check_cache_places() {
	local only=off,SHA256=auto rc d=$tmp/places
	local run=(env XDG_CACHE_HOME="$tmp/none" GNUTLS_AFALG=$only
		GNUTLS_DEBUG_LEVEL=2 GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/none")
	mkdir -p "$d/var"
	"${run[@]}" GNUTLS_AFALG_SYSTEM_CACHE="$d/var/gnutls/afalg" \
		sh -c 'umask 077 && exec "$0" --calibrate --system' "$tool" \
		>"$tmp/out" 2>"$tmp/log"
	rc=$?
	if [ "$rc" != 0 ] || [ "$(stat -c %a "$d/var/gnutls" 2>&1)" != 755 ] ||
		[ "$(stat -c %a "$d/var/gnutls/afalg" 2>&1)" != 644 ]; then
		fail "--system without its directory: rc $rc, $(stat -c %a "$d/var/gnutls" 2>&1), $(grep -m 1 'no cache saved' "$tmp/log")"
		return
	fi
	pass "--calibrate --system makes the cache's directory, 0755 under umask 077"
	"${run[@]}" GNUTLS_AFALG_SYSTEM_CACHE="$d/missing/gnutls/afalg" \
		"$tool" --calibrate --system >"$tmp/out" 2>"$tmp/log"
	rc=$?
	if [ "$rc" != 1 ] || ! about SHA256 | grep -q "(from calibration)" ||
		! grep -q "^afalgtool: the cache could not be written" "$tmp/log" ||
		[ "$(logged "no cache saved in $d/missing/gnutls: mkdir")" != 1 ]; then
		fail "a save that fails: rc $rc, stdout '$(head -c 100 "$tmp/out")', $(grep -v '^|' "$tmp/log" | head -c 200)"
		return
	fi
	pass "a save that fails prints what was measured and exits with 1"
	env -u HOME -u XDG_CACHE_HOME GNUTLS_AFALG=$only GNUTLS_DEBUG_LEVEL=2 \
		GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/none" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" "$tool" --calibrate \
		>"$tmp/out" 2>"$tmp/log"
	rc=$?
	if [ "$rc" != 1 ] || [ "$(logged 'no cache saved: neither XDG_CACHE_HOME nor HOME')" != 1 ]; then
		fail "no HOME: rc $rc, $(grep -m 1 'cache' "$tmp/log")"
		return
	fi
	pass "without HOME the log says why nothing is saved"
	cp "$d/var/gnutls/afalg" "$d/relative"
	(cd "$d" && info env GNUTLS_AFALG=$only XDG_CACHE_HOME="$tmp/none" \
		GNUTLS_AFALG_SYSTEM_CACHE=relative)
	if ! about SHA256 | grep -q "(from default)" ||
		[ "$(logged 'GNUTLS_AFALG_SYSTEM_CACHE is not the absolute path of a file')" = 0 ]; then
		fail "a relative system-wide cache was read: $(about SHA256)"
		return
	fi
	rm "$d/relative"
	(cd "$d" && "${run[@]}" GNUTLS_AFALG_SYSTEM_CACHE=relative \
		"$tool" --calibrate --system >"$tmp/out" 2>"$tmp/log")
	rc=$?
	if [ "$rc" != 1 ] || [ -e "$d/relative" ]; then
		fail "a relative system-wide cache: rc $rc, $(ls "$d")"
		return
	fi
	mkdir "$d/sl"
	"${run[@]}" GNUTLS_AFALG_SYSTEM_CACHE="$d/sl/afalg/" \
		"$tool" --calibrate --system >"$tmp/out" 2>"$tmp/log"
	rc=$?
	if [ "$rc" != 1 ] || [ -e "$d/sl/afalg" ]; then
		fail "a system-wide cache named 'dir/': rc $rc, $(ls -l "$d/sl")"
		return
	fi
	pass "a relative GNUTLS_AFALG_SYSTEM_CACHE is neither read nor written, one named 'dir/' makes nothing"
	mkdir -p "$d/user/gnutls"
	cp "$d/var/gnutls/afalg" "$d/target"
	chmod 600 "$d/target"
	ln -s "$d/target" "$d/user/gnutls/afalg"
	info env GNUTLS_AFALG=$only XDG_CACHE_HOME="$d/user" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none"
	if ! about SHA256 | grep -q "(from default)" ||
		[ "$(logged "ignoring $d/user/gnutls/afalg: a symbolic link")" != 1 ]; then
		fail "a user's cache that is a link: $(about SHA256) $(grep -m 1 "$d/user" "$tmp/log")"
		return
	fi
	pass "a user's cache that is a symbolic link is ignored with a line"
}

# What a save of the cache writes, where AF_ALG is missing too (a cache
# that keeps SHA256 in software registers it; its calibration then fails
# there and succeeds in the kernel):
# - every row of the file it replaces that it does not measure again
#   (an algorithm unused, off, or whose measurement failed), unchanged,
#   and the first of two rows of one algorithm (the one a reader takes);
# - through a temporary file of its own, whatever another process left;
# - mode 0600 in the user's cache, 0644 in the system's, whatever the
#   umask;
# - nothing under a directory that is not the user's (root with another
#   user's HOME);
# and a cache that is a FIFO is passed over, not waited on.
check_cache_write() {
	local d=$tmp/cw c key rc keep
	local run=(env XDG_CACHE_HOME="$d" GNUTLS_AFALG=off,SHA256=auto
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" GNUTLS_DEBUG_LEVEL=2
		GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/none")
	c=$d/gnutls/afalg
	key=$(wanted_key "$c" info env XDG_CACHE_HOME="$d" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none")
	[ -n "$key" ] || { fail "no key logged for a foreign cache"; return; }
	keep="AES-128-GCM gcm-x never never
HMAC-SHA384 hmac-x 4096 4096"
	printf 'gnutls-afalg-cache 1\n%s\nSHA256 sha256-x never never\n%s\n%s\n' \
		"$key" "$keep" "HMAC-SHA384 hmac-y 1 1" >"$c"
	chmod 600 "$c"
	# a temporary file as one of an earlier process with this pid left
	"${run[@]}" sh -c ': >"$1.$$"; exec "$2" --calibrate' - "$c" "$tool" \
		>"$tmp/out" 2>"$tmp/log"
	rc=$?
	if [ "$rc" != 0 ] || ! grep -q "thresholds saved in $c" "$tmp/log"; then
		fail "save beside a stale temporary file: rc $rc, $(grep -v '^gnutls' "$tmp/out" | head -n 2 | tr '\n' ' ')"
	elif [ "$(grep -c -x -F "$keep" "$c")" != 2 ] ||
		[ "$(grep -c '^SHA256 ' "$c")" != 1 ] ||
		[ "$(grep -c '^HMAC-SHA384 ' "$c")" != 1 ]; then
		fail "rows lost in the save: $(tail -n +3 "$c" | tr '\n' ' ')"
	elif [ "$(stat -c %a "$c")" != 600 ]; then
		fail "the user's cache has mode $(stat -c %a "$c")"
	else
		pass "a save keeps the rows it does not measure, past a stale temporary file"
	fi
	# the system-wide cache is everyone's, whatever the umask
	printf 'gnutls-afalg-cache 1\n%s\nSHA256 sha256-x never never\n' "$key" >"$tmp/cwsys"
	chmod 644 "$tmp/cwsys"
	(umask 077 && env XDG_CACHE_HOME="$tmp/none" GNUTLS_AFALG=off,SHA256=auto \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/cwsys" "$tool" --calibrate --system \
		>/dev/null 2>&1)
	if [ "$(stat -c %a "$tmp/cwsys")" = 644 ]; then
		pass "the system-wide cache is written with mode 0644 under umask 077"
	else
		fail "the system-wide cache has mode $(stat -c %a "$tmp/cwsys") under umask 077"
	fi
	cache_write_foreign_home
	# a FIFO where the user's cache is: ignored at once
	mkdir -p "$tmp/fifo/gnutls" && mkfifo "$tmp/fifo/gnutls/afalg" || {
		skip "mkfifo failed"
		return
	}
	info env XDG_CACHE_HOME="$tmp/fifo" timeout 300
	rc=$?
	if [ "$rc" = 124 ] || [ "$(logged "ignoring $tmp/fifo/gnutls/afalg")" != 1 ]; then
		fail "a FIFO as the user's cache: rc $rc, $(grep -m 1 "$tmp/fifo" "$tmp/log")"
	else
		pass "a FIFO as the user's cache is ignored, not waited on"
	fi
}

# root with HOME (here XDG_CACHE_HOME) in another user's directory: the
# save makes no directory there.  The system-wide cache keeps SHA256 in
# software, so that it is registered where AF_ALG is missing.
cache_write_foreign_home() {
	local home=$tmp/alice
	mkdir -p "$home"
	if [ "$(id -u)" != 0 ] || ! chown 65534 "$home" 2>/dev/null; then
		skip "not root: another user's directory cannot be made"
		return
	fi
	env XDG_CACHE_HOME="$home" GNUTLS_AFALG=off,SHA256=auto \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/cwsys" GNUTLS_DEBUG_LEVEL=2 \
		"$tool" --calibrate >"$tmp/out" 2>"$tmp/log"
	# and an XDG_CACHE_HOME to be made in that directory
	env XDG_CACHE_HOME="$home/cache" GNUTLS_AFALG=off,SHA256=auto \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/cwsys" "$tool" --calibrate \
		>/dev/null 2>&1
	if [ -e "$home/gnutls" ] || [ -e "$home/cache" ]; then
		fail "the save made $(stat -c '%U %a %n' "$home"/* | tr '\n' ' ') in another user's directory"
	elif ! grep -q "afalgtool: .*cache" "$tmp/log"; then
		fail "afalgtool did not say it saved nothing: $(grep -v '^gnutls' "$tmp/log" | tail -n 2 | tr '\n' ' ')"
	else
		pass "nothing saved under another user's directory: $(grep -m 1 'afalgtool: ' "$tmp/log")"
	fi
	cache_write_links
}

# A symbolic link in the cache's path (XDG_CACHE_HOME itself, or its
# gnutls/) that another user made, as one can in a world-writable
# directory, leads the save nowhere, though it points to a directory of
# this user's; one of this user's own is followed.
cache_write_links() {
	local l=$tmp/links n
	mkdir -p "$l/to-base" "$l/to-sub" "$l/to-own" "$l/sub" "$l/own"
	ln -s "$l/to-base" "$l/base"
	ln -s "$l/to-sub" "$l/sub/gnutls"
	ln -s "$l/to-own" "$l/own/gnutls"
	chown -h 65534 "$l/base" "$l/sub/gnutls"
	for n in base sub own; do
		env XDG_CACHE_HOME="$l/$n" GNUTLS_AFALG=off,SHA256=auto \
			GNUTLS_AFALG_SYSTEM_CACHE="$tmp/cwsys" "$tool" \
			--calibrate >/dev/null 2>&1
	done
	if [ -n "$(find "$l/to-base" "$l/to-sub" -mindepth 1)" ]; then
		fail "the save followed another user's link: $(find "$l/to-base" "$l/to-sub" -mindepth 1 | tr '\n' ' ')"
	elif [ ! -s "$l/to-own/afalg" ]; then
		fail "the save did not follow a link of this user's: $(find "$l/to-own" | tr '\n' ' ')"
	else
		pass "nothing saved through another user's link; this user's is followed"
	fi
}

# One case of policy.cases (CASE) with GNUTLS_AFALG=MODES and a cache of
# its own ($tmp/CACHE): output in $tmp/out, debug log in $tmp/log.
policy_case() { # [system_cache=FILE] policy_case CACHE MODES CASE
	env XDG_CACHE_HOME="$tmp/$1" \
		GNUTLS_AFALG_SYSTEM_CACHE="${system_cache:-$tmp/none}" \
		LD_LIBRARY_PATH="$ACCEL_BIN/../lib" \
		GNUTLS_AFALG="$2" GNUTLS_DEBUG_LEVEL=2 \
		"${CONTRACT:?}" --case "$3" "${CASES:?}" >"$tmp/out" 2>"$tmp/log"
}

# auto: an algorithm calibrates once it has done 16 MiB of work, and
# saves its measurement.  The save keeps, as it was, the row of an
# algorithm the cache leaves to GnuTLS's own code: the process never
# asks the kernel about it (which may not have made it yet, nor list it
# in /proc/crypto), at any log level.  A measurement is filed under the
# settings the process started with, though the environment has changed
# since.
check_calibrate_on_use() {
	local c=$tmp/cache2/gnutls/afalg key
	local ccm="AES-128-CCM ccm-x never never"
	key=$(wanted_key "$c" info env XDG_CACHE_HOME="$tmp/cache2" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none")
	[ -n "$key" ] || { fail "no key logged for a foreign cache"; return; }
	printf 'gnutls-afalg-cache 1\n%s\n%s\n' "$key" "$ccm" >"$c"
	policy_case cache2 off,AES-128-GCM=auto,AES-128-CCM=auto \
		"auto calibrates after 16 MiB"
	if ! grep -q "^PASS" "$tmp/out" ||
		[ "$(logged 'AES-128-GCM calibrated in')" != 1 ] ||
		! grep -q '^AES-128-GCM ' "$c"; then
		fail "calibration on use: $(grep -v '^gnutls' "$tmp/out" | tail -n 3)"
		return
	elif ! grep -q -x -F "$ccm" "$c"; then
		fail "the save lost or changed the row of an algorithm left to GnuTLS: $(tail -n +3 "$c" | tr '\n' ' ')"
		return
	fi
	pass "calibrated after 16 MiB, the other row kept: $(grep 'calibrated in' "$tmp/log" | sed 's/.*afalg: //')"
	GNUTLS_CPUID_OVERRIDE=0x1 policy_case cache-env off,AES-128-GCM=auto \
		"a calibration is filed under the settings the process started with"
	c=$tmp/cache-env/gnutls/afalg
	if ! grep -q "^PASS" "$tmp/out" || ! grep -q '^AES-128-GCM ' "$c" 2>/dev/null; then
		fail "calibration with the x86 code off: $(grep -v '^gnutls' "$tmp/out" | tail -n 3)"
	elif ! sed -n 2p "$c" | grep -q -F '|cpuid 0x1|'; then
		fail "a calibration with the x86 code off was filed under $(sed -n 2p "$c")"
	else
		pass "a calibration is filed under the settings of start-up: $(sed -n 2p "$c" | grep -o '|cpuid.*')"
	fi
}

# Calibration times a message's kernel path as the module's messages
# take it (held bytes, the bytes kept for replay, checkpoints): its
# messages are counted with the kernel's operations, where a bare
# socket's were not, so that after only short messages (software's) the
# count is the calibration's.  (Timed on a bare socket, SHA-1 messages
# looked 1.2x faster in the kernel than they were in vm-slow.)
check_calibrate_message_path() {
	policy_case cache8 off,SHA256=auto "calibration times messages on the module's own kernel path"
	local stats
	stats=$(grep -E 'afalg: stats (mac|digest) SHA256:' "$tmp/log" | sed 's/.*afalg: //')
	if ! grep -q "^PASS" "$tmp/out" || [ "$(logged 'SHA256 calibrated in')" != 1 ]; then
		fail "SHA256 messages in auto: $(grep -v '^gnutls' "$tmp/out" | tail -n 3)"
	elif ! echo "$stats" | grep -qE ': [1-9][0-9]* kernel'; then
		fail "calibration's messages did not take the module's kernel path: ${stats:-no stats}"
	else
		pass "calibrated on the module's message path: $stats"
	fi
}

# A kernel failure stops a calibration: the algorithm stays in software
# for the process, and nothing is cached, so that a later process
# measures again instead of trusting a measurement the failure cut short.
# A hash's calibration times its messages on the module's message path,
# which finishes a message in software when the kernel fails it: that
# must stop the calibration too, not time software as the kernel.
check_calibration_fault() {
	calibration_fault cache7 AES-128-CBC "a kernel fault stops a calibration"
	calibration_fault cache9 SHA256 "a kernel send fault stops a hash calibration"
	calibration_fault cache10 SHA256 "a kernel recv fault stops a hash calibration"
	calibration_fault cache11 AES-128-GCM "a kernel fault stops an AEAD calibration"
	calibration_fault cache12 AES-128-GCM "a kernel tag failure stops an AEAD calibration"
}

calibration_fault() { # calibration_fault CACHE ALGORITHM CASE
	local c=$1 alg=$2
	policy_case "$c" "off,$alg=auto" "$3"
	if ! grep -q "^PASS" "$tmp/out"; then
		fail "$3: results after a fault in a calibration: $(grep -v '^gnutls' "$tmp/out" | tail -n 3)"
	elif [ "$(logged "$alg: calibration stopped")" != 1 ]; then
		fail "$3: the fault did not stop the calibration: $(grep -E "$alg (calibrated|encrypt|decrypt|message|one-shot)" "$tmp/log" | sed 's/.*afalg: //' | tr '\n' ' ')"
	elif [ "$(logged 'never (from a failed calibration)')" != 1 ]; then
		fail "$3: the thresholds do not say that the calibration failed: $(grep -A1 "afalg: $alg: kernel" "$tmp/log" | tail -n 1)"
	elif [ "$(logged "$alg calibrated in")" != 0 ]; then
		fail "$3: a calibration cut short is logged as done: $(grep "$alg calibrated in" "$tmp/log" | sed 's/.*afalg: //')"
	elif grep -qs "^$alg " "$tmp/$c/gnutls/afalg"; then
		fail "$3: a calibration cut short was cached: $(grep "^$alg " "$tmp/$c/gnutls/afalg")"
	else
		pass "$3: $(grep 'calibration stopped' "$tmp/log" | sed 's/.*afalg: //'), nothing cached"
	fi
}

# A child forked while another thread calibrates has no such thread: it
# calibrates the algorithm itself once its own work passes 16 MiB (the
# case checks the log in each process).
check_calibration_fork() {
	policy_case cache13 off,SHA256=auto "a child forked during another thread's calibration calibrates"
	if grep -q "^PASS" "$tmp/out"; then
		pass "a child forked during a calibration in another thread calibrates: $(grep -c 'SHA256 calibrated in' "$tmp/log") calibrations logged"
	else
		fail "fork during a calibration: $(grep -v '^gnutls' "$tmp/out" | tail -n 3)"
	fi
}

# The rules calibration draws thresholds by: each case of
# calibration.cases (a script of the times calibration sees) in a process
# and cache of its own.  A scripted calibration is not cached.
check_calibration_rules() {
	local name n=0 bad=""
	while IFS= read -r name; do
		n=$((n + 1))
		env XDG_CACHE_HOME="$tmp/rule$n" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" \
			LD_LIBRARY_PATH="$ACCEL_BIN/../lib" \
			GNUTLS_AFALG=off,AES-128-CBC=auto GNUTLS_DEBUG_LEVEL=2 \
			"${CONTRACT:?}" --case "$name" "$(dirname "$CASES")/calibration.cases" \
			>"$tmp/out" 2>"$tmp/log"
		if ! grep -q "^PASS" "$tmp/out"; then
			bad+=" [$name: $(grep -E '^(FAIL|  )' "$tmp/out" | head -n 2 | tr '\n' ' ') $(grep -E 'AES-128-CBC (encrypt|decrypt).*(MB/s|once more)' "$tmp/log" | sed 's/.*afalg: //' | tr '\n' ' ')]"
		elif [ -s "$tmp/rule$n/gnutls/afalg" ]; then
			bad+=" [$name: a scripted calibration was cached]"
		fi
	done < <(sed -n 's/^case: //p' "$(dirname "$CASES")/calibration.cases")
	if [ "$n" = 0 ]; then
		fail "no case in calibration.cases"
	elif [ -n "$bad" ]; then
		fail "$bad"
	else
		pass "$n scripted calibrations drew the thresholds their rules give, none cached"
	fi
}

# auto with measured thresholds: every algorithm calibrated, then the
# differential test and the contract cases in auto mode, so that the
# paths auto takes (straight to software where the kernel never wins,
# the kernel from a threshold up) give Nettle's answers.
check_auto_paths() {
	local run=(env XDG_CACHE_HOME="$tmp/cache3" GNUTLS_AFALG=auto
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none"
		LD_LIBRARY_PATH="$ACCEL_BIN/../lib")
	local never finite f failures=

	"${run[@]}" "$tool" --calibrate >"$tmp/cal" 2>"$tmp/cal.log"
	never=$(grep -c "^  mode.*faster at every size" "$tmp/cal")
	finite=$(grep -c "^  mode.*from the threshold up" "$tmp/cal")
	if ! "${run[@]}" GNUTLS_DEBUG_LEVEL=2 "${DIFFERENTIAL:?}" --ops 100 \
		--max-size 20000 all >"$tmp/out" 2>"$tmp/log"; then
		fail "differential in auto: $(grep -v '^gnutls' "$tmp/out" | grep -m 3 FAIL)"
		return
	fi
	if [ "$(logged 'thresholds from the user cache')" = 0 ]; then
		fail "differential in auto: the cache was not used"
		return
	fi
	for f in aead cipher hash; do
		"${run[@]}" "$CONTRACT" --defect 0 \
			"$(dirname "$CASES")/$f.cases" >"$tmp/out" 2>/dev/null ||
			failures+=" $(grep '^FAIL' "$tmp/out" | tr '\n' ' ')"
	done
	if [ -n "$failures" ]; then
		fail "contract cases in auto:$failures"
		return
	fi
	pass "differential and contract cases in auto: $never algorithms in software, $finite with a kernel threshold"
}

# An algorithm a cache keeps in software at every size is not registered
# (GnuTLS's own code runs it); one the cache sends to the kernel is.  The
# measurements of a calibration are rewritten to say so.
check_bypass() {
	local only=off,AES-128-GCM=auto,SHA256=auto
	local cache=$tmp/cache5/gnutls/afalg

	env XDG_CACHE_HOME="$tmp/cache5" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/system" \
		GNUTLS_AFALG=$only "$tool" --calibrate >"$tmp/out" 2>&1
	awk 'NR <= 2 { print; next }
		$1 == "AES-128-GCM" { print $1, $2, "never", "never" }
		$1 == "SHA256" { print $1, $2, 0, 0 }' "$cache" >"$tmp/rewritten" &&
		cat "$tmp/rewritten" >"$cache"
	info env XDG_CACHE_HOME="$tmp/cache5" GNUTLS_AFALG=$only
	if [ "$(logged 'registered aead AES-128-GCM')" = 0 ] &&
		[ "$(logged 'registered digest SHA256')" = 1 ] &&
		about AES-128-GCM | grep -q "(from cache).*not registered" &&
		about SHA256 | grep -q "(from cache); kernel from the threshold up"; then
		pass "AES-128-GCM left to GnuTLS, SHA256 registered: $(grep -o '[0-9]* of [0-9]* algorithms registered.*' "$tmp/log")"
	else
		fail "bypass: $(about AES-128-GCM) $(about SHA256)"
		return
	fi
	# the debug log does not make start-up ask the kernel about an
	# algorithm left to GnuTLS, which the kernel has not made yet (a
	# /proc/crypto without ccm(aes) mounted in a namespace of its own)
	if ! can_fake_proc_crypto || ! command -v strace >/dev/null; then
		skip "not root, no mount namespace or no strace: start-up at GNUTLS_DEBUG_LEVEL=2 not checked"
		return
	fi
	echo "AES-128-CCM ccm-x never never" >>"$cache"
	awk 'BEGIN { RS = ""; ORS = "\n\n" } !/name *: ccm\(aes\)\n/' \
		/proc/crypto >"$tmp/proc-crypto"
	"${with_proc_crypto[@]}" "$tmp/proc-crypto" env XDG_CACHE_HOME="$tmp/cache5" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/system" \
		GNUTLS_AFALG=$only,AES-128-CCM=auto GNUTLS_DEBUG_LEVEL=2 \
		strace -f -o "$tmp/trace" -e trace=socket "$cli" --version \
		>/dev/null 2>"$tmp/log"
	if grep -q 'socket(AF_ALG' "$tmp/trace" ||
		! grep -q 'AES-128-CCM: kernel' "$tmp/log"; then
		fail "start-up at GNUTLS_DEBUG_LEVEL=2: $(grep -c 'socket(AF_ALG' "$tmp/trace") AF_ALG sockets; $(grep -m 1 'AES-128-CCM: kernel' "$tmp/log" | sed 's/.*afalg: //')"
	else
		pass "start-up at GNUTLS_DEBUG_LEVEL=2 makes no AF_ALG socket call: $(grep -m 1 'AES-128-CCM: kernel' "$tmp/log" | sed 's/.*afalg: //')"
	fi
}

# A size for every algorithm: operations and messages under 4096 bytes
# stay in software, longer ones go to the kernel, on the same contexts
# (a MAC message held in user space and finished in software, then one
# committed to the kernel).  The contract cases compare every result
# with Nettle; MAC and digest messages must have taken both paths.  Both
# kinds of software: GnuTLS's x86 code, and Nettle alone (x86 code off),
# whose CBC context tells its chaining value, so that the module asks it
# only when the kernel continues.
check_sized() {
	local cpuid failures= fam

	for cpuid in "" 0x1; do
		sized_cases "$cpuid"
		if [ -n "$failures" ]; then
			fail "contract cases with GNUTLS_AFALG=4096${cpuid:+ and GNUTLS_CPUID_OVERRIDE=$cpuid}:$failures"
			return
		fi
		for fam in mac digest; do
			if ! grep -qE "stats $fam SHA256: [1-9][0-9]* kernel, [1-9][0-9]* software" "$tmp/log"; then
				fail "$fam SHA256 did not take both paths in one process${cpuid:+ (x86 code off)}: $(grep 'stats.*SHA256:' "$tmp/log" | tr '\n' ' ')"
				return
			fi
		done
		if ! grep -qE "stats cipher AES-128-CBC: [1-9][0-9]* kernel, [1-9][0-9]* software" "$tmp/log"; then
			fail "AES-128-CBC did not take both paths${cpuid:+ (x86 code off)}: $(grep 'stats.*AES-128-CBC:' "$tmp/log" | tr '\n' ' ')"
			return
		fi
	done
	pass "contract cases with GNUTLS_AFALG=4096, with and without GnuTLS's x86 code; without it: $(grep -E 'stats (mac SHA256|digest SHA256|cipher AES-128-CBC): [1-9][0-9]* kernel, [1-9][0-9]* software' "$tmp/log" | sed 's/.*afalg: //' | sort -u | tr '\n' ' ')"
}

# A cache made where the kernel had AF_ALG, read where it has not (this
# machine's kernel, or AF_ALG taken away since): the cache lets the
# module register without asking the kernel, so the first operation sent
# there learns it.  One socket() call says so, the kernel path is off for
# the process from then on (the differential test: one process), and
# every answer is software's (it and the contract cases, whose children
# each learn it for themselves, in auto mode).  afalgtool says why.
# Where AF_ALG is here, the kernel suite's, it skips.
check_lost_afalg() {
	local c=$tmp/lost/gnutls/afalg key row name label failures= f
	local run=(env XDG_CACHE_HOME="$tmp/lost" GNUTLS_AFALG=auto
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" GNUTLS_DEBUG_LEVEL=2
		GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/none"
		LD_LIBRARY_PATH="$ACCEL_BIN/../lib")

	if have_afalg; then
		skip "AF_ALG is here: the check needs a kernel without it (the host suite's)"
		return
	fi
	key=$(wanted_key "$c" info env XDG_CACHE_HOME="$tmp/lost" \
		GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" \
		GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/none")
	[ -n "$key" ] || { fail "no key logged for a foreign cache"; return; }
	printf 'gnutls-afalg-cache 1\n%s\n' "$key" >"$c"
	# each row with the driver /proc/crypto names, as a calibration
	# under this kernel would have written it
	for row in AES-128-CBC:'cbc(aes)' SHA256:sha256 HMAC-SHA256:'hmac(sha256)'; do
		label=${row%%:*} name=${row#*:}
		f=$(awk -v n="$name" '$1 == "name" { hit = $3 == n }
			hit && $1 == "driver" { print $3; exit }' /proc/crypto 2>/dev/null)
		[ -n "$f" ] || { skip "/proc/crypto has no $name"; return; }
		echo "$label $f 0 0" >>"$c"
	done
	info env XDG_CACHE_HOME="$tmp/lost" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none" \
		GNUTLS_SYSTEM_PRIORITY_FILE="$tmp/none"
	if ! about AES-128-CBC | grep -q "(from cache); software: the kernel has no AF_ALG"; then
		fail "afalgtool: $(about AES-128-CBC)"
		return
	fi
	if ! "${run[@]}" "${DIFFERENTIAL:?}" --ops 100 --max-size 20000 all \
		>"$tmp/out" 2>"$tmp/log"; then
		fail "differential: $(grep -v '^gnutls' "$tmp/out" | grep -m 3 FAIL)"
		return
	fi
	if [ "$(logged 'thresholds from the user cache')" != 3 ] ||
		[ "$(logged 'afalg: socket failed')" != 1 ] ||
		[ "$(logged 'AF_ALG is not available: kernel path off')" != 1 ]; then
		fail "differential: $(logged 'thresholds from the user cache') algorithms from the cache, $(logged 'afalg: socket failed') socket() failures, $(grep -m 1 'kernel path off' "$tmp/log")"
		return
	fi
	for f in aead cipher hash; do
		"${run[@]}" "$CONTRACT" --defect 0 \
			"$(dirname "$CASES")/$f.cases" >"$tmp/out" 2>"$tmp/log" ||
			failures+=" $(grep '^FAIL' "$tmp/out" | tr '\n' ' ')"
	done
	if [ -n "$failures" ]; then
		fail "contract cases:$failures"
		return
	fi
	pass "a cache from a kernel with AF_ALG, where it has none: one socket() call, then software; the differential and contract cases pass"
}

# The contract cases of every family with a threshold of 4096 bytes
# (and the x86 code off, given 0x1); sets failures, keeps the last log.
sized_cases() {
	local run=(env GNUTLS_AFALG=4096 GNUTLS_DEBUG_LEVEL=2
		XDG_CACHE_HOME="$tmp/cache4" GNUTLS_AFALG_SYSTEM_CACHE="$tmp/none"
		LD_LIBRARY_PATH="$ACCEL_BIN/../lib")
	local f

	[ -z "$1" ] || run+=(GNUTLS_CPUID_OVERRIDE="$1")
	: >"$tmp/log.all"
	for f in aead cipher hash; do
		"${run[@]}" "$CONTRACT" --defect 0 \
			"$(dirname "$CASES")/$f.cases" >"$tmp/out" 2>"$tmp/log" ||
			failures+=" $(grep '^FAIL' "$tmp/out" | tr '\n' ' ')"
		cat "$tmp/log" >>"$tmp/log.all"
	done
	mv "$tmp/log.all" "$tmp/log"
}

# What /proc/crypto says of a driver is of its own entry: "async"
# follows "priority" in an entry, and a synchronous hash's entry has no
# "async" line.  A file of two made-up drivers, each of the highest
# priority for its name, is mounted over /proc/crypto in a namespace of
# the tool's own: a synchronous SHA256 driver after an asynchronous
# entry runs on the CPU, an asynchronous SHA512 driver after a
# synchronous entry (and last in the file) looks like a device.
check_proc_crypto() {
	local fake=$tmp/proc-crypto
	local ns=("${with_proc_crypto[@]}" "$fake")
	if ! can_fake_proc_crypto; then
		skip "not root, or no mount namespace: /proc/crypto cannot be replaced"
		return
	fi
	entry() { printf '%-12s : %s\n' "$@"; }
	{
		cat /proc/crypto
		entry name 'gcm(aes)' driver gcm-afalg-test module kernel \
			priority 1 type aead async yes
		echo
		entry name sha256 driver sha256-afalg-test module kernel \
			priority 100000 type shash blocksize 64 digestsize 32
		echo
		entry name 'cbc(aes)' driver cbc-afalg-test module kernel \
			priority 1 type skcipher async no
		echo
		# the last entry, with no blank line after it
		entry name sha512 driver sha512-afalg-test module kernel \
			priority 100000 type ahash async yes blocksize 128 \
			digestsize 64
	} >"$fake"
	info "${ns[@]}" env GNUTLS_AFALG=off,SHA256=auto,SHA512=auto
	if ! about SHA256 | grep -q "driver sha256-afalg-test (.*CPU instructions)" ||
		! about SHA512 | grep -q "driver sha512-afalg-test (.*looks like a device)"; then
		fail "$(about SHA256); $(about SHA512)"
	else
		pass "a driver's async flag is its own entry's"
	fi
}

# afalgtool's command line: GnuTLS's usual --help, --version and --debug,
# and a clear error, with nothing measured or saved, for what it refuses.
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
	for args in "--system" "report" "--calibrate extra" "--debug=x"; do
		# shellcheck disable=SC2086 # the words are the arguments
		if "${run[@]}" XDG_CACHE_HOME="$tmp/cmdline" \
			GNUTLS_AFALG_SYSTEM_CACHE="$tmp/cmdline-system" \
			"$tool" $args >"$tmp/out" 2>"$tmp/log"; then
			fail "afalgtool $args succeeded"
			return
		elif [ -s "$tmp/out" ] || ! grep -q "afalgtool: " "$tmp/log" ||
			[ -e "$tmp/cmdline" ] || [ -e "$tmp/cmdline-system" ]; then
			fail "afalgtool $args: stdout '$(head -c 100 "$tmp/out")', stderr '$(head -c 100 "$tmp/log")', cache $(ls "$tmp" | grep cmdline)"
			return
		fi
	done
	local refused="'--system' alone, an argument and a bad number refused with a message, nothing printed or saved"
	if ! have_afalg; then
		pass "--version, --help; $refused (--debug needs AF_ALG: skipped)"
		return
	fi
	# the module logs what a calibration finds, after main() set the level
	"${run[@]}" GNUTLS_AFALG=off,SHA256=auto \
		XDG_CACHE_HOME="$tmp/cmdline-debug" \
		"$tool" --calibrate --debug=2 >"$tmp/out" 2>"$tmp/log"
	if ! grep -q '^|<2>| afalg: ' "$tmp/log"; then
		fail "--calibrate --debug=2 logged no line of the module: $(head -c 200 "$tmp/log")"
		return
	fi
	pass "--version, --help, --debug ($(grep -m 1 '^|<2>| afalg: ' "$tmp/log" | head -c 100)); $refused"
}

checks=(startup command_line labels config_once parse cache_write off default overrides
	invalid config cache bad_cache system_cache cache_places calibrate_on_use
	calibration_fault
	calibration_fork calibration_rules calibrate_message_path
	auto_paths sized bypass lost_afalg proc_crypto)
[ "${1:-all}" = all ] || checks=("$@")
for check in "${checks[@]}"; do
	if [ "$check" != startup ] && [ "$check" != command_line ] &&
		[ "$check" != labels ] &&
		[ "$check" != config_once ] && [ "$check" != parse ] &&
		[ "$check" != cache_write ] && [ "$check" != lost_afalg ] &&
		! have_afalg; then
		skip "no AF_ALG here: the module registers nothing"
		continue
	fi
	"check_$check"
done
echo "policy: $failed failed, $skipped skipped"
# The library under test reports itself (run-test checks that its log
# has the module's lines).
"$tool" >/dev/null
[ "$failed" = 0 ] || exit 1
exit 0
