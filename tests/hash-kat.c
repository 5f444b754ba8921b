/*
 * Known-answer tests for the SHA-1 and SHA-2 digests (FIPS 180 examples:
 * the empty string, "abc", the 448-bit message and one million 'a'),
 * through gnutls_hash_fast() and gnutls_hash_init()/gnutls_hash()/
 * gnutls_hash_output() with the message fed in pieces of several sizes.
 * One handle per algorithm serves every input and plan, so each output
 * after the first also checks that gnutls_hash_output() resets it.
 *
 * Usage: hash-kat ALGORITHM|all      e.g. hash-kat SHA256
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "wycheproof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/crypto.h>

#define MAX_DIGEST 64
#define BIG_INPUT 4096 /* no byte-by-byte feeding above this size */

enum input {
	IN_EMPTY,
	IN_ABC,
	IN_448,
	IN_MILLION_A,
	N_INPUTS
};

struct input_def {
	const char *name;
	const char *pattern;
	size_t repeat;
};

static const struct input_def input_defs[N_INPUTS] = {
	[IN_EMPTY] = { "\"\"", "", 0 },
	[IN_ABC] = { "\"abc\"", "abc", 1 },
	[IN_448] = { "448-bit message",
		     "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		     1 },
	[IN_MILLION_A] = { "1000000 x 'a'", "a", 1000000 },
};

struct kat {
	const char *alg;
	enum input input;
	const char *digest;
};

static const struct kat kats[] = {
	{ "SHA1", IN_EMPTY, "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
	{ "SHA1", IN_ABC, "a9993e364706816aba3e25717850c26c9cd0d89d" },
	{ "SHA1", IN_448, "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
	{ "SHA1", IN_MILLION_A, "34aa973cd4c4daa4f61eeb2bdbad27316534016f" },
	{ "SHA224", IN_EMPTY,
	  "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f" },
	{ "SHA224", IN_ABC,
	  "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7" },
	{ "SHA224", IN_448,
	  "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525" },
	{ "SHA224", IN_MILLION_A,
	  "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67" },
	{ "SHA256", IN_EMPTY,
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "SHA256", IN_ABC,
	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "SHA256", IN_448,
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "SHA256", IN_MILLION_A,
	  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	{ "SHA384", IN_EMPTY,
	  "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da"
	  "274edebfe76f65fbd51ad2f14898b95b" },
	{ "SHA384", IN_ABC,
	  "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
	  "8086072ba1e7cc2358baeca134c825a7" },
	{ "SHA384", IN_448,
	  "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6"
	  "b0455a8520bc4e6f5fe95b1fe3c8452b" },
	{ "SHA384", IN_MILLION_A,
	  "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b"
	  "07b8b3dc38ecc4ebae97ddd87f3d8985" },
	{ "SHA512", IN_EMPTY,
	  "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
	  "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e" },
	{ "SHA512", IN_ABC,
	  "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
	{ "SHA512", IN_448,
	  "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
	  "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445" },
	{ "SHA512", IN_MILLION_A,
	  "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
	  "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b" },
};

/* How the message is fed to gnutls_hash(). */
static const struct wp_plan plans[] = {
	{ "one piece", 0, { 0 } },
	{ "byte by byte", BIG_INPUT, { 1 } },
	{ "pieces of 1, 7, 64, 1000, 4096, 65539",
	  0,
	  { 1, 7, 64, 1000, 4096, 65539 } },
	{ "pieces around block boundaries",
	  0,
	  { 55, 56, 57, 111, 112, 113, 127, 128, 129 } },
};

static gnutls_datum_t inputs[N_INPUTS];

static int build_inputs(void)
{
	size_t i, j, len;

	for (i = 0; i < N_INPUTS; i++) {
		len = strlen(input_defs[i].pattern);
		if (wp_datum_alloc(&inputs[i], len * input_defs[i].repeat) < 0)
			return -1;
		for (j = 0; j < input_defs[i].repeat; j++)
			memcpy(inputs[i].data + j * len, input_defs[i].pattern,
			       len);
	}
	return 0;
}

static void free_inputs(void)
{
	size_t i;

	for (i = 0; i < N_INPUTS; i++)
		wp_datum_free(&inputs[i]);
}

static int hash_update(void *h, const unsigned char *data, size_t len)
{
	return gnutls_hash(h, data, len);
}

static void check_digest(struct wp_run *run, const char *what,
			 const unsigned char *got, const gnutls_datum_t *want)
{
	if (memcmp(got, want->data, want->size) != 0)
		wp_fail_diff(run, what, got, want->size, want->data,
			     want->size);
}

static void check_kat(struct wp_run *run, gnutls_hash_hd_t h,
		      gnutls_digest_algorithm_t id, const struct kat *k,
		      const gnutls_datum_t *want)
{
	const gnutls_datum_t *msg = &inputs[k->input];
	unsigned char out[MAX_DIGEST];
	char what[96];
	size_t i;
	int ret;

	ret = gnutls_hash_fast(id, msg->data, msg->size, out);
	snprintf(what, sizeof(what), "%s %s gnutls_hash_fast", k->alg,
		 input_defs[k->input].name);
	if (ret < 0)
		wp_fail(run, "%s: %s", what, gnutls_strerror(ret));
	else
		check_digest(run, what, out, want);

	for (i = 0; i < WP_ARRAY_SIZE(plans); i++) {
		if (!wp_plan_fits(&plans[i], msg->size))
			continue;
		snprintf(what, sizeof(what), "%s %s gnutls_hash %s", k->alg,
			 input_defs[k->input].name, plans[i].name);
		ret = wp_feed(&plans[i], msg->data, msg->size, hash_update, h);
		gnutls_hash_output(h, out);
		if (ret < 0)
			wp_fail(run, "%s: %s", what, gnutls_strerror(ret));
		else
			check_digest(run, what, out, want);
	}
}

/* Runs the answers of one algorithm, all through one reused handle. */
static void run_alg(struct wp_run *run, const char *alg)
{
	gnutls_digest_algorithm_t id;
	gnutls_hash_hd_t h = NULL;
	gnutls_datum_t want;
	size_t i;
	int ret = GNUTLS_E_UNKNOWN_ALGORITHM;

	if (wp_digest_lookup(alg, &id) == 0)
		ret = gnutls_hash_init(&h, id);

	for (i = 0; i < WP_ARRAY_SIZE(kats); i++) {
		if (strcmp(kats[i].alg, alg) != 0)
			continue;
		wp_begin(run, (int)i + 1);
		want.data = NULL;
		want.size = 0;
		if (ret < 0) {
			wp_skip(run, "%s: %s", alg, gnutls_strerror(ret));
		} else if (wp_hex_decode(kats[i].digest, &want) < 0 ||
			   want.size != gnutls_hash_get_len(id)) {
			wp_fail(run, "bad digest in the table");
		} else {
			wp_maybe_corrupt(run, "digest", &want);
			check_kat(run, h, id, &kats[i], &want);
		}
		wp_datum_free(&want);
		wp_end(run);
	}

	if (h != NULL)
		gnutls_hash_deinit(h, NULL);
}

static int known_alg(const char *alg)
{
	size_t i;

	for (i = 0; i < WP_ARRAY_SIZE(kats); i++)
		if (strcmp(kats[i].alg, alg) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "SHA1", "SHA224", "SHA256", "SHA384",
					   "SHA512" };
	gnutls_digest_algorithm_t id;
	struct wp_run run;
	size_t i;

	if (argc != 2)
		return wp_error("usage: %s ALGORITHM|all", argv[0]);
	if (strcmp(argv[1], "all") != 0 && !known_alg(argv[1]))
		return wp_error("hash-kat has no answers for %s", argv[1]);
	if (strcmp(argv[1], "all") != 0 && wp_digest_lookup(argv[1], &id) < 0)
		return wp_skip_all("%s is not supported by this GnuTLS",
				   argv[1]);
	if (build_inputs() < 0)
		return wp_error("out of memory");

	wp_run_init(&run, "hash-kat", argv[1], "FIPS-180-examples");
	for (i = 0; i < WP_ARRAY_SIZE(all); i++)
		if (strcmp(argv[1], "all") == 0 || strcmp(argv[1], all[i]) == 0)
			run_alg(&run, all[i]);

	free_inputs();
	return wp_finish(&run);
}
