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

/* MACs and digests.  GnuTLS treats an error from these as final, so the
 * module decides between kernel and software before any data is hashed:
 * a context whose kernel handle cannot be opened or keyed is a software
 * context from the start. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "mem.h"

#include <string.h>

struct afalg_hash_ctx {
	struct afalg_alg *alg;
	struct kcapi_handle *kh; /* NULL: software */
	void *soft_ctx;
};

/* The MAC and digest software interfaces differ only in init, setkey and
 * fast; these helpers pick the right one. */
static int soft_init(struct afalg_hash_ctx *ctx)
{
	const struct afalg_alg *alg = ctx->alg;
	int ret;

	if (alg->family == AFALG_MAC)
		ret = alg->soft.mac->init(alg->id, &ctx->soft_ctx);
	else
		ret = alg->soft.digest->init(alg->id, &ctx->soft_ctx);
	if (ret < 0)
		ctx->soft_ctx = NULL;
	return ret;
}

static int soft_hash(struct afalg_hash_ctx *ctx, const void *text, size_t size)
{
	if (ctx->alg->family == AFALG_MAC)
		return ctx->alg->soft.mac->hash(ctx->soft_ctx, text, size);
	return ctx->alg->soft.digest->hash(ctx->soft_ctx, text, size);
}

static int soft_output(struct afalg_hash_ctx *ctx, void *out, size_t size)
{
	if (ctx->alg->family == AFALG_MAC)
		return ctx->alg->soft.mac->output(ctx->soft_ctx, out, size);
	return ctx->alg->soft.digest->output(ctx->soft_ctx, out, size);
}

static void soft_deinit(struct afalg_hash_ctx *ctx)
{
	if (ctx->soft_ctx == NULL)
		return;
	if (ctx->alg->family == AFALG_MAC)
		ctx->alg->soft.mac->deinit(ctx->soft_ctx);
	else
		ctx->alg->soft.digest->deinit(ctx->soft_ctx);
	ctx->soft_ctx = NULL;
}

static void *soft_copy(struct afalg_hash_ctx *ctx)
{
	if (ctx->alg->family == AFALG_MAC)
		return ctx->alg->soft.mac->copy ?
			       ctx->alg->soft.mac->copy(ctx->soft_ctx) :
			       NULL;
	return ctx->alg->soft.digest->copy ?
		       ctx->alg->soft.digest->copy(ctx->soft_ctx) :
		       NULL;
}

static int hash_init(enum afalg_family family, int algo, void **_ctx)
{
	struct afalg_alg *alg = _afalg_find(family, algo);
	struct afalg_hash_ctx *ctx;
	int ret;

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ctx = gnutls_calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	ctx->alg = alg;

	if (!alg->kernel || _afalg_kernel_open(alg, &ctx->kh) < 0) {
		ret = soft_init(ctx);
		if (ret < 0) {
			gnutls_free(ctx);
			return gnutls_assert_val(ret);
		}
	}
	*_ctx = ctx;
	return 0;
}

static int afalg_mac_init(gnutls_mac_algorithm_t algo, void **ctx)
{
	return hash_init(AFALG_MAC, algo, ctx);
}

static int afalg_digest_init(gnutls_digest_algorithm_t algo, void **ctx)
{
	return hash_init(AFALG_DIGEST, algo, ctx);
}

static int afalg_mac_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	int ret;

	if (ctx->kh != NULL) {
		if (_afalg_kernel_setkey(ctx->alg, ctx->kh, key, key_size) == 0)
			return 0;
		/* a key starts a new message: software can take over */
		_afalg_kernel_close(ctx->alg, ctx->kh);
		ctx->kh = NULL;
		ret = soft_init(ctx);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	return ctx->alg->soft.mac->setkey(ctx->soft_ctx, key, key_size);
}

static int afalg_mac_setnonce(void *_ctx, const void *nonce, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	if (ctx->kh != NULL || ctx->alg->soft.mac->setnonce == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return ctx->alg->soft.mac->setnonce(ctx->soft_ctx, nonce, size);
}

static int afalg_hash_update(void *_ctx, const void *text, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	if (ctx->kh == NULL)
		return soft_hash(ctx, text, size);
	if (size == 0)
		return 0;
	return _afalg_kernel_hash(ctx->kh, text, size);
}

static int afalg_hash_output(void *_ctx, void *out, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	_afalg_count(ctx->alg, ctx->kh != NULL);
	if (ctx->kh == NULL)
		return soft_output(ctx, out, size);
	return _afalg_kernel_output(ctx->alg, ctx->kh, out, size);
}

static void afalg_hash_deinit(void *_ctx)
{
	struct afalg_hash_ctx *ctx = _ctx;

	_afalg_kernel_close(ctx->alg, ctx->kh);
	soft_deinit(ctx);
	gnutls_free(ctx);
}

/* Only a software state can be copied so far; a kernel context answers
 * NULL and GnuTLS reports the failure to the caller. */
static void *afalg_hash_copy(const void *_src)
{
	const struct afalg_hash_ctx *src = _src;
	struct afalg_hash_ctx *dst;

	if (src->kh != NULL) {
		_gnutls_debug_log("afalg: %s: copy of a kernel state\n",
				  _afalg_name(src->alg));
		return NULL;
	}
	dst = gnutls_calloc(1, sizeof(*dst));
	if (dst == NULL)
		return NULL;
	dst->alg = src->alg;
	dst->soft_ctx = soft_copy((struct afalg_hash_ctx *)src);
	if (dst->soft_ctx == NULL) {
		gnutls_free(dst);
		return NULL;
	}
	return dst;
}

/* One-shot digests run on the thread's cached kernel handle; after a
 * failure its state is unknown, so it is dropped. */
static int digest_oneshot(struct afalg_alg *alg, const void *text,
			  size_t text_size, void *out)
{
	struct kcapi_handle *h = _afalg_kernel_oneshot(alg);

	if (h == NULL)
		return GNUTLS_E_INTERNAL_ERROR;
	if (_afalg_kernel_hash(h, text, text_size) < 0 ||
	    _afalg_kernel_output(alg, h, out, alg->tag_size) < 0) {
		_afalg_kernel_oneshot_drop(alg);
		return GNUTLS_E_INTERNAL_ERROR;
	}
	return 0;
}

/* The kernel refuses a new key (EBUSY) while a socket of the old one is
 * open, so a one-shot MAC has a handle of its own. */
static int mac_oneshot(struct afalg_alg *alg, const void *key, size_t key_size,
		       const void *text, size_t text_size, void *out)
{
	struct kcapi_handle *h;
	int ret;

	ret = _afalg_kernel_open(alg, &h);
	if (ret < 0)
		return ret;
	ret = _afalg_kernel_setkey(alg, h, key, key_size);
	if (ret == 0)
		ret = _afalg_kernel_hash(h, text, text_size);
	if (ret == 0)
		ret = _afalg_kernel_output(alg, h, out, alg->tag_size);
	_afalg_kernel_close(alg, h);
	return ret;
}

static int afalg_mac_fast(gnutls_mac_algorithm_t algo, const void *nonce,
			  size_t nonce_size, const void *key, size_t key_size,
			  const void *text, size_t text_size, void *digest)
{
	struct afalg_alg *alg = _afalg_find(AFALG_MAC, algo);

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (alg->kernel && nonce_size == 0 &&
	    mac_oneshot(alg, key, key_size, text, text_size, digest) == 0) {
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
	if (alg->kernel && digest_oneshot(alg, text, text_size, digest) == 0) {
		_afalg_count(alg, true);
		return 0;
	}
	_afalg_count(alg, false);
	return alg->soft.digest->fast(algo, text, text_size, digest);
}

const gnutls_crypto_mac_st _afalg_mac_ops = {
	.init = afalg_mac_init,
	.setkey = afalg_mac_setkey,
	.setnonce = afalg_mac_setnonce,
	.hash = afalg_hash_update,
	.output = afalg_hash_output,
	.deinit = afalg_hash_deinit,
	.fast = afalg_mac_fast,
	.copy = afalg_hash_copy,
};

const gnutls_crypto_digest_st _afalg_digest_ops = {
	.init = afalg_digest_init,
	.hash = afalg_hash_update,
	.output = afalg_hash_output,
	.deinit = afalg_hash_deinit,
	.fast = afalg_digest_fast,
	.copy = afalg_hash_copy,
};
