/*
 * The Nettle reference of every algorithm of the module, and the test
 * data generator, shared by the test programs: one row per algorithm,
 * generic code over the rows (nettle-meta where Nettle has it).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef AFALG_TESTS_REFERENCE_H
#define AFALG_TESTS_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#define REF_MAX_KEY 64
#define REF_MAX_HMAC_KEY 200
#define REF_MAX_TAG 16
#define REF_MAX_DIGEST 64
#define REF_BLOCK 16
#define REF_STATE_WORDS 512 /* digest, HMAC and CMAC contexts */

enum family {
	F_CBC,
	F_XTS,
	F_AEAD,
	F_HMAC,
	F_CMAC,
	F_HASH
};

struct ref_alg;

/* Sets the key and encrypts or decrypts one data unit. */
typedef void xts_ref_fn(const uint8_t *key, int enc, const uint8_t *tweak,
			size_t len, uint8_t *dst, const uint8_t *src);
/* Writes ciphertext || tag. */
typedef void ccm_ref_fn(const struct ref_alg *a, const uint8_t *key,
			const uint8_t *nonce, size_t nonce_len,
			const uint8_t *aad, size_t aad_len, const uint8_t *msg,
			size_t len, uint8_t *dst);

struct nettle_cipher;
struct nettle_aead;
struct nettle_hash;
struct nettle_mac;

/* One row per algorithm: the GnuTLS id and the Nettle reference. */
struct ref_alg {
	const char *name; /* as the module's GNUTLS_AFALG names it */
	enum family family;
	int id; /* gnutls_cipher_algorithm_t, _mac_ or _digest_ */
	size_t key_size; /* 0: HMAC (any length) or digest */
	size_t tag_size; /* AEAD tag */
	/* the Nettle reference: one of these */
	const struct nettle_cipher *ncipher; /* CBC */
	xts_ref_fn *xts;
	const struct nettle_aead *naead; /* GCM, ChaCha20-Poly1305 */
	ccm_ref_fn *ccm;
	const struct nettle_hash *nhash; /* digest, HMAC */
	const struct nettle_mac *nmac; /* CMAC */
};

extern const struct ref_alg ref_algs[];
extern const size_t ref_algs_size;

const struct ref_alg *ref_find(const char *name);
int ref_check(void); /* -1: a Nettle context outgrows the buffers */
int ref_is_cipher(const struct ref_alg *a); /* CBC or XTS */
size_t ref_digest_size(const struct ref_alg *a);
size_t ref_iv_size(const struct ref_alg *a); /* IV or AEAD nonce */

/* CBC: iv is the chaining value and moves on; XTS: one data unit. */
void ref_cipher(const struct ref_alg *a, const uint8_t *key, uint8_t *iv,
		int enc, size_t len, uint8_t *dst, const uint8_t *src);

/* dst gets ciphertext || tag. */
void ref_aead(const struct ref_alg *a, const uint8_t *key, const uint8_t *nonce,
	      size_t nonce_len, const uint8_t *aad, size_t aad_len,
	      const uint8_t *msg, size_t len, uint8_t *dst);

/* A digest, HMAC or CMAC message; a plain struct, so assignment copies
 * the state. */
struct ref_stream {
	const struct ref_alg *a;
	size_t cs; /* HMAC: offset between its three hash contexts */
	uint64_t st[REF_STATE_WORDS];
};

void ref_init(struct ref_stream *s, const struct ref_alg *a, const uint8_t *key,
	      size_t key_len);
void ref_update(struct ref_stream *s, const uint8_t *data, size_t len);
void ref_digest(struct ref_stream *s, uint8_t *out); /* and restarts */

/* splitmix64: small, fast and good enough for test data. */
struct rng {
	uint64_t s;
};

uint64_t rng_next(struct rng *r);
size_t rng_below(struct rng *r, size_t n); /* 0..n-1, 0 if n is 0 */
void rng_fill(struct rng *r, uint8_t *p, size_t len);
void rng_seed(struct rng *r, unsigned long long seed, const char *name);

#endif /* AFALG_TESTS_REFERENCE_H */
