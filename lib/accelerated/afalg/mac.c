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
 * a context whose kernel sockets cannot be opened or keyed is a software
 * context from the start. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "mem.h"

#include <string.h>

struct afalg_hash_ctx {
	struct afalg_alg *alg;
	struct afalg_md *md; /* NULL: software */
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

	if (!alg->kernel || _afalg_md_open(alg, &ctx->md) < 0) {
		ctx->md = NULL;
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

/* A MAC with a fixed key size (CMAC) refuses others here: Nettle would
 * abort the process on them. */
static bool key_size_ok(const struct afalg_alg *alg, size_t key_size)
{
	return alg->key_size == 0 || key_size == alg->key_size;
}

static int afalg_mac_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	int ret;

	if (!key_size_ok(ctx->alg, key_size))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (ctx->md != NULL) {
		if (_afalg_md_setkey(ctx->md, key, key_size) == 0)
			return 0;
		/* a key starts a new message: software can take over */
		_afalg_md_close(ctx->md);
		ctx->md = NULL;
		ret = soft_init(ctx);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	return ctx->alg->soft.mac->setkey(ctx->soft_ctx, key, key_size);
}

static int afalg_mac_setnonce(void *_ctx, const void *nonce, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	if (ctx->md != NULL || ctx->alg->soft.mac->setnonce == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return ctx->alg->soft.mac->setnonce(ctx->soft_ctx, nonce, size);
}

static int afalg_hash_update(void *_ctx, const void *text, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	if (ctx->md == NULL)
		return soft_hash(ctx, text, size);
	return _afalg_md_update(ctx->md, text, size);
}

static int afalg_hash_output(void *_ctx, void *out, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	_afalg_count(ctx->alg, ctx->md != NULL);
	if (ctx->md == NULL)
		return soft_output(ctx, out, size);
	return _afalg_md_output(ctx->md, out, size);
}

static void afalg_hash_deinit(void *_ctx)
{
	struct afalg_hash_ctx *ctx = _ctx;

	_afalg_md_close(ctx->md);
	soft_deinit(ctx);
	gnutls_free(ctx);
}

/* A kernel state is copied by the kernel, a software one by software. */
static void *afalg_hash_copy(const void *_src)
{
	const struct afalg_hash_ctx *src = _src;
	struct afalg_hash_ctx *dst;

	dst = gnutls_calloc(1, sizeof(*dst));
	if (dst == NULL)
		return NULL;
	dst->alg = src->alg;
	if (src->md != NULL) {
		if (_afalg_md_copy(src->md, &dst->md) < 0)
			goto fail;
	} else {
		dst->soft_ctx = soft_copy((struct afalg_hash_ctx *)src);
		if (dst->soft_ctx == NULL)
			goto fail;
	}
	return dst;
fail:
	gnutls_free(dst);
	return NULL;
}

/* One-shot calls use the thread's cached context; a MAC sets its key on
 * it first. */
static int oneshot(struct afalg_alg *alg, const void *key, size_t key_size,
		   const void *text, size_t text_size, void *out)
{
	struct afalg_md *md = _afalg_md_oneshot(alg);

	if (md == NULL)
		return GNUTLS_E_INTERNAL_ERROR;
	if ((alg->family == AFALG_MAC &&
	     _afalg_md_setkey(md, key, key_size) < 0) ||
	    _afalg_md_update(md, text, text_size) < 0 ||
	    _afalg_md_output(md, out, alg->tag_size) < 0) {
		_afalg_md_oneshot_drop(alg);
		return GNUTLS_E_INTERNAL_ERROR;
	}
	_afalg_count(alg, true);
	return 0;
}

static int afalg_mac_fast(gnutls_mac_algorithm_t algo, const void *nonce,
			  size_t nonce_size, const void *key, size_t key_size,
			  const void *text, size_t text_size, void *digest)
{
	struct afalg_alg *alg = _afalg_find(AFALG_MAC, algo);

	if (alg == NULL || !key_size_ok(alg, key_size))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (alg->kernel && nonce_size == 0 &&
	    oneshot(alg, key, key_size, text, text_size, digest) == 0)
		return 0;
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
	if (alg->kernel && oneshot(alg, NULL, 0, text, text_size, digest) == 0)
		return 0;
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
