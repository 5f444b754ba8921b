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
 * is adding a row: settings, registration, the software path and the
 * statistics are all driven by this table. */

#include "config.h"
#include "afalg-int.h"
#include "c-strcase.h"

#include <string.h>

#define CIPHER(_id, _label, _kname, _key, _iv, _block, _flags)        \
	{                                                             \
		.family = AFALG_CIPHER, .id = GNUTLS_CIPHER_##_id,    \
		.label = _label, .kname = _kname, .key_size = _key,   \
		.iv_size = _iv, .block_size = _block, .flags = _flags \
	}

#define AEAD(_id, _label, _kname, _key, _nonce, _tag, _flags)         \
	{                                                             \
		.family = AFALG_AEAD, .id = GNUTLS_CIPHER_##_id,      \
		.label = _label, .kname = _kname, .key_size = _key,   \
		.iv_size = _nonce, .tag_size = _tag, .block_size = 1, \
		.flags = _flags                                       \
	}

#define MAC(_id, _label, _kname, _key, _out, _block)                          \
	{                                                                     \
		.family = AFALG_MAC, .id = GNUTLS_MAC_##_id, .label = _label, \
		.kname = _kname, .key_size = _key, .tag_size = _out,          \
		.block_size = _block                                          \
	}

#define DIGEST(_id, _label, _kname, _out, _block)                   \
	{                                                           \
		.family = AFALG_DIGEST, .id = GNUTLS_DIG_##_id,     \
		.label = _label, .kname = _kname, .tag_size = _out, \
		.block_size = _block                                \
	}

struct afalg_alg _afalg_algs[] = {
	CIPHER(AES_128_CBC, "AES-128-CBC", "cbc(aes)", 16, 16, 16,
	       AFALG_CHAIN_IV),
	CIPHER(AES_192_CBC, "AES-192-CBC", "cbc(aes)", 24, 16, 16,
	       AFALG_CHAIN_IV),
	CIPHER(AES_256_CBC, "AES-256-CBC", "cbc(aes)", 32, 16, 16,
	       AFALG_CHAIN_IV),
	CIPHER(AES_128_XTS, "AES-128-XTS", "xts(aes)", 32, 16, 16, 0),
	CIPHER(AES_256_XTS, "AES-256-XTS", "xts(aes)", 64, 16, 16, 0),

	AEAD(AES_128_GCM, "AES-128-GCM", "gcm(aes)", 16, 12, 16, 0),
	AEAD(AES_256_GCM, "AES-256-GCM", "gcm(aes)", 32, 12, 16, 0),
	AEAD(AES_128_CCM, "AES-128-CCM", "ccm(aes)", 16, 12, 16,
	     AFALG_CCM_NONCE),
	AEAD(AES_256_CCM, "AES-256-CCM", "ccm(aes)", 32, 12, 16,
	     AFALG_CCM_NONCE),
	AEAD(AES_128_CCM_8, "AES-128-CCM-8", "ccm(aes)", 16, 12, 8,
	     AFALG_CCM_NONCE),
	AEAD(AES_256_CCM_8, "AES-256-CCM-8", "ccm(aes)", 32, 12, 8,
	     AFALG_CCM_NONCE),
	AEAD(CHACHA20_POLY1305, "CHACHA20-POLY1305",
	     "rfc7539(chacha20,poly1305)", 32, 12, 16, 0),

	MAC(SHA1, "HMAC-SHA1", "hmac(sha1)", 0, 20, 64),
	MAC(SHA224, "HMAC-SHA224", "hmac(sha224)", 0, 28, 64),
	MAC(SHA256, "HMAC-SHA256", "hmac(sha256)", 0, 32, 64),
	MAC(SHA384, "HMAC-SHA384", "hmac(sha384)", 0, 48, 128),
	MAC(SHA512, "HMAC-SHA512", "hmac(sha512)", 0, 64, 128),
	MAC(AES_CMAC_128, "AES-CMAC-128", "cmac(aes)", 16, 16, 16),
	MAC(AES_CMAC_256, "AES-CMAC-256", "cmac(aes)", 32, 16, 16),

	DIGEST(SHA1, "SHA1", "sha1", 20, 64),
	DIGEST(SHA224, "SHA224", "sha224", 28, 64),
	DIGEST(SHA256, "SHA256", "sha256", 32, 64),
	DIGEST(SHA384, "SHA384", "sha384", 48, 128),
	DIGEST(SHA512, "SHA512", "sha512", 64, 128),
	DIGEST(SHA3_224, "SHA3-224", "sha3-224", 28, 144),
	DIGEST(SHA3_256, "SHA3-256", "sha3-256", 32, 136),
	DIGEST(SHA3_384, "SHA3-384", "sha3-384", 48, 104),
	DIGEST(SHA3_512, "SHA3-512", "sha3-512", 64, 72),
};

const unsigned _afalg_algs_size = sizeof(_afalg_algs) / sizeof(_afalg_algs[0]);
_Static_assert(sizeof(_afalg_algs) / sizeof(_afalg_algs[0]) <= AFALG_MAX_ALGS,
	       "AFALG_MAX_ALGS is too small for the table");

/* The rows by GnuTLS id, per kind of id (cipher and AEAD share one), so
 * that the one-shot calls find theirs at once. */
#define MAX_ID 256
static struct afalg_alg *by_id[3][MAX_ID];

static unsigned id_kind(enum afalg_family family)
{
	return family == AFALG_CIPHER || family == AFALG_AEAD ? 0 :
	       family == AFALG_MAC			      ? 1 :
								2;
}

static const char *lookup_name(const struct afalg_alg *alg)
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
	return NULL;
}

/* Whether a row's label is GnuTLS's name for its id, or for a MAC
 * "HMAC-" and the digest's name. */
static bool label_is_gnutls(const struct afalg_alg *alg)
{
	const char *name = lookup_name(alg);

	if (name == NULL)
		return false;
	if (alg->family == AFALG_MAC && strncmp(alg->label, "HMAC-", 5) == 0)
		return strcmp(alg->label + 5, name) == 0;
	return strcmp(alg->label, name) == 0;
}

/* The lookups by id.  The labels are checked against GnuTLS's names only
 * when debugging (tests do): at start-up, every other process would pay
 * for the search. */
void _afalg_index(void)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if (alg->id >= 0 && alg->id < MAX_ID)
			by_id[id_kind(alg->family)][alg->id] = alg;
		if (unlikely(_gnutls_log_level >= 2) && !label_is_gnutls(alg))
			_gnutls_debug_log("afalg: the table's %s is not "
					  "GnuTLS's name for it\n",
					  alg->label);
	}
}

struct afalg_alg *_afalg_find(enum afalg_family family, int id)
{
	if (id < 0 || id >= MAX_ID)
		return NULL;
	return by_id[id_kind(family)][id];
}

/* GnuTLS's name for the algorithm (for MACs, that of the digest). */
const char *_afalg_name(const struct afalg_alg *alg)
{
	const char *name = lookup_name(alg);

	return name != NULL ? name : "unknown";
}

/* AF_ALG's type for the algorithm's family. */
const char *_afalg_type(const struct afalg_alg *alg)
{
	static const char *const types[] = {
		[AFALG_CIPHER] = "skcipher",
		[AFALG_AEAD] = "aead",
		[AFALG_MAC] = "hash",
		[AFALG_DIGEST] = "hash",
	};

	return types[alg->family];
}

/* CCM takes any nonce of 7 to 13 bytes; the others their own size. */
bool _afalg_nonce_ok(const struct afalg_alg *alg, size_t nonce_size)
{
	if (alg->flags & AFALG_CCM_NONCE)
		return nonce_size >= 7 && nonce_size <= 13;
	return nonce_size == alg->iv_size;
}

/* The row an operator's name stands for (the label, in any case). */
struct afalg_alg *_afalg_find_label(const char *s, size_t len)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++)
		if (strlen(_afalg_algs[i].label) == len &&
		    c_strncasecmp(s, _afalg_algs[i].label, len) == 0)
			return &_afalg_algs[i];
	return NULL;
}

/* The IV the kernel takes: the nonce, but for CCM the first counter
 * block (the length of the length field minus one, then the nonce: RFC
 * 3610).  Returns its size. */
size_t _afalg_kernel_iv(const struct afalg_alg *alg, const void *nonce,
			size_t nonce_size, uint8_t iv[AFALG_MAX_IV_SIZE])
{
	if (!(alg->flags & AFALG_CCM_NONCE)) {
		memcpy(iv, nonce, nonce_size);
		return nonce_size;
	}
	memset(iv, 0, AFALG_MAX_IV_SIZE);
	iv[0] = 15 - nonce_size - 1;
	memcpy(iv + 1, nonce, nonce_size);
	return AFALG_MAX_IV_SIZE;
}
