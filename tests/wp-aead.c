/*
 * Wycheproof AEAD vectors against gnutls_aead_cipher_encrypt() and
 * gnutls_aead_cipher_decrypt(), the one-shot API the TLS record layer uses.
 *
 * Usage: wp-aead ALGORITHM JSON-PATH
 *   e.g. wp-aead AES-128-GCM aes_gcm_test.json
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "wycheproof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/crypto.h>

#define FILL 0xa5
#define SLACK 32

/*
 * The nonce sizes each mode is tested with. GnuTLS 3.7 does not validate
 * nonce lengths in gnutls_aead_cipher_*: CCM hands any length to Nettle,
 * which aborts outside 7..13; ChaCha20-Poly1305 reads 12 bytes whatever the
 * length; the x86 GCM code ignores the error its setiv returns for other
 * than 12 bytes and encrypts with a stale counter. Vectors with other
 * sizes are skipped with that reason instead of crashing the harness.
 */
struct aead_alg {
	const char *name;
	const char *family;
	unsigned min_nonce;
	unsigned max_nonce;
	const char *nonce_note;
};

static const struct aead_alg aead_algs[] = {
	{ "AES-128-GCM", "AES-GCM", 12, 12, "unchecked by GnuTLS x86 GCM" },
	{ "AES-192-GCM", "AES-GCM", 12, 12, "unchecked by GnuTLS x86 GCM" },
	{ "AES-256-GCM", "AES-GCM", 12, 12, "unchecked by GnuTLS x86 GCM" },
	{ "AES-128-CCM", "AES-CCM", 7, 13, "GnuTLS lets Nettle abort" },
	{ "AES-256-CCM", "AES-CCM", 7, 13, "GnuTLS lets Nettle abort" },
	{ "AES-128-CCM-8", "AES-CCM", 7, 13, "GnuTLS lets Nettle abort" },
	{ "AES-256-CCM-8", "AES-CCM", 7, 13, "GnuTLS lets Nettle abort" },
	{ "CHACHA20-POLY1305", "CHACHA20-POLY1305", 12, 12,
	  "unchecked by GnuTLS, reads 12 bytes" },
};

struct aead_ctx {
	const struct aead_alg *alg;
	gnutls_cipher_algorithm_t id;
	size_t key_size;
	size_t tag_size;
};

struct aead_vec {
	gnutls_datum_t key;
	gnutls_datum_t iv;
	gnutls_datum_t aad;
	gnutls_datum_t msg;
	gnutls_datum_t ct;
	gnutls_datum_t tag;
	gnutls_datum_t sealed; /* ct || tag, built here */
};

/* clang-format off */
static const struct wp_field aead_fields[] = {
	WP_FIELD(struct aead_vec, key),
	WP_FIELD(struct aead_vec, iv),
	WP_FIELD(struct aead_vec, aad),
	WP_FIELD(struct aead_vec, msg),
	WP_FIELD(struct aead_vec, ct),
	WP_FIELD(struct aead_vec, tag),
	WP_FIELD(struct aead_vec, sealed),
};
/* clang-format on */

/* Only the fields read from the file; "sealed" is the last one. */
#define N_FILE_FIELDS (WP_ARRAY_SIZE(aead_fields) - 1)

enum direction {
	ENCRYPT,
	DECRYPT
};

struct aead_op {
	const char *name;
	enum direction dir;
	int in_place;
};

static const struct aead_op aead_ops[] = {
	{ "encrypt", ENCRYPT, 0 },
	{ "encrypt in place", ENCRYPT, 1 },
	{ "decrypt", DECRYPT, 0 },
	{ "decrypt in place", DECRYPT, 1 },
};

struct buffer {
	unsigned char *data;
	size_t size; /* capacity */
	size_t len; /* output length reported by GnuTLS */
};

static const gnutls_datum_t *op_input(const struct aead_vec *v,
				      const struct aead_op *op)
{
	return op->dir == ENCRYPT ? &v->msg : &v->sealed;
}

static const gnutls_datum_t *op_expected(const struct aead_vec *v,
					 const struct aead_op *op)
{
	return op->dir == ENCRYPT ? &v->sealed : &v->msg;
}

/*
 * Runs one operation into @out, which is filled with FILL first (or with
 * the input, for in-place operations). Returns GnuTLS's result.
 */
static int run_op(gnutls_aead_cipher_hd_t h, const struct aead_ctx *ctx,
		  const struct aead_vec *v, const struct aead_op *op,
		  struct buffer *out)
{
	const gnutls_datum_t *in = op_input(v, op);
	const void *src = in->data;

	memset(out->data, FILL, out->size);
	if (op->in_place) {
		memcpy(out->data, in->data, in->size);
		src = out->data;
	}
	out->len = out->size;

	if (op->dir == ENCRYPT)
		return gnutls_aead_cipher_encrypt(h, v->iv.data, v->iv.size,
						  v->aad.data, v->aad.size,
						  ctx->tag_size, src, in->size,
						  out->data, &out->len);
	return gnutls_aead_cipher_decrypt(h, v->iv.data, v->iv.size,
					  v->aad.data, v->aad.size,
					  ctx->tag_size, src, in->size,
					  out->data, &out->len);
}

static void check_valid(struct wp_run *run, gnutls_aead_cipher_hd_t h,
			const struct aead_ctx *ctx, const struct aead_vec *v,
			struct buffer *out)
{
	const gnutls_datum_t *want;
	size_t i;
	int ret;

	for (i = 0; i < WP_ARRAY_SIZE(aead_ops); i++) {
		ret = run_op(h, ctx, v, &aead_ops[i], out);
		want = op_expected(v, &aead_ops[i]);
		if (ret < 0)
			wp_fail(run, "%s: %s", aead_ops[i].name,
				gnutls_strerror(ret));
		else if (!wp_mem_eq(out->data, out->len, want->data,
				    want->size))
			wp_fail_diff(run, aead_ops[i].name, out->data, out->len,
				     want->data, want->size);
	}
}

/*
 * Whether a rejected decryption left @out as it was (FILL, or the input for
 * in-place operations), or with its text (the first ct bytes) zeroed and
 * the rest as it was: the module clears the text it decrypted, and only
 * that. GnuTLS 3.7 decrypts into the output before checking the tag and
 * does not clear it on failure, so by default a dirty buffer only turns the
 * vector into a counted skip; WP_STRICT_CLEAR=1 in the environment makes it
 * a failure.
 */
static int output_clean(const struct aead_vec *v, const struct aead_op *op,
			const struct buffer *out)
{
	size_t i;
	int untouched = 1, cleared = 1;

	for (i = 0; i < v->sealed.size; i++) {
		unsigned char before = op->in_place ? v->sealed.data[i] : FILL;

		untouched &= out->data[i] == before;
		cleared &= out->data[i] == (i < v->ct.size ? 0 : before);
	}
	return untouched || cleared;
}

static int strict_clear(void)
{
	const char *env = getenv("WP_STRICT_CLEAR");

	return env != NULL && strcmp(env, "1") == 0;
}

static void check_invalid(struct wp_run *run, gnutls_aead_cipher_hd_t h,
			  const struct aead_ctx *ctx, const struct aead_vec *v,
			  struct buffer *out)
{
	const struct aead_op *op;
	int ret, dirty = 0;

	for (op = aead_ops; op < aead_ops + WP_ARRAY_SIZE(aead_ops); op++) {
		if (op->dir != DECRYPT)
			continue;
		ret = run_op(h, ctx, v, op, out);
		if (ret == 0)
			wp_fail(run, "%s: accepted an invalid vector",
				op->name);
		else if (ret != GNUTLS_E_DECRYPTION_FAILED)
			wp_fail(run,
				"%s: %s, expected GNUTLS_E_DECRYPTION_FAILED",
				op->name, gnutls_strerror(ret));
		else if (!output_clean(v, op, out))
			dirty = 1;
	}

	if (dirty && strict_clear())
		wp_fail(run,
			"rejected, but decrypted data is left in the output buffer");
	else if (dirty)
		wp_skip(run,
			"rejected, but decrypted data left in the output buffer (GnuTLS does not clear it)");
}

/* Either outcome is fine, but an accepted vector must decrypt right. */
static void check_acceptable(struct wp_run *run, gnutls_aead_cipher_hd_t h,
			     const struct aead_ctx *ctx,
			     const struct aead_vec *v, struct buffer *out)
{
	static const struct aead_op decrypt = { "decrypt", DECRYPT, 0 };

	if (run_op(h, ctx, v, &decrypt, out) == 0)
		check_valid(run, h, ctx, v, out);
}

static int join_sealed(struct aead_vec *v)
{
	if (wp_datum_alloc(&v->sealed, v->ct.size + v->tag.size) < 0)
		return -1;
	memcpy(v->sealed.data, v->ct.data, v->ct.size);
	memcpy(v->sealed.data + v->ct.size, v->tag.data, v->tag.size);
	return 0;
}

static void check_vector(struct wp_run *run, const struct aead_ctx *ctx,
			 const struct wp_test *t, struct aead_vec *v)
{
	gnutls_aead_cipher_hd_t h;
	struct buffer out;
	int ret;

	ret = gnutls_aead_cipher_init(&h, ctx->id, &v->key);
	if (ret < 0) {
		/* Refusing an invalid or acceptable vector is fine. */
		if (t->result == WP_VALID)
			wp_fail(run, "gnutls_aead_cipher_init: %s",
				gnutls_strerror(ret));
		return;
	}

	out.data = NULL;
	if (join_sealed(v) == 0) {
		out.size = v->sealed.size + SLACK;
		out.data = malloc(out.size);
	}
	if (out.data == NULL) {
		wp_fail(run, "out of memory");
	} else if (t->result == WP_VALID) {
		check_valid(run, h, ctx, v, &out);
	} else if (t->result == WP_INVALID) {
		check_invalid(run, h, ctx, v, &out);
	} else {
		check_acceptable(run, h, ctx, v, &out);
	}

	free(out.data);
	gnutls_aead_cipher_deinit(h);
}

/* Sorts out vectors this algorithm cannot be tested with; 0 if testable. */
static int select_vector(struct wp_run *run, const struct aead_ctx *ctx,
			 const struct aead_vec *v)
{
	const struct aead_alg *alg = ctx->alg;

	if (v->key.size != ctx->key_size) {
		wp_not_applicable(run);
		return -1;
	}
	if (v->iv.size < alg->min_nonce || v->iv.size > alg->max_nonce) {
		if (alg->min_nonce == alg->max_nonce)
			wp_skip(run, "nonce size other than %u bytes (%s)",
				alg->min_nonce, alg->nonce_note);
		else
			wp_skip(run, "nonce size outside %u..%u bytes (%s)",
				alg->min_nonce, alg->max_nonce,
				alg->nonce_note);
		return -1;
	}
	if (v->tag.size != ctx->tag_size) {
		wp_skip(run, "tag size other than %u bits",
			(unsigned)ctx->tag_size * 8);
		return -1;
	}
	return 0;
}

static void test_aead(struct wp_run *run, const struct wp_test *t, void *priv)
{
	const struct aead_ctx *ctx = priv;
	struct aead_vec v;

	memset(&v, 0, sizeof(v));
	if (wp_decode_fields(run, t, aead_fields, N_FILE_FIELDS, &v) == 0 &&
	    select_vector(run, ctx, &v) == 0)
		check_vector(run, ctx, t, &v);
	wp_free_fields(aead_fields, WP_ARRAY_SIZE(aead_fields), &v);
}

static const struct aead_alg *find_alg(const char *name)
{
	size_t i;

	for (i = 0; i < WP_ARRAY_SIZE(aead_algs); i++)
		if (strcmp(aead_algs[i].name, name) == 0)
			return &aead_algs[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct aead_ctx ctx;

	if (argc != 3)
		return wp_error("usage: %s ALGORITHM JSON-PATH", argv[0]);

	ctx.alg = find_alg(argv[1]);
	if (ctx.alg == NULL)
		return wp_error("wp-aead does not know algorithm %s", argv[1]);
	if (wp_cipher_lookup(argv[1], &ctx.id) < 0)
		return wp_skip_all("%s is not supported by this GnuTLS",
				   argv[1]);
	ctx.key_size = gnutls_cipher_get_key_size(ctx.id);
	ctx.tag_size = gnutls_cipher_get_tag_size(ctx.id);

	return wp_run_file("wp-aead", argv[1], argv[2], ctx.alg->family,
			   test_aead, &ctx);
}
