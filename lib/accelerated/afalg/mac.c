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
 * gnutls_hash_output(), gnutls_hmac_output() or a TLS record's MAC, so a
 * message must never depend on a kernel socket alone.  Each message is
 * in one of these states:
 *
 *  SOFT    software has it, as without the module (a message after a
 *          short one starts here: see msg_start());
 *  HOLD    its first bytes are held in user space until it is long
 *          enough for the kernel (a short message never opens a socket);
 *  KERNEL  the kernel has it, and user space keeps the bytes sent since
 *          the last checkpoint: a clone of the kernel state taken every
 *          AFALG_HASH_REPLAY bytes (none yet: the held bytes are the
 *          whole message).  A checkpoint that cannot be taken leaves the
 *          bytes held beyond that, or the message to software if it has
 *          none.  A failed socket, or one shared with the parent after
 *          fork(), is replaced from the checkpoint (a few tries), or the
 *          message moves to software;
 *  LOST    the kernel failed and so did the checkpoint: the output cannot
 *          be computed, and the library goes into its error state rather
 *          than return a digest that is not the message's. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "fips.h"
#include "atfork.h"
#include <gnutls/crypto.h>

#include <string.h>

enum msg_state {
	MSG_SOFT,
	MSG_HOLD,
	MSG_KERNEL,
	MSG_LOST
};

struct afalg_hash_ctx {
	struct afalg_alg *alg;
	enum msg_state state;
	/* GnuTLS's software for the algorithm when the context was made:
	 * the library may register another across a re-initialization,
	 * which this context outlives */
	union afalg_soft soft_ops;
	void *soft; /* software context, once needed */
	bool soft_used; /* the current message is software's */
	gnutls_mac_hash_func soft_update;
	gnutls_mac_output_func soft_finish;
	uint8_t *buf; /* held bytes, or sent since the checkpoint */
	size_t len, cap;
	size_t msg_len; /* the message so far */
	bool hold; /* the next message is held: the last reached the
		    * threshold, or there was none */
	const size_t *threshold; /* the algorithm's message threshold, or
				  * (calibration) one every message reaches */
	int op; /* kernel operation socket, or -1 */
	int ckpt; /* checkpoint of the message, or -1 */
	unsigned forkid; /* process that opened op */
	unsigned ckpt_forkid; /* process that took ckpt, */
	unsigned long ckpt_id; /* and its identity (_afalg_kernel_id()) */
	uint8_t *key; /* MAC key */
	size_t key_size;
};

/* Software: the MAC and digest interfaces differ in init, setkey, fast. */
static int soft_new(struct afalg_hash_ctx *ctx, void **soft)
{
	const gnutls_crypto_mac_st *mac = ctx->soft_ops.mac;
	int ret;

	if (ctx->alg->family == AFALG_DIGEST)
		return ctx->soft_ops.digest->init(ctx->alg->id, soft);
	ret = mac->init(ctx->alg->id, soft);
	if (ret < 0)
		return ret;
	ret = mac->setkey(*soft, ctx->key, ctx->key_size);
	if (ret < 0)
		mac->deinit(*soft);
	return ret;
}

static void soft_free(struct afalg_hash_ctx *ctx, void **soft)
{
	if (*soft == NULL)
		return;
	if (ctx->alg->family == AFALG_MAC)
		ctx->soft_ops.mac->deinit(*soft);
	else
		ctx->soft_ops.digest->deinit(*soft);
	*soft = NULL;
}

/* The software calls a message takes, whichever interface. */
static void soft_calls(struct afalg_hash_ctx *ctx, union afalg_soft ops)
{
	bool mac = ctx->alg->family == AFALG_MAC;

	ctx->soft_ops = ops;
	ctx->soft_update = mac ? ops.mac->hash : ops.digest->hash;
	ctx->soft_finish = mac ? ops.mac->output : ops.digest->output;
}

static int soft_hash(struct afalg_hash_ctx *ctx, const void *data, size_t size)
{
	if (size == 0)
		return 0;
	ctx->soft_used = true;
	return ctx->soft_update(ctx->soft, data, size);
}

/* Outputs and resets the software message. */
static int soft_output(struct afalg_hash_ctx *ctx, void *out)
{
	ctx->soft_used = false;
	return ctx->soft_finish(ctx->soft, out, ctx->alg->tag_size);
}

static void *soft_copy(const struct afalg_hash_ctx *ctx)
{
	const union afalg_soft ops = ctx->soft_ops;

	if (ctx->alg->family == AFALG_MAC)
		return ops.mac->copy ? ops.mac->copy(ctx->soft) : NULL;
	return ops.digest->copy ? ops.digest->copy(ctx->soft) : NULL;
}

static int soft_fast(const struct afalg_alg *alg, const void *key,
		     size_t key_size, const void *text, size_t size, void *out)
{
	if (alg->family == AFALG_MAC)
		return alg->soft.mac->fast(alg->id, NULL, 0, key, key_size,
					   text, size, out);
	return alg->soft.digest->fast(alg->id, text, size, out);
}

/* A software context at the start of a message. */
static int soft_ready(struct afalg_hash_ctx *ctx)
{
	if (ctx->soft != NULL && !ctx->soft_used)
		return 0;
	soft_free(ctx, &ctx->soft);
	ctx->soft_used = false;
	return soft_new(ctx, &ctx->soft);
}

/* The held bytes; the buffer grows up to AFALG_HASH_REPLAY, or beyond
 * while no checkpoint can be taken. */
static int buf_reserve(struct afalg_hash_ctx *ctx, size_t size)
{
	size_t cap = MAX(ctx->cap, 256);
	uint8_t *buf;

	if (ctx->len + size <= ctx->cap)
		return 0;
	while (cap < ctx->len + size)
		cap *= 2;
	cap = MAX(MIN(cap, AFALG_HASH_REPLAY), ctx->len + size);
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
	return 0;
}

static void buf_append(struct afalg_hash_ctx *ctx, const void *data,
		       size_t size)
{
	if (size > 0)
		memcpy(ctx->buf + ctx->len, data, size);
	ctx->len += size;
}

static void buf_clear(struct afalg_hash_ctx *ctx)
{
	if (ctx->len > 0)
		gnutls_memset(ctx->buf, 0, ctx->len);
	ctx->len = 0;
}

static size_t msg_threshold(const struct afalg_hash_ctx *ctx)
{
	return __atomic_load_n(ctx->threshold, __ATOMIC_RELAXED);
}

/* A new message.  The message before it predicts its length: after one
 * that reached the threshold (or on a new context) it is held for the
 * kernel; otherwise it starts in software, which it leaves only if its
 * first piece alone is long enough for the kernel (afalg_hash_update()).
 * So a context of short messages (TLS records, handshake hashes) copies
 * only its first. */
static void msg_start(struct afalg_hash_ctx *ctx)
{
	size_t t = msg_threshold(ctx);

	_afalg_kernel_drop(&ctx->ckpt, ctx->ckpt_forkid);
	if (ctx->len > 0)
		buf_clear(ctx);
	if (ctx->hold && t <= AFALG_HASH_REPLAY &&
	    _afalg_kernel_usable(ctx->alg))
		ctx->state = MSG_HOLD;
	else
		ctx->state = MSG_SOFT;
	ctx->msg_len = 0;
}

/* The message ended: its length predicts the next. */
static void msg_next(struct afalg_hash_ctx *ctx)
{
	ctx->hold = ctx->msg_len >= msg_threshold(ctx);
	msg_start(ctx);
}

/* The first piece of a message in software is long enough for the
 * kernel. */
static bool first_to_kernel(const struct afalg_hash_ctx *ctx, size_t size)
{
	return !ctx->soft_used && size >= msg_threshold(ctx) &&
	       _afalg_kernel_usable(ctx->alg);
}

/* The message so far goes to software, from the held bytes, and stays
 * there (none held: still software's, so that a kernel failing at a
 * first piece does not see it again). */
static int to_soft(struct afalg_hash_ctx *ctx)
{
	int ret;

	_afalg_kernel_drop(&ctx->op, ctx->forkid);
	_afalg_kernel_drop(&ctx->ckpt, ctx->ckpt_forkid);
	ret = soft_ready(ctx);
	if (ret == 0)
		ret = soft_hash(ctx, ctx->buf, ctx->len);
	ctx->soft_used = true;
	buf_clear(ctx);
	ctx->state = ret == 0 ? MSG_SOFT : MSG_LOST;
	return ret;
}

static void lost(struct afalg_hash_ctx *ctx)
{
	_afalg_kernel_drop(&ctx->op, ctx->forkid);
	_afalg_kernel_drop(&ctx->ckpt, ctx->ckpt_forkid);
	buf_clear(ctx);
	ctx->state = MSG_LOST;
	_gnutls_debug_log("afalg: %s: a kernel failure lost a message\n",
			  _afalg_label(ctx->alg));
}

/* The checkpoint the message goes on from: taken in this process, or
 * the parent's if it is still the same socket.  A child may have closed
 * what it inherited and opened a file of its own under its number: the
 * checkpoint is then gone, and the message with it (the bytes held are
 * only those after it). */
static bool ckpt_ours(struct afalg_hash_ctx *ctx)
{
	if (!_gnutls_detect_fork(ctx->ckpt_forkid))
		return true;
	if (ctx->ckpt_id != 0 && _afalg_kernel_id(ctx->ckpt) == ctx->ckpt_id) {
		ctx->ckpt_forkid = _gnutls_get_forkid();
		return true;
	}
	lost(ctx);
	return false;
}

static void set_ckpt(struct afalg_hash_ctx *ctx, int ckpt)
{
	ctx->ckpt = ckpt;
	ctx->ckpt_forkid = _gnutls_get_forkid();
	ctx->ckpt_id = _afalg_kernel_id(ckpt);
}

/* The kernel socket of the message failed, or belongs to the parent
 * process: a new one continues from the checkpoint, or software from
 * the whole message.  A failure leaves the message without a socket
 * (op -1), to be tried again: the caller decides when it is lost. */
static int recover(struct afalg_hash_ctx *ctx)
{
	int ret;

	_afalg_kernel_drop(&ctx->op, ctx->forkid);
	if (ctx->ckpt < 0)
		return to_soft(ctx);
	if (!ckpt_ours(ctx))
		return gnutls_assert_val(GNUTLS_E_HASH_FAILED);
	ctx->forkid = _gnutls_get_forkid();
	ret = _afalg_kernel_clone(ctx->ckpt, &ctx->op);
	if (ret == 0)
		ret = _afalg_kernel_hash(ctx->op, ctx->buf, ctx->len);
	if (ret < 0)
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
	return ret;
}

/* After fork(), the parent's socket is replaced; if that fails, the
 * caller's next kernel step finds no socket and recovers again. */
static void check_fork(struct afalg_hash_ctx *ctx)
{
	if (ctx->state == MSG_KERNEL && ctx->op >= 0 &&
	    _gnutls_detect_fork(ctx->forkid))
		recover(ctx);
}

/* Sends the held bytes to a kernel socket of this process. */
static int commit(struct afalg_hash_ctx *ctx)
{
	int ret;

	if (!_afalg_kernel_usable(ctx->alg))
		return GNUTLS_E_INTERNAL_ERROR;
	if (ctx->op >= 0 && _gnutls_detect_fork(ctx->forkid))
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
	if (ctx->op < 0) {
		ctx->forkid = _gnutls_get_forkid();
		ret = _afalg_kernel_open(ctx->alg, ctx->key, ctx->key_size,
					 &ctx->op);
		if (ret < 0)
			return ret;
	}
	ret = _afalg_kernel_hash(ctx->op, ctx->buf, ctx->len);
	if (ret < 0) {
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
		return ret;
	}
	ctx->state = MSG_KERNEL;
	return 0;
}

/* A clone of the kernel state replaces the held bytes.  It may fail for
 * want of a descriptor (the application's own limit, or the module's cap
 * for a message's first) as well as from the kernel: the message does
 * not need it, and the bytes stay held until one can be taken.  One that
 * replaces this process's last checkpoint is one more descriptor only
 * while both are open, and may go over the cap: else every byte of a
 * long message after the cap was reached would stay held. */
static int checkpoint(struct afalg_hash_ctx *ctx)
{
	int ckpt, ret;

	if (ctx->ckpt >= 0 && !_gnutls_detect_fork(ctx->ckpt_forkid))
		ret = _afalg_kernel_copy(ctx->op, &ckpt);
	else
		ret = _afalg_kernel_clone(ctx->op, &ckpt);
	if (ret < 0)
		return ret;
	_afalg_kernel_drop(&ctx->ckpt, ctx->ckpt_forkid);
	set_ckpt(ctx, ckpt);
	buf_clear(ctx);
	return 0;
}

/* kernel_update(): no checkpoint could be taken, and the message has
 * none: the held bytes are all of it, and software takes it over. */
#define TO_SOFT 1

/* Sends data in pieces of at most AFALG_HASH_REPLAY bytes, taking a
 * checkpoint whenever the held bytes would outgrow that; *done tells
 * how much the message has taken when it fails. */
static int kernel_update(struct afalg_hash_ctx *ctx, const uint8_t *data,
			 size_t size, size_t *done)
{
	size_t len;
	int ret;

	for (*done = 0; *done < size; *done += len) {
		len = MIN(size - *done, AFALG_HASH_REPLAY);
		if (ctx->len + len > AFALG_HASH_REPLAY && checkpoint(ctx) < 0 &&
		    ctx->ckpt < 0)
			return TO_SOFT;
		ret = buf_reserve(ctx, len);
		if (ret < 0)
			return ret;
		ret = _afalg_kernel_hash(ctx->op, data + *done, len);
		if (ret < 0)
			return ret;
		buf_append(ctx, data + *done, len);
	}
	return 0;
}

/* How often one call may replace a failed kernel socket. */
#define RECOVERIES 2

/* Software has the message and its context is made (one-shot calls do
 * not use contexts). */
static bool soft_has(const struct afalg_hash_ctx *ctx)
{
	return ctx->state == MSG_SOFT && ctx->soft != NULL;
}

static int afalg_hash_update(void *_ctx, const void *_data, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	const uint8_t *data = _data;
	unsigned tries = 0;
	size_t done;
	int ret;

	/* straight to software: a message begun there stays, and a first
	 * piece shorter than the threshold starts there */
	if (likely(soft_has(ctx) &&
		   (ctx->soft_used || size < msg_threshold(ctx)))) {
		ctx->soft_used = ctx->soft_used || size > 0;
		ctx->msg_len += size;
		return ctx->soft_update(ctx->soft, data, size);
	}
	check_fork(ctx);
	ctx->msg_len += size;
	for (;;) {
		switch (ctx->state) {
		case MSG_HOLD:
			if (ctx->len + size >= msg_threshold(ctx)) {
				if (commit(ctx) == 0)
					continue;
			} else if (ctx->len + size <= AFALG_HASH_REPLAY &&
				   buf_reserve(ctx, size) == 0) {
				buf_append(ctx, data, size);
				return 0;
			}
			ret = to_soft(ctx);
			if (ret < 0)
				return gnutls_assert_val(ret);
			continue;
		case MSG_KERNEL:
			done = 0;
			ret = ctx->op < 0 ?
				      GNUTLS_E_INTERNAL_ERROR :
				      kernel_update(ctx, data, size, &done);
			if (ret == 0)
				return 0;
			data += done;
			size -= done;
			if (ret == TO_SOFT) {
				ret = to_soft(ctx);
			} else if (ret == GNUTLS_E_MEMORY_ERROR) {
				/* part of the data is in the message, and
				 * nothing can hold the rest for it */
				lost(ctx);
			} else if (tries++ == RECOVERIES) {
				lost(ctx);
			} else {
				recover(ctx);
			}
			continue;
		case MSG_SOFT:
			if (first_to_kernel(ctx, size)) {
				ctx->state = MSG_HOLD;
				continue;
			}
			ret = ctx->soft_used ? 0 : soft_ready(ctx);
			if (ret < 0)
				return gnutls_assert_val(ret);
			return soft_hash(ctx, data, size);
		case MSG_LOST:
			return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
		}
	}
}

/* A message software finished; an algorithm in auto mode counts its
 * work. */
static void soft_done(struct afalg_hash_ctx *ctx)
{
	if (unlikely(!__atomic_load_n(&ctx->alg->settled, __ATOMIC_RELAXED)))
		_afalg_account(ctx->alg, ctx->msg_len);
	_afalg_count(ctx->alg, false);
}

/* Where the message ends decides where a held one is hashed. */
static int output(struct afalg_hash_ctx *ctx, uint8_t *out)
{
	const struct afalg_alg *alg = ctx->alg;
	unsigned tries = 0;
	int ret;

	check_fork(ctx);
	for (;;) {
		switch (ctx->state) {
		case MSG_HOLD:
			if (ctx->len >= msg_threshold(ctx) && commit(ctx) == 0)
				continue;
			/* the context's software, keyed once: a one-shot MAC
			 * would derive the key's state for every message */
			_afalg_count(ctx->alg, false);
			ret = soft_ready(ctx);
			if (ret == 0)
				ret = soft_hash(ctx, ctx->buf, ctx->len);
			return ret == 0 ? soft_output(ctx, out) : ret;
		case MSG_KERNEL:
			ret = ctx->op < 0 ? GNUTLS_E_INTERNAL_ERROR :
					    _afalg_kernel_digest(ctx->op, out,
								 alg->tag_size);
			if (ret == 0) {
				_afalg_count(ctx->alg, true);
				return 0;
			}
			if (tries++ == RECOVERIES)
				lost(ctx);
			else
				recover(ctx);
			continue;
		case MSG_SOFT:
			ret = ctx->soft_used ? 0 : soft_ready(ctx);
			if (ret < 0)
				return ret;
			soft_done(ctx);
			return soft_output(ctx, out);
		case MSG_LOST:
			return GNUTLS_E_INTERNAL_ERROR;
		}
	}
}

/* A NULL digest drops the message (gnutls_hash_output(h, NULL) resets,
 * in 3.8): nothing can verify against it, so it is not finished, and a
 * kernel that would fail to finish it does not stop the library. */
static int discard(struct afalg_hash_ctx *ctx)
{
	uint8_t tmp[AFALG_MAX_OUTPUT_SIZE];
	int ret = 0;

	if (ctx->state == MSG_KERNEL || ctx->state == MSG_LOST)
		_afalg_kernel_drop(&ctx->op, ctx->forkid);
	else if (ctx->state == MSG_SOFT && ctx->soft_used) {
		ret = soft_output(ctx, tmp);
		gnutls_memset(tmp, 0, sizeof(tmp));
	}
	msg_next(ctx);
	return ret < 0 ? gnutls_assert_val(ret) : 0;
}

/* GnuTLS ignores errors here: a message that cannot be finished must not
 * yield anything that verifies, and stops the library. */
static int afalg_hash_output(void *_ctx, void *digest, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;
	size_t tag_size = ctx->alg->tag_size;
	uint8_t tmp[AFALG_MAX_OUTPUT_SIZE];
	uint8_t *out = size >= tag_size ? digest : tmp;
	int ret;

	if (unlikely(digest == NULL))
		return discard(ctx);
	if (likely(soft_has(ctx) && out == digest)) {
		soft_done(ctx);
		ret = soft_output(ctx, digest);
		if (unlikely(ctx->hold || ctx->msg_len >= msg_threshold(ctx)))
			msg_next(ctx);
		else
			ctx->msg_len = 0;
		return ret;
	}
	ret = output(ctx, out);
	msg_next(ctx);
	if (ret < 0) {
		gnutls_rnd(GNUTLS_RND_NONCE, out, tag_size);
		_gnutls_switch_lib_state(LIB_STATE_ERROR);
		_gnutls_debug_log(
			"afalg: %s: no output: library in error state\n",
			_afalg_label(ctx->alg));
	}
	if (out == tmp) {
		memcpy(digest, tmp, MIN(size, tag_size));
		gnutls_memset(tmp, 0, sizeof(tmp));
	}
	return ret < 0 ? gnutls_assert_val(ret) : 0;
}

static int hash_init(enum afalg_family family, int algo, void **_ctx)
{
	struct afalg_alg *alg = _afalg_find(family, algo);
	struct afalg_hash_ctx *ctx;

	if (alg == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	ctx = gnutls_calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	ctx->alg = alg;
	ctx->threshold = &alg->threshold[0];
	ctx->op = -1;
	ctx->ckpt = -1;
	soft_calls(ctx, alg->soft);
	/* no message before to go by: the first is held, so that one that
	 * comes in short pieces (a file hashed in chunks) still reaches the
	 * kernel */
	ctx->hold = true;
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

/* Software checks the key first; a refused key leaves the context as it
 * was.  A new key starts a new message. */
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
	ret = ctx->soft_ops.mac->init(ctx->alg->id, &soft);
	if (ret == 0) {
		ret = ctx->soft_ops.mac->setkey(soft, key, key_size);
		if (ret < 0)
			ctx->soft_ops.mac->deinit(soft);
	}
	if (ret < 0) {
		gnutls_memset(copy, 0, key_size);
		gnutls_free(copy);
		return gnutls_assert_val(ret);
	}

	soft_free(ctx, &ctx->soft);
	ctx->soft = soft;
	ctx->soft_used = false;
	if (ctx->key != NULL) {
		gnutls_memset(ctx->key, 0, ctx->key_size);
		gnutls_free(ctx->key);
	}
	ctx->key = copy;
	ctx->key_size = key_size;
	_afalg_kernel_drop(&ctx->op, ctx->forkid);
	msg_start(ctx);
	return 0;
}

static int afalg_mac_setnonce(void *_ctx, const void *nonce, size_t size)
{
	struct afalg_hash_ctx *ctx = _ctx;

	if (ctx->soft == NULL || ctx->soft_ops.mac->setnonce == NULL)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	return ctx->soft_ops.mac->setnonce(ctx->soft, nonce, size);
}

static void afalg_hash_deinit(void *_ctx)
{
	struct afalg_hash_ctx *ctx = _ctx;

	_afalg_kernel_drop(&ctx->op, ctx->forkid);
	_afalg_kernel_drop(&ctx->ckpt, ctx->ckpt_forkid);
	soft_free(ctx, &ctx->soft);
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

/* The copy's checkpoint, then its socket: a clone of the original's,
 * or (without one) recovered from the checkpoint, or software from the
 * whole message; a failure is tried again.  Its descriptors may go over
 * the module's cap: software has no copy to give. */
static int copy_kernel(struct afalg_hash_ctx *dst, struct afalg_hash_ctx *src)
{
	unsigned tries;
	int ckpt, ret = 0;

	if (src->ckpt >= 0 && !ckpt_ours(src))
		return gnutls_assert_val(GNUTLS_E_HASH_FAILED);
	for (tries = 0; tries <= RECOVERIES; tries++) {
		if (src->ckpt >= 0 && dst->ckpt < 0) {
			ret = _afalg_kernel_copy(src->ckpt, &ckpt);
			if (ret < 0)
				continue;
			set_ckpt(dst, ckpt);
		}
		dst->forkid = _gnutls_get_forkid();
		ret = src->op < 0 ? GNUTLS_E_INTERNAL_ERROR :
				    _afalg_kernel_copy(src->op, &dst->op);
		if (ret == 0)
			return 0;
		ret = recover(dst);
		if (ret == 0 || dst->state == MSG_LOST)
			return ret;
	}
	return ret;
}

/* A kernel message is cloned by the kernel (checkpoint included), a
 * software one by software, held bytes by copying them. */
static int copy_state(struct afalg_hash_ctx *dst, struct afalg_hash_ctx *src)
{
	int ret;

	check_fork(src);
	ret = buf_reserve(dst, src->len);
	if (ret < 0)
		return ret;
	buf_append(dst, src->buf, src->len);
	dst->state = src->state;
	dst->msg_len = src->msg_len;
	dst->hold = src->hold;
	switch (src->state) {
	case MSG_SOFT:
		dst->soft_used = src->soft_used;
		if (src->soft == NULL)
			return 0;
		dst->soft = soft_copy(src);
		return dst->soft != NULL ? 0 : GNUTLS_E_HASH_FAILED;
	case MSG_HOLD:
		return 0;
	case MSG_KERNEL:
		return copy_kernel(dst, src);
	case MSG_LOST:
		break;
	}
	return GNUTLS_E_HASH_FAILED;
}

static void *afalg_hash_copy(const void *_src)
{
	struct afalg_hash_ctx *src = (struct afalg_hash_ctx *)_src;
	struct afalg_hash_ctx *dst;

	dst = gnutls_calloc(1, sizeof(*dst));
	if (dst == NULL)
		return NULL;
	dst->alg = src->alg;
	dst->threshold = src->threshold;
	soft_calls(dst, src->soft_ops);
	dst->op = -1;
	dst->ckpt = -1;
	if (src->key != NULL) {
		dst->key = gnutls_malloc(src->key_size ? src->key_size : 1);
		if (dst->key == NULL)
			goto fail;
		memcpy(dst->key, src->key, src->key_size);
		dst->key_size = src->key_size;
	}
	if (copy_state(dst, src) < 0)
		goto fail;
	return dst;
fail:
	afalg_hash_deinit(dst);
	return NULL;
}

/* One-shot calls know their size: no holding, no replay needed, since
 * the caller's buffer is there for software if the kernel fails. */
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
	return soft_fast(alg, NULL, 0, text, text_size, digest);
}

/* ---- calibration: the kernel as a message takes it ------------------- */

/* A message threshold that every message reaches. */
static const size_t every_message;

/* A context whose every message goes to the kernel on the path any
 * message the module sends there takes (held, sent, the bytes kept for
 * replay, checkpoints), so that calibration times that path and not a
 * bare socket. */
int _afalg_hash_kernel_new(struct afalg_alg *alg, const void *key,
			   size_t key_size, void **_ctx)
{
	struct afalg_hash_ctx *ctx;
	int ret;

	ret = hash_init(alg->family, alg->id, _ctx);
	if (ret < 0)
		return ret;
	ctx = *_ctx;
	ctx->threshold = &every_message;
	if (alg->family == AFALG_MAC)
		ret = afalg_mac_setkey(ctx, key, key_size);
	else
		msg_start(ctx);
	if (ret < 0) {
		afalg_hash_deinit(ctx);
		*_ctx = NULL;
	}
	return ret;
}

/* One message of such a context; an error if the kernel did not carry
 * it to its end (the module finishing it in software would time
 * software as the kernel). */
int _afalg_hash_kernel_message(void *_ctx, const void *data, size_t size,
			       void *out)
{
	struct afalg_hash_ctx *ctx = _ctx;
	int ret;

	ret = afalg_hash_update(ctx, data, size);
	if (ret == 0 && ctx->state == MSG_KERNEL)
		ret = output(ctx, out);
	if (ret == 0 && ctx->state != MSG_KERNEL)
		ret = gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
	msg_next(ctx);
	return ret;
}

void _afalg_hash_kernel_free(void *ctx)
{
	if (ctx != NULL)
		afalg_hash_deinit(ctx);
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
