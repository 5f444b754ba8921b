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

/* The x86 code must read CPUID leaf 7: on a CPU whose leaf 7 has the SHA
 * extensions, the library logs "Intel SHA was detected" (or Zhaoxin's)
 * as it registers its SHA code.  Skipped on other CPUs, and where the
 * x86 code is not built in or does not run (no SSSE3 logged). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>

#include "utils.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#ifndef bit_SHA
#define bit_SHA (1 << 29)
#endif

static int ssse3_logged, sha_logged;

static void log_func(int level, const char *str)
{
	if (strstr(str, " SSSE3 was detected") != NULL)
		ssse3_logged = 1;
	if (strstr(str, " SHA was detected") != NULL)
		sha_logged = 1;
	if (debug)
		fprintf(stderr, "|<%d>| %s", level, str);
}

void doit(void)
{
	unsigned a, b, c, d;
	int ret;

	if (__get_cpuid_max(0, NULL) < 7) {
		fprintf(stderr, "no CPUID leaf 7: skipping\n");
		exit(77);
	}
	__cpuid_count(7, 0, a, b, c, d);
	if (!(b & bit_SHA)) {
		fprintf(stderr, "no SHA extensions: skipping\n");
		exit(77);
	}
	if (getenv("GNUTLS_CPUID_OVERRIDE") != NULL) {
		fprintf(stderr, "GNUTLS_CPUID_OVERRIDE is set: skipping\n");
		exit(77);
	}

	/* the library was initialised at load, before the log function
	 * was set: again, to see what the x86 code detects */
	gnutls_global_deinit();
	gnutls_global_set_log_function(log_func);
	gnutls_global_set_log_level(2);
	ret = gnutls_global_init();
	if (ret < 0)
		fail("gnutls_global_init: %s\n", gnutls_strerror(ret));
	gnutls_global_deinit();

	if (!ssse3_logged) {
		fprintf(stderr, "the x86 code did not run: skipping\n");
		exit(77);
	}
	if (!sha_logged)
		fail("CPUID leaf 7 has the SHA extensions, the library did not "
		     "see them\n");
	if (debug)
		success("the SHA extensions were detected\n");
}
#else
void doit(void)
{
	exit(77);
}
#endif
