/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * GnuTLS is free software; you can redistribute it and/or modify it
 * under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 3 of the License, or
 * (at your option) any later version.
 *
 * GnuTLS is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with GnuTLS.  If not, see <https://www.gnu.org/licenses/>.
 */

/* Helpers of the AF_ALG backend's tests (afalg-*.c). */

#ifndef GNUTLS_TESTS_AFALG_COMMON_H
#define GNUTLS_TESTS_AFALG_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <gnutls/gnutls.h>

#include "utils.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

/* in libgnutls, GNUTLS_PRIVATE_3_4: the backend as the process has it,
 * a line per algorithm of KEY=VALUE fields (lib/accelerated/afalg/afalg.c) */
int _gnutls_afalg_report(unsigned version, unsigned flags, gnutls_datum_t *out);

/* Whether this kernel offers AF_ALG sockets at all. */
inline static int afalg_available(void)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The library reads GNUTLS_AFALG when it is loaded, before doit(): a test
 * that needs every operation to go to the kernel runs itself again with
 * GNUTLS_AFALG=kernel. */
inline static void afalg_set_kernel(void)
{
	const char *mode = getenv("GNUTLS_AFALG");

	if (mode != NULL && strcmp(mode, "kernel") == 0)
		return;
	if (setenv("GNUTLS_AFALG", "kernel", 1) < 0)
		fail("setenv: %s\n", strerror(errno));
	execl("/proc/self/exe", "afalg-test", debug ? "-v" : NULL,
	      (char *)NULL);
	fail("exec /proc/self/exe: %s\n", strerror(errno));
}

/* Skips the test (exit 77) when the kernel has no AF_ALG; otherwise as
 * afalg_set_kernel(). */
inline static void afalg_require_kernel(void)
{
	if (!afalg_available()) {
		fprintf(stderr, "AF_ALG is not available (%s): skipping\n",
			strerror(errno));
		exit(77);
	}
	afalg_set_kernel();
}

inline static void afalg_log(int level, const char *str)
{
	if (debug && strncmp(str, "afalg:", 6) == 0)
		fprintf(stderr, "|<%d>| %s", level, str);
}

/* The backend counts the operations of each path at debug level 2. */
inline static void afalg_stats_start(void)
{
	gnutls_global_set_log_function(afalg_log);
	gnutls_global_set_log_level(2);
}

/* The value of KEY in the report's line of the algorithm LABEL
 * ("AES-128-GCM", "HMAC-SHA256", "SHA256"), into buf. */
inline static void afalg_field(const char *label, const char *key, char *buf,
			       size_t size)
{
	gnutls_datum_t report;
	char want[64];
	const char *line, *p;
	size_t len;

	if (_gnutls_afalg_report(1, 0, &report) < 0)
		fail("the backend gives no report\n");
	snprintf(want, sizeof(want), "label=%s ", label);
	for (line = (char *)report.data; line != NULL;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, want, strlen(want)) == 0)
			break;
	if (line == NULL)
		fail("the report has no %s:\n%s", label, report.data);
	snprintf(want, sizeof(want), " %s=", key);
	p = strstr(line, want);
	if (p == NULL || (strchr(line, '\n') && p > strchr(line, '\n')))
		fail("the report has no %s for %s\n", key, label);
	p += strlen(want);
	len = strcspn(p, " \n");
	snprintf(buf, size, "%.*s", (int)len, p);
	gnutls_free(report.data);
}

/* How many operations of LABEL ran in the kernel, and in software in
 * *soft (counted at debug level 2: afalg_stats_start()). */
inline static unsigned long afalg_ops(const char *label, unsigned long *soft)
{
	char buf[32];

	if (soft != NULL) {
		afalg_field(label, "software-ops", buf, sizeof(buf));
		*soft = strtoul(buf, NULL, 10);
	}
	afalg_field(label, "kernel-ops", buf, sizeof(buf));
	return strtoul(buf, NULL, 10);
}

/* Whether the kernel refused LABEL in this process (no AF_ALG, a type
 * or name it does not offer, Linux 7.3's allowlist): then its operations
 * must all have run in software, which the caller checks. */
inline static int afalg_refused(const char *label)
{
	char state[32];

	afalg_field(label, "state", state, sizeof(state));
	if (strcmp(state, "unusable") != 0 && strcmp(state, "no-af-alg") != 0)
		return 0;
	if (debug)
		success("%s: refused by this kernel (%s), software only\n",
			label, state);
	return 1;
}

/* LABEL ran in the kernel, or, where this kernel refused it, only in
 * software. */
inline static void afalg_check_ran(const char *label)
{
	unsigned long soft, kernel = afalg_ops(label, &soft);

	if (afalg_refused(label)) {
		if (kernel != 0 || soft == 0)
			fail("%s refused: %lu kernel, %lu software\n", label,
			     kernel, soft);
		return;
	}
	if (kernel == 0)
		fail("%s did not run in the kernel\n", label);
}

#endif /* GNUTLS_TESTS_AFALG_COMMON_H */
