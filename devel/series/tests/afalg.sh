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
# and, without settings or without AF_ALG, a library that registers
# nothing and says nothing.

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

fail() {
	echo "afalg.sh: $*" >&2
	exit 1
}

# NAME OUTPUT: the setting afalgtool reported for NAME
setting_of() {
	sed -n "/^$1: /,/^[^ ]/s/^  setting \([^;]*\);.*/\1/p" "$2"
}

expect_setting() {
	got=$(setting_of "$1" "$3")
	test "${got}" = "$2" ||
		fail "$4: $1 has setting '${got}', expected '$2'"
}

# the library is silent on stderr whatever the kernel has
GNUTLS_AFALG=kernel "${AFALGTOOL}" >"${tmp}/out" 2>"${tmp}/err" ||
	fail "afalgtool failed: $(cat "${tmp}/err")"
GNUTLS_AFALG=kernel "${CLI}" --list >/dev/null 2>>"${tmp}/err" ||
	fail "gnutls-cli --list failed"
test -s "${tmp}/err" && fail "the library wrote to stderr: $(cat "${tmp}/err")"
expect_setting AES-128-GCM kernel "${tmp}/out" GNUTLS_AFALG=kernel

# an [afalg] section does not make the system configuration invalid
cat >"${tmp}/config" <<EOT
[global]
override-mode = blocklist

[afalg]
mode = kernel
AES-256-GCM = off
AES-128-CBC = 4096/never
SHA256 = 512
EOT
GNUTLS_SYSTEM_PRIORITY_FILE="${tmp}/config" GNUTLS_DEBUG_LEVEL=3 \
	"${AFALGTOOL}" >"${tmp}/out2" 2>"${tmp}/log"
grep -q "unknown section" "${tmp}/log" &&
	fail "the [afalg] section was rejected: $(grep "unknown section" "${tmp}/log")"

# a strict configuration (GNUTLS_SYSTEM_PRIORITY_FAIL_ON_INVALID=1)
# takes a valid [afalg] section, and refuses one with an invalid entry
GNUTLS_SYSTEM_PRIORITY_FILE="${tmp}/config" GNUTLS_SYSTEM_PRIORITY_FAIL_ON_INVALID=1 \
	"${CLI}" --list >/dev/null 2>&1 ||
	fail "a strict configuration refused a valid [afalg] section"
printf '[afalg]\nAES-128-GCM = sometimes\n' >"${tmp}/invalid"
GNUTLS_SYSTEM_PRIORITY_FILE="${tmp}/invalid" GNUTLS_SYSTEM_PRIORITY_FAIL_ON_INVALID=1 \
	"${CLI}" --list >/dev/null 2>&1 &&
	fail "a strict configuration took an invalid [afalg] entry"

# default: auto, GnuTLS's own code, nothing registered
"${AFALGTOOL}" >"${tmp}/out" || fail "afalgtool failed"
expect_setting AES-128-GCM auto "${tmp}/out" "no setting"
GNUTLS_DEBUG_LEVEL=2 "${CLI}" --list >/dev/null 2>"${tmp}/log"
grep -q "afalg: registered" "${tmp}/log" &&
	fail "without settings the backend registered: $(grep "afalg: registered" "${tmp}/log" | head -n 2)"

# one algorithm differs from the rest; sizes are thresholds, per
# direction; for a MAC or digest only the second, a one-shot call's,
# counts (their contexts are GnuTLS's own code)
GNUTLS_AFALG=kernel,AES-128-GCM=off,AES-256-CBC=64/never,SHA256=4096,SHA1=64/never \
	"${AFALGTOOL}" >"${tmp}/out" || fail "afalgtool failed"
expect_setting AES-128-GCM off "${tmp}/out" "AES-128-GCM=off"
expect_setting AES-256-GCM kernel "${tmp}/out" "AES-128-GCM=off"
expect_setting AES-256-CBC 64/never "${tmp}/out" "AES-256-CBC=64/never"
expect_setting SHA256 4096 "${tmp}/out" "SHA256=4096"
expect_setting SHA1 auto "${tmp}/out" "SHA1=64/never"

# the [afalg] section, and GNUTLS_AFALG over it
expect_setting AES-128-GCM kernel "${tmp}/out2" "[afalg] mode = kernel"
expect_setting AES-256-GCM off "${tmp}/out2" "[afalg] AES-256-GCM = off"
expect_setting AES-128-CBC 4096/never "${tmp}/out2" "[afalg] AES-128-CBC = 4096/never"
expect_setting SHA256 512 "${tmp}/out2" "[afalg] SHA256 = 512"
GNUTLS_SYSTEM_PRIORITY_FILE="${tmp}/config" GNUTLS_AFALG=AES-256-GCM=auto \
	"${AFALGTOOL}" >"${tmp}/out" || fail "afalgtool failed"
expect_setting AES-128-GCM kernel "${tmp}/out" "[afalg] with GNUTLS_AFALG"
expect_setting AES-256-GCM auto "${tmp}/out" "[afalg] with GNUTLS_AFALG"

exit 0
