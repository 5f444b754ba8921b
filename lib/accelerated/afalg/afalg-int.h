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

#ifndef GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H
#define GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H

#include "gnutls_int.h"
#include "crypto-backend.h"
#include <stdbool.h>
#include <stdint.h>

/* The module registers below the x86 code (80, 90), so that it is asked
 * first; whatever was registered before it becomes its software path. */
#define AFALG_PRIORITY 70

/* Largest key, IV, tag and output of any algorithm in the table. */
#define AFALG_MAX_KEY_SIZE 64
#define AFALG_MAX_IV_SIZE 16 /* also the kernel's CCM counter block */
#define AFALG_MAX_OUTPUT_SIZE 64

/* A single AF_ALG AEAD request (AAD + text + tag) must fit in the socket
 * buffer, or send() blocks before the kernel reads anything.  libkcapi
 * documents the kernel's limit as ALG_MAX_PAGES (16) pages; larger
 * messages go to the software path. */
#define AFALG_AEAD_MAX_REQUEST (16 * 4096)

/* Cipher requests are split at this size, with the IV chained by us. */
#define AFALG_CIPHER_CHUNK (16 * 4096)

enum afalg_family {
	AFALG_CIPHER,
	AFALG_AEAD,
	AFALG_MAC,
	AFALG_DIGEST,
};

/* Row flags */
#define AFALG_CHAIN_IV 1 /* CBC: each call continues from the last block */
#define AFALG_CCM_NONCE \
	2 /* CCM: 7 to 13 byte nonces, formatted for the kernel */

struct kcapi_handle;
struct afalg_md;

/* The software implementation an algorithm falls back to: what GnuTLS had
 * registered before the module (e.g. the x86 code), or its Nettle code. */
union afalg_soft {
	const gnutls_crypto_cipher_st *cipher;
	const gnutls_crypto_mac_st *mac;
	const gnutls_crypto_digest_st *digest;
};

/* One row per algorithm: the facts, and what was found at start-up. */
struct afalg_alg {
	enum afalg_family family;
	int id; /* gnutls_{cipher,mac,digest}_algorithm_t */
	const char *kname; /* kernel crypto API name */
	unsigned key_size; /* 0: any (HMAC keys) */
	unsigned iv_size; /* IV, or AEAD nonce (CCM: the TLS one) */
	unsigned tag_size; /* AEAD tag or MAC/digest output */
	unsigned block_size;
	unsigned flags;

	/* set by _gnutls_afalg_init() */
	bool kernel; /* registered, kernel offers it */
	union afalg_soft soft;
	unsigned long kernel_ops;
	unsigned long soft_ops;
};

extern struct afalg_alg _afalg_algs[];
extern const unsigned _afalg_algs_size;

struct afalg_alg *_afalg_find(enum afalg_family family, int id);
const char *_afalg_name(const struct afalg_alg *alg);
bool _afalg_nonce_ok(const struct afalg_alg *alg, size_t nonce_size);
void _afalg_count(struct afalg_alg *alg, bool kernel);

/* kernel.c: every call into the kernel crypto API goes through these.
 * Ciphers and AEAD go through libkcapi; MACs and digests use the socket
 * API directly, because libkcapi can neither copy a hash state (accept()
 * on the operation socket) nor open close-on-exec sockets. */
bool _afalg_kernel_present(void);
bool _afalg_kernel_offers(const struct afalg_alg *alg);
void _afalg_kernel_driver(const char *kname, char *driver, size_t size);
void _afalg_kernel_deinit(void);

int _afalg_kernel_open(const struct afalg_alg *alg, struct kcapi_handle **h);
void _afalg_kernel_close(const struct afalg_alg *alg, struct kcapi_handle *h);
int _afalg_kernel_setkey(const struct afalg_alg *alg, struct kcapi_handle *h,
			 const void *key, size_t key_size);
int _afalg_kernel_cipher(const struct afalg_alg *alg, struct kcapi_handle *h,
			 int enc, uint8_t *iv, const uint8_t *in, uint8_t *out,
			 size_t size, size_t *done);
int _afalg_kernel_aead(const struct afalg_alg *alg, struct kcapi_handle *h,
		       int enc, const void *nonce, size_t nonce_size,
		       const void *auth, size_t auth_size, const void *in,
		       size_t in_size, void *out, size_t tag_size);

int _afalg_md_open(const struct afalg_alg *alg, struct afalg_md **md);
void _afalg_md_close(struct afalg_md *md);
int _afalg_md_setkey(struct afalg_md *md, const void *key, size_t key_size);
int _afalg_md_update(struct afalg_md *md, const void *data, size_t size);
int _afalg_md_output(struct afalg_md *md, void *out, size_t size);
int _afalg_md_copy(const struct afalg_md *md, struct afalg_md **copy);
struct afalg_md *_afalg_md_oneshot(const struct afalg_alg *alg);
void _afalg_md_oneshot_drop(const struct afalg_alg *alg);

/* cipher.c, mac.c: the callbacks registered with GnuTLS. */
extern const gnutls_crypto_cipher_st _afalg_cipher_ops;
extern const gnutls_crypto_cipher_st _afalg_aead_ops;
extern const gnutls_crypto_mac_st _afalg_mac_ops;
extern const gnutls_crypto_digest_st _afalg_digest_ops;

#endif /* GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H */
