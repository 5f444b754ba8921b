/*
 * Runs GnuTLS's own known-answer self-tests (lib/crypto-selftests.c)
 * through whatever backends are registered: first every algorithm of each
 * family in one call (GNUTLS_SELF_TEST_FLAG_ALL, which stops at the first
 * failure), then one call per algorithm of the table below, so a failure
 * is pinned to the algorithm that caused it.
 *
 * The self-tests of 3.7.9 feed the first byte of each message separately
 * and take gnutls_hash_copy()/gnutls_hmac_copy() of the handle there; the
 * AEAD ones also go through the gnutls_cipher_* incremental API (GCM,
 * ChaCha20-Poly1305) and the scatter-gather API.  A copy that returns NULL
 * is only logged by GnuTLS, not counted as a failure.
 *
 * Usage: selftests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/self-test.h>

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_SKIP 77

enum family {
	FAM_CIPHER,
	FAM_MAC,
	FAM_DIGEST,
	N_FAMILIES
};

enum outcome {
	OUT_PASS,
	OUT_FAIL,
	OUT_SKIP
};

struct family_def {
	const char *name;
	int (*self_test)(unsigned flags, int id);
	const char *(*get_name)(int id);
	int (*available)(int id);
};

struct selftest {
	enum family family;
	int id;
};

struct tally {
	unsigned passed;
	unsigned failed;
	unsigned skipped;
};

static int cipher_self_test(unsigned flags, int id)
{
	return gnutls_cipher_self_test(flags, id);
}

static int mac_self_test(unsigned flags, int id)
{
	return gnutls_mac_self_test(flags, id);
}

static int digest_self_test(unsigned flags, int id)
{
	return gnutls_digest_self_test(flags, id);
}

static const char *cipher_name(int id)
{
	return gnutls_cipher_get_name(id);
}

static const char *mac_name(int id)
{
	return gnutls_mac_get_name(id);
}

static const char *digest_name(int id)
{
	return gnutls_digest_get_name(id);
}

/* The lists hold only the algorithms some backend implements. */
static int cipher_available(int id)
{
	const gnutls_cipher_algorithm_t *p;

	for (p = gnutls_cipher_list(); *p; p++)
		if ((int)*p == id)
			return 1;
	return 0;
}

static int mac_available(int id)
{
	const gnutls_mac_algorithm_t *p;

	for (p = gnutls_mac_list(); *p; p++)
		if ((int)*p == id)
			return 1;
	return 0;
}

/*
 * gnutls_digest_list() of 3.7.9 leaves out digests that have no HMAC
 * (SHA3), so ask for a handle instead.
 */
static int digest_available(int id)
{
	gnutls_hash_hd_t h;

	if (gnutls_hash_init(&h, id) < 0)
		return 0;
	gnutls_hash_deinit(h, NULL);
	return 1;
}

static const struct family_def families[N_FAMILIES] = {
	[FAM_CIPHER] = { "cipher", cipher_self_test, cipher_name,
			 cipher_available },
	[FAM_MAC] = { "mac", mac_self_test, mac_name, mac_available },
	[FAM_DIGEST] = { "digest", digest_self_test, digest_name,
			 digest_available },
};

static const struct selftest selftests[] = {
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_128_CBC },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_192_CBC },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_256_CBC },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_128_XTS },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_256_XTS },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_128_GCM },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_192_GCM },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_256_GCM },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_128_CCM },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_256_CCM },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_128_CCM_8 },
	{ FAM_CIPHER, GNUTLS_CIPHER_AES_256_CCM_8 },
	{ FAM_CIPHER, GNUTLS_CIPHER_CHACHA20_POLY1305 },
	{ FAM_MAC, GNUTLS_MAC_SHA1 },
	{ FAM_MAC, GNUTLS_MAC_SHA224 },
	{ FAM_MAC, GNUTLS_MAC_SHA256 },
	{ FAM_MAC, GNUTLS_MAC_SHA384 },
	{ FAM_MAC, GNUTLS_MAC_SHA512 },
	{ FAM_MAC, GNUTLS_MAC_AES_CMAC_128 },
	{ FAM_MAC, GNUTLS_MAC_AES_CMAC_256 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA1 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA224 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA256 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA384 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA512 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA3_224 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA3_256 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA3_384 },
	{ FAM_DIGEST, GNUTLS_DIG_SHA3_512 },
};

/*
 * Errors that mean this GnuTLS cannot run the test rather than that the
 * test found a wrong answer.
 */
static int is_not_runnable(int ret)
{
	return ret == GNUTLS_E_NO_SELF_TEST ||
	       ret == GNUTLS_E_UNIMPLEMENTED_FEATURE ||
	       ret == GNUTLS_E_UNKNOWN_ALGORITHM;
}

static enum outcome report(const char *family, const char *name, int ret)
{
	printf("selftest %s %s: ", family, name);
	if (ret == 0) {
		printf("ok\n");
		return OUT_PASS;
	}
	if (is_not_runnable(ret)) {
		printf("skipped (%s)\n", gnutls_strerror(ret));
		return OUT_SKIP;
	}
	printf("FAILED (%s)\n", gnutls_strerror(ret));
	return OUT_FAIL;
}

static void count(struct tally *t, enum outcome o)
{
	if (o == OUT_PASS)
		t->passed++;
	else if (o == OUT_FAIL)
		t->failed++;
	else
		t->skipped++;
}

static enum outcome run_all(const struct family_def *f)
{
	return report(f->name, "ALL",
		      f->self_test(GNUTLS_SELF_TEST_FLAG_ALL, 0));
}

static enum outcome run_one(const struct family_def *f, int id)
{
	const char *name = f->get_name(id);

	if (name == NULL)
		name = "(unnamed)";
	if (!f->available(id)) {
		printf("selftest %s %s: skipped (not provided by this GnuTLS)\n",
		       f->name, name);
		return OUT_SKIP;
	}
	return report(f->name, name, f->self_test(0, id));
}

static void run_family(enum family fam, struct tally *total)
{
	const struct family_def *f = &families[fam];
	struct tally t = { 0, 0, 0 };
	size_t i;

	count(&t, run_all(f));
	for (i = 0; i < ARRAY_SIZE(selftests); i++)
		if (selftests[i].family == fam)
			count(&t, run_one(f, selftests[i].id));

	printf("selftest %s: %u passed, %u failed, %u skipped\n", f->name,
	       t.passed, t.failed, t.skipped);
	total->passed += t.passed;
	total->failed += t.failed;
	total->skipped += t.skipped;
}

int main(void)
{
	struct tally total = { 0, 0, 0 };
	int ret;
	int fam;

	ret = gnutls_global_init();
	if (ret < 0) {
		printf("SKIP: gnutls_global_init: %s\n", gnutls_strerror(ret));
		return EXIT_SKIP;
	}

	for (fam = 0; fam < N_FAMILIES; fam++)
		run_family(fam, &total);

	printf("selftests: %u passed, %u failed, %u skipped\n", total.passed,
	       total.failed, total.skipped);
	gnutls_global_deinit();

	if (total.failed)
		return EXIT_FAIL;
	if (total.passed == 0) {
		printf("SKIP: no self-test could run\n");
		return EXIT_SKIP;
	}
	return EXIT_PASS;
}
