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

/* MACs and digests.  GnuTLS cannot report an error from
 * gnutls_hash_output(), gnutls_hmac_output() or a TLS record's MAC, so
 * the module goes to the kernel only with the whole message in hand: a
 * message that may go there is held in user space (up to
 * AFALG_MAX_REQUEST bytes) and sent in one request when it ends, and
 * whatever the kernel does, software can still hash what is held.  A
 * longer message moves to software, once, with the bytes held so far.
 *
 * Whether a message is held is predicted from the last one: after one
 * that reached the threshold (or on a new context) it is, otherwise it
 * starts in software and is held only if its first piece alone reaches
 * the threshold.  So a context of short messages (TLS records, handshake
 * hashes) copies nothing but its first. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <string.h>

struct afalg_hash_ctx {
	struct afalg_alg *alg;
	/* GnuTLS's software for the algorithm when the context was made:
	 * the library may register another across a re-initialization,
	 * which this context outlives */
	union afalg_soft soft_ops;
	void *soft; /* at the start of a message unless soft_msg */
	bool soft_msg; /* the message is software's */
	bool held; /* the message is in buf */
	bool hold_next;
	uint8_t *buf;
	size_t len, cap;
	size_t msg_len;
	struct afalg_sock sock;
	unsigned failures; /* kernel failures in a row */
	uint8_t *key; /* MAC key */
	size_t key_size;
};

static bool is_mac(const struct afalg_hash_ctx *ctx)
{
	return ctx->alg->family == AFALG_MAC;
}

static int soft_update(struct afalg_hash_ctx *ctx, const void *data,
		       size_t size)
{
	ctx->soft_msg = true;
	if (is_mac(ctx))
		return ctx->soft_ops.mac->hash(ctx->soft, data, size);
	return ctx->soft_ops.digest->hash(ctx->soft, data, size);
}

/* Outputs and resets the software message. */
static int soft_output(struct afalg_hash_ctx *ctx, void *out)
{
	ctx->soft_msg = false;
	if (is_mac(ctx))
		return ctx->soft_ops.mac->output(ctx->soft, out,
						 ctx->alg->tag_size);
	return ctx->soft_ops.digest->output(ctx->soft, out, ctx->alg->tag_size);
}

static void soft_free(struct afalg_hash_ctx *ctx, void *soft)
{
	if (soft == NULL)
		return;
	if (is_mac(ctx))
		ctx->soft_ops.mac->deinit(soft);
	else
		ctx->soft_ops.digest->deinit(soft);
}

static void buf_clear(struct afalg_hash_ctx *ctx)
{
	if (ctx->len > 0)
		gnutls_memset(ctx->buf, 0, ctx->len);
	ctx->len = 0;
}

static int buf_append(struct afalg_hash_ctx *ctx, const void *data, size_t size)
{
	size_t cap = MAX(ctx->cap, 256);
	uint8_t *buf;

	if (ctx->len + size > ctx->cap) {
		while (cap < ctx->len + size)
			cap *= 2;
		cap = MIN(cap, AFALG_MAX_REQUEST);
		buf = gnutls_malloc(cap);
		if (buf == NULL)
			return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
		if (ctx->len > 0)
			memcpy(buf, ctx->buf, ctx->len);
		if (ctx->buf != NULL) {
			gnutls_memset(ctx->buf, 0, ctx->cap);
			gnutls_free(ctx->buf);
		}
		ctx->buf = buf;
		ctx->cap = cap;
	}
	if (size > 0)
		memcpy(ctx->buf + ctx->len, data, size);
	ctx->len += size;
	return 0;
}

static bool may_hold(const struct afalg_hash_ctx *ctx)
{
	return ctx->alg->threshold[0] <= AFALG_MAX_REQUEST &&
	       ctx->failures < AFALG_MAX_FAILURES &&
	       _afalg_kernel_usable(ctx->alg);
}

/* A new message: held if the last one reached the threshold. */
static void msg_start(struct afalg_hash_ctx *ctx)
{
	buf_clear(ctx);
	ctx->held = ctx->hold_next && may_hold(ctx);
	ctx->msg_len = 0;
}

/* The held bytes move to software, and the message stays there. */
static int to_soft(struct afalg_hash_ctx *ctx)
{
	int ret = soft_update(ctx, ctx->buf, ctx->len);

	buf_clear(ctx);
	ctx->held = false;
	return ret;
}

static int afalg_hash_update(void *_ctx, const void *data, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	int ret;

	/* a first piece long enough for the kernel is held */
	if (!ctx->held && ctx->msg_len == 0 && !ctx->soft_msg &&
	    size >= ctx->alg->threshold[0] && may_hold(ctx))
		ctx->held = true;
	ctx->msg_len += size;
	if (likely(!ctx->held))
		return soft_update(ctx, data, size);
	if (ctx->len + size <= AFALG_MAX_REQUEST &&
	    buf_append(ctx, data, size) == 0)
		return 0;
	ret = to_soft(ctx);
	if (ret < 0)
		return gnutls_assert_val(ret);
	return soft_update(ctx, data, size);
}

/* The held message in the kernel, in one request. */
static int kernel_output(struct afalg_hash_ctx *ctx, void *out)
{
	int ret;

	ret = _afalg_sock_get(&ctx->sock, ctx->alg, ctx->key, ctx->key_size);
	if (ret == 0) {
		ret = _afalg_kernel_hash(&ctx->sock, ctx->buf, ctx->len, out,
					 ctx->alg->tag_size);
		if (ret < 0)
			_afalg_sock_close(&ctx->sock);
	}
	ctx->failures = ret < 0 ? ctx->failures + 1 : 0;
	return ret;
}

static int output(struct afalg_hash_ctx *ctx, uint8_t *out)
{
	int ret;

	if (ctx->held && ctx->len >= ctx->alg->threshold[0] &&
	    _afalg_kernel_usable(ctx->alg) && kernel_output(ctx, out) == 0) {
		_afalg_count(ctx->alg, true);
		return 0;
	}
	_afalg_count(ctx->alg, false);
	if (ctx->held) {
		ret = to_soft(ctx);
		if (ret < 0)
			return gnutls_assert_val(ret);
	}
	return soft_output(ctx, out);
}

/* A NULL digest drops the message (gnutls_hash_output(h, NULL) resets, in
 * 3.8). */
static int afalg_hash_output(void *_ctx, void *digest, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	uint8_t tmp[AFALG_MAX_OUTPUT_SIZE];
	uint8_t *out = digest != NULL && size >= ctx->alg->tag_size ? digest :
								      tmp;
	int ret = 0;

	if (digest != NULL || ctx->soft_msg)
		ret = output(ctx, out);
	if (out == tmp && digest != NULL)
		memcpy(digest, tmp, MIN(size, ctx->alg->tag_size));
	gnutls_memset(tmp, 0, sizeof(tmp));
	ctx->hold_next = ctx->msg_len >= ctx->alg->threshold[0];
	msg_start(ctx);
	return ret < 0 ? gnutls_assert_val(ret) : 0;
}

static int soft_new(struct afalg_hash_ctx *ctx, void **soft)
{
	if (is_mac(ctx))
		return ctx->soft_ops.mac->init(ctx->alg->id, soft);
	return ctx->soft_ops.digest->init(ctx->alg->id, soft);
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
	ctx->soft_ops = alg->soft;
	AFALG_SOCK_INIT(&ctx->sock);
	ret = soft_new(ctx, &ctx->soft);
	if (ret < 0) {
		gnutls_free(ctx);
		return gnutls_assert_val(ret);
	}
	/* no message before to go by: the first is held, so that one that
	 * comes in short pieces (a file hashed in chunks) still reaches the
	 * kernel */
	ctx->hold_next = true;
	msg_start(ctx);
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

/* Software checks the key first, in a new context: a refused key leaves
 * the old one as it was.  A new key starts a new message. */
static int afalg_mac_setkey(void *_ctx, const void *key, size_t key_size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	uint8_t *copy;
	void *soft;
	int ret;

	if (!key_size_ok(ctx->alg, key_size))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	copy = gnutls_malloc(key_size ? key_size : 1);
	if (copy == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	if (key_size > 0)
		memcpy(copy, key, key_size);
	ret = soft_new(ctx, &soft);
	if (ret == 0) {
		ret = ctx->soft_ops.mac->setkey(soft, key, key_size);
		if (ret < 0)
			soft_free(ctx, soft);
	}
	if (ret < 0) {
		gnutls_memset(copy, 0, key_size);
		gnutls_free(copy);
		return gnutls_assert_val(ret);
	}

	soft_free(ctx, ctx->soft);
	ctx->soft = soft;
	ctx->soft_msg = false;
	if (ctx->key != NULL) {
		gnutls_memset(ctx->key, 0, ctx->key_size);
		gnutls_free(ctx->key);
	}
	ctx->key = copy;
	ctx->key_size = key_size;
	/* the kernel socket has the old key */
	_afalg_sock_close(&ctx->sock);
	msg_start(ctx);
	return 0;
}

static int afalg_mac_setnonce(void *_ctx, const void *nonce, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	if (ctx->soft_ops.mac->setnonce == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return ctx->soft_ops.mac->setnonce(ctx->soft, nonce, size);
}

static void afalg_hash_deinit(void *_ctx)
{
	struct afalg_hash_ctx *ctx = _ctx;

	_afalg_sock_close(&ctx->sock);
	soft_free(ctx, ctx->soft);
	if (ctx->buf != NULL) {
		gnutls_memset(ctx->buf, 0, ctx->cap);
		gnutls_free(ctx->buf);
	}
	if (ctx->key != NULL) {
		gnutls_memset(ctx->key, 0, ctx->key_size);
		gnutls_free(ctx->key);
	}
	gnutls_free(ctx);
}

/* Software copies its context, the held bytes are copied; the copy opens
 * a kernel socket of its own when it needs one. */
static void *afalg_hash_copy(const void *_src)
{
	const struct afalg_hash_ctx *src = _src;
	struct afalg_hash_ctx *dst;
	void *(*copy)(const void *);

	copy = is_mac(src) ? src->soft_ops.mac->copy :
			     src->soft_ops.digest->copy;
	if (copy == NULL)
		return NULL;
	dst = gnutls_calloc(1, sizeof(*dst));
	if (dst == NULL)
		return NULL;
	*dst = *src;
	AFALG_SOCK_INIT(&dst->sock);
	dst->buf = NULL;
	dst->len = dst->cap = 0;
	dst->key = NULL;
	dst->soft = copy(src->soft);
	if (dst->soft == NULL)
		goto fail;
	if (src->key != NULL) {
		dst->key = gnutls_malloc(src->key_size ? src->key_size : 1);
		if (dst->key == NULL)
			goto fail;
		memcpy(dst->key, src->key, src->key_size);
	}
	if (buf_append(dst, src->buf, src->len) < 0)
		goto fail;
	return dst;
fail:
	afalg_hash_deinit(dst);
	return NULL;
}

/* One-shot calls know their size, and the caller's buffer is there for
 * software if the kernel fails. */
static int afalg_mac_fast(gnutls_mac_algorithm_t algo, const void *nonce,
			  size_t nonce_size, const void *key, size_t key_size,
			  const void *text, size_t text_size, void *digest)
{
	struct afalg_alg *alg = _afalg_find(AFALG_MAC, algo);

	if (alg == NULL || !key_size_ok(alg, key_size))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (nonce_size == 0 && _afalg_use_kernel(alg, 1, text_size) &&
	    _afalg_kernel_hash_fast(alg, key, key_size, text, text_size,
				    digest) == 0) {
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
	if (_afalg_use_kernel(alg, 1, text_size) &&
	    _afalg_kernel_hash_fast(alg, NULL, 0, text, text_size, digest) ==
		    0) {
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
