/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * The GnuTLS is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public License
 * as published by the Free Software Foundation; either version 2.1 of
 * the License, or (at your option) any later version.
 *
 * This library is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>
 *
 */

/* Registration of the kernel crypto API (AF_ALG) backend.  Each algorithm
 * of the table that the kernel offers is registered ahead of what GnuTLS
 * had for it, and what GnuTLS had becomes its software path. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "crypto.h"
#include "cipher_int.h"
#include "hash_int.h"
#include <accelerated/afalg.h>

#include <stdio.h>

static const char *const family_names[] = {
	[AFALG_CIPHER] = "cipher",
	[AFALG_AEAD] = "aead",
	[AFALG_MAC] = "mac",
	[AFALG_DIGEST] = "digest",
};

/* Takes what GnuTLS has for the algorithm as the software path, then
 * registers the module in front of it. */
static int register_alg(struct afalg_alg *alg)
{
	switch (alg->family) {
	case AFALG_CIPHER:
	case AFALG_AEAD:
		alg->soft.cipher = _gnutls_get_crypto_cipher(alg->id);
		if (alg->soft.cipher == NULL)
			alg->soft.cipher = &_gnutls_cipher_ops;
		return gnutls_crypto_single_cipher_register(
			alg->id, AFALG_PRIORITY,
			alg->family == AFALG_AEAD ? &_afalg_aead_ops :
						    &_afalg_cipher_ops,
			0);
	case AFALG_MAC:
		alg->soft.mac = _gnutls_get_crypto_mac(alg->id);
		if (alg->soft.mac == NULL)
			alg->soft.mac = &_gnutls_mac_ops;
		return gnutls_crypto_single_mac_register(
			alg->id, AFALG_PRIORITY, &_afalg_mac_ops, 0);
	case AFALG_DIGEST:
		alg->soft.digest = _gnutls_get_crypto_digest(alg->id);
		if (alg->soft.digest == NULL)
			alg->soft.digest = &_gnutls_digest_ops;
		return gnutls_crypto_single_digest_register(
			alg->id, AFALG_PRIORITY, &_afalg_digest_ops, 0);
	}
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

static void log_registered(const struct afalg_alg *alg)
{
	char driver[128];

	if (_gnutls_log_level < 2)
		return;
	_afalg_kernel_driver(alg->kname, driver, sizeof(driver));
	_gnutls_debug_log("afalg: registered %s %s as %s (driver %s)\n",
			  family_names[alg->family], _afalg_name(alg),
			  alg->kname, driver);
}

int _gnutls_afalg_init(void)
{
	unsigned i, registered = 0;
	int ret;

	if (!_afalg_kernel_present())
		return 0;

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if (!_afalg_kernel_offers(alg)) {
			_gnutls_debug_log("afalg: kernel has no %s\n",
					  alg->kname);
			continue;
		}
		ret = register_alg(alg);
		if (ret < 0) {
			_gnutls_debug_log("afalg: cannot register %s: %s\n",
					  _afalg_name(alg),
					  gnutls_strerror(ret));
			continue;
		}
		alg->kernel = true;
		registered++;
		log_registered(alg);
	}
	_gnutls_debug_log("afalg: %u of %u algorithms registered\n", registered,
			  _afalg_algs_size);
	return 0;
}

/* The statistics say which path carried the work; tests read them from
 * the debug log (GNUTLS_DEBUG_LEVEL=2). */
void _gnutls_afalg_deinit(void)
{
	unsigned i;

	_afalg_kernel_deinit();
	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];
		unsigned long kernel_ops, soft_ops;

		if (!alg->kernel)
			continue;
		alg->kernel = false;
		kernel_ops =
			__atomic_load_n(&alg->kernel_ops, __ATOMIC_RELAXED);
		soft_ops = __atomic_load_n(&alg->soft_ops, __ATOMIC_RELAXED);
		if (kernel_ops + soft_ops == 0)
			continue;
		_gnutls_debug_log(
			"afalg: stats %s %s: %lu kernel, %lu software\n",
			family_names[alg->family], _afalg_name(alg), kernel_ops,
			soft_ops);
	}
}
