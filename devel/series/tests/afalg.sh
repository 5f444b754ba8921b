#!/bin/sh

# Copyright (C) 2026 gnutls-afalg contributors
#
# This file is part of GnuTLS.
#
# GnuTLS is free software; you can redistribute it and/or modify it
# under the terms of the GNU General Public License as published by the
# Free Software Foundation; either version 3 of the License, or (at
# your option) any later version.
#
# GnuTLS is distributed in the hope that it will be useful, but
# WITHOUT ANY WARRANTY; without even the implied warranty of
# MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
# General Public License for more details.
#
# You should have received a copy of the GNU General Public License
# along with GnuTLS.  If not, see <https://www.gnu.org/licenses/>.

# The AF_ALG backend's operator switch: GNUTLS_AFALG and the [afalg]
# section of the system-wide configuration, as afalgtool reports them;
# and, without AF_ALG, a library that registers nothing and says nothing.

: ${srcdir=.}
: ${AFALGTOOL=../src/afalgtool${EXEEXT}}
: ${CLI=../src/gnutls-cli${EXEEXT}}

if ! test -x "${AFALGTOOL}"; then
	echo "afalgtool is not built (configure without --enable-afalg?): skipping"
	exit 77
fi

TMPDIR=${TMPDIR:-/tmp}
tmp=$(mktemp -d "${TMPDIR}/afalg.XXXXXX") || exit 1
trap 'rm -rf "${tmp}"' 0
unset GNUTLS_AFALG GNUTLS_SYSTEM_PRIORITY_FILE GNUTLS_DEBUG_LEVEL
# no measurement cached by an earlier run
XDG_CACHE_HOME="${tmp}/cache"
GNUTLS_AFALG_SYSTEM_CACHE="${tmp}/system-cache"
export XDG_CACHE_HOME GNUTLS_AFALG_SYSTEM_CACHE

fail() {
	echo "afalg.sh: $*" >&2
	exit 1
}

# MODE OUTPUT NAME: the mode afalgtool reported for NAME
mode_of() {
	sed -n "/^$1: /{n;s/^  mode \([a-z0-9]*\).*/\1/p}" "$2"
}

expect_mode() {
	got=$(mode_of "$1" "$3")
	test "${got}" = "$2" ||
		fail "$4: $1 is in mode '${got}', expected '$2'"
}

# the library is silent on stderr whatever the kernel has
GNUTLS_AFALG=kernel "${AFALGTOOL}" >"${tmp}/out" 2>"${tmp}/err" ||
	fail "afalgtool failed: $(cat "${tmp}/err")"
GNUTLS_AFALG=kernel "${CLI}" --list >/dev/null 2>>"${tmp}/err" ||
	fail "gnutls-cli --list failed"
test -s "${tmp}/err" && fail "the library wrote to stderr: $(cat "${tmp}/err")"

# an [afalg] section does not make the system configuration invalid
cat >"${tmp}/config" <<EOT
[global]
override-mode = blocklist

[afalg]
mode = kernel
AES-256-GCM = off
EOT
GNUTLS_SYSTEM_PRIORITY_FILE="${tmp}/config" GNUTLS_DEBUG_LEVEL=3 \
	"${AFALGTOOL}" >"${tmp}/out2" 2>"${tmp}/log"
grep -q "unknown section" "${tmp}/log" &&
	fail "the [afalg] section was rejected: $(grep "unknown section" "${tmp}/log")"

if grep -q "no algorithm registered" "${tmp}/out"; then
	echo "AF_ALG is not available: the library registered nothing and was silent"
	exit 0
fi

expect_mode AES-128-GCM kernel "${tmp}/out" GNUTLS_AFALG=kernel
expect_mode SHA256 kernel "${tmp}/out" GNUTLS_AFALG=kernel

# default: auto, software until measured
"${AFALGTOOL}" >"${tmp}/out" || fail "afalgtool failed"
expect_mode AES-128-GCM auto "${tmp}/out" "no setting"
grep -A1 "^AES-128-GCM: " "${tmp}/out" | grep -q "thresholds encrypt never" ||
	fail "auto mode without a measurement sends AES-128-GCM to the kernel"

# off: nothing registered
GNUTLS_AFALG=off "${AFALGTOOL}" >"${tmp}/out" || fail "afalgtool failed"
grep -q "no algorithm registered" "${tmp}/out" ||
	fail "GNUTLS_AFALG=off registered: $(head -n 2 "${tmp}/out")"

# one algorithm differs from the rest; a size is a threshold
GNUTLS_AFALG=kernel,AES-128-GCM=off,SHA256=4096 "${AFALGTOOL}" \
	>"${tmp}/out" || fail "afalgtool failed"
expect_mode AES-128-GCM off "${tmp}/out" "AES-128-GCM=off"
expect_mode AES-256-GCM kernel "${tmp}/out" "AES-128-GCM=off"
grep -A1 "^SHA256: " "${tmp}/out" | grep -q "message 4096, one-shot 4096" ||
	fail "SHA256=4096: $(grep -A1 "^SHA256: " "${tmp}/out")"

# the [afalg] section, and GNUTLS_AFALG over it
expect_mode AES-128-GCM kernel "${tmp}/out2" "[afalg] mode = kernel"
expect_mode AES-256-GCM off "${tmp}/out2" "[afalg] AES-256-GCM = off"
GNUTLS_SYSTEM_PRIORITY_FILE="${tmp}/config" GNUTLS_AFALG=AES-256-GCM=auto \
	"${AFALGTOOL}" >"${tmp}/out" || fail "afalgtool failed"
expect_mode AES-128-GCM kernel "${tmp}/out" "[afalg] with GNUTLS_AFALG"
expect_mode AES-256-GCM auto "${tmp}/out" "[afalg] with GNUTLS_AFALG"

exit 0
