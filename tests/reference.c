/*
 * The Nettle reference of every algorithm of the module (reference.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "reference.h"

#include <string.h>
#include <strings.h>
#include <gnutls/gnutls.h>
#include <nettle/aes.h>
#include <nettle/cbc.h>
#include <nettle/ccm.h>
#include <nettle/hmac.h>
#include <nettle/nettle-meta.h>
#include <nettle/xts.h>

#define AEAD_STATE_WORDS 1024 /* GCM keeps 4 KiB of tables */

static void xts128(const uint8_t *key, int enc, const uint8_t *tweak,
		   size_t len, uint8_t *dst, const uint8_t *src)
{
	struct xts_aes128_key ctx;

	if (enc) {
		xts_aes128_set_encrypt_key(&ctx, key);
		xts_aes128_encrypt_message(&ctx, tweak, len, dst, src);
	} else {
		xts_aes128_set_decrypt_key(&ctx, key);
		xts_aes128_decrypt_message(&ctx, tweak, len, dst, src);
	}
}

static void xts256(const uint8_t *key, int enc, const uint8_t *tweak,
		   size_t len, uint8_t *dst, const uint8_t *src)
{
	struct xts_aes256_key ctx;

	if (enc) {
		xts_aes256_set_encrypt_key(&ctx, key);
		xts_aes256_encrypt_message(&ctx, tweak, len, dst, src);
	} else {
		xts_aes256_set_decrypt_key(&ctx, key);
		xts_aes256_decrypt_message(&ctx, tweak, len, dst, src);
	}
}

static void ccm128(const struct ref_alg *a, const uint8_t *key,
		   const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
		   size_t aad_len, const uint8_t *msg, size_t len, uint8_t *dst)
{
	struct ccm_aes128_ctx ctx;

	ccm_aes128_set_key(&ctx, key);
	ccm_aes128_encrypt_message(&ctx, nonce_len, nonce, aad_len, aad,
				   a->tag_size, len + a->tag_size, dst, msg);
}

static void ccm256(const struct ref_alg *a, const uint8_t *key,
		   const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
		   size_t aad_len, const uint8_t *msg, size_t len, uint8_t *dst)
{
	struct ccm_aes256_ctx ctx;

	ccm_aes256_set_key(&ctx, key);
	ccm_aes256_encrypt_message(&ctx, nonce_len, nonce, aad_len, aad,
				   a->tag_size, len + a->tag_size, dst, msg);
}

/* name, family, GnuTLS id, key size, tag size, Nettle reference */
const struct ref_alg ref_algs[] = {
	{ "AES-128-CBC", F_CBC, GNUTLS_CIPHER_AES_128_CBC, 16, 0,
	  .ncipher = &nettle_aes128 },
	{ "AES-192-CBC", F_CBC, GNUTLS_CIPHER_AES_192_CBC, 24, 0,
	  .ncipher = &nettle_aes192 },
	{ "AES-256-CBC", F_CBC, GNUTLS_CIPHER_AES_256_CBC, 32, 0,
	  .ncipher = &nettle_aes256 },
	{ "AES-128-XTS", F_XTS, GNUTLS_CIPHER_AES_128_XTS, 32, 0,
	  .xts = xts128 },
	{ "AES-256-XTS", F_XTS, GNUTLS_CIPHER_AES_256_XTS, 64, 0,
	  .xts = xts256 },
	{ "AES-128-GCM", F_AEAD, GNUTLS_CIPHER_AES_128_GCM, 16, 16,
	  .naead = &nettle_gcm_aes128 },
	{ "AES-256-GCM", F_AEAD, GNUTLS_CIPHER_AES_256_GCM, 32, 16,
	  .naead = &nettle_gcm_aes256 },
	{ "AES-128-CCM", F_AEAD, GNUTLS_CIPHER_AES_128_CCM, 16, 16,
	  .ccm = ccm128 },
	{ "AES-256-CCM", F_AEAD, GNUTLS_CIPHER_AES_256_CCM, 32, 16,
	  .ccm = ccm256 },
	{ "AES-128-CCM-8", F_AEAD, GNUTLS_CIPHER_AES_128_CCM_8, 16, 8,
	  .ccm = ccm128 },
	{ "AES-256-CCM-8", F_AEAD, GNUTLS_CIPHER_AES_256_CCM_8, 32, 8,
	  .ccm = ccm256 },
	{ "CHACHA20-POLY1305", F_AEAD, GNUTLS_CIPHER_CHACHA20_POLY1305, 32, 16,
	  .naead = &nettle_chacha_poly1305 },
	{ "HMAC-SHA1", F_HMAC, GNUTLS_MAC_SHA1, .nhash = &nettle_sha1 },
	{ "HMAC-SHA224", F_HMAC, GNUTLS_MAC_SHA224, .nhash = &nettle_sha224 },
	{ "HMAC-SHA256", F_HMAC, GNUTLS_MAC_SHA256, .nhash = &nettle_sha256 },
	{ "HMAC-SHA384", F_HMAC, GNUTLS_MAC_SHA384, .nhash = &nettle_sha384 },
	{ "HMAC-SHA512", F_HMAC, GNUTLS_MAC_SHA512, .nhash = &nettle_sha512 },
	{ "AES-CMAC-128", F_CMAC, GNUTLS_MAC_AES_CMAC_128, 16,
	  .nmac = &nettle_cmac_aes128 },
	{ "AES-CMAC-256", F_CMAC, GNUTLS_MAC_AES_CMAC_256, 32,
	  .nmac = &nettle_cmac_aes256 },
	{ "SHA1", F_HASH, GNUTLS_DIG_SHA1, .nhash = &nettle_sha1 },
	{ "SHA224", F_HASH, GNUTLS_DIG_SHA224, .nhash = &nettle_sha224 },
	{ "SHA256", F_HASH, GNUTLS_DIG_SHA256, .nhash = &nettle_sha256 },
	{ "SHA384", F_HASH, GNUTLS_DIG_SHA384, .nhash = &nettle_sha384 },
	{ "SHA512", F_HASH, GNUTLS_DIG_SHA512, .nhash = &nettle_sha512 },
	{ "SHA3-224", F_HASH, GNUTLS_DIG_SHA3_224, .nhash = &nettle_sha3_224 },
	{ "SHA3-256", F_HASH, GNUTLS_DIG_SHA3_256, .nhash = &nettle_sha3_256 },
	{ "SHA3-384", F_HASH, GNUTLS_DIG_SHA3_384, .nhash = &nettle_sha3_384 },
	{ "SHA3-512", F_HASH, GNUTLS_DIG_SHA3_512, .nhash = &nettle_sha3_512 },
};

const size_t ref_algs_size = sizeof(ref_algs) / sizeof(ref_algs[0]);

const struct ref_alg *ref_find(const char *name)
{
	size_t i;

	for (i = 0; i < ref_algs_size; i++)
		if (strcasecmp(ref_algs[i].name, name) == 0)
			return &ref_algs[i];
	return NULL;
}

/* The Nettle contexts must fit the fixed-size buffers here. */
int ref_check(void)
{
	const struct ref_alg *a;
	size_t need, room;

	for (a = ref_algs; a < ref_algs + ref_algs_size; a++) {
		need = 0;
		room = REF_STATE_WORDS * sizeof(uint64_t);
		if (a->naead) {
			need = a->naead->context_size;
			room = AEAD_STATE_WORDS * sizeof(uint64_t);
		} else if (a->nmac) {
			need = a->nmac->context_size;
		} else if (a->nhash) {
			need = 3 * ((a->nhash->context_size + 15) & ~15u);
		}
		if (need > room)
			return -1;
	}
	return 0;
}

int ref_is_cipher(const struct ref_alg *a)
{
	return a->family == F_CBC || a->family == F_XTS;
}

size_t ref_digest_size(const struct ref_alg *a)
{
	if (a->nmac)
		return a->nmac->digest_size;
	return a->nhash ? a->nhash->digest_size : a->tag_size;
}

size_t ref_iv_size(const struct ref_alg *a)
{
	if (ref_is_cipher(a))
		return REF_BLOCK;
	return a->family == F_AEAD ? 12 : 0;
}

void ref_cipher(const struct ref_alg *a, const uint8_t *key, uint8_t *iv,
		int enc, size_t len, uint8_t *dst, const uint8_t *src)
{
	union {
		struct aes128_ctx aes128;
		struct aes192_ctx aes192;
		struct aes256_ctx aes256;
	} ctx;

	if (a->xts) {
		a->xts(key, enc, iv, len, dst, src);
	} else if (enc) {
		a->ncipher->set_encrypt_key(&ctx, key);
		cbc_encrypt(&ctx, a->ncipher->encrypt, REF_BLOCK, iv, len, dst,
			    src);
	} else {
		a->ncipher->set_decrypt_key(&ctx, key);
		cbc_decrypt(&ctx, a->ncipher->decrypt, REF_BLOCK, iv, len, dst,
			    src);
	}
}

void ref_aead(const struct ref_alg *a, const uint8_t *key, const uint8_t *nonce,
	      size_t nonce_len, const uint8_t *aad, size_t aad_len,
	      const uint8_t *msg, size_t len, uint8_t *dst)
{
	uint64_t ctx[AEAD_STATE_WORDS];

	if (a->ccm) {
		a->ccm(a, key, nonce, nonce_len, aad, aad_len, msg, len, dst);
		return;
	}
	/* GCM and ChaCha20-Poly1305 through nettle-meta's generic AEAD */
	a->naead->set_encrypt_key(ctx, key);
	a->naead->set_nonce(ctx, nonce);
	a->naead->update(ctx, aad_len, aad);
	a->naead->encrypt(ctx, len, dst, msg);
	a->naead->digest(ctx, a->tag_size, dst + len);
}

/* HMAC takes a key of any length through the generic hmac_*() calls
 * over a nettle_hash: outer, inner and running state side by side. */
void ref_init(struct ref_stream *s, const struct ref_alg *a, const uint8_t *key,
	      size_t key_len)
{
	uint8_t *p = (uint8_t *)s->st;

	s->a = a;
	s->cs = a->nhash ? (a->nhash->context_size + 15) & ~(size_t)15 : 0;
	if (a->family == F_HASH)
		a->nhash->init(p);
	else if (a->family == F_HMAC)
		hmac_set_key(p, p + s->cs, p + 2 * s->cs, a->nhash, key_len,
			     key);
	else
		a->nmac->set_key(p, key);
}

void ref_update(struct ref_stream *s, const uint8_t *data, size_t len)
{
	uint8_t *p = (uint8_t *)s->st;

	if (s->a->family == F_HASH)
		s->a->nhash->update(p, len, data);
	else if (s->a->family == F_HMAC)
		hmac_update(p + 2 * s->cs, s->a->nhash, len, data);
	else
		s->a->nmac->update(p, len, data);
}

void ref_digest(struct ref_stream *s, uint8_t *out)
{
	uint8_t *p = (uint8_t *)s->st;
	size_t size = ref_digest_size(s->a);

	if (s->a->family == F_HASH)
		s->a->nhash->digest(p, size, out);
	else if (s->a->family == F_HMAC)
		hmac_digest(p, p + s->cs, p + 2 * s->cs, s->a->nhash, size,
			    out);
	else
		s->a->nmac->digest(p, size, out);
}

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

size_t rng_below(struct rng *r, size_t n)
{
	return n ? (size_t)(rng_next(r) % n) : 0;
}

void rng_fill(struct rng *r, uint8_t *p, size_t len)
{
	uint64_t v;

	while (len >= 8) {
		v = rng_next(r);
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		v = rng_next(r);
		memcpy(p, &v, len);
	}
}

void rng_seed(struct rng *r, unsigned long long seed, const char *name)
{
	r->s = seed;
	while (*name)
		r->s = (r->s ^ (unsigned char)*name++) * 0x100000001b3ULL;
	rng_next(r);
}
