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

/* Ciphers and AEAD ciphers.  A context always has the software
 * implementation GnuTLS had before the module, which holds the key and
 * checks it, and serves every call the kernel does not take: the
 * incremental AEAD calls, sizes the kernel refuses, operations below
 * the algorithm's threshold, and any kernel failure.  A kernel socket is
 * opened when an operation first goes to the kernel, in the process that
 * uses it (a child after fork() opens its own).
 *
 * The module keeps the CBC chaining value itself, and hands it to
 * whichever path does the next call, so that calls can alternate between
 * kernel and software in both directions. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "atfork.h"

#include <errno.h>
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
	/* Software's for good, with the chaining value: the algorithm
	 * sends nothing to the kernel.  Kept per context, so that one that
	 * outlives a re-initialization of the library, after which the
	 * algorithm may go to the kernel, stays where its chaining value
	 * is. */
	bool soft_only;
	int op; /* kernel operation socket, or -1 */
	unsigned forkid; /* process that opened op */
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
	ctx->soft_only = __atomic_load_n(&alg->soft_only, __ATOMIC_RELAXED);
	ctx->op = -1;
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
 * one's chaining value.  An AEAD key is the algorithm's size, as Nettle
 * has it: GnuTLS 3.7.9's x86 CCM takes a key of any size, and one it
 * cannot expand leaves the new context without a key schedule. */
static int afalg_cipher_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_cipher_ctx *ctx = _ctx;
	void *soft = ctx->soft;
	int ret;

	if (ctx->alg->family == AFALG_AEAD && key_size != ctx->alg->key_size)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
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
	_afalg_kernel_drop(&ctx->op, ctx->forkid);
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

/* The kernel socket of this process, opened if need be. */
static int kernel_op(struct afalg_cipher_ctx *ctx)
{
	/* a child must not share its parent's socket: requests of the two
	 * processes would interleave */
	if (ctx->op >= 0 && _gnutls_detect_fork(ctx->forkid))
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
	if (ctx->op >= 0)
		return 0;
	ctx->forkid = _gnutls_get_forkid();
	return _afalg_kernel_open(ctx->alg, ctx->key, ctx->key_size, &ctx->op);
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
 * fit in one request.  (The size is asked about first: an algorithm in
 * auto mode counts all its work.) */
static bool cipher_in_kernel(struct afalg_cipher_ctx *ctx, int enc, size_t size)
{
	struct afalg_alg *alg = ctx->alg;

	return _afalg_use_kernel(alg, !enc, size) && ctx->kernel_key &&
	       ctx->iv_size == alg->iv_size && size > 0 &&
	       (ctx->chain || size <= AFALG_MAX_REQUEST);
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
		if (_afalg_kernel_cipher(ctx->op, enc, ctx->iv, n, in + done,
					 out + done, len) < 0) {
			_afalg_kernel_drop(&ctx->op, ctx->forkid);
			break;
		}
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

/* A call of this size stays in software, whatever the context. */
static inline bool below_threshold(const struct afalg_alg *alg, int enc,
				   size_t size)
{
	return __atomic_load_n(&alg->settled, __ATOMIC_RELAXED) &&
	       size < _afalg_threshold(alg, !enc);
}

/* Straight to software, with nothing to keep or to catch up: a context
 * of an algorithm that never goes to the kernel, or a call below the
 * threshold of a context whose software has the chaining value and can
 * tell it.
 * (The common case, kept to a few loads: under emulation every call
 * level of the detour shows in small calls.) */
static inline bool soft_direct(const struct afalg_cipher_ctx *ctx, int enc,
			       size_t size)
{
	if (likely(ctx->soft_only && !ctx->soft_iv_stale))
		return true;
	return below_threshold(ctx->alg, enc, size) && !ctx->soft_iv_stale &&
	       !ctx->copy_iv;
}

/* Everything but soft_direct(): the kernel, and software that must be
 * told the chaining value or must have it kept. */
static int cipher_route(struct afalg_cipher_ctx *ctx, int enc, const void *in,
			size_t in_size, void *out, size_t out_size)
{
	struct afalg_alg *alg = ctx->alg;
	size_t done = 0;
	int ret;

	if (__atomic_load_n(&alg->soft_only, __ATOMIC_RELAXED)) {
		ret = soft_crypt(ctx, enc, in, in_size, out, out_size);
		/* software has the chaining value now, for good */
		ctx->soft_only = !ctx->soft_iv_stale;
		return ret;
	}
	if (below_threshold(alg, enc, in_size))
		return soft_crypt(ctx, enc, in, in_size, out, out_size);

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

/* The incremental AEAD calls (gnutls_cipher_init() with an AEAD
 * algorithm, and gnutls_aead_cipher_encryptv() for GCM and
 * ChaCha20-Poly1305) are software's: the kernel gives no result before
 * it has the whole message. */
static int afalg_aead_crypt(struct afalg_cipher_ctx *ctx, int enc,
			    const void *in, size_t in_size, void *out,
			    size_t out_size)
{
	int ret = sync_soft(ctx);

	if (ret < 0)
		return ret;
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
	struct afalg_cipher_ctx *ctx = _ctx;
	int ret;

	if (ctx->soft_ops->auth == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ret = sync_soft(ctx);
	if (ret < 0)
		return ret;
	return ctx->soft_ops->auth(ctx->soft, data, size);
}

static void afalg_aead_tag(void *_ctx, void *tag, size_t size)
{
	struct afalg_cipher_ctx *ctx = _ctx;

	if (ctx->soft_ops->tag != NULL)
		ctx->soft_ops->tag(ctx->soft, tag, size);
}

/* The kernel takes the algorithm's own nonce and tag sizes, one request
 * at a time.  A decryption with neither AAD nor text is left to
 * software: its empty result cannot be read back. */
static bool aead_in_kernel(struct afalg_cipher_ctx *ctx, int enc,
			   size_t nonce_size, size_t auth_size,
			   size_t text_size, size_t tag_size)
{
	struct afalg_alg *alg = ctx->alg;

	return _afalg_use_kernel(alg, !enc, text_size) && ctx->kernel_key &&
	       _afalg_nonce_ok(alg, nonce_size) && tag_size == alg->tag_size &&
	       auth_size + text_size + tag_size <= AFALG_MAX_REQUEST &&
	       (enc || auth_size + text_size > 0);
}

static int aead_kernel(struct afalg_cipher_ctx *ctx, int enc, const void *nonce,
		       size_t nonce_size, const void *auth, size_t auth_size,
		       const void *in, size_t in_size, void *out,
		       size_t out_size)
{
	uint8_t iv[AFALG_MAX_IV_SIZE];
	size_t iv_size = _afalg_kernel_iv(ctx->alg, nonce, nonce_size, iv);
	int ret;

	ret = kernel_op(ctx);
	if (ret < 0)
		return ret;
	ret = _afalg_kernel_aead(ctx->op, enc, iv, iv_size, auth, auth_size, in,
				 in_size, out, out_size);
	/* after a tag failure the socket is ready for the next request */
	if (ret < 0 && ret != GNUTLS_E_DECRYPTION_FAILED)
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
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
	struct afalg_cipher_ctx *ctx = _ctx;
	uint8_t copy[AFALG_MAX_IV_SIZE];

	if (!__atomic_load_n(&ctx->alg->soft_only, __ATOMIC_RELAXED) &&
	    encr_size >= plain_size + tag_size &&
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
	struct afalg_cipher_ctx *ctx = _ctx;
	size_t text_size = encr_size >= tag_size ? encr_size - tag_size : 0;
	uint8_t copy[AFALG_MAX_IV_SIZE];
	bool kernel_rejected = false;
	int ret;

	if (!__atomic_load_n(&ctx->alg->soft_only, __ATOMIC_RELAXED) &&
	    encr_size >= tag_size && plain_size >= text_size &&
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
		_afalg_kernel_failed("tag check of a valid message", EBADMSG);
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
	}
	_afalg_count(ctx->alg, kernel_rejected && ret < 0);
	if (ret == GNUTLS_E_DECRYPTION_FAILED && text_size > 0 &&
	    plain_size >= text_size)
		gnutls_memset(plain, 0, text_size);
	return ret;
}

static void afalg_cipher_deinit(void *_ctx)
{
	struct afalg_cipher_ctx *ctx = _ctx;

	_afalg_kernel_drop(&ctx->op, ctx->forkid);
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

/* Every call GnuTLS may make on an AEAD cipher: the one-shot ones, which
 * may go to the kernel, and the incremental ones, which stay in the
 * software implementation (the x86 code where there is one).  Where that
 * implementation is one-shot only (x86 CCM), so is the module, and
 * GnuTLS treats it as it would treat the software alone. */
const gnutls_crypto_cipher_st _afalg_aead_ops = {
	.init = afalg_cipher_init,
	.setkey = afalg_cipher_setkey,
	.setiv = afalg_cipher_setiv,
	.getiv = afalg_cipher_getiv,
	.encrypt = afalg_aead_encrypt_part,
	.decrypt = afalg_aead_decrypt_part,
	.aead_encrypt = afalg_aead_encrypt,
	.aead_decrypt = afalg_aead_decrypt,
	.auth = afalg_aead_auth,
	.tag = afalg_aead_tag,
	.deinit = afalg_cipher_deinit,
};

const gnutls_crypto_cipher_st _afalg_aead_oneshot_ops = {
	.init = afalg_cipher_init,
	.setkey = afalg_cipher_setkey,
	.aead_encrypt = afalg_aead_encrypt,
	.aead_decrypt = afalg_aead_decrypt,
	.deinit = afalg_cipher_deinit,
};
