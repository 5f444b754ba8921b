/*
 * Wycheproof HMAC and AES-CMAC vectors against gnutls_hmac_fast() and
 * gnutls_hmac_init()/gnutls_hmac()/gnutls_hmac_output(), with the message
 * fed in pieces of several sizes. Tags may be truncated (group tagSize).
 *
 * Usage: wp-mac ALGORITHM JSON-PATH
 *   e.g. wp-mac SHA256 hmac_sha256_test.json    (or HMAC-SHA256)
 *        wp-mac AES-CMAC-128 aes_cmac_test.json
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "wycheproof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/crypto.h>

#define MAX_MAC 64

struct mac_alg {
	const char *name; /* as gnutls_mac_get_id() knows it */
	const char *family;
	unsigned key_size; /* 0: any */
};

/* clang-format off */
static const struct mac_alg mac_algs[] = {
	{ "SHA1", "HMACSHA1", 0 },
	{ "SHA224", "HMACSHA224", 0 },
	{ "SHA256", "HMACSHA256", 0 },
	{ "SHA384", "HMACSHA384", 0 },
	{ "SHA512", "HMACSHA512", 0 },
	{ "AES-CMAC-128", "AES-CMAC", 16 },
	{ "AES-CMAC-256", "AES-CMAC", 32 },
};
/* clang-format on */

struct mac_ctx {
	const struct mac_alg *alg;
	gnutls_mac_algorithm_t id;
	size_t mac_len;
};

struct mac_vec {
	gnutls_datum_t key;
	gnutls_datum_t msg;
	gnutls_datum_t tag;
};

static const struct wp_field mac_fields[] = {
	WP_FIELD(struct mac_vec, key),
	WP_FIELD(struct mac_vec, msg),
	WP_FIELD(struct mac_vec, tag),
};

/*
 * How the message is fed to gnutls_hmac(). All plans share one handle, so
 * every plan after the first also checks that gnutls_hmac_output() resets
 * it.
 */
static const struct wp_plan plans[] = {
	{ "one piece", 0, { 0 } },
	{ "byte by byte", 0, { 1 } },
	{ "pieces of 7, 64, 1, 100", 0, { 7, 64, 1, 100 } },
	{ "pieces of 63, 65", 0, { 63, 65 } },
	{ "pieces of 128", 0, { 128 } },
};

static int hmac_update(void *h, const unsigned char *data, size_t len)
{
	return gnutls_hmac(h, data, len);
}

/* Compares a computed MAC, truncated to the vector's tag, with the tag. */
static void check_mac(struct wp_run *run, const struct wp_test *t,
		      const char *what, const unsigned char *mac,
		      const gnutls_datum_t *tag)
{
	int match = memcmp(mac, tag->data, tag->size) == 0;

	if (t->result == WP_VALID && !match)
		wp_fail_diff(run, what, mac, tag->size, tag->data, tag->size);
	else if (t->result == WP_INVALID && match)
		wp_fail(run, "%s: MAC matches an invalid tag", what);
}

/* Acceptable vectors may match or not, but every way must agree. */
static void check_same(struct wp_run *run, const char *what,
		       const unsigned char *mac, const unsigned char *first,
		       size_t len)
{
	if (memcmp(mac, first, len) != 0)
		wp_fail_diff(run, what, mac, len, first, len);
}

static void check_vector(struct wp_run *run, const struct mac_ctx *ctx,
			 const struct wp_test *t, const struct mac_vec *v)
{
	unsigned char first[MAX_MAC], mac[MAX_MAC];
	gnutls_hmac_hd_t h;
	char what[64];
	size_t i;
	int ret;

	ret = gnutls_hmac_fast(ctx->id, v->key.data, v->key.size, v->msg.data,
			       v->msg.size, first);
	if (ret < 0) {
		wp_fail(run, "gnutls_hmac_fast: %s", gnutls_strerror(ret));
		return;
	}
	check_mac(run, t, "gnutls_hmac_fast", first, &v->tag);

	ret = gnutls_hmac_init(&h, ctx->id, v->key.data, v->key.size);
	if (ret < 0) {
		wp_fail(run, "gnutls_hmac_init: %s", gnutls_strerror(ret));
		return;
	}
	for (i = 0; i < WP_ARRAY_SIZE(plans); i++) {
		snprintf(what, sizeof(what), "gnutls_hmac %s", plans[i].name);
		ret = wp_feed(&plans[i], v->msg.data, v->msg.size, hmac_update,
			      h);
		if (ret < 0) {
			wp_fail(run, "%s: %s", what, gnutls_strerror(ret));
			break;
		}
		gnutls_hmac_output(h, mac);
		check_mac(run, t, what, mac, &v->tag);
		check_same(run, what, mac, first, ctx->mac_len);
	}
	gnutls_hmac_deinit(h, NULL);
}

/* Sorts out vectors this algorithm cannot be tested with; 0 if testable. */
static int select_vector(struct wp_run *run, const struct mac_ctx *ctx,
			 const struct wp_test *t, const struct mac_vec *v)
{
	int tag_bits = wp_group_int(t, "tagSize");

	if (ctx->alg->key_size && v->key.size != ctx->alg->key_size) {
		if (wp_has_flag(t, "InvalidKeySize"))
			wp_skip(run, "invalid key size (GnuTLS aborts on it)");
		else
			wp_not_applicable(run);
		return -1;
	}
	if (tag_bits < 0 || tag_bits % 8 != 0 ||
	    v->tag.size != (unsigned)tag_bits / 8) {
		wp_fail(run, "malformed vector: tag is %u bytes, tagSize %d",
			v->tag.size, tag_bits);
		return -1;
	}
	if (v->tag.size > ctx->mac_len) {
		wp_skip(run, "tag longer than the MAC");
		return -1;
	}
	return 0;
}

static void test_mac(struct wp_run *run, const struct wp_test *t, void *priv)
{
	const struct mac_ctx *ctx = priv;
	struct mac_vec v;

	memset(&v, 0, sizeof(v));
	if (wp_decode_fields(run, t, mac_fields, WP_ARRAY_SIZE(mac_fields),
			     &v) == 0 &&
	    select_vector(run, ctx, t, &v) == 0)
		check_vector(run, ctx, t, &v);
	wp_free_fields(mac_fields, WP_ARRAY_SIZE(mac_fields), &v);
}

static const struct mac_alg *find_alg(const char *name)
{
	size_t i;

	if (strncmp(name, "HMAC-SHA", 8) == 0)
		name += 5;
	for (i = 0; i < WP_ARRAY_SIZE(mac_algs); i++)
		if (strcmp(mac_algs[i].name, name) == 0)
			return &mac_algs[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct mac_ctx ctx;

	if (argc != 3)
		return wp_error("usage: %s ALGORITHM JSON-PATH", argv[0]);

	ctx.alg = find_alg(argv[1]);
	if (ctx.alg == NULL)
		return wp_error("wp-mac does not know algorithm %s", argv[1]);
	if (wp_mac_lookup(ctx.alg->name, &ctx.id) < 0)
		return wp_skip_all("%s is not supported by this GnuTLS",
				   argv[1]);
	ctx.mac_len = gnutls_hmac_get_len(ctx.id);
	if (ctx.mac_len == 0 || ctx.mac_len > MAX_MAC)
		return wp_error("%s: unexpected MAC length %zu", argv[1],
				ctx.mac_len);

	return wp_run_file("wp-mac", argv[1], argv[2], ctx.alg->family,
			   test_mac, &ctx);
}
