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

/* Ciphers and AEAD ciphers.  A context holds a kernel handle when the
 * kernel can do the work, and the software implementation GnuTLS had
 * before the module, created on first use.  Whatever the kernel cannot do
 * (a request too large, sizes it does not take, an error) goes to the
 * software context, so no GnuTLS call fails for lack of a kernel. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "mem.h"

#include <string.h>

struct afalg_cipher_ctx {
	struct afalg_alg *alg;
	struct kcapi_handle *kh; /* NULL: software only */
	void *soft_ctx; /* created on first software use */
	int enc;
	uint8_t key[AFALG_MAX_KEY_SIZE];
	size_t key_size;
	bool key_set;
	uint8_t iv[AFALG_MAX_IV_SIZE]; /* CBC chaining value */
	size_t iv_size;
};

static const gnutls_crypto_cipher_st *soft_ops(struct afalg_cipher_ctx *ctx)
{
	return ctx->alg->soft.cipher;
}

/* Stops using the kernel for this context; the software context takes
 * over from the current key and chaining value. */
static void drop_kernel(struct afalg_cipher_ctx *ctx)
{
	_afalg_kernel_close(ctx->alg, ctx->kh);
	ctx->kh = NULL;
}

static int soft_ctx(struct afalg_cipher_ctx *ctx)
{
	const gnutls_crypto_cipher_st *ops = soft_ops(ctx);
	int ret;

	if (ctx->soft_ctx != NULL)
		return 0;
	ret = ops->init(ctx->alg->id, &ctx->soft_ctx, ctx->enc);
	if (ret < 0) {
		ctx->soft_ctx = NULL;
		return gnutls_assert_val(ret);
	}
	if (ctx->key_set) {
		ret = ops->setkey(ctx->soft_ctx, ctx->key, ctx->key_size);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	if (ctx->iv_size > 0 && ops->setiv != NULL) {
		ret = ops->setiv(ctx->soft_ctx, ctx->iv, ctx->iv_size);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	return 0;
}

static int afalg_cipher_init(gnutls_cipher_algorithm_t algo, void **_ctx,
			     int enc)
{
	struct afalg_cipher_ctx *ctx;
	struct afalg_alg *alg = _afalg_find(AFALG_CIPHER, algo);

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);

	ctx = gnutls_calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	ctx->alg = alg;
	ctx->enc = enc;
	if (alg->kernel)
		_afalg_kernel_open(alg, &ctx->kh);
	*_ctx = ctx;
	return 0;
}

static int afalg_cipher_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;

	if (key_size > sizeof(ctx->key))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	memcpy(ctx->key, key, key_size);
	ctx->key_size = key_size;
	ctx->key_set = true;

	/* a key the kernel refuses may still be one for software */
	if (ctx->kh != NULL &&
	    (key_size != ctx->alg->key_size ||
	     _afalg_kernel_setkey(ctx->alg, ctx->kh, key, key_size) < 0))
		drop_kernel(ctx);

	if (ctx->soft_ctx != NULL)
		return soft_ops(ctx)->setkey(ctx->soft_ctx, key, key_size);
	if (ctx->kh == NULL)
		return soft_ctx(ctx);
	return 0;
}

static int afalg_cipher_setiv(void *_ctx, const void *iv, size_t iv_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;

	if (iv_size != ctx->alg->iv_size)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	memcpy(ctx->iv, iv, iv_size);
	ctx->iv_size = iv_size;
	if (ctx->soft_ctx == NULL)
		return 0;
	return soft_ops(ctx)->setiv(ctx->soft_ctx, iv, iv_size);
}

static int afalg_cipher_getiv(void *_ctx, void *iv, size_t iv_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	int ret;

	if (ctx->kh != NULL) {
		if (iv_size < ctx->iv_size)
			return gnutls_assert_val(GNUTLS_E_SHORT_MEMORY_BUFFER);
		memcpy(iv, ctx->iv, ctx->iv_size);
		return ctx->iv_size;
	}
	ret = soft_ctx(ctx);
	if (ret < 0)
		return gnutls_assert_val(ret);
	if (soft_ops(ctx)->getiv == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return soft_ops(ctx)->getiv(ctx->soft_ctx, iv, iv_size);
}

/* CBC requests are whole blocks, and are split and chained as needed;
 * an XTS call is one data unit, which must fit in one request. */
static bool cipher_in_kernel(struct afalg_cipher_ctx *ctx, size_t size)
{
	const struct afalg_alg *alg = ctx->alg;

	if (ctx->kh == NULL || alg->family != AFALG_CIPHER ||
	    ctx->iv_size != alg->iv_size)
		return false;
	if (alg->flags & AFALG_CHAIN_IV)
		return size % alg->block_size == 0;
	return size >= alg->block_size && size <= AFALG_CIPHER_CHUNK;
}

static int cipher_crypt(struct afalg_cipher_ctx *ctx, int enc, const void *in,
			size_t in_size, void *out, size_t out_size)
{
	const gnutls_crypto_cipher_st *ops = soft_ops(ctx);
	int ret;

	if (out_size < in_size)
		return gnutls_assert_val(GNUTLS_E_SHORT_MEMORY_BUFFER);

	if (cipher_in_kernel(ctx, in_size)) {
		size_t done = 0;

		ret = _afalg_kernel_cipher(ctx->alg, ctx->kh, enc, ctx->iv, in,
					   out, in_size, &done);
		if (ret == 0) {
			_afalg_count(ctx->alg, true);
			return 0;
		}
		/* software continues after the last completed request, from
		 * the chaining value that ctx->iv holds for it */
		drop_kernel(ctx);
		in = (const uint8_t *)in + done;
		out = (uint8_t *)out + done;
		in_size -= done;
		out_size -= done;
	}

	ret = soft_ctx(ctx);
	if (ret < 0)
		return gnutls_assert_val(ret);
	_afalg_count(ctx->alg, false);
	if (enc)
		return ops->encrypt(ctx->soft_ctx, in, in_size, out, out_size);
	return ops->decrypt(ctx->soft_ctx, in, in_size, out, out_size);
}

static int afalg_cipher_encrypt(void *ctx, const void *in, size_t in_size,
				void *out, size_t out_size)
{
	return cipher_crypt(ctx, 1, in, in_size, out, out_size);
}

static int afalg_cipher_decrypt(void *ctx, const void *in, size_t in_size,
				void *out, size_t out_size)
{
	return cipher_crypt(ctx, 0, in, in_size, out, out_size);
}

/* The kernel takes the algorithm's own nonce and tag sizes only, and one
 * request at a time.  A decryption with neither AAD nor text is left to
 * software too: its empty result cannot be read back, and the unread
 * request would spoil the socket for the next one. */
static bool aead_in_kernel(struct afalg_cipher_ctx *ctx, int enc,
			   size_t nonce_size, size_t auth_size,
			   size_t text_size, size_t tag_size)
{
	const struct afalg_alg *alg = ctx->alg;

	return ctx->kh != NULL && alg->family == AFALG_AEAD &&
	       _afalg_nonce_ok(alg, nonce_size) && tag_size == alg->tag_size &&
	       auth_size + text_size + tag_size <= AFALG_AEAD_MAX_REQUEST &&
	       (enc || auth_size + text_size > 0);
}

static int afalg_aead_encrypt(void *_ctx, const void *nonce, size_t nonce_size,
			      const void *auth, size_t auth_size,
			      size_t tag_size, const void *plain,
			      size_t plain_size, void *encr, size_t encr_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	int ret;

	if (encr_size < plain_size + tag_size)
		return gnutls_assert_val(GNUTLS_E_SHORT_MEMORY_BUFFER);

	if (aead_in_kernel(ctx, 1, nonce_size, auth_size, plain_size,
			   tag_size)) {
		ret = _afalg_kernel_aead(ctx->alg, ctx->kh, 1, nonce,
					 nonce_size, auth, auth_size, plain,
					 plain_size, encr, tag_size);
		if (ret == 0) {
			_afalg_count(ctx->alg, true);
			return 0;
		}
		drop_kernel(ctx);
	}

	ret = soft_ctx(ctx);
	if (ret < 0)
		return gnutls_assert_val(ret);
	if (soft_ops(ctx)->aead_encrypt == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	_afalg_count(ctx->alg, false);
	return soft_ops(ctx)->aead_encrypt(ctx->soft_ctx, nonce, nonce_size,
					   auth, auth_size, tag_size, plain,
					   plain_size, encr, encr_size);
}

static int afalg_aead_decrypt(void *_ctx, const void *nonce, size_t nonce_size,
			      const void *auth, size_t auth_size,
			      size_t tag_size, const void *encr,
			      size_t encr_size, void *plain, size_t plain_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	int ret;

	if (encr_size < tag_size)
		return gnutls_assert_val(GNUTLS_E_DECRYPTION_FAILED);
	if (plain_size < encr_size - tag_size)
		return gnutls_assert_val(GNUTLS_E_SHORT_MEMORY_BUFFER);

	if (aead_in_kernel(ctx, 0, nonce_size, auth_size, encr_size - tag_size,
			   tag_size)) {
		ret = _afalg_kernel_aead(ctx->alg, ctx->kh, 0, nonce,
					 nonce_size, auth, auth_size, encr,
					 encr_size, plain, tag_size);
		if (ret == 0 || ret == GNUTLS_E_DECRYPTION_FAILED) {
			_afalg_count(ctx->alg, true);
			return ret;
		}
		drop_kernel(ctx);
	}

	ret = soft_ctx(ctx);
	if (ret < 0)
		return gnutls_assert_val(ret);
	if (soft_ops(ctx)->aead_decrypt == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	_afalg_count(ctx->alg, false);
	ret = soft_ops(ctx)->aead_decrypt(ctx->soft_ctx, nonce, nonce_size,
					  auth, auth_size, tag_size, encr,
					  encr_size, plain, plain_size);
	/* a forged message leaves no plaintext behind */
	if (ret < 0)
		gnutls_memset(plain, 0, plain_size);
	return ret;
}

static void afalg_cipher_deinit(void *_ctx)
{
	struct afalg_cipher_ctx *ctx = _ctx;

	drop_kernel(ctx);
	if (ctx->soft_ctx != NULL)
		soft_ops(ctx)->deinit(ctx->soft_ctx);
	zeroize_key(ctx, sizeof(*ctx));
	gnutls_free(ctx);
}

const gnutls_crypto_cipher_st _afalg_cipher_ops = {
	.init = afalg_cipher_init,
	.setkey = afalg_cipher_setkey,
	.setiv = afalg_cipher_setiv,
	.getiv = afalg_cipher_getiv,
	.encrypt = afalg_cipher_encrypt,
	.decrypt = afalg_cipher_decrypt,
	.deinit = afalg_cipher_deinit,
};

/* AEAD is one-shot only, the way GnuTLS expects an AEAD-only backend:
 * gnutls_aead_cipher_encryptv() then gathers its input for the one-shot
 * call instead of using gnutls_cipher_encrypt() piecewise (TLS 1.3 sends
 * its records that way), and a gnutls_cipher_init() with an IV, the
 * incremental AEAD API, is given GnuTLS's Nettle implementation. */
const gnutls_crypto_cipher_st _afalg_aead_ops = {
	.init = afalg_cipher_init,
	.setkey = afalg_cipher_setkey,
	.aead_encrypt = afalg_aead_encrypt,
	.aead_decrypt = afalg_aead_decrypt,
	.deinit = afalg_cipher_deinit,
};
