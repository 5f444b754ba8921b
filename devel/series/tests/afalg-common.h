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

/* in libgnutls, GNUTLS_PRIVATE_3_4: a line per algorithm */
int _gnutls_afalg_info(gnutls_datum_t *out);

/* Whether this kernel offers AF_ALG sockets at all. */
inline static int afalg_available(void)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Skips the test (exit 77) when the kernel has no AF_ALG.  The library
 * reads GNUTLS_AFALG when it is loaded, before doit(): a test that needs
 * every operation in the kernel runs itself again with
 * GNUTLS_AFALG=kernel. */
inline static void afalg_require_kernel(void)
{
	const char *mode = getenv("GNUTLS_AFALG");

	if (!afalg_available()) {
		fprintf(stderr, "AF_ALG is not available (%s): skipping\n",
			strerror(errno));
		exit(77);
	}
	if (mode != NULL && strcmp(mode, "kernel") == 0)
		return;
	if (setenv("GNUTLS_AFALG", "kernel", 1) < 0)
		fail("setenv: %s\n", strerror(errno));
	execl("/proc/self/exe", "afalg-test", debug ? "-v" : NULL,
	      (char *)NULL);
	fail("exec /proc/self/exe: %s\n", strerror(errno));
}

/* The backend logs, at gnutls_global_deinit(), how many operations each
 * algorithm ran in the kernel and in software:
 * "afalg: stats aead AES-128-GCM: 264 kernel, 0 software". */
static char afalg_stats[8192];

static void afalg_log(int level, const char *str)
{
	size_t len = strlen(afalg_stats);

	if (strncmp(str, "afalg: stats ", 13) == 0 &&
	    len + strlen(str) + 1 < sizeof(afalg_stats))
		memcpy(afalg_stats + len, str, strlen(str) + 1);
	if (debug && strncmp(str, "afalg:", 6) == 0)
		fprintf(stderr, "|<%d>| %s", level, str);
}

inline static void afalg_stats_start(void)
{
	afalg_stats[0] = 0;
	gnutls_global_set_log_function(afalg_log);
	gnutls_global_set_log_level(2);
}

/* Ends the library (which logs the statistics); returns the number of
 * operations NAME ("aead AES-128-GCM") ran in the kernel, and in
 * software in *soft. */
inline static unsigned long afalg_stats_kernel(const char *name,
					       unsigned long *soft)
{
	char key[128];
	const char *p;
	unsigned long k = 0, s = 0;

	snprintf(key, sizeof(key), "afalg: stats %s: ", name);
	p = strstr(afalg_stats, key);
	if (p != NULL &&
	    sscanf(p + strlen(key), "%lu kernel, %lu software", &k, &s) != 2)
		fail("cannot parse the statistics of %s\n", name);
	if (soft != NULL)
		*soft = s;
	return k;
}

#endif /* GNUTLS_TESTS_AFALG_COMMON_H */
