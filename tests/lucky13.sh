#!/bin/bash
# Lucky 13 (see lucky13.c): a forged TLS 1.2 CBC record without EtM, of
# one length and ten paddings, received with GnuTLS's own code
# (GNUTLS_AFALG=off) and with the settings under test: every kernel
# (one where a record's MAC would go to the kernel if MAC contexts held
# their messages: GNUTLS_AFALG=kernel; and one whose message threshold
# lies between the records' MAC lengths, 249 and 504 bytes).  GnuTLS's
# HMAC-SHA1 is Nettle's (GNUTLS_CPUID_OVERRIDE=0x1), whose updates
# lucky13 counts.
#
# Passes when, for every padding, the bytes and calls of Nettle's
# HMAC-SHA1 are those of GnuTLS's own code (the blocks dummy_wait()
# gives are hashed as GnuTLS hashes them), and the number of kernel
# requests is the same for every padding (no record's path depends on
# it).  Counts, not clocks: the verdict does not depend on timing.
#
# Usage: lucky13.sh LUCKY13-PROGRAM
#
# SPDX-License-Identifier: LGPL-2.1-or-later

set -u
prog=${1:?usage: lucky13.sh LUCKY13-PROGRAM}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lucky13.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0

run() { # OUTPUT GNUTLS_AFALG
	GNUTLS_CPUID_OVERRIDE=0x1 GNUTLS_AFALG=$2 "$prog" >"$1" 2>"$1.err" ||
		{ echo "FAIL GNUTLS_AFALG=$2: $(cat "$1" "$1.err" | grep -v '^gnutls\[' | head -n 5)"; status=1; }
}

run "$tmp/off" off
for settings in kernel "AES-128-CBC=kernel,HMAC-SHA1=400"; do
	run "$tmp/on" "$settings"
	# the MAC's work per padding: as GnuTLS's own
	if ! diff <(sed 's/kernel-requests [0-9]* //' "$tmp/off") \
		<(sed 's/kernel-requests [0-9]* //' "$tmp/on") >"$tmp/diff" 2>&1; then
		echo "FAIL GNUTLS_AFALG=$settings: the MAC's work differs from GnuTLS's own code (<: off, >: $settings):"
		cat "$tmp/diff"
		status=1
	fi
	# the path per padding: the same for all
	n=$(sed -n 's/.*kernel-requests \([0-9]*\).*/\1/p' "$tmp/on" | sort -u | wc -l)
	if [ "$n" != 1 ]; then
		echo "FAIL GNUTLS_AFALG=$settings: the kernel requests depend on the padding:"
		grep padding "$tmp/on"
		status=1
	fi
	echo "GNUTLS_AFALG=$settings:"
	sed 's/^/  /' "$tmp/on"
done
echo "GNUTLS_AFALG=off (GnuTLS's own code):"
sed 's/^/  /' "$tmp/off"
# the library's lines, for run-test
grep -h 'afalg: ' "$tmp"/*.err >&2
exit $status
