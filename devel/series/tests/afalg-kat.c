/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * GnuTLS is free software; you can redistribute it and/or modify it
 * under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 3 of the License, or
 * (at your option) any later version.
 *
 * GnuTLS is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with GnuTLS.  If not, see <https://www.gnu.org/licenses/>.
 */

/* Known answers through the AF_ALG backend, with GNUTLS_AFALG=kernel:
 * every operation the kernel takes goes there.  Initialization touches
 * nothing of AF_ALG (every algorithm is untried until its first use).
 * The statistics must show that the one-shot calls and the cipher
 * contexts ran in the kernel, and that MAC and digest contexts did not
 * (they are GnuTLS's own code); then the process uses up its
 * descriptors, so that no kernel socket can be opened, and the same
 * answers must come from software.  Without AF_ALG every answer must
 * come from software, the algorithms marked as such. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <gnutls/crypto.h>

#include "afalg-common.h"

static void hex(const char *s, uint8_t *out, size_t *size)
{
	gnutls_datum_t in = { (void *)s, strlen(s) };
	size_t n = *size;

	if (gnutls_hex_decode(&in, out, &n) < 0)
		fail("bad hex in the test: %s\n", s);
	*size = n;
}

#define H(name, s)                         \
	uint8_t name[1024];                \
	size_t name##_size = sizeof(name); \
	hex(s, name, &name##_size)

static void check(const char *what, const void *got, const void *want,
		  size_t size)
{
	if (memcmp(got, want, size) != 0) {
		fprintf(stderr, "got:  ");
		hexprint(got, size);
		fprintf(stderr, "want: ");
		hexprint(want, size);
		fail("%s: wrong answer\n", what);
	}
}

/* SP 800-38A F.2.1, in two calls: the IV chains across them */
static void cbc(void)
{
	H(key, "2b7e151628aed2a6abf7158809cf4f3c");
	H(iv, "000102030405060708090a0b0c0d0e0f");
	H(pt,
	  "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
	  "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710");
	H(ct,
	  "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
	  "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7");
	gnutls_datum_t k = { key, key_size }, i = { iv, iv_size };
	gnutls_cipher_hd_t h;
	uint8_t out[64];

	assert(gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_CBC, &k, &i) >= 0);
	assert(gnutls_cipher_encrypt2(h, pt, 32, out, 32) >= 0);
	assert(gnutls_cipher_encrypt2(h, pt + 32, 32, out + 32, 32) >= 0);
	check("AES-128-CBC encryption", out, ct, 64);
	gnutls_cipher_set_iv(h, iv, iv_size);
	assert(gnutls_cipher_decrypt2(h, ct, 64, out, 64) >= 0);
	check("AES-128-CBC decryption", out, pt, 64);
	gnutls_cipher_deinit(h);
}

static void aead(gnutls_cipher_algorithm_t algo, const char *name,
		 const char *key_hex, const char *nonce_hex,
		 const char *auth_hex, const char *pt_hex, const char *ct_hex,
		 size_t tag_size)
{
	H(key, key_hex);
	H(nonce, nonce_hex);
	H(auth, auth_hex);
	H(pt, pt_hex);
	H(ct, ct_hex);
	gnutls_datum_t k = { key, key_size };
	gnutls_aead_cipher_hd_t h;
	uint8_t out[1024];
	size_t size = sizeof(out);

	assert(gnutls_aead_cipher_init(&h, algo, &k) >= 0);
	assert(gnutls_aead_cipher_encrypt(h, nonce, nonce_size, auth, auth_size,
					  tag_size, pt, pt_size, out,
					  &size) >= 0);
	if (size != ct_size)
		fail("%s: encryption gave %zu bytes\n", name, size);
	check(name, out, ct, size);

	size = sizeof(out);
	assert(gnutls_aead_cipher_decrypt(h, nonce, nonce_size, auth, auth_size,
					  tag_size, ct, ct_size, out,
					  &size) >= 0);
	if (size != pt_size)
		fail("%s: decryption gave %zu bytes\n", name, size);
	check(name, out, pt, size);

	ct[ct_size - 1] ^= 1;
	size = sizeof(out);
	if (gnutls_aead_cipher_decrypt(h, nonce, nonce_size, auth, auth_size,
				       tag_size, ct, ct_size, out,
				       &size) != GNUTLS_E_DECRYPTION_FAILED)
		fail("%s: a forged tag was accepted\n", name);
	gnutls_aead_cipher_deinit(h);
}

/* The incremental AEAD API (gnutls_cipher_add_auth/encrypt/tag): the
 * same answer as the one-shot call above (GCM test case 4). */
static void gcm_incremental(void)
{
	H(key, "feffe9928665731c6d6a8f9467308308");
	H(iv, "cafebabefacedbaddecaf888");
	H(auth, "feedfacedeadbeeffeedfacedeadbeefabaddad2");
	H(pt, "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
	H(ct, "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	      "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091");
	H(tag, "5bc94fbc3221a5db94fae95ae7121a47");
	gnutls_datum_t k = { key, key_size }, i = { iv, iv_size };
	gnutls_cipher_hd_t h;
	uint8_t out[64], t[16];

	assert(gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &k, &i) >= 0);
	assert(gnutls_cipher_add_auth(h, auth, auth_size) >= 0);
	assert(gnutls_cipher_encrypt2(h, pt, 32, out, 32) >= 0);
	assert(gnutls_cipher_encrypt2(h, pt + 32, pt_size - 32, out + 32,
				      pt_size - 32) >= 0);
	assert(gnutls_cipher_tag(h, t, sizeof(t)) >= 0);
	check("AES-128-GCM incremental", out, ct, ct_size);
	check("AES-128-GCM incremental tag", t, tag, sizeof(t));
	gnutls_cipher_deinit(h);
}

/* A message larger than the socket buffer: upstream's backend hung on
 * 300,000 bytes of AES-GCM. */
static void gcm_large(void)
{
	static uint8_t key[16], nonce[12], pt[300000], ct[300016], back[300000];
	gnutls_datum_t k = { key, sizeof(key) };
	gnutls_aead_cipher_hd_t h;
	size_t size = sizeof(ct), i;

	for (i = 0; i < sizeof(pt); i++)
		pt[i] = i * 7;
	assert(gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &k) >= 0);
	assert(gnutls_aead_cipher_encrypt(h, nonce, sizeof(nonce), NULL, 0, 16,
					  pt, sizeof(pt), ct, &size) >= 0);
	size = sizeof(back);
	assert(gnutls_aead_cipher_decrypt(h, nonce, sizeof(nonce), NULL, 0, 16,
					  ct, sizeof(ct), back, &size) >= 0);
	check("AES-128-GCM 300000 bytes", back, pt, sizeof(pt));
	gnutls_aead_cipher_deinit(h);
}

static void macs(void)
{
	H(hmac256,
	  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	H(hmac1, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
	H(ckey, "2b7e151628aed2a6abf7158809cf4f3c");
	H(cmsg, "6bc1bee22e409f96e93d7e117393172a");
	H(cmac, "070a16b46b4d4144f79bdd9dd04a287c");
	const char *key = "Jefe", *msg = "what do ya want for nothing?";
	gnutls_hmac_hd_t h, copy;
	uint8_t out[64];

	/* RFC 4231 and RFC 2202, test case 2 */
	assert(gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, 4, msg, strlen(msg),
				out) >= 0);
	check("HMAC-SHA256", out, hmac256, hmac256_size);

	/* incremental, copied in the middle, reset by an output (an output
	 * into NULL does nothing for a MAC in 3.8) */
	assert(gnutls_hmac_init(&h, GNUTLS_MAC_SHA1, key, 4) >= 0);
	assert(gnutls_hmac(h, "something else", 14) >= 0);
	gnutls_hmac_output(h, out);
	assert(gnutls_hmac(h, msg, 10) >= 0);
	copy = gnutls_hmac_copy(h);
	if (copy == NULL)
		fail("gnutls_hmac_copy failed\n");
	assert(gnutls_hmac(h, msg + 10, strlen(msg) - 10) >= 0);
	assert(gnutls_hmac(copy, msg + 10, strlen(msg) - 10) >= 0);
	gnutls_hmac_deinit(h, out);
	check("HMAC-SHA1", out, hmac1, hmac1_size);
	gnutls_hmac_deinit(copy, out);
	check("HMAC-SHA1 copy", out, hmac1, hmac1_size);

	/* RFC 4493, example 2 */
	assert(gnutls_hmac_fast(GNUTLS_MAC_AES_CMAC_128, ckey, ckey_size, cmsg,
				cmsg_size, out) >= 0);
	check("AES-CMAC-128", out, cmac, cmac_size);
}

static void hashes(void)
{
	H(sha256,
	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	H(sha512,
	  "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	H(sha3,
	  "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
	H(million,
	  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	static uint8_t a[100000];
	gnutls_hash_hd_t h, copy;
	uint8_t out[64];
	unsigned i;

	assert(gnutls_hash_fast(GNUTLS_DIG_SHA256, "abc", 3, out) >= 0);
	check("SHA256", out, sha256, sha256_size);
	assert(gnutls_hash_fast(GNUTLS_DIG_SHA3_256, "abc", 3, out) >= 0);
	check("SHA3-256", out, sha3, sha3_size);

	/* incremental, reset with a NULL output, copied in the middle */
	assert(gnutls_hash_init(&h, GNUTLS_DIG_SHA512) >= 0);
	assert(gnutls_hash(h, "xyz", 3) >= 0);
	gnutls_hash_output(h, NULL);
	assert(gnutls_hash(h, "a", 1) >= 0);
	copy = gnutls_hash_copy(h);
	if (copy == NULL)
		fail("gnutls_hash_copy failed\n");
	assert(gnutls_hash(h, "bc", 2) >= 0);
	assert(gnutls_hash(copy, "bc", 2) >= 0);
	gnutls_hash_deinit(h, out);
	check("SHA512", out, sha512, sha512_size);
	gnutls_hash_deinit(copy, out);
	check("SHA512 copy", out, sha512, sha512_size);

	/* a million 'a' in ten calls, copied after the fifth */
	memset(a, 'a', sizeof(a));
	assert(gnutls_hash_init(&h, GNUTLS_DIG_SHA256) >= 0);
	for (i = 0; i < 5; i++)
		assert(gnutls_hash(h, a, sizeof(a)) >= 0);
	copy = gnutls_hash_copy(h);
	if (copy == NULL)
		fail("gnutls_hash_copy failed\n");
	for (i = 0; i < 5; i++) {
		assert(gnutls_hash(h, a, sizeof(a)) >= 0);
		assert(gnutls_hash(copy, a, sizeof(a)) >= 0);
	}
	gnutls_hash_deinit(h, out);
	check("SHA256 of a million 'a'", out, million, million_size);
	gnutls_hash_deinit(copy, out);
	check("SHA256 of a million 'a', copy", out, million, million_size);
}

static void all(void)
{
	cbc();
	/* GCM test case 4 */
	aead(GNUTLS_CIPHER_AES_128_GCM, "AES-128-GCM",
	     "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
	     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
	     "5bc94fbc3221a5db94fae95ae7121a47",
	     16);
	/* RFC 8439, 2.8.2 */
	aead(GNUTLS_CIPHER_CHACHA20_POLY1305, "CHACHA20-POLY1305",
	     "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
	     "070000004041424344454647", "50515253c0c1c2c3c4c5c6c7",
	     "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
	     "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
	     "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
	     "637265656e20776f756c642062652069742e",
	     "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
	     "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
	     "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
	     "3ff4def08e4b7a9de576d26586cec64b6116"
	     "1ae10b594f09e26a7e902ecbd0600691",
	     16);
	/* RFC 3610, packet vector 1 */
	aead(GNUTLS_CIPHER_AES_128_CCM_8, "AES-128-CCM-8",
	     "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf", "00000003020100a0a1a2a3a4a5",
	     "0001020304050607",
	     "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e",
	     "588c979a61c663d2f066d0c2c0f989806d5f6b61dac38417e8d12cfdf926e0",
	     8);
	gcm_incremental();
	gcm_large();
	macs();
	hashes();
}

/* What the kernel runs with GNUTLS_AFALG=kernel, and MAC and digest
 * contexts, which it never runs (HMAC-SHA1 and SHA512 are only used
 * through contexts here). */
static const char *const in_kernel[] = {
	"AES-128-CBC",	 "AES-128-GCM", "CHACHA20-POLY1305",
	"AES-128-CCM-8", "HMAC-SHA256", "AES-CMAC-128",
	"SHA256",	 "SHA3-256",
};
static const char *const contexts_only[] = { "HMAC-SHA1", "SHA512" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The process at its descriptor limit: no kernel socket can be opened,
 * and software gives the answers. */
static int fill[4096];
static unsigned filled;

static void use_up_descriptors(void)
{
	int fd;

	while (filled < sizeof(fill) / sizeof(fill[0]) &&
	       (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fill[filled++] = fd;
	if (errno != EMFILE)
		fail("open: %s, expected EMFILE\n", strerror(errno));
}

static void release_descriptors(void)
{
	while (filled > 0)
		close(fill[--filled]);
}

/* Before any operation: nothing of AF_ALG touched yet. */
static void check_untried(void)
{
	char state[32];
	unsigned i;

	for (i = 0; i < N(in_kernel); i++) {
		afalg_field(in_kernel[i], "registered", state, sizeof(state));
		if (strcmp(state, "1") != 0)
			fail("%s is not registered with GNUTLS_AFALG=kernel\n",
			     in_kernel[i]);
		afalg_field(in_kernel[i], "state", state, sizeof(state));
		if (strcmp(state, "untried") != 0)
			fail("%s is %s before its first use\n", in_kernel[i],
			     state);
	}
}

void doit(void)
{
	struct rlimit rl = { 256, 256 };
	unsigned long soft, kernel;
	char state[32];
	unsigned i;

	afalg_set_kernel();
	afalg_stats_start();
	check_untried();

	if (!afalg_available()) {
		/* without AF_ALG: every answer from software */
		all();
		for (i = 0; i < N(in_kernel); i++) {
			afalg_field(in_kernel[i], "state", state,
				    sizeof(state));
			kernel = afalg_ops(in_kernel[i], &soft);
			if (strcmp(state, "no-af-alg") != 0 || kernel != 0 ||
			    soft == 0)
				fail("%s without AF_ALG: %s, %lu kernel, %lu "
				     "software\n",
				     in_kernel[i], state, kernel, soft);
		}
		gnutls_global_deinit();
		if (debug)
			success("AF_ALG is not available: software only\n");
		return;
	}
	all();

	/* no descriptor left for the kernel: software gives the same
	 * answers */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 256)
		rl.rlim_cur = 256;
	assert(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	use_up_descriptors();
	all();
	release_descriptors();

	for (i = 0; i < N(in_kernel); i++) {
		if (afalg_refused(in_kernel[i])) {
			afalg_check_ran(in_kernel[i]);
			continue;
		}
		kernel = afalg_ops(in_kernel[i], &soft);
		if (debug)
			success("%s: %lu kernel, %lu software\n", in_kernel[i],
				kernel, soft);
		if (kernel == 0)
			fail("%s: nothing ran in the kernel\n", in_kernel[i]);
		if (soft == 0)
			fail("%s: nothing ran in software\n", in_kernel[i]);
	}
	for (i = 0; i < N(contexts_only); i++)
		if (afalg_ops(contexts_only[i], NULL) != 0)
			fail("%s: a context ran in the kernel\n",
			     contexts_only[i]);
	gnutls_global_deinit();
}
