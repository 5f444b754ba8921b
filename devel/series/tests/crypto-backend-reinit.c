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

/* gnutls_global_deinit() must drop every algorithm registered before it.
 * The first registration of the x86 code is its AES-128-GCM, which
 * refuses an 8-byte nonce where Nettle takes one: after the library is
 * initialised again with the x86 code switched off
 * (GNUTLS_CPUID_OVERRIDE=0x1), AES-128-GCM must be Nettle's, not what
 * the previous initialisation had registered. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "utils.h"

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

void doit(void)
{
	int ret;

	/* the library was initialised at load, the x86 code on */
	if (gcm_init_8() == 0) {
		if (debug)
			success("no x86 AES-GCM registered here: skipping\n");
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
		success("the registrations of the first initialisation are "
			"gone\n");
}
