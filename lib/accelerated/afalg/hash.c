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

/* MACs and digests.  Their contexts are GnuTLS's own code: the module
 * registers, for each algorithm, the software's own functions, and only
 * the one-shot calls (gnutls_hmac_fast(), gnutls_hash_fast()) are its
 * own, sent to the kernel by their size.
 *
 * So the record layer's MACs stay as constant-time as GnuTLS makes them:
 * lib/cipher-cbc.c feeds a CBC record's MAC extra blocks
 * (dummy_wait()) so that the number of compression-function calls does
 * not depend on the padding, and a MAC context that held its message
 * for the kernel, or chose the kernel by the message's length at its
 * end, would undo it.  And no MAC or digest state ever lives in the
 * kernel: gnutls_hmac_output(), gnutls_hash_output() and a record's MAC
 * check cannot fail.  A one-shot call has its whole message in hand:
 * software answers whenever the kernel fails. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

/* A MAC with a fixed key size (CMAC) refuses others here: Nettle would
 * abort the process on them. */
static bool key_size_ok(const struct afalg_alg *alg, size_t key_size)
{
	return alg->key_size == 0 || key_size == alg->key_size;
}

static int afalg_mac_fast(gnutls_mac_algorithm_t algo, const void *nonce,
			  size_t nonce_size, const void *key, size_t key_size,
			  const void *text, size_t text_size, void *digest)
{
	struct afalg_alg *alg = _afalg_find(AFALG_MAC, algo);

	if (alg == NULL || !key_size_ok(alg, key_size))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (nonce_size == 0 && _afalg_use_kernel(alg, 1, text_size) &&
	    _afalg_kernel_hash_fast(alg, key, key_size, text, text_size,
				    digest) == 0) {
		_afalg_count(alg, true);
		return 0;
	}
	_afalg_count(alg, false);
	return alg->soft.mac->fast(algo, nonce, nonce_size, key, key_size, text,
				   text_size, digest);
}

static int afalg_digest_fast(gnutls_digest_algorithm_t algo, const void *text,
			     size_t text_size, void *digest)
{
	struct afalg_alg *alg = _afalg_find(AFALG_DIGEST, algo);

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (_afalg_use_kernel(alg, 1, text_size) &&
	    _afalg_kernel_hash_fast(alg, NULL, 0, text, text_size, digest) ==
		    0) {
		_afalg_count(alg, true);
		return 0;
	}
	_afalg_count(alg, false);
	return alg->soft.digest->fast(algo, text, text_size, digest);
}

/* CMAC's key is the cipher's: a key of another size is refused here, in
 * front of software's own setkey (Nettle would abort the process). */
static int cmac_setkey(gnutls_mac_algorithm_t id, void *ctx, const void *key,
		       size_t key_size)
{
	const struct afalg_alg *alg = _afalg_find(AFALG_MAC, id);

	if (alg == NULL || key_size != alg->key_size)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return alg->soft.mac->setkey(ctx, key, key_size);
}

static int cmac128_setkey(void *ctx, const void *key, size_t key_size)
{
	return cmac_setkey(GNUTLS_MAC_AES_CMAC_128, ctx, key, key_size);
}

static int cmac256_setkey(void *ctx, const void *key, size_t key_size)
{
	return cmac_setkey(GNUTLS_MAC_AES_CMAC_256, ctx, key, key_size);
}

/* What is registered for a MAC or digest: software's own functions for
 * its contexts, the module's for the one-shot call. */
void _afalg_hash_ops(struct afalg_alg *alg)
{
	if (alg->family == AFALG_DIGEST) {
		alg->ops.digest = *alg->soft.digest;
		alg->ops.digest.fast = afalg_digest_fast;
		return;
	}
	alg->ops.mac = *alg->soft.mac;
	alg->ops.mac.fast = afalg_mac_fast;
	if (alg->id == GNUTLS_MAC_AES_CMAC_128)
		alg->ops.mac.setkey = cmac128_setkey;
	else if (alg->id == GNUTLS_MAC_AES_CMAC_256)
		alg->ops.mac.setkey = cmac256_setkey;
}
