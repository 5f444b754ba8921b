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

/* AEAD ciphers.  A context always has the software implementation
 * GnuTLS had before the module, which holds the key and checks it, and
 * serves every call the kernel does not take: the incremental calls,
 * sizes the kernel refuses, operations below the algorithm's threshold,
 * and any kernel failure, a tag the kernel rejects included.  A kernel
 * socket is opened when an operation first goes to the kernel, in the
 * process that uses it; a context that fails in the kernel
 * AFALG_MAX_FAILURES times in a row stays in software. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <string.h>

struct afalg_aead_ctx {
	struct afalg_alg *alg;
	const gnutls_crypto_cipher_st *soft_ops;
	void *soft;
	int enc;
	bool keyed;
	struct afalg_sock sock;
	unsigned failures; /* kernel failures in a row */
	uint8_t key[AFALG_MAX_KEY_SIZE];
	/* the incremental calls' IV, for a new software context */
	uint8_t iv[AFALG_MAX_IV_SIZE];
	size_t iv_size;
};

static int afalg_aead_init(gnutls_cipher_algorithm_t algo, void **_ctx, int enc)
{
	struct afalg_alg *alg = _afalg_find(AFALG_AEAD, algo);
	struct afalg_aead_ctx *ctx;
	int ret;

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ctx = gnutls_calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	ctx->alg = alg;
	ctx->soft_ops = alg->soft.cipher;
	ctx->enc = enc;
	AFALG_SOCK_INIT(&ctx->sock);
	ret = ctx->soft_ops->init(algo, &ctx->soft, enc);
	if (ret < 0) {
		gnutls_free(ctx);
		return ret;
	}
	*_ctx = ctx;
	return 0;
}

/* A key is the algorithm's size, as Nettle has it (GnuTLS 3.7.9's x86
 * CCM takes a key of any size, and one it cannot expand leaves the
 * context without a key schedule), and goes into a new software
 * context, so that a refused key leaves the context as it was. */
static int afalg_aead_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_aead_ctx *ctx = _ctx;
	void *soft = ctx->soft;
	int ret;

	if (key_size != ctx->alg->key_size)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (ctx->keyed) {
		ret = ctx->soft_ops->init(ctx->alg->id, &soft, ctx->enc);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	ret = ctx->soft_ops->setkey(soft, key, key_size);
	if (ret == 0 && soft != ctx->soft && ctx->iv_size > 0)
		ret = ctx->soft_ops->setiv(soft, ctx->iv, ctx->iv_size);
	if (ret < 0) {
		if (soft != ctx->soft)
			ctx->soft_ops->deinit(soft);
		return gnutls_assert_val(ret);
	}
	if (soft != ctx->soft) {
		ctx->soft_ops->deinit(ctx->soft);
		ctx->soft = soft;
	}
	ctx->keyed = true;
	/* the kernel socket has the old key */
	_afalg_sock_close(&ctx->sock);
	memcpy(ctx->key, key, key_size);
	return 0;
}

static int afalg_aead_setiv(void *_ctx, const void *iv, size_t iv_size)
{
	struct afalg_aead_ctx *ctx = _ctx;
	int ret;

	if (ctx->soft_ops->setiv == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ret = ctx->soft_ops->setiv(ctx->soft, iv, iv_size);
	if (ret < 0)
		return gnutls_assert_val(ret);
	ctx->iv_size = iv_size <= sizeof(ctx->iv) ? iv_size : 0;
	memcpy(ctx->iv, iv, ctx->iv_size);
	return 0;
}

static int afalg_aead_getiv(void *_ctx, void *iv, size_t iv_size)
{
	struct afalg_aead_ctx *ctx = _ctx;

	if (ctx->soft_ops->getiv == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return ctx->soft_ops->getiv(ctx->soft, iv, iv_size);
}

/* The incremental AEAD calls (gnutls_cipher_init() with an AEAD
 * algorithm, and gnutls_aead_cipher_encryptv() for GCM and
 * ChaCha20-Poly1305) are software's: the kernel gives no result before
 * it has the whole message. */
static int afalg_aead_crypt(struct afalg_aead_ctx *ctx, int enc, const void *in,
			    size_t in_size, void *out, size_t out_size)
{
	if ((enc ? ctx->soft_ops->encrypt : ctx->soft_ops->decrypt) == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	_afalg_count(ctx->alg, false);
	if (enc)
		return ctx->soft_ops->encrypt(ctx->soft, in, in_size, out,
					      out_size);
	return ctx->soft_ops->decrypt(ctx->soft, in, in_size, out, out_size);
}

static int afalg_aead_encrypt_part(void *ctx, const void *in, size_t in_size,
				   void *out, size_t out_size)
{
	return afalg_aead_crypt(ctx, 1, in, in_size, out, out_size);
}

static int afalg_aead_decrypt_part(void *ctx, const void *in, size_t in_size,
				   void *out, size_t out_size)
{
	return afalg_aead_crypt(ctx, 0, in, in_size, out, out_size);
}

static int afalg_aead_auth(void *_ctx, const void *data, size_t size)
{
	struct afalg_aead_ctx *ctx = _ctx;

	if (ctx->soft_ops->auth == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return ctx->soft_ops->auth(ctx->soft, data, size);
}

static void afalg_aead_tag(void *_ctx, void *tag, size_t size)
{
	struct afalg_aead_ctx *ctx = _ctx;

	if (ctx->soft_ops->tag != NULL)
		ctx->soft_ops->tag(ctx->soft, tag, size);
}

/* The kernel takes the algorithm's own nonce and tag sizes, one request
 * at a time.  A decryption with neither AAD nor text is left to
 * software: its empty result cannot be read back. */
static bool aead_in_kernel(struct afalg_aead_ctx *ctx, int enc,
			   size_t nonce_size, size_t auth_size,
			   size_t text_size, size_t tag_size)
{
	struct afalg_alg *alg = ctx->alg;

	/* the algorithm's first use, which may open AF_ALG, last */
	return ctx->keyed && ctx->failures < AFALG_MAX_FAILURES &&
	       _afalg_nonce_ok(alg, nonce_size) && tag_size == alg->tag_size &&
	       auth_size + text_size + tag_size <= AFALG_MAX_REQUEST &&
	       (enc || auth_size + text_size > 0) &&
	       _afalg_use_kernel(alg, !enc, text_size);
}

/* A kernel request failed, or no socket could be opened: the next one
 * opens a new socket, unless the context has failed too often. */
static void kernel_failed(struct afalg_aead_ctx *ctx)
{
	_afalg_sock_close(&ctx->sock);
	ctx->failures++;
}

static int aead_kernel(struct afalg_aead_ctx *ctx, int enc, const void *nonce,
		       size_t nonce_size, const void *auth, size_t auth_size,
		       const void *in, size_t in_size, void *out,
		       size_t out_size)
{
	uint8_t iv[AFALG_MAX_IV_SIZE];
	size_t iv_size = _afalg_kernel_iv(ctx->alg, nonce, nonce_size, iv);
	int ret;

	ret = _afalg_sock_get(&ctx->sock, ctx->alg, ctx->key,
			      ctx->alg->key_size);
	if (ret == 0)
		ret = _afalg_kernel_aead(&ctx->sock, enc, iv, iv_size, auth,
					 auth_size, in, in_size, out, out_size);
	/* after a tag failure the socket is ready for the next request */
	if (ret < 0 && ret != GNUTLS_E_DECRYPTION_FAILED)
		kernel_failed(ctx);
	else if (ret == 0)
		ctx->failures = 0;
	return ret;
}

/* The nonce may sit where the output goes (a record decrypted to its
 * front, over its explicit nonce), and a failed request clears the
 * output: software takes a copy made before the kernel is asked. */
static const void *keep_nonce(uint8_t copy[AFALG_MAX_IV_SIZE],
			      const void *nonce, size_t nonce_size)
{
	memcpy(copy, nonce, nonce_size);
	return copy;
}

static int afalg_aead_encrypt(void *_ctx, const void *nonce, size_t nonce_size,
			      const void *auth, size_t auth_size,
			      size_t tag_size, const void *plain,
			      size_t plain_size, void *encr, size_t encr_size)
{
	struct afalg_aead_ctx *ctx = _ctx;
	uint8_t copy[AFALG_MAX_IV_SIZE];

	if (encr_size >= plain_size + tag_size &&
	    aead_in_kernel(ctx, 1, nonce_size, auth_size, plain_size,
			   tag_size)) {
		nonce = keep_nonce(copy, nonce, nonce_size);
		if (aead_kernel(ctx, 1, nonce, nonce_size, auth, auth_size,
				plain, plain_size, encr,
				plain_size + tag_size) == 0) {
			_afalg_count(ctx->alg, true);
			return 0;
		}
	}
	if (ctx->soft_ops->aead_encrypt == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	_afalg_count(ctx->alg, false);
	return ctx->soft_ops->aead_encrypt(ctx->soft, nonce, nonce_size, auth,
					   auth_size, tag_size, plain,
					   plain_size, encr, encr_size);
}

/* Software has the last word on anything the kernel did not decrypt,
 * a tag failure included: a forged message fails in both, and a kernel
 * that rejects a valid one is a kernel failure, not the peer's.  A tag
 * failure leaves no plaintext behind (software decrypts before it checks
 * the tag); a refused call changes nothing, and plain past the text is
 * the caller's. */
static int afalg_aead_decrypt(void *_ctx, const void *nonce, size_t nonce_size,
			      const void *auth, size_t auth_size,
			      size_t tag_size, const void *encr,
			      size_t encr_size, void *plain, size_t plain_size)
{
	struct afalg_aead_ctx *ctx = _ctx;
	size_t text_size = encr_size >= tag_size ? encr_size - tag_size : 0;
	uint8_t copy[AFALG_MAX_IV_SIZE];
	bool kernel_rejected = false;
	int ret;

	if (encr_size >= tag_size && plain_size >= text_size &&
	    aead_in_kernel(ctx, 0, nonce_size, auth_size, text_size,
			   tag_size)) {
		nonce = keep_nonce(copy, nonce, nonce_size);
		ret = aead_kernel(ctx, 0, nonce, nonce_size, auth, auth_size,
				  encr, encr_size, plain, text_size);
		if (ret == 0) {
			_afalg_count(ctx->alg, true);
			return 0;
		}
		kernel_rejected = ret == GNUTLS_E_DECRYPTION_FAILED;
	}
	if (ctx->soft_ops->aead_decrypt == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ret = ctx->soft_ops->aead_decrypt(ctx->soft, nonce, nonce_size, auth,
					  auth_size, tag_size, encr, encr_size,
					  plain, plain_size);
	if (kernel_rejected && ret == 0) {
		_gnutls_debug_log("afalg: %s: the kernel rejected a valid "
				  "message\n",
				  ctx->alg->label);
		kernel_failed(ctx);
	}
	_afalg_count(ctx->alg, kernel_rejected && ret < 0);
	if (ret == GNUTLS_E_DECRYPTION_FAILED && text_size > 0 &&
	    plain_size >= text_size)
		gnutls_memset(plain, 0, text_size);
	return ret;
}

static void afalg_aead_deinit(void *_ctx)
{
	struct afalg_aead_ctx *ctx = _ctx;

	_afalg_sock_close(&ctx->sock);
	ctx->soft_ops->deinit(ctx->soft);
	gnutls_memset(ctx, 0, sizeof(*ctx));
	gnutls_free(ctx);
}

/* Every call GnuTLS may make on an AEAD cipher: the one-shot ones, which
 * may go to the kernel, and the incremental ones, which stay in the
 * software implementation (the x86 code where there is one).  Where that
 * implementation is one-shot only (x86 CCM), so is the module, and
 * GnuTLS treats it as it would treat the software alone. */
const gnutls_crypto_cipher_st _afalg_aead_ops = {
	.init = afalg_aead_init,
	.setkey = afalg_aead_setkey,
	.setiv = afalg_aead_setiv,
	.getiv = afalg_aead_getiv,
	.encrypt = afalg_aead_encrypt_part,
	.decrypt = afalg_aead_decrypt_part,
	.aead_encrypt = afalg_aead_encrypt,
	.aead_decrypt = afalg_aead_decrypt,
	.auth = afalg_aead_auth,
	.tag = afalg_aead_tag,
	.deinit = afalg_aead_deinit,
};

const gnutls_crypto_cipher_st _afalg_aead_oneshot_ops = {
	.init = afalg_aead_init,
	.setkey = afalg_aead_setkey,
	.aead_encrypt = afalg_aead_encrypt,
	.aead_decrypt = afalg_aead_decrypt,
	.deinit = afalg_aead_deinit,
};
