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

/* gnutls_global_deinit() must drop every algorithm registered before it,
 * the first one too, which the head of its list holds.  The x86 code's
 * first registration is its AES-128-GCM (right after it logs "Intel
 * SSSE3 was detected"), which refuses an 8-byte nonce where Nettle takes
 * one: after the library is initialised again with the x86 code switched
 * off (GNUTLS_CPUID_OVERRIDE=0x1), AES-128-GCM must be Nettle's.  Where
 * the x86 AES-GCM is not the first registration (another CPU, no SSSE3,
 * a build without the x86 code) the test cannot tell, and is skipped.
 * The library's log of its initialization tells; it is read in a child
 * process that initialises the library again, so that the test itself
 * runs on the registrations of the library's first initialization, as
 * they were before any deinitialization. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "utils.h"

#if defined(_WIN32)

void doit(void)
{
	exit(77);
}

#else

#include <sys/wait.h>
#include <unistd.h>

static int ssse3_logged;

static void log_func(int level, const char *str)
{
	if (strstr(str, "Intel SSSE3 was detected") != NULL)
		ssse3_logged = 1;
	if (debug)
		fprintf(stderr, "|<%d>| %s", level, str);
}

static int gcm_init_8(void)
{
	static unsigned char key_data[16], iv_data[8];
	gnutls_datum_t key = { key_data, sizeof(key_data) };
	gnutls_datum_t iv = { iv_data, sizeof(iv_data) };
	gnutls_cipher_hd_t h;
	int ret;

	ret = gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &key, &iv);
	if (ret == 0)
		gnutls_cipher_deinit(h);
	return ret;
}

/* Whether the x86 AES-GCM is the first algorithm the library registers:
 * asked in a child, which initialises the library again to see its log
 * (the library was initialised at load, before a log function was
 * set). */
static int x86_gcm_first(void)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		fail("fork failed\n");
	if (pid == 0) {
		gnutls_global_deinit();
		gnutls_global_set_log_function(log_func);
		gnutls_global_set_log_level(2);
		if (gnutls_global_init() < 0)
			_exit(2);
		_exit(ssse3_logged && gcm_init_8() < 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) > 1)
		fail("the child failed\n");
	return WEXITSTATUS(status) == 0;
}

void doit(void)
{
	int ret;

	if (getenv("GNUTLS_CPUID_OVERRIDE") != NULL) {
		if (debug)
			success("GNUTLS_CPUID_OVERRIDE is set: skipping\n");
		exit(77);
	}
	if (!x86_gcm_first()) {
		fprintf(stderr, "the x86 AES-GCM is not the first algorithm "
				"registered here: skipping\n");
		exit(77);
	}

	gnutls_global_deinit();
	if (setenv("GNUTLS_CPUID_OVERRIDE", "0x1", 1) < 0)
		fail("setenv failed\n");
	ret = gnutls_global_init();
	if (ret < 0)
		fail("gnutls_global_init: %s\n", gnutls_strerror(ret));

	ret = gcm_init_8();
	if (ret < 0)
		fail("after a re-initialization without the x86 code, "
		     "AES-128-GCM is still the x86 code's: %s\n",
		     gnutls_strerror(ret));
	gnutls_global_deinit();
	if (debug)
		success("the first registration is gone at deinit\n");
}

#endif /* _WIN32 */
