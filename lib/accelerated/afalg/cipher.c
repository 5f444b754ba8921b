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

/* CBC and XTS.  A context always has the software implementation GnuTLS
 * had before the module, which holds the key and checks it, and serves
 * every call the kernel does not take: sizes the kernel refuses,
 * operations below the algorithm's threshold, and any kernel failure.  A kernel socket is
 * opened when an operation first goes to the kernel, in the process that
 * uses it (a child after fork() opens its own); a context that fails in
 * the kernel AFALG_MAX_FAILURES times in a row stays in software.
 *
 * The module keeps the CBC chaining value itself, and hands it to
 * whichever path does the next call, so that calls can alternate between
 * kernel and software in both directions. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <string.h>

/* Every CBC row is AES: its chaining value is one 16-byte block. */
#define CBC_BLOCK 16

struct afalg_cipher_ctx {
	struct afalg_alg *alg;
	const gnutls_crypto_cipher_st *soft_ops;
	void *soft;
	int enc;
	bool chain; /* CBC */
	bool keyed;
	bool kernel_key; /* the kernel takes this key */
	bool soft_iv_stale; /* the kernel moved iv on: tell software */
	/* Software keeps the CBC chaining value of its calls: where it can
	 * tell it (getiv), it is asked only when the kernel continues from
	 * it; where it cannot, soft_crypt() copies it after every call. */
	bool copy_iv;
	struct afalg_sock sock;
	unsigned failures; /* kernel failures in a row */
	uint8_t key[AFALG_MAX_KEY_SIZE];
	size_t key_size;
	uint8_t iv[AFALG_MAX_IV_SIZE]; /* IV, or CBC chaining value */
	size_t iv_size;
};

static int afalg_cipher_init(gnutls_cipher_algorithm_t algo, void **_ctx,
			     int enc)
{
	struct afalg_alg *alg = _afalg_find(AFALG_CIPHER, algo);
	struct afalg_cipher_ctx *ctx;
	int ret;

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ctx = gnutls_calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	ctx->alg = alg;
	ctx->soft_ops = alg->soft.cipher;
	ctx->enc = enc;
	ctx->chain = alg->flags & AFALG_CHAIN_IV;
	ctx->copy_iv = ctx->chain && ctx->soft_ops->getiv == NULL;
	AFALG_SOCK_INIT(&ctx->sock);
	ret = ctx->soft_ops->init(algo, &ctx->soft, enc);
	if (ret < 0) {
		gnutls_free(ctx);
		return ret;
	}
	*_ctx = ctx;
	return 0;
}

/* ctx->iv from software, where software moved it on last (before the
 * kernel or a new software context continues from it). */
static int iv_from_soft(struct afalg_cipher_ctx *ctx)
{
	int ret;

	if (!ctx->chain || ctx->iv_size != CBC_BLOCK || ctx->soft_iv_stale ||
	    ctx->copy_iv)
		return 0;
	ret = ctx->soft_ops->getiv(ctx->soft, ctx->iv, ctx->iv_size);
	if (ret < 0)
		return gnutls_assert_val(ret);
	return 0;
}

/* Software checks every key, as it would without the module.  A new key
 * goes into a new software context, so that a refused key leaves the
 * context exactly as it was; the new context continues from the old
 * one's chaining value. */
static int afalg_cipher_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	void *soft = ctx->soft;
	int ret;

	if (ctx->keyed) {
		ret = ctx->soft_ops->init(ctx->alg->id, &soft, ctx->enc);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	ret = ctx->soft_ops->setkey(soft, key, key_size);
	if (ret == 0 && soft != ctx->soft)
		ret = iv_from_soft(ctx);
	if (ret < 0) {
		if (soft != ctx->soft)
			ctx->soft_ops->deinit(soft);
		return gnutls_assert_val(ret);
	}
	if (soft != ctx->soft) {
		ctx->soft_ops->deinit(ctx->soft);
		ctx->soft = soft;
		ctx->soft_iv_stale = ctx->iv_size > 0;
	}
	ctx->keyed = true;

	/* the kernel socket has the old key: the next kernel operation
	 * opens one with the new key */
	_afalg_sock_close(&ctx->sock);
	gnutls_memset(ctx->key, 0, sizeof(ctx->key));
	ctx->kernel_key = key_size == ctx->alg->key_size;
	ctx->key_size = ctx->kernel_key ? key_size : 0;
	memcpy(ctx->key, key, ctx->key_size);
	return 0;
}

/* Before software continues what the kernel did. */
static int sync_soft(struct afalg_cipher_ctx *ctx)
{
	int ret;

	if (!ctx->soft_iv_stale)
		return 0;
	ret = ctx->soft_ops->setiv(ctx->soft, ctx->iv, ctx->iv_size);
	if (ret < 0)
		return gnutls_assert_val(ret);
	ctx->soft_iv_stale = false;
	return 0;
}

static int afalg_cipher_setiv(void *_ctx, const void *iv, size_t iv_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	int ret;

	/* a chaining value is one block: the x86 code refuses others,
	 * where Nettle takes them (and divides by zero on one of none) */
	if (ctx->soft_ops->setiv == NULL ||
	    (ctx->chain && iv_size != CBC_BLOCK))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ret = ctx->soft_ops->setiv(ctx->soft, iv, iv_size);
	if (ret < 0)
		return gnutls_assert_val(ret);
	ctx->iv_size = iv_size <= sizeof(ctx->iv) ? iv_size : 0;
	memcpy(ctx->iv, iv, ctx->iv_size);
	ctx->soft_iv_stale = false;
	return 0;
}

static int afalg_cipher_getiv(void *_ctx, void *iv, size_t iv_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	int ret;

	if (ctx->soft_ops->getiv == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ret = sync_soft(ctx);
	if (ret < 0)
		return ret;
	return ctx->soft_ops->getiv(ctx->soft, iv, iv_size);
}

/* The context's kernel socket, opened if need be; a socket that cannot
 * be opened (no descriptor left, a device out of sessions) counts as a
 * failure. */
static int kernel_op(struct afalg_cipher_ctx *ctx)
{
	int ret =
		_afalg_sock_get(&ctx->sock, ctx->alg, ctx->key, ctx->key_size);

	if (ret < 0)
		ctx->failures++;
	return ret;
}

/* A kernel request failed: the next one opens a new socket, unless the
 * context has failed too often. */
static void kernel_failed(struct afalg_cipher_ctx *ctx)
{
	_afalg_sock_close(&ctx->sock);
	ctx->failures++;
}

/* CBC takes whole blocks, XTS data units of at least one block.  The
 * x86 code refuses other sizes, where Nettle would abort: the module
 * refuses them whichever software it has.  (Checked on every call: the
 * CBC block is the constant, not the row's field, so that no division is
 * made.) */
static bool cipher_size_ok(const struct afalg_alg *alg, size_t size)
{
	if (alg->flags & AFALG_CHAIN_IV)
		return size % CBC_BLOCK == 0;
	return size >= alg->block_size;
}

/* CBC is split into requests; an XTS call is one data unit, which must
 * fit in one request. */
static bool cipher_in_kernel(struct afalg_cipher_ctx *ctx, int enc, size_t size)
{
	struct afalg_alg *alg = ctx->alg;

	/* the algorithm's first use, which may open AF_ALG, last */
	return ctx->kernel_key && ctx->failures < AFALG_MAX_FAILURES &&
	       ctx->iv_size == alg->iv_size && size > 0 &&
	       (ctx->chain || size <= AFALG_MAX_REQUEST) &&
	       _afalg_use_kernel(alg, !enc, size);
}

/* Returns how many bytes the kernel did; after a failure, software
 * continues from there with the chaining value in ctx->iv (the kernel
 * layer leaves the input of a failed request untouched). */
static size_t kernel_crypt(struct afalg_cipher_ctx *ctx, int enc,
			   const uint8_t *in, uint8_t *out, size_t size)
{
	bool chain = ctx->alg->flags & AFALG_CHAIN_IV;
	size_t done = 0, len, n = ctx->iv_size;
	uint8_t next_iv[AFALG_MAX_IV_SIZE];

	if (iv_from_soft(ctx) < 0 || kernel_op(ctx) < 0)
		return 0;
	while (done < size) {
		len = chain ? MIN(size - done, AFALG_MAX_REQUEST) : size;
		/* decrypting in place overwrites the next chaining value */
		if (chain && !enc)
			memcpy(next_iv, in + done + len - n, n);
		if (_afalg_kernel_cipher(&ctx->sock, enc, ctx->iv, n, in + done,
					 out + done, len) < 0) {
			kernel_failed(ctx);
			break;
		}
		ctx->failures = 0;
		if (chain) {
			memcpy(ctx->iv, enc ? out + done + len - n : next_iv,
			       n);
			ctx->soft_iv_stale = true;
		}
		done += len;
	}
	return done;
}

/* Software, keeping the CBC chaining value for a kernel call to come
 * where software cannot tell it. */
static int soft_crypt(struct afalg_cipher_ctx *ctx, int enc, const uint8_t *in,
		      size_t size, uint8_t *out, size_t out_size)
{
	bool chain = ctx->copy_iv && size >= CBC_BLOCK;
	uint8_t next_iv[CBC_BLOCK];
	int ret;

	if (unlikely(ctx->soft_iv_stale) && (ret = sync_soft(ctx)) < 0)
		return ret;
	_afalg_count(ctx->alg, false);
	if (enc) {
		ret = ctx->soft_ops->encrypt(ctx->soft, in, size, out,
					     out_size);
		if (ret == 0 && chain)
			memcpy(ctx->iv, out + size - CBC_BLOCK, CBC_BLOCK);
		return ret;
	}
	/* decrypting in place overwrites the next chaining value */
	if (chain)
		memcpy(next_iv, in + size - CBC_BLOCK, CBC_BLOCK);
	ret = ctx->soft_ops->decrypt(ctx->soft, in, size, out, out_size);
	if (ret == 0 && chain)
		memcpy(ctx->iv, next_iv, CBC_BLOCK);
	return ret;
}

/* Straight to software, with nothing to keep or to catch up: a call
 * below the threshold of a context whose software has the chaining value
 * and can tell it.  (The common case, kept to a few loads: under
 * emulation every call level of the detour shows in small calls.) */
static inline bool soft_direct(const struct afalg_cipher_ctx *ctx, int enc,
			       size_t size)
{
	return size < ctx->alg->threshold[!enc] && !ctx->soft_iv_stale &&
	       !ctx->copy_iv;
}

/* Everything but soft_direct(): the kernel, and software that must be
 * told the chaining value or must have it kept. */
static int cipher_route(struct afalg_cipher_ctx *ctx, int enc, const void *in,
			size_t in_size, void *out, size_t out_size)
{
	struct afalg_alg *alg = ctx->alg;
	size_t done = 0;

	if (cipher_in_kernel(ctx, enc, in_size)) {
		done = kernel_crypt(ctx, enc, in, out, in_size);
		if (done == in_size) {
			_afalg_count(alg, true);
			return 0;
		}
	}
	return soft_crypt(ctx, enc, (const uint8_t *)in + done, in_size - done,
			  (uint8_t *)out + done, out_size - done);
}

/* The software call is the last thing done: a tail call, with no frame
 * of the module's left on the stack. */
static inline int cipher_crypt(struct afalg_cipher_ctx *ctx, int enc,
			       const void *in, size_t in_size, void *out,
			       size_t out_size)
{
	/* in the x86 code's order; Nettle would write past out */
	if (unlikely(out_size < in_size))
		return gnutls_assert_val(GNUTLS_E_SHORT_MEMORY_BUFFER);
	if (unlikely(!cipher_size_ok(ctx->alg, in_size)))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (unlikely(!soft_direct(ctx, enc, in_size)))
		return cipher_route(ctx, enc, in, in_size, out, out_size);
	_afalg_count(ctx->alg, false);
	if (enc)
		return ctx->soft_ops->encrypt(ctx->soft, in, in_size, out,
					      out_size);
	return ctx->soft_ops->decrypt(ctx->soft, in, in_size, out, out_size);
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

static void afalg_cipher_deinit(void *_ctx)
{
	struct afalg_cipher_ctx *ctx = _ctx;

	_afalg_sock_close(&ctx->sock);
	ctx->soft_ops->deinit(ctx->soft);
	gnutls_memset(ctx, 0, sizeof(*ctx));
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
