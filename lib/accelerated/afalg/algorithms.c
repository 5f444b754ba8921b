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

/* The algorithms the module can hand to the kernel.  Adding an algorithm
 * is adding a row: registration, the software path and the statistics are
 * all driven by this table. */

#include "config.h"
#include "afalg-int.h"

#define CIPHER(_id, _kname, _key, _iv, _block)                     \
	{                                                          \
		.family = AFALG_CIPHER, .id = GNUTLS_CIPHER_##_id, \
		.kname = _kname, .key_size = _key, .iv_size = _iv, \
		.block_size = _block                               \
	}

#define AEAD(_id, _kname, _key, _iv, _tag)                         \
	{                                                          \
		.family = AFALG_AEAD, .id = GNUTLS_CIPHER_##_id,   \
		.kname = _kname, .key_size = _key, .iv_size = _iv, \
		.tag_size = _tag, .block_size = 1                  \
	}

#define MAC(_id, _kname, _out, _block)                                        \
	{                                                                     \
		.family = AFALG_MAC, .id = GNUTLS_MAC_##_id, .kname = _kname, \
		.tag_size = _out, .block_size = _block                        \
	}

#define DIGEST(_id, _kname, _out, _block)                               \
	{                                                               \
		.family = AFALG_DIGEST, .id = GNUTLS_DIG_##_id,         \
		.kname = _kname, .tag_size = _out, .block_size = _block \
	}

struct afalg_alg _afalg_algs[] = {
	CIPHER(AES_128_CBC, "cbc(aes)", 16, 16, 16),
	AEAD(AES_128_GCM, "gcm(aes)", 16, 12, 16),
	MAC(SHA256, "hmac(sha256)", 32, 64),
	DIGEST(SHA256, "sha256", 32, 64),
};

const unsigned _afalg_algs_size = sizeof(_afalg_algs) / sizeof(_afalg_algs[0]);

struct afalg_alg *_afalg_find(enum afalg_family family, int id)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if (alg->id == id &&
		    (alg->family == family ||
		     (family == AFALG_CIPHER && alg->family == AFALG_AEAD)))
			return alg;
	}
	return NULL;
}

const char *_afalg_name(const struct afalg_alg *alg)
{
	switch (alg->family) {
	case AFALG_CIPHER:
	case AFALG_AEAD:
		return gnutls_cipher_get_name(alg->id);
	case AFALG_MAC:
		return gnutls_mac_get_name(alg->id);
	case AFALG_DIGEST:
		return gnutls_digest_get_name(alg->id);
	}
	return "unknown";
}

void _afalg_count(struct afalg_alg *alg, bool kernel)
{
	__atomic_fetch_add(kernel ? &alg->kernel_ops : &alg->soft_ops, 1,
			   __ATOMIC_RELAXED);
}
