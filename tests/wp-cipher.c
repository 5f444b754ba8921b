/*
 * Wycheproof AES-CBC (PKCS#5) and AES-XTS vectors against gnutls_cipher_*:
 * encryption and decryption in one call, in place, and (for CBC, whose
 * chaining carries over from call to call) in pieces at block boundaries.
 *
 * Usage: wp-cipher ALGORITHM JSON-PATH
 *   e.g. wp-cipher AES-128-CBC aes_cbc_pkcs5_test.json
 *        wp-cipher AES-256-XTS aes_xts_test.json
 *
 * GnuTLS's CBC is unpadded: the harness pads messages with PKCS#7 itself
 * and checks the padding after decryption, which is where the "invalid"
 * (bad padding) vectors must be caught.
 *
 * XTS: the Wycheproof iv is the tweak, zero-padded on the right to 16
 * bytes. Each gnutls_cipher_encrypt2() call is a separate data unit with
 * that tweak, so XTS is not tested in pieces. Lengths that are not a
 * multiple of 16 exercise ciphertext stealing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "wycheproof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/crypto.h>

#define BLOCK 16
#define FILL 0xa5

enum mode {
	MODE_CBC,
	MODE_XTS
};

struct cipher_alg {
	const char *name;
	const char *family;
	enum mode mode;
};

static const struct cipher_alg cipher_algs[] = {
	{ "AES-128-CBC", "AES-CBC-PKCS5", MODE_CBC },
	{ "AES-192-CBC", "AES-CBC-PKCS5", MODE_CBC },
	{ "AES-256-CBC", "AES-CBC-PKCS5", MODE_CBC },
	{ "AES-128-XTS", "AES-XTS", MODE_XTS },
	{ "AES-256-XTS", "AES-XTS", MODE_XTS },
};

struct cipher_ctx {
	const struct cipher_alg *alg;
	gnutls_cipher_algorithm_t id;
	size_t key_size;
};

struct cipher_vec {
	gnutls_datum_t key;
	gnutls_datum_t iv;
	gnutls_datum_t msg;
	gnutls_datum_t ct;
	gnutls_datum_t pt; /* msg, padded for CBC */
	gnutls_datum_t tweak; /* iv, padded to a block for XTS */
};

/* clang-format off */
static const struct wp_field cipher_fields[] = {
	WP_FIELD(struct cipher_vec, key),
	WP_FIELD(struct cipher_vec, iv),
	WP_FIELD(struct cipher_vec, msg),
	WP_FIELD(struct cipher_vec, ct),
	WP_FIELD(struct cipher_vec, pt),
	WP_FIELD(struct cipher_vec, tweak),
};
/* clang-format on */

/* The fields read from the file; pt and tweak are built here. */
#define N_FILE_FIELDS 4

enum direction {
	ENCRYPT,
	DECRYPT
};

/* One piece, or pieces of 1, 2, 1 and 3 blocks in turn. */
static const struct wp_plan whole = {
	.name = "one piece",
};

static const struct wp_plan blocks = {
	.name = "in pieces",
	.pieces = { BLOCK, 2 * BLOCK, BLOCK, 3 * BLOCK },
};

struct cipher_op {
	const char *name;
	enum direction dir;
	int in_place;
	const struct wp_plan *plan;
};

static const struct cipher_op cipher_ops[] = {
	{ "encrypt", ENCRYPT, 0, &whole },
	{ "encrypt in place", ENCRYPT, 1, &whole },
	{ "encrypt in pieces", ENCRYPT, 0, &blocks },
	{ "decrypt", DECRYPT, 0, &whole },
	{ "decrypt in place", DECRYPT, 1, &whole },
	{ "decrypt in pieces", DECRYPT, 0, &blocks },
};

static const gnutls_datum_t *op_input(const struct cipher_vec *v,
				      const struct cipher_op *op)
{
	return op->dir == ENCRYPT ? &v->pt : &v->ct;
}

static const gnutls_datum_t *op_expected(const struct cipher_vec *v,
					 const struct cipher_op *op)
{
	return op->dir == ENCRYPT ? &v->ct : &v->pt;
}

/* Where the pieces of one operation come from and go to. */
struct crypt_state {
	gnutls_cipher_hd_t h;
	enum direction dir;
	const unsigned char *src;
	unsigned char *dst;
};

static int crypt_piece(void *state, const unsigned char *piece, size_t len)
{
	struct crypt_state *s = state;
	unsigned char *dst = s->dst + (piece - s->src);

	if (s->dir == ENCRYPT)
		return gnutls_cipher_encrypt2(s->h, piece, len, dst, len);
	return gnutls_cipher_decrypt2(s->h, piece, len, dst, len);
}

/*
 * Runs @op over @in into @out (of in->size bytes) with a fresh handle.
 * Returns 0 or a GnuTLS error code.
 */
static int run_op(const struct cipher_ctx *ctx, const struct cipher_vec *v,
		  const struct cipher_op *op, const gnutls_datum_t *in,
		  unsigned char *out)
{
	struct crypt_state s = { .dir = op->dir, .src = in->data, .dst = out };
	int ret;

	ret = gnutls_cipher_init(&s.h, ctx->id, &v->key, &v->tweak);
	if (ret < 0)
		return ret;

	memset(out, FILL, in->size);
	if (op->in_place) {
		memcpy(out, in->data, in->size);
		s.src = out;
	}
	ret = wp_feed(op->plan, s.src, in->size, crypt_piece, &s);

	gnutls_cipher_deinit(s.h);
	return ret;
}

static int skip_op(const struct cipher_ctx *ctx, const struct cipher_op *op)
{
	return op->plan != &whole && ctx->alg->mode != MODE_CBC;
}

static void check_valid(struct wp_run *run, const struct cipher_ctx *ctx,
			const struct cipher_vec *v, unsigned char *out)
{
	const struct cipher_op *op;
	const gnutls_datum_t *want;
	int ret;

	if (v->ct.size != v->pt.size) {
		wp_fail(run, "ciphertext is %u bytes, padded message %u",
			v->ct.size, v->pt.size);
		return;
	}

	for (op = cipher_ops; op < cipher_ops + WP_ARRAY_SIZE(cipher_ops);
	     op++) {
		if (skip_op(ctx, op))
			continue;
		want = op_expected(v, op);
		ret = run_op(ctx, v, op, op_input(v, op), out);
		if (ret < 0)
			wp_fail(run, "%s: %s", op->name, gnutls_strerror(ret));
		else if (memcmp(out, want->data, want->size) != 0)
			wp_fail_diff(run, op->name, out, want->size, want->data,
				     want->size);
	}
}

/* Length of the PKCS#7 padding ending @p, or 0 if it is malformed. */
static size_t pkcs7_padding(const unsigned char *p, size_t len)
{
	size_t i, n;

	if (len == 0 || len % BLOCK != 0)
		return 0;
	n = p[len - 1];
	if (n == 0 || n > BLOCK)
		return 0;
	for (i = len - n; i < len; i++)
		if (p[i] != n)
			return 0;
	return n;
}

/*
 * A CBC ciphertext with bad padding: every way of decrypting it must give
 * the same plaintext, and that plaintext must fail the padding check.
 */
static void check_bad_padding(struct wp_run *run, const struct cipher_ctx *ctx,
			      const struct cipher_vec *v, unsigned char *out,
			      unsigned char *first)
{
	const struct cipher_op *op;
	int ret, have_first = 0;

	if (v->ct.size == 0 || v->ct.size % BLOCK != 0)
		return; /* rejected for its length */

	for (op = cipher_ops; op < cipher_ops + WP_ARRAY_SIZE(cipher_ops);
	     op++) {
		if (op->dir != DECRYPT || skip_op(ctx, op))
			continue;
		ret = run_op(ctx, v, op, &v->ct, out);
		if (ret < 0) {
			wp_fail(run, "%s: %s", op->name, gnutls_strerror(ret));
		} else if (!have_first) {
			memcpy(first, out, v->ct.size);
			have_first = 1;
			if (pkcs7_padding(out, v->ct.size) != 0)
				wp_fail(run, "%s: plaintext has valid padding",
					op->name);
		} else if (memcmp(out, first, v->ct.size) != 0) {
			wp_fail_diff(run, op->name, out, v->ct.size, first,
				     v->ct.size);
		}
	}
}

static void check_vector(struct wp_run *run, const struct cipher_ctx *ctx,
			 const struct wp_test *t, const struct cipher_vec *v)
{
	size_t size = v->ct.size > v->pt.size ? v->ct.size : v->pt.size;
	unsigned char *out = malloc(size + 1), *first = malloc(size + 1);

	if (out == NULL || first == NULL)
		wp_fail(run, "out of memory");
	else if (t->result == WP_INVALID && ctx->alg->mode == MODE_CBC)
		check_bad_padding(run, ctx, v, out, first);
	else if (t->result == WP_INVALID)
		wp_skip(run,
			"invalid XTS vector: nothing defines the rejection");
	else
		check_valid(run, ctx, v, out);

	free(out);
	free(first);
}

/* Builds pt and tweak; sorts out vectors that cannot be tested (-1). */
static int prepare_vector(struct wp_run *run, const struct cipher_ctx *ctx,
			  struct cipher_vec *v)
{
	size_t pad = 0;

	if (v->key.size != ctx->key_size) {
		wp_not_applicable(run);
		return -1;
	}
	if (v->iv.size > BLOCK ||
	    (ctx->alg->mode == MODE_CBC && v->iv.size != BLOCK)) {
		wp_skip(run, "iv size %u bytes", v->iv.size);
		return -1;
	}
	if (ctx->alg->mode == MODE_XTS && v->msg.size < BLOCK) {
		wp_skip(run, "XTS data unit shorter than a block");
		return -1;
	}

	if (ctx->alg->mode == MODE_CBC)
		pad = BLOCK - v->msg.size % BLOCK;
	if (wp_datum_alloc(&v->pt, v->msg.size + pad) < 0 ||
	    wp_datum_alloc(&v->tweak, BLOCK) < 0) {
		wp_fail(run, "out of memory");
		return -1;
	}
	memcpy(v->pt.data, v->msg.data, v->msg.size);
	memset(v->pt.data + v->msg.size, (int)pad, pad);
	memset(v->tweak.data, 0, BLOCK);
	memcpy(v->tweak.data, v->iv.data, v->iv.size);
	return 0;
}

static void test_cipher(struct wp_run *run, const struct wp_test *t, void *priv)
{
	const struct cipher_ctx *ctx = priv;
	struct cipher_vec v;

	memset(&v, 0, sizeof(v));
	if (wp_decode_fields(run, t, cipher_fields, N_FILE_FIELDS, &v) == 0 &&
	    prepare_vector(run, ctx, &v) == 0)
		check_vector(run, ctx, t, &v);
	wp_free_fields(cipher_fields, WP_ARRAY_SIZE(cipher_fields), &v);
}

static const struct cipher_alg *find_alg(const char *name)
{
	size_t i;

	for (i = 0; i < WP_ARRAY_SIZE(cipher_algs); i++)
		if (strcmp(cipher_algs[i].name, name) == 0)
			return &cipher_algs[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct cipher_ctx ctx;

	if (argc != 3)
		return wp_error("usage: %s ALGORITHM JSON-PATH", argv[0]);

	ctx.alg = find_alg(argv[1]);
	if (ctx.alg == NULL)
		return wp_error("wp-cipher does not know algorithm %s",
				argv[1]);
	if (wp_cipher_lookup(argv[1], &ctx.id) < 0)
		return wp_skip_all("%s is not supported by this GnuTLS",
				   argv[1]);
	ctx.key_size = gnutls_cipher_get_key_size(ctx.id);

	return wp_run_file("wp-cipher", argv[1], argv[2], ctx.alg->family,
			   test_cipher, &ctx);
}
