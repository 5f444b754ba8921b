/*
 * Edge cases of the public GnuTLS crypto API, for the algorithms of the
 * table below: AEAD messages far larger than a page (an AF_ALG AEAD
 * request of 300000 bytes used to hang), tag failures, empty messages and
 * AAD, misaligned and in-place buffers, wrong key sizes, CBC chaining,
 * hash/HMAC handle copies and use after fork().  Every result is compared
 * with a known answer or with a second computation through another entry
 * point of the API (a fresh handle, the iovec API, the *_fast functions).
 *
 * Usage: edge [--quick] ALGORITHM|all     e.g. edge AES-128-GCM
 *
 *   --quick                 leave out the 64 MiB message
 *   EDGE_TIMEOUT=S          seconds one check may take (default 600); a
 *                           check that takes longer is reported as hung
 *                           and ends the run
 *   EDGE_STRICT_CLEAR=1     fail, rather than skip, when the output buffer
 *                           holds plaintext after a tag failure (stock
 *                           GnuTLS leaves it there)
 *   EDGE_STRICT_KEYSIZE=1   fail, rather than skip, when a key size that
 *                           stock GnuTLS 3.7.9 is known to accept is
 *                           accepted
 *   EDGE_ALLOW_NO_COPY=1    skip, rather than fail, when gnutls_hash_copy()
 *                           or gnutls_hmac_copy() returns NULL
 *   EDGE_MAX_LARGE=BYTES    skip the large-* messages above BYTES (under
 *                           valgrind, where 16 MiB takes half a minute)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_SKIP 77
#define EXIT_ERROR 99

#define KIB 1024
#define MIB (1024 * 1024)
#define BLOCK 16 /* AES block */
#define MAX_KEY 64
#define MAX_OUT 64 /* largest tag, digest or MAC */
#define MAX_NONCE 16
#define MAX_KAT 256
#define AAD_SIZE 13 /* as in TLS 1.2 */
#define FILL 0xaa
#define WINDOW 16 /* plaintext run that must not leak on a tag failure */
#define ALIGN_SLACK 32
#define MAX_CLEANUPS 64
#define DEFAULT_TIMEOUT 600

enum kind {
	K_AEAD = 1 << 0,
	K_CBC = 1 << 1,
	K_HMAC = 1 << 2,
	K_HASH = 1 << 3,
};

#define K_CIPHERS (K_AEAD | K_CBC)
#define K_MACS (K_HMAC | K_HASH)
#define K_ALL (K_CIPHERS | K_MACS)

/* Key sizes stock GnuTLS 3.7.9 accepts besides the right one. */
enum lenience {
	LENIENT_NONE,
	LENIENT_AES_SIZES, /* x86 AES-NI: any of 16, 24, 32 */
	LENIENT_ANY, /* x86 AES-NI CCM ignores the key-size error */
};

enum outcome {
	PASS,
	FAIL,
	SKIP
};

/* A known answer; every field is hex. */
struct kat_def {
	const char *key;
	const char *nonce; /* AEAD nonce or CBC IV */
	const char *aad;
	const char *msg;
	const char *out; /* AEAD ciphertext and tag, CBC ciphertext, digest */
};

struct alg_def {
	const char *name;
	enum kind kind;
	int id; /* cipher, MAC or digest algorithm */
	enum lenience lenience;
	size_t hash_block; /* HMAC: block size of the hash */
	struct kat_def kat;
	/*
	 * The empty message: AEAD tag under an all-zero key and nonce,
	 * digest of "", or HMAC of "" under the empty key.
	 */
	const char *empty;
};

/*
 * Sources: AES-GCM test cases 4, 16 (and 1, 13 for the empty message) of
 * McGrew-Viega "The Galois/Counter Mode of Operation"; NIST SP 800-38C
 * example 3; RFC 8439 2.8.2; NIST SP 800-38A F.2.1 and F.2.5; RFC 4231
 * test case 2; FIPS 180-2.  The empty-message tags of AES-128-CCM and
 * ChaCha20-Poly1305 were computed with OpenSSL.
 */
#define GCM_IV "cafebabefacedbaddecaf888"
#define GCM_AAD "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define GCM_PT                                                             \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72" \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
#define CBC_IV "000102030405060708090a0b0c0d0e0f"
#define CBC_PT                                                             \
	"6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51" \
	"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"

static const struct alg_def algs[] = {
	{ "AES-128-GCM",
	  K_AEAD,
	  GNUTLS_CIPHER_AES_128_GCM,
	  LENIENT_AES_SIZES,
	  0,
	  { "feffe9928665731c6d6a8f9467308308", GCM_IV, GCM_AAD, GCM_PT,
	    "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	    "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
	    "5bc94fbc3221a5db94fae95ae7121a47" },
	  "58e2fccefa7e3061367f1d57a4e7455a" },
	{ "AES-256-GCM",
	  K_AEAD,
	  GNUTLS_CIPHER_AES_256_GCM,
	  LENIENT_AES_SIZES,
	  0,
	  { "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	    GCM_IV, GCM_AAD, GCM_PT,
	    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	    "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
	    "76fc6ece0f4e1768cddf8853bb2d551b" },
	  "530f8afbc74536b9a963b4f1c4cb738b" },
	{ "AES-128-CCM",
	  K_AEAD,
	  GNUTLS_CIPHER_AES_128_CCM,
	  LENIENT_ANY,
	  0,
	  { "404142434445464748494a4b4c4d4e4f", "101112131415161718191a1b",
	    "000102030405060708090a0b0c0d0e0f10111213",
	    "202122232425262728292a2b2c2d2e2f3031323334353637",
	    "e3b201a9f5b71a7a9b1ceaeccd97e70b6176aad9a4428aa5"
	    "484392fbc1b09951" },
	  "b9f650fb3c39bb1bee0e291d33f6ae28" },
	{ "CHACHA20-POLY1305",
	  K_AEAD,
	  GNUTLS_CIPHER_CHACHA20_POLY1305,
	  LENIENT_NONE,
	  0,
	  { "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
	    "070000004041424344454647", "50515253c0c1c2c3c4c5c6c7",
	    "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
	    "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
	    "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
	    "637265656e20776f756c642062652069742e",
	    "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
	    "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
	    "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
	    "3ff4def08e4b7a9de576d26586cec64b6116"
	    "1ae10b594f09e26a7e902ecbd0600691" },
	  "4eb972c9a8fb3a1b382bb4d36f5ffad1" },
	{ "AES-128-CBC",
	  K_CBC,
	  GNUTLS_CIPHER_AES_128_CBC,
	  LENIENT_AES_SIZES,
	  0,
	  { "2b7e151628aed2a6abf7158809cf4f3c", CBC_IV, "", CBC_PT,
	    "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
	    "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7" },
	  NULL },
	{ "AES-256-CBC",
	  K_CBC,
	  GNUTLS_CIPHER_AES_256_CBC,
	  LENIENT_AES_SIZES,
	  0,
	  { "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
	    CBC_IV, "", CBC_PT,
	    "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
	    "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b" },
	  NULL },
	{ "HMAC-SHA256",
	  K_HMAC,
	  GNUTLS_MAC_SHA256,
	  LENIENT_NONE,
	  64,
	  { "4a656665", "", "",
	    "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
	  "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad" },
	{ "SHA256",
	  K_HASH,
	  GNUTLS_DIG_SHA256,
	  LENIENT_NONE,
	  0,
	  { "", "", "", "616263",
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
};

struct bytes {
	unsigned char b[MAX_KAT];
	size_t n;
};

struct kat {
	struct bytes key, nonce, aad, msg, out;
};

/* What the checks of one algorithm share. */
struct ctx {
	const struct alg_def *alg;
	struct kat kat;
	struct bytes empty;
	unsigned char key[MAX_KEY];
	size_t key_size;
	unsigned char nonce[MAX_NONCE];
	size_t nonce_size; /* AEAD nonce or CBC IV */
	size_t tag_size;
	size_t out_size; /* digest or MAC */
	unsigned char aad[AAD_SIZE];
};

struct result {
	enum outcome out;
	char detail[384];
};

struct check {
	const char *name;
	unsigned kinds;
	enum outcome (*run)(const struct ctx *c, const struct check *k,
			    struct result *r);
	size_t a, b;
	int slow; /* left out by --quick */
};

struct tally {
	unsigned passed, failed, skipped;
};

static struct {
	int quick;
	unsigned timeout;
	int strict_clear;
	int strict_keysize;
	int allow_no_copy;
	size_t max_large; /* 0: no limit */
} opt;

/* ---- results ---- */

static enum outcome __attribute__((format(printf, 3, 4)))
set_result(struct result *r, enum outcome out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	r->out = out;
	return out;
}

#define fail(r, ...) set_result(r, FAIL, __VA_ARGS__)
#define skip(r, ...) set_result(r, SKIP, __VA_ARGS__)
#define pass(r, ...) set_result(r, PASS, __VA_ARGS__)

static enum outcome gnutls_fail(struct result *r, const char *what, int ret)
{
	return fail(r, "%s: %s (%d)", what, gnutls_strerror(ret), ret);
}

/* Reports the first difference of two buffers, or returns PASS. */
static enum outcome compare(struct result *r, const char *what, const void *got,
			    const void *want, size_t len)
{
	const unsigned char *g = got, *w = want;
	size_t i;

	for (i = 0; i < len; i++)
		if (g[i] != w[i])
			return fail(r, "%s: differs at byte %zu of %zu", what,
				    i, len);
	return PASS;
}

/* ---- per-check cleanups: memory and handles ---- */

struct cleanup {
	void (*fn)(void *);
	void *p;
};

static struct cleanup cleanups[MAX_CLEANUPS];
static size_t n_cleanups;

static int defer(void (*fn)(void *), void *p)
{
	if (n_cleanups == MAX_CLEANUPS) {
		fn(p);
		return -1;
	}
	cleanups[n_cleanups].fn = fn;
	cleanups[n_cleanups].p = p;
	n_cleanups++;
	return 0;
}

/* Runs the cleanup of p now. */
static void release(void *p)
{
	size_t i;

	for (i = n_cleanups; i-- > 0;) {
		if (cleanups[i].p != p)
			continue;
		cleanups[i].fn(p);
		cleanups[i] = cleanups[--n_cleanups];
		return;
	}
}

static void release_all(void)
{
	while (n_cleanups > 0) {
		n_cleanups--;
		cleanups[n_cleanups].fn(cleanups[n_cleanups].p);
	}
}

static void *xalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (p == NULL || defer(free, p) < 0)
		return NULL;
	return p;
}

/* Deterministic pseudo-random bytes (xorshift64). */
static void fill_pattern(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i, n;

	for (i = 0; i < len; i += n) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = len - i < sizeof(x) ? len - i : sizeof(x);
		memcpy(p + i, &x, n);
	}
}

static unsigned char *pattern(size_t len, uint64_t seed)
{
	unsigned char *p = xalloc(len);

	if (p != NULL)
		fill_pattern(p, len, seed);
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- AEAD helpers ---- */

static void aead_free(void *h)
{
	gnutls_aead_cipher_deinit(h);
}

static int aead_new(const struct ctx *c, const void *key, size_t key_size,
		    gnutls_aead_cipher_hd_t *h)
{
	gnutls_datum_t k = { (void *)key, key_size };
	int ret;

	ret = gnutls_aead_cipher_init(h, c->alg->id, &k);
	if (ret < 0)
		return ret;
	if (defer(aead_free, *h) < 0)
		return GNUTLS_E_MEMORY_ERROR;
	return 0;
}

/* Encrypts len bytes into ct, which holds len + tag_size. */
static int aead_seal(gnutls_aead_cipher_hd_t h, const void *nonce,
		     size_t nonce_size, const void *aad, size_t aad_len,
		     size_t tag_size, const void *pt, size_t len, void *ct)
{
	size_t ct_len = len + tag_size;
	int ret;

	ret = gnutls_aead_cipher_encrypt(h, nonce, nonce_size, aad, aad_len,
					 tag_size, pt, len, ct, &ct_len);
	if (ret == 0 && ct_len != len + tag_size)
		ret = GNUTLS_E_INTERNAL_ERROR;
	return ret;
}

/* Decrypts len bytes of ciphertext and tag into pt, which holds len. */
static int aead_open(gnutls_aead_cipher_hd_t h, const void *nonce,
		     size_t nonce_size, const void *aad, size_t aad_len,
		     size_t tag_size, const void *ct, size_t len, void *pt)
{
	size_t pt_len = len;
	int ret;

	ret = gnutls_aead_cipher_decrypt(h, nonce, nonce_size, aad, aad_len,
					 tag_size, ct, len + tag_size, pt,
					 &pt_len);
	if (ret == 0 && pt_len != len)
		ret = GNUTLS_E_INTERNAL_ERROR;
	return ret;
}

/*
 * CCM writes the message length into the 15 - nonce_size bytes the nonce
 * leaves of the counter block; GnuTLS does not check it, and Nettle aborts
 * the process when it does not fit.  Shorten the nonce when needed.
 */
static size_t nonce_size_for(const struct ctx *c, size_t len)
{
	size_t l = 2;

	if (c->alg->id != GNUTLS_CIPHER_AES_128_CCM &&
	    c->alg->id != GNUTLS_CIPHER_AES_256_CCM)
		return c->nonce_size;
	while (l < 8 && (len >> (8 * l)) != 0)
		l++;
	return 15 - l < c->nonce_size ? 15 - l : c->nonce_size;
}

/* Piece sizes for the iovec computation, repeated until the end. */
static const size_t piece_sizes[] = {
	1, 15, 16, 17, 4095, 4096, 65536, 3, 100000,
};

static size_t piece_len(size_t i, size_t left)
{
	size_t n = piece_sizes[i % ARRAY_SIZE(piece_sizes)];

	return left < n ? left : n;
}

static giovec_t *split(unsigned char *p, size_t len, int *count)
{
	giovec_t *iov;
	size_t off, n, i;

	for (off = 0, i = 0; off < len; off += piece_len(i, len - off), i++)
		;
	iov = xalloc((i ? i : 1) * sizeof(*iov));
	if (iov == NULL)
		return NULL;
	for (off = 0, i = 0; off < len; off += n, i++) {
		n = piece_len(i, len - off);
		iov[i].iov_base = p + off;
		iov[i].iov_len = n;
	}
	*count = (int)i;
	return iov;
}

/*
 * The second computation of an AEAD message: a fresh handle and
 * gnutls_aead_cipher_encryptv(), with the AAD and the message in pieces.
 */
static enum outcome aead_check_iov(const struct ctx *c, struct result *r,
				   size_t nonce_size, unsigned char *aad,
				   size_t aad_len, unsigned char *pt,
				   size_t len, const unsigned char *want)
{
	gnutls_aead_cipher_hd_t h;
	giovec_t auth[2], *iov;
	unsigned char *ct;
	size_t ct_len = len + c->tag_size, first = aad_len / 2;
	int n_iov, n_auth = 0, ret;

	ct = xalloc(ct_len);
	iov = split(pt, len, &n_iov);
	if (ct == NULL || iov == NULL)
		return fail(r, "out of memory");
	if (first) {
		auth[n_auth].iov_base = aad;
		auth[n_auth++].iov_len = first;
	}
	if (aad_len - first) {
		auth[n_auth].iov_base = aad + first;
		auth[n_auth++].iov_len = aad_len - first;
	}

	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_init", ret);
	ret = gnutls_aead_cipher_encryptv(h, c->nonce, nonce_size, auth, n_auth,
					  c->tag_size, iov, n_iov, ct, &ct_len);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_encryptv", ret);
	if (ct_len != len + c->tag_size)
		return fail(r, "gnutls_aead_cipher_encryptv: %zu bytes out",
			    ct_len);
	return compare(r, "gnutls_aead_cipher_encryptv in pieces vs encrypt",
		       ct, want, len + c->tag_size);
}

/* The second computation with a detached tag: encryptv2, in place. */
static enum outcome aead_check_iov2(const struct ctx *c, struct result *r,
				    unsigned char *aad, size_t aad_len,
				    const unsigned char *pt, size_t len,
				    const unsigned char *want)
{
	gnutls_aead_cipher_hd_t h;
	giovec_t auth = { aad, aad_len }, *iov;
	unsigned char *buf, tag[MAX_OUT];
	size_t tag_size = c->tag_size;
	int n_iov, ret;

	buf = xalloc(len);
	if (buf == NULL)
		return fail(r, "out of memory");
	memcpy(buf, pt, len);
	iov = split(buf, len, &n_iov);
	if (iov == NULL)
		return fail(r, "out of memory");

	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_init", ret);
	ret = gnutls_aead_cipher_encryptv2(h, c->nonce, c->nonce_size, &auth,
					   aad_len ? 1 : 0, iov, n_iov, tag,
					   &tag_size);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_encryptv2", ret);
	if (tag_size != c->tag_size)
		return fail(r, "gnutls_aead_cipher_encryptv2: %zu-byte tag",
			    tag_size);
	if (compare(r, "gnutls_aead_cipher_encryptv2 ciphertext", buf, want,
		    len) != PASS)
		return FAIL;
	return compare(r, "gnutls_aead_cipher_encryptv2 tag", tag, want + len,
		       tag_size);
}

/* ---- CBC helpers ---- */

static void cipher_free(void *h)
{
	gnutls_cipher_deinit(h);
}

static int cbc_new(const struct ctx *c, const void *key, size_t key_size,
		   const void *iv, gnutls_cipher_hd_t *h)
{
	gnutls_datum_t k = { (void *)key, key_size };
	gnutls_datum_t v = { (void *)iv, c->nonce_size };
	int ret;

	ret = gnutls_cipher_init(h, c->alg->id, &k, &v);
	if (ret < 0)
		return ret;
	if (defer(cipher_free, *h) < 0)
		return GNUTLS_E_MEMORY_ERROR;
	return 0;
}

/* ---- hash and HMAC behind one interface ---- */

struct mac_hd {
	enum kind kind;
	void *h; /* gnutls_hash_hd_t or gnutls_hmac_hd_t */
};

static void hash_free(void *h)
{
	gnutls_hash_deinit(h, NULL);
}

static void hmac_free(void *h)
{
	gnutls_hmac_deinit(h, NULL);
}

static int mac_fast(const struct ctx *c, const void *key, size_t key_size,
		    const void *msg, size_t len, void *out)
{
	if (c->alg->kind == K_HMAC)
		return gnutls_hmac_fast(c->alg->id, key, key_size, msg, len,
					out);
	return gnutls_hash_fast(c->alg->id, msg, len, out);
}

static int mac_new(const struct ctx *c, const void *key, size_t key_size,
		   struct mac_hd *m)
{
	gnutls_hash_hd_t hash;
	gnutls_hmac_hd_t hmac;
	int ret;

	m->kind = c->alg->kind;
	if (m->kind == K_HMAC) {
		ret = gnutls_hmac_init(&hmac, c->alg->id, key, key_size);
		m->h = hmac;
	} else {
		ret = gnutls_hash_init(&hash, c->alg->id);
		m->h = hash;
	}
	if (ret < 0)
		return ret;
	if (defer(m->kind == K_HMAC ? hmac_free : hash_free, m->h) < 0)
		return GNUTLS_E_MEMORY_ERROR;
	return 0;
}

static int mac_update(struct mac_hd *m, const void *data, size_t len)
{
	if (m->kind == K_HMAC)
		return gnutls_hmac(m->h, data, len);
	return gnutls_hash(m->h, data, len);
}

static void mac_output(struct mac_hd *m, void *out)
{
	if (m->kind == K_HMAC)
		gnutls_hmac_output(m->h, out);
	else
		gnutls_hash_output(m->h, out);
}

/* Returns 0, or -1 when the copy is NULL (unsupported). */
static int mac_copy(struct mac_hd *m, struct mac_hd *copy)
{
	copy->kind = m->kind;
	if (m->kind == K_HMAC)
		copy->h = gnutls_hmac_copy(m->h);
	else
		copy->h = gnutls_hash_copy(m->h);
	if (copy->h == NULL)
		return -1;
	defer(m->kind == K_HMAC ? hmac_free : hash_free, copy->h);
	return 0;
}

/* Feeds msg to a new handle in two pieces and outputs. */
static int mac_incremental(const struct ctx *c, const void *key,
			   size_t key_size, const unsigned char *msg,
			   size_t len, void *out)
{
	struct mac_hd m;
	int ret;

	ret = mac_new(c, key, key_size, &m);
	if (ret == 0)
		ret = mac_update(&m, msg, len / 3);
	if (ret == 0)
		ret = mac_update(&m, msg + len / 3, len - len / 3);
	if (ret == 0)
		mac_output(&m, out);
	release(m.h);
	return ret;
}

/* ---- known answers ---- */

static enum outcome kat_aead(const struct ctx *c, struct result *r)
{
	const struct kat *k = &c->kat;
	size_t tag_size = k->out.n - k->msg.n;
	gnutls_aead_cipher_hd_t h;
	unsigned char out[MAX_KAT];
	int ret;

	ret = aead_new(c, k->key.b, k->key.n, &h);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_init", ret);
	ret = aead_seal(h, k->nonce.b, k->nonce.n, k->aad.b, k->aad.n, tag_size,
			k->msg.b, k->msg.n, out);
	if (ret < 0)
		return gnutls_fail(r, "encrypt", ret);
	if (compare(r, "known answer", out, k->out.b, k->out.n) != PASS)
		return FAIL;
	ret = aead_open(h, k->nonce.b, k->nonce.n, k->aad.b, k->aad.n, tag_size,
			k->out.b, k->msg.n, out);
	if (ret < 0)
		return gnutls_fail(r, "decrypt", ret);
	return compare(r, "decrypted known answer", out, k->msg.b, k->msg.n);
}

static enum outcome kat_cbc(const struct ctx *c, struct result *r)
{
	const struct kat *k = &c->kat;
	gnutls_cipher_hd_t enc, dec;
	unsigned char out[MAX_KAT];
	int ret;

	ret = cbc_new(c, k->key.b, k->key.n, k->nonce.b, &enc);
	if (ret == 0)
		ret = cbc_new(c, k->key.b, k->key.n, k->nonce.b, &dec);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_cipher_init", ret);
	ret = gnutls_cipher_encrypt2(enc, k->msg.b, k->msg.n, out, sizeof(out));
	if (ret < 0)
		return gnutls_fail(r, "encrypt", ret);
	if (compare(r, "known answer", out, k->out.b, k->out.n) != PASS)
		return FAIL;
	ret = gnutls_cipher_decrypt2(dec, k->out.b, k->out.n, out, sizeof(out));
	if (ret < 0)
		return gnutls_fail(r, "decrypt", ret);
	return compare(r, "decrypted known answer", out, k->msg.b, k->msg.n);
}

static enum outcome kat_mac(const struct ctx *c, struct result *r)
{
	const struct kat *k = &c->kat;
	unsigned char out[MAX_OUT];
	int ret;

	ret = mac_fast(c, k->key.b, k->key.n, k->msg.b, k->msg.n, out);
	if (ret < 0)
		return gnutls_fail(r, "*_fast", ret);
	if (compare(r, "*_fast known answer", out, k->out.b, k->out.n) != PASS)
		return FAIL;
	ret = mac_incremental(c, k->key.b, k->key.n, k->msg.b, k->msg.n, out);
	if (ret < 0)
		return gnutls_fail(r, "incremental", ret);
	return compare(r, "incremental known answer", out, k->out.b, k->out.n);
}

static enum outcome kat_any(const struct ctx *c, struct result *r)
{
	switch (c->alg->kind) {
	case K_AEAD:
		return kat_aead(c, r);
	case K_CBC:
		return kat_cbc(c, r);
	default:
		return kat_mac(c, r);
	}
}

static enum outcome run_kat(const struct ctx *c, const struct check *k,
			    struct result *r)
{
	(void)k;
	return kat_any(c, r);
}

/* ---- AEAD: large messages ---- */

static enum outcome run_large(const struct ctx *c, const struct check *k,
			      struct result *r)
{
	size_t len = k->a, nonce_size = nonce_size_for(c, len);
	unsigned char *pt, *ct, *buf, aad[AAD_SIZE];
	gnutls_aead_cipher_hd_t h;
	int ret;

	pt = pattern(len, len);
	ct = xalloc(len + c->tag_size);
	buf = xalloc(len + c->tag_size);
	if (pt == NULL || ct == NULL || buf == NULL)
		return fail(r, "out of memory");
	memcpy(aad, c->aad, sizeof(aad));

	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_init", ret);
	ret = aead_seal(h, c->nonce, nonce_size, aad, sizeof(aad), c->tag_size,
			pt, len, ct);
	if (ret < 0)
		return gnutls_fail(r, "encrypt", ret);
	ret = aead_open(h, c->nonce, nonce_size, aad, sizeof(aad), c->tag_size,
			ct, len, buf);
	if (ret < 0)
		return gnutls_fail(r, "decrypt", ret);
	if (compare(r, "decrypted text", buf, pt, len) != PASS)
		return FAIL;
	release(buf);
	if (aead_check_iov(c, r, nonce_size, aad, sizeof(aad), pt, len, ct) !=
	    PASS)
		return FAIL;
	if (nonce_size != c->nonce_size)
		return pass(r, "%zu-byte nonce: the length needs %zu bytes",
			    nonce_size, 15 - nonce_size);
	return PASS;
}

/* ---- AEAD: tag failure ---- */

struct window {
	uint64_t key;
	size_t off;
};

static int window_cmp(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * Returns the offset in out of the first WINDOW-byte run of pt, or -1:
 * the windows of pt are sorted by their first 8 bytes, then every
 * position of out is looked up.
 */
static long find_leak(const unsigned char *pt, size_t len,
		      const unsigned char *out, size_t out_len)
{
	struct window *w, key, *hit;
	size_t i, n;

	if (len < WINDOW || out_len < WINDOW)
		return -1;
	n = len - WINDOW + 1;
	w = xalloc(n * sizeof(*w));
	if (w == NULL)
		return -2;
	for (i = 0; i < n; i++) {
		memcpy(&w[i].key, pt + i, sizeof(w[i].key));
		w[i].off = i;
	}
	qsort(w, n, sizeof(*w), window_cmp);

	for (i = 0; i + WINDOW <= out_len; i++) {
		memcpy(&key.key, out + i, sizeof(key.key));
		hit = bsearch(&key, w, n, sizeof(*w), window_cmp);
		if (hit == NULL)
			continue;
		while (hit > w && hit[-1].key == key.key)
			hit--;
		for (; hit < w + n && hit->key == key.key; hit++)
			if (memcmp(pt + hit->off, out + i, WINDOW) == 0)
				return (long)i;
	}
	return -1;
}

/*
 * Decrypts a message whose tag has one bit flipped into a buffer filled
 * with FILL; returns the buffer, or NULL with r set.
 */
static unsigned char *tag_flip(const struct ctx *c, struct result *r,
			       unsigned char *pt, size_t len)
{
	unsigned char *ct, *out;
	gnutls_aead_cipher_hd_t h;
	size_t out_len = len;
	int ret;

	ct = xalloc(len + c->tag_size);
	out = xalloc(len);
	if (ct == NULL || out == NULL) {
		fail(r, "out of memory");
		return NULL;
	}
	memset(out, FILL, len);

	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret == 0)
		ret = aead_seal(h, c->nonce, c->nonce_size, c->aad, AAD_SIZE,
				c->tag_size, pt, len, ct);
	if (ret < 0) {
		gnutls_fail(r, "encrypt", ret);
		return NULL;
	}
	ct[len] ^= 0x80;
	ret = gnutls_aead_cipher_decrypt(h, c->nonce, c->nonce_size, c->aad,
					 AAD_SIZE, c->tag_size, ct,
					 len + c->tag_size, out, &out_len);
	if (ret != GNUTLS_E_DECRYPTION_FAILED) {
		fail(r,
		     "decrypt returned %s (%d), not "
		     "GNUTLS_E_DECRYPTION_FAILED",
		     gnutls_strerror(ret), ret);
		return NULL;
	}
	return out;
}

static enum outcome run_tag_flip(const struct ctx *c, const struct check *k,
				 struct result *r)
{
	unsigned char *pt = pattern(k->a, k->a + 1);

	if (pt == NULL)
		return fail(r, "out of memory");
	if (tag_flip(c, r, pt, k->a) == NULL)
		return FAIL;
	return PASS;
}

static enum outcome run_tag_clear(const struct ctx *c, const struct check *k,
				  struct result *r)
{
	unsigned char *pt = pattern(k->a, k->a + 1), *out;
	long at;

	if (pt == NULL)
		return fail(r, "out of memory");
	out = tag_flip(c, r, pt, k->a);
	if (out == NULL)
		return FAIL;
	at = find_leak(pt, k->a, out, k->a);
	if (at == -2)
		return fail(r, "out of memory");
	if (at < 0)
		return PASS;
	if (opt.strict_clear)
		return fail(r,
			    "plaintext left in the output buffer at byte "
			    "%ld",
			    at);
	return skip(r,
		    "stock GnuTLS leaves plaintext in the output buffer on a "
		    "tag failure (found at byte %ld); EDGE_STRICT_CLEAR=1 "
		    "fails this",
		    at);
}

/* ---- empty messages and AAD ---- */

static enum outcome aead_empty_kat(const struct ctx *c, struct result *r)
{
	unsigned char zero[MAX_KEY] = { 0 }, tag[MAX_OUT];
	gnutls_aead_cipher_hd_t h;
	int ret;

	ret = aead_new(c, zero, c->key_size, &h);
	if (ret == 0)
		ret = aead_seal(h, zero, c->nonce_size, NULL, 0, c->tag_size,
				NULL, 0, tag);
	if (ret < 0)
		return gnutls_fail(r, "encrypt under the zero key", ret);
	return compare(r, "known tag of the empty message", tag, c->empty.b,
		       c->empty.n);
}

/* a bytes of AAD, b bytes of message. */
static enum outcome run_aead_case(const struct ctx *c, const struct check *k,
				  struct result *r)
{
	unsigned char *aad = pattern(k->a, 7), *pt = pattern(k->b, 8);
	unsigned char *ct = xalloc(k->b + c->tag_size), *out = xalloc(k->b);
	gnutls_aead_cipher_hd_t h;
	int ret;

	if (aad == NULL || pt == NULL || ct == NULL || out == NULL)
		return fail(r, "out of memory");
	if (k->a == 0 && k->b == 0 && c->empty.n &&
	    aead_empty_kat(c, r) != PASS)
		return FAIL;

	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_aead_cipher_init", ret);
	ret = aead_seal(h, c->nonce, c->nonce_size, aad, k->a, c->tag_size, pt,
			k->b, ct);
	if (ret < 0)
		return gnutls_fail(r, "encrypt", ret);
	if (aead_check_iov2(c, r, aad, k->a, pt, k->b, ct) != PASS)
		return FAIL;
	ret = aead_open(h, c->nonce, c->nonce_size, aad, k->a, c->tag_size, ct,
			k->b, out);
	if (ret < 0)
		return gnutls_fail(r, "decrypt", ret);
	if (compare(r, "decrypted text", out, pt, k->b) != PASS)
		return FAIL;
	ct[k->b] ^= 1;
	ret = aead_open(h, c->nonce, c->nonce_size, aad, k->a, c->tag_size, ct,
			k->b, out);
	if (ret != GNUTLS_E_DECRYPTION_FAILED)
		return fail(r, "decrypt with a bad tag returned %s (%d)",
			    gnutls_strerror(ret), ret);
	return PASS;
}

/* A zero-length call must succeed and leave the chain alone. */
static enum outcome run_cbc_empty(const struct ctx *c, const struct check *k,
				  struct result *r)
{
	const struct kat *kat = &c->kat;
	unsigned char in[BLOCK] = { 0 }, out[MAX_KAT];
	gnutls_cipher_hd_t enc, dec;
	int ret;

	(void)k;
	ret = cbc_new(c, kat->key.b, kat->key.n, kat->nonce.b, &enc);
	if (ret == 0)
		ret = cbc_new(c, kat->key.b, kat->key.n, kat->nonce.b, &dec);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_cipher_init", ret);

	ret = gnutls_cipher_encrypt2(enc, in, 0, out, 0);
	if (ret < 0)
		return gnutls_fail(r, "zero-length encrypt", ret);
	ret = gnutls_cipher_encrypt2(enc, kat->msg.b, kat->msg.n, out,
				     sizeof(out));
	if (ret < 0)
		return gnutls_fail(r, "encrypt", ret);
	if (compare(r, "known answer after a zero-length encrypt", out,
		    kat->out.b, kat->out.n) != PASS)
		return FAIL;

	ret = gnutls_cipher_decrypt2(dec, in, 0, out, 0);
	if (ret < 0)
		return gnutls_fail(r, "zero-length decrypt", ret);
	ret = gnutls_cipher_decrypt2(dec, kat->out.b, kat->out.n, out,
				     sizeof(out));
	if (ret < 0)
		return gnutls_fail(r, "decrypt", ret);
	return compare(r, "known answer after a zero-length decrypt", out,
		       kat->msg.b, kat->msg.n);
}

static enum outcome run_mac_empty(const struct ctx *c, const struct check *k,
				  struct result *r)
{
	unsigned char fast[MAX_OUT], out[MAX_OUT], dummy = 0;
	struct mac_hd m;
	int ret;

	(void)k;
	if (c->empty.n) {
		ret = mac_fast(c, &dummy, 0, &dummy, 0, out);
		if (ret < 0)
			return gnutls_fail(r, "*_fast of the empty message",
					   ret);
		if (compare(r, "known answer of the empty message", out,
			    c->empty.b, c->empty.n) != PASS)
			return FAIL;
	}

	ret = mac_fast(c, c->key, c->key_size, &dummy, 0, fast);
	if (ret < 0)
		return gnutls_fail(r, "*_fast", ret);
	ret = mac_new(c, c->key, c->key_size, &m);
	if (ret < 0)
		return gnutls_fail(r, "init", ret);
	mac_output(&m, out);
	if (compare(r, "output without input vs *_fast", out, fast,
		    c->out_size) != PASS)
		return FAIL;
	ret = mac_update(&m, &dummy, 0);
	if (ret < 0)
		return gnutls_fail(r, "zero-length update", ret);
	mac_output(&m, out);
	return compare(r, "zero-length update vs *_fast", out, fast,
		       c->out_size);
}

/* ---- misaligned buffers ---- */

#define MISALIGNED_AEAD 4099
#define MISALIGNED_CBC (256 * BLOCK + 3 * BLOCK)
#define MISALIGNED_MAC 4099

/* The output offset paired with input offset i: the same, and another. */
static size_t out_offset(size_t i, int variant)
{
	return variant ? (i * 7) % BLOCK : i;
}

static enum outcome run_misaligned_aead(const struct ctx *c,
					const struct check *k, struct result *r)
{
	size_t len = MISALIGNED_AEAD, i, o, total = len + c->tag_size;
	unsigned char *pt = pattern(len, 9), *ref = xalloc(total);
	unsigned char *in = xalloc(total + ALIGN_SLACK);
	unsigned char *out = xalloc(total + ALIGN_SLACK);
	unsigned char aad[AAD_SIZE + BLOCK];
	gnutls_aead_cipher_hd_t h;
	int v, ret;

	(void)k;
	if (pt == NULL || ref == NULL || in == NULL || out == NULL)
		return fail(r, "out of memory");
	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret == 0)
		ret = aead_seal(h, c->nonce, c->nonce_size, c->aad, AAD_SIZE,
				c->tag_size, pt, len, ref);
	if (ret < 0)
		return gnutls_fail(r, "aligned encrypt", ret);

	for (i = 1; i < BLOCK; i++) {
		for (v = 0; v < 2; v++) {
			o = out_offset(i, v);
			memcpy(aad + i, c->aad, AAD_SIZE);
			memcpy(in + i, pt, len);
			ret = aead_seal(h, c->nonce, c->nonce_size, aad + i,
					AAD_SIZE, c->tag_size, in + i, len,
					out + o);
			if (ret < 0)
				return fail(r, "encrypt at offsets %zu/%zu: %s",
					    i, o, gnutls_strerror(ret));
			if (memcmp(out + o, ref, total) != 0)
				return fail(r,
					    "encrypt at offsets %zu/%zu "
					    "differs from aligned",
					    i, o);
			memcpy(in + i, ref, total);
			ret = aead_open(h, c->nonce, c->nonce_size, aad + i,
					AAD_SIZE, c->tag_size, in + i, len,
					out + o);
			if (ret < 0)
				return fail(r, "decrypt at offsets %zu/%zu: %s",
					    i, o, gnutls_strerror(ret));
			if (memcmp(out + o, pt, len) != 0)
				return fail(r,
					    "decrypt at offsets %zu/%zu "
					    "differs from the plaintext",
					    i, o);
		}
	}
	return PASS;
}

static enum outcome run_misaligned_cbc(const struct ctx *c,
				       const struct check *k, struct result *r)
{
	size_t len = MISALIGNED_CBC, i, o;
	unsigned char *pt = pattern(len, 10), *ref = xalloc(len);
	unsigned char *in = xalloc(len + ALIGN_SLACK);
	unsigned char *out = xalloc(len + ALIGN_SLACK);
	gnutls_cipher_hd_t h;
	int v, ret;

	(void)k;
	if (pt == NULL || ref == NULL || in == NULL || out == NULL)
		return fail(r, "out of memory");
	ret = cbc_new(c, c->key, c->key_size, c->nonce, &h);
	if (ret == 0)
		ret = gnutls_cipher_encrypt2(h, pt, len, ref, len);
	if (ret < 0)
		return gnutls_fail(r, "aligned encrypt", ret);

	for (i = 1; i < BLOCK; i++) {
		for (v = 0; v < 2; v++) {
			o = out_offset(i, v);
			memcpy(in + i, pt, len);
			gnutls_cipher_set_iv(h, (void *)c->nonce,
					     c->nonce_size);
			ret = gnutls_cipher_encrypt2(h, in + i, len, out + o,
						     len);
			if (ret < 0)
				return fail(r, "encrypt at offsets %zu/%zu: %s",
					    i, o, gnutls_strerror(ret));
			if (memcmp(out + o, ref, len) != 0)
				return fail(r,
					    "encrypt at offsets %zu/%zu "
					    "differs from aligned",
					    i, o);
			memcpy(in + i, ref, len);
			gnutls_cipher_set_iv(h, (void *)c->nonce,
					     c->nonce_size);
			ret = gnutls_cipher_decrypt2(h, in + i, len, out + o,
						     len);
			if (ret < 0)
				return fail(r, "decrypt at offsets %zu/%zu: %s",
					    i, o, gnutls_strerror(ret));
			if (memcmp(out + o, pt, len) != 0)
				return fail(r,
					    "decrypt at offsets %zu/%zu "
					    "differs from the plaintext",
					    i, o);
		}
	}
	return PASS;
}

static enum outcome run_misaligned_mac(const struct ctx *c,
				       const struct check *k, struct result *r)
{
	size_t len = MISALIGNED_MAC, i, o;
	unsigned char *msg = pattern(len, 11), ref[MAX_OUT];
	unsigned char *in = xalloc(len + ALIGN_SLACK);
	unsigned char out[MAX_OUT + ALIGN_SLACK];
	int v, ret;

	(void)k;
	if (msg == NULL || in == NULL)
		return fail(r, "out of memory");
	ret = mac_fast(c, c->key, c->key_size, msg, len, ref);
	if (ret < 0)
		return gnutls_fail(r, "aligned *_fast", ret);

	for (i = 1; i < BLOCK; i++) {
		memcpy(in + i, msg, len);
		for (v = 0; v < 2; v++) {
			o = out_offset(i, v);
			ret = mac_fast(c, c->key, c->key_size, in + i, len,
				       out + o);
			if (ret == 0 && memcmp(out + o, ref, c->out_size))
				return fail(r,
					    "*_fast at offsets %zu/%zu "
					    "differs from aligned",
					    i, o);
			if (ret == 0)
				ret = mac_incremental(c, c->key, c->key_size,
						      in + i, len, out + o);
			if (ret < 0)
				return fail(r, "offsets %zu/%zu: %s", i, o,
					    gnutls_strerror(ret));
			if (memcmp(out + o, ref, c->out_size) != 0)
				return fail(r,
					    "incremental at offsets "
					    "%zu/%zu differs from aligned",
					    i, o);
		}
	}
	return PASS;
}

/* ---- in place ---- */

#define IN_PLACE_AEAD 4099
#define IN_PLACE_CBC (64 * BLOCK)

static const size_t in_place_offsets[] = { 0, 3 };

static enum outcome run_in_place_aead(const struct ctx *c,
				      const struct check *k, struct result *r)
{
	size_t len = IN_PLACE_AEAD, total = len + c->tag_size, i, off;
	unsigned char *pt = pattern(len, 12), *ref = xalloc(total);
	unsigned char *buf = xalloc(total + BLOCK), *p;
	gnutls_aead_cipher_hd_t h;
	size_t p_len;
	int ret;

	(void)k;
	if (pt == NULL || ref == NULL || buf == NULL)
		return fail(r, "out of memory");
	ret = aead_new(c, c->key, c->key_size, &h);
	if (ret == 0)
		ret = aead_seal(h, c->nonce, c->nonce_size, c->aad, AAD_SIZE,
				c->tag_size, pt, len, ref);
	if (ret < 0)
		return gnutls_fail(r, "out-of-place encrypt", ret);

	for (i = 0; i < ARRAY_SIZE(in_place_offsets); i++) {
		off = in_place_offsets[i];
		p = buf + off;
		memcpy(p, pt, len);
		ret = aead_seal(h, c->nonce, c->nonce_size, c->aad, AAD_SIZE,
				c->tag_size, p, len, p);
		if (ret < 0)
			return fail(r, "in-place encrypt at offset %zu: %s",
				    off, gnutls_strerror(ret));
		if (memcmp(p, ref, total) != 0)
			return fail(r,
				    "in-place encrypt at offset %zu "
				    "differs from out-of-place",
				    off);
		p_len = total;
		ret = gnutls_aead_cipher_decrypt(h, c->nonce, c->nonce_size,
						 c->aad, AAD_SIZE, c->tag_size,
						 p, total, p, &p_len);
		if (ret < 0)
			return fail(r, "in-place decrypt at offset %zu: %s",
				    off, gnutls_strerror(ret));
		if (p_len != len || memcmp(p, pt, len) != 0)
			return fail(r,
				    "in-place decrypt at offset %zu "
				    "differs from the plaintext",
				    off);
	}
	return PASS;
}

static enum outcome run_in_place_cbc(const struct ctx *c, const struct check *k,
				     struct result *r)
{
	size_t len = IN_PLACE_CBC, i, off;
	unsigned char *pt = pattern(len, 13), *ref = xalloc(len);
	unsigned char *buf = xalloc(len + BLOCK), *p;
	gnutls_cipher_hd_t h;
	int ret;

	(void)k;
	if (pt == NULL || ref == NULL || buf == NULL)
		return fail(r, "out of memory");
	ret = cbc_new(c, c->key, c->key_size, c->nonce, &h);
	if (ret == 0)
		ret = gnutls_cipher_encrypt2(h, pt, len, ref, len);
	if (ret < 0)
		return gnutls_fail(r, "out-of-place encrypt", ret);

	for (i = 0; i < ARRAY_SIZE(in_place_offsets); i++) {
		off = in_place_offsets[i];
		p = buf + off;
		memcpy(p, pt, len);
		gnutls_cipher_set_iv(h, (void *)c->nonce, c->nonce_size);
		ret = gnutls_cipher_encrypt(h, p, len);
		if (ret < 0)
			return fail(r, "in-place encrypt at offset %zu: %s",
				    off, gnutls_strerror(ret));
		if (memcmp(p, ref, len) != 0)
			return fail(r,
				    "in-place encrypt at offset %zu "
				    "differs from out-of-place",
				    off);
		gnutls_cipher_set_iv(h, (void *)c->nonce, c->nonce_size);
		ret = gnutls_cipher_decrypt(h, p, len);
		if (ret < 0)
			return fail(r, "in-place decrypt at offset %zu: %s",
				    off, gnutls_strerror(ret));
		if (memcmp(p, pt, len) != 0)
			return fail(r,
				    "in-place decrypt at offset %zu "
				    "differs from the plaintext",
				    off);
	}
	return PASS;
}

/* ---- key sizes ---- */

static const size_t aes_sizes[] = { 16, 24, 32 };
static const size_t odd_sizes[] = { 0, 1, 15, 17, 23, 31, 33, 64 };

static int try_key(const struct ctx *c, size_t size)
{
	unsigned char key[MAX_KEY];
	gnutls_aead_cipher_hd_t a;
	gnutls_cipher_hd_t h;
	int ret;

	memset(key, 0x42, sizeof(key));
	if (c->alg->kind == K_AEAD)
		ret = aead_new(c, key, size, &a);
	else
		ret = cbc_new(c, key, size, c->nonce, &h);
	return ret;
}

static int stock_accepts(const struct ctx *c, size_t size)
{
	size_t i;

	if (c->alg->lenience == LENIENT_ANY)
		return 1;
	if (c->alg->lenience == LENIENT_AES_SIZES)
		for (i = 0; i < ARRAY_SIZE(aes_sizes); i++)
			if (aes_sizes[i] == size)
				return 1;
	return 0;
}

static void append(char *buf, size_t len, size_t n)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%zu", used ? "," : "", n);
}

/*
 * Every size must be refused, without a crash; those stock GnuTLS 3.7.9
 * accepts are reported as a skip unless EDGE_STRICT_KEYSIZE=1.
 */
static enum outcome key_sizes(const struct ctx *c, struct result *r,
			      const size_t *sizes, size_t n)
{
	char refused[64] = "", tolerated[64] = "";
	size_t i;

	for (i = 0; i < n; i++) {
		if (sizes[i] == c->key_size)
			continue;
		if (try_key(c, sizes[i]) < 0)
			append(refused, sizeof(refused), sizes[i]);
		else if (stock_accepts(c, sizes[i]) && !opt.strict_keysize)
			append(tolerated, sizeof(tolerated), sizes[i]);
		else
			return fail(r, "a %zu-byte key was accepted", sizes[i]);
	}
	if (tolerated[0])
		return skip(r,
			    "%s-byte keys accepted, as stock GnuTLS 3.7.9 does "
			    "(x86 AES-NI code%s); refused: %s; "
			    "EDGE_STRICT_KEYSIZE=1 fails this",
			    tolerated,
			    c->alg->lenience == LENIENT_ANY ?
				    ", CCM ignores the key-size error" :
				    " takes any AES size",
			    refused[0] ? refused : "none");
	return pass(r, "refused: %s", refused);
}

static enum outcome run_key_invalid(const struct ctx *c, const struct check *k,
				    struct result *r)
{
	(void)k;
	return key_sizes(c, r, odd_sizes, ARRAY_SIZE(odd_sizes));
}

static enum outcome run_key_other(const struct ctx *c, const struct check *k,
				  struct result *r)
{
	(void)k;
	return key_sizes(c, r, aes_sizes, ARRAY_SIZE(aes_sizes));
}

/*
 * An HMAC key of any size must work and agree with gnutls_hmac_fast();
 * and by RFC 2104 the empty key equals a block of zeros, and a key longer
 * than the block equals its digest.
 */
static enum outcome run_hmac_key(const struct ctx *c, const struct check *k,
				 struct result *r)
{
	unsigned char *key = pattern(k->a, 14), *msg = pattern(200, 15);
	unsigned char fast[MAX_OUT], out[MAX_OUT], alt[MAX_OUT];
	unsigned char zeros[128] = { 0 };
	int ret;

	if (key == NULL || msg == NULL)
		return fail(r, "out of memory");
	ret = gnutls_hmac_fast(c->alg->id, key, k->a, msg, 200, fast);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_hmac_fast", ret);
	ret = mac_incremental(c, key, k->a, msg, 200, out);
	if (ret < 0)
		return gnutls_fail(r, "gnutls_hmac_init", ret);
	if (compare(r, "incremental vs gnutls_hmac_fast", out, fast,
		    c->out_size) != PASS)
		return FAIL;

	if (k->a == 0) {
		ret = gnutls_hmac_fast(c->alg->id, zeros, c->alg->hash_block,
				       msg, 200, out);
	} else if (k->a > c->alg->hash_block) {
		ret = gnutls_hash_fast(c->alg->id, key, k->a, alt);
		if (ret == 0)
			ret = gnutls_hmac_fast(c->alg->id, alt, c->out_size,
					       msg, 200, out);
	} else {
		return PASS;
	}
	if (ret < 0)
		return gnutls_fail(r, "equivalent key", ret);
	return compare(r,
		       k->a ? "long key vs its digest as the key" :
			      "empty key vs a block of zeros",
		       fast, out, c->out_size);
}

/* ---- CBC chaining ---- */

/* Block counts per call, 0-terminated. */
static const unsigned char chain_plans[][5] = {
	{ 4 }, { 1, 3 }, { 2, 1, 1 }, { 1, 1, 1, 1 }, { 3, 1 }, { 1, 2, 1 },
};

static int cbc_pieces(gnutls_cipher_hd_t h, int enc, const unsigned char *in,
		      unsigned char *out, const unsigned char *plan)
{
	size_t off = 0, n;
	int ret = 0;

	for (; *plan && ret == 0; plan++, off += n) {
		n = *plan * BLOCK;
		if (enc)
			ret = gnutls_cipher_encrypt2(h, in + off, n, out + off,
						     n);
		else
			ret = gnutls_cipher_decrypt2(h, in + off, n, out + off,
						     n);
	}
	return ret;
}

static enum outcome chain_plan(const struct ctx *c, struct result *r,
			       const unsigned char *plan, int enc)
{
	const struct kat *kat = &c->kat;
	const struct bytes *in = enc ? &kat->msg : &kat->out;
	const struct bytes *want = enc ? &kat->out : &kat->msg;
	unsigned char out[MAX_KAT];
	gnutls_cipher_hd_t h;
	char what[64];
	int ret, i, len = 0;

	for (i = 0; plan[i]; i++)
		len += snprintf(what + len, sizeof(what) - len, "%s%u",
				i ? "+" : "", plan[i]);
	snprintf(what + len, sizeof(what) - len, " blocks %s",
		 enc ? "encrypted" : "decrypted");
	ret = cbc_new(c, kat->key.b, kat->key.n, kat->nonce.b, &h);
	if (ret == 0)
		ret = cbc_pieces(h, enc, in->b, out, plan);
	if (ret < 0)
		return fail(r, "%s: %s", what, gnutls_strerror(ret));
	release(h);
	return compare(r, what, out, want->b, want->n);
}

/*
 * gnutls_cipher_get_iv() is not public in 3.7.9: the chained IV after a
 * call is checked by restarting on a fresh handle whose IV is the last
 * ciphertext block, and gnutls_cipher_set_iv() by resetting mid-stream.
 */
static enum outcome chain_restart(const struct ctx *c, struct result *r)
{
	const struct kat *kat = &c->kat;
	unsigned char out[MAX_KAT];
	gnutls_cipher_hd_t h;
	size_t b, rest;
	int ret;

	for (b = 1; b * BLOCK < kat->msg.n; b++) {
		rest = kat->msg.n - b * BLOCK;
		ret = cbc_new(c, kat->key.b, kat->key.n,
			      kat->out.b + (b - 1) * BLOCK, &h);
		if (ret == 0)
			ret = gnutls_cipher_encrypt2(h, kat->msg.b + b * BLOCK,
						     rest, out, rest);
		if (ret < 0)
			return gnutls_fail(r, "restart", ret);
		release(h);
		if (memcmp(out, kat->out.b + b * BLOCK, rest) != 0)
			return fail(r,
				    "IV = ciphertext block %zu does not "
				    "continue the chain",
				    b);
	}

	ret = cbc_new(c, kat->key.b, kat->key.n, kat->nonce.b, &h);
	if (ret == 0)
		ret = gnutls_cipher_encrypt2(h, kat->msg.b, 2 * BLOCK, out,
					     2 * BLOCK);
	if (ret < 0)
		return gnutls_fail(r, "encrypt", ret);
	gnutls_cipher_set_iv(h, (void *)kat->nonce.b, kat->nonce.n);
	ret = gnutls_cipher_encrypt2(h, kat->msg.b, kat->msg.n, out,
				     sizeof(out));
	if (ret < 0)
		return gnutls_fail(r, "encrypt after gnutls_cipher_set_iv",
				   ret);
	return compare(r, "known answer after gnutls_cipher_set_iv", out,
		       kat->out.b, kat->out.n);
}

static enum outcome run_cbc_chain(const struct ctx *c, const struct check *k,
				  struct result *r)
{
	size_t i;
	int enc;

	(void)k;
	for (enc = 1; enc >= 0; enc--)
		for (i = 0; i < ARRAY_SIZE(chain_plans); i++)
			if (chain_plan(c, r, chain_plans[i], enc) != PASS)
				return FAIL;
	if (chain_restart(c, r) != PASS)
		return FAIL;
	return pass(r, "gnutls_cipher_get_iv is not in 3.7.9: IV checked "
		       "by restarting the chain");
}

/* ---- hash and HMAC copies ---- */

#define COPY_PREFIX 100
#define COPY_TAIL1 37
#define COPY_TAIL2 200

static enum outcome run_copy(const struct ctx *c, const struct check *k,
			     struct result *r)
{
	size_t len = COPY_PREFIX + COPY_TAIL2;
	unsigned char *msg1 = pattern(len, 16), *msg2 = pattern(len, 16);
	unsigned char want1[MAX_OUT], want2[MAX_OUT], out[MAX_OUT];
	struct mac_hd m, copy;
	int ret;

	(void)k;
	if (msg1 == NULL || msg2 == NULL)
		return fail(r, "out of memory");
	fill_pattern(msg2 + COPY_PREFIX, COPY_TAIL2, 17);
	ret = mac_fast(c, c->key, c->key_size, msg1, COPY_PREFIX + COPY_TAIL1,
		       want1);
	if (ret == 0)
		ret = mac_fast(c, c->key, c->key_size, msg2, len, want2);
	if (ret < 0)
		return gnutls_fail(r, "*_fast", ret);

	ret = mac_new(c, c->key, c->key_size, &m);
	if (ret == 0)
		ret = mac_update(&m, msg1, COPY_PREFIX);
	if (ret < 0)
		return gnutls_fail(r, "init/update", ret);
	if (mac_copy(&m, &copy) < 0) {
		if (opt.allow_no_copy)
			return skip(r,
				    "copy unsupported (EDGE_ALLOW_NO_COPY=1)");
		return fail(r, "copy unsupported");
	}

	ret = mac_update(&m, msg1 + COPY_PREFIX, COPY_TAIL1);
	if (ret < 0)
		return gnutls_fail(r, "update of the original", ret);
	mac_output(&m, out);
	release(m.h);
	if (compare(r, "original after the copy", out, want1, c->out_size) !=
	    PASS)
		return FAIL;

	ret = mac_update(&copy, msg2 + COPY_PREFIX, COPY_TAIL2);
	if (ret < 0)
		return gnutls_fail(r, "update of the copy", ret);
	mac_output(&copy, out);
	return compare(r, "copy (after the original was freed)", out, want2,
		       c->out_size);
}

/* ---- fork ---- */

#define FORK_MSG 1024 /* two halves of 512, a multiple of the block */

static volatile pid_t hang_child;

/*
 * One handle used in two steps, each on half of a message: AEAD seals
 * each half with its own nonce, CBC chains over both, hash/HMAC outputs
 * after the second.  Returns the bytes written to out, or a GnuTLS error.
 */
struct stream {
	const struct ctx *c;
	gnutls_aead_cipher_hd_t aead;
	gnutls_cipher_hd_t cbc;
	struct mac_hd mac;
};

static int stream_open(struct stream *s, const struct ctx *c)
{
	s->c = c;
	if (c->alg->kind == K_AEAD)
		return aead_new(c, c->key, c->key_size, &s->aead);
	if (c->alg->kind == K_CBC)
		return cbc_new(c, c->key, c->key_size, c->nonce, &s->cbc);
	return mac_new(c, c->key, c->key_size, &s->mac);
}

static int stream_step(struct stream *s, int step, const unsigned char *msg,
		       unsigned char *out)
{
	const struct ctx *c = s->c;
	size_t half = FORK_MSG / 2;
	unsigned char nonce[MAX_NONCE];
	int ret;

	msg += step * half;
	switch (c->alg->kind) {
	case K_AEAD:
		memcpy(nonce, c->nonce, c->nonce_size);
		nonce[0] ^= step;
		ret = aead_seal(s->aead, nonce, c->nonce_size, c->aad, AAD_SIZE,
				c->tag_size, msg, half, out);
		return ret < 0 ? ret : (int)(half + c->tag_size);
	case K_CBC:
		ret = gnutls_cipher_encrypt2(s->cbc, msg, half, out, half);
		return ret < 0 ? ret : (int)half;
	default:
		ret = mac_update(&s->mac, msg, half);
		if (ret < 0 || step == 0)
			return ret;
		mac_output(&s->mac, out);
		return (int)c->out_size;
	}
}

static int stream_run(const struct ctx *c, const unsigned char *msg,
		      unsigned char *out, size_t *len)
{
	struct stream s;
	int ret, step;

	*len = 0;
	ret = stream_open(&s, c);
	for (step = 0; step < 2 && ret >= 0; step++) {
		ret = stream_step(&s, step, msg, out + *len);
		if (ret > 0)
			*len += ret;
	}
	return ret < 0 ? ret : 0;
}

/* The child: the known answer on new handles and the *_fast functions. */
static void fork_child(const struct ctx *c, int fd)
{
	struct result r = { PASS, "" };
	ssize_t n;

	signal(SIGALRM, SIG_DFL);
	alarm(opt.timeout);
	close(STDIN_FILENO);
	kat_any(c, &r);
	n = write(fd, r.detail, strlen(r.detail));
	(void)n;
	close(fd);
	exit(r.out == PASS ? 0 : 1);
}

static enum outcome fork_wait(struct result *r, pid_t pid, int fd)
{
	char detail[sizeof(r->detail)];
	ssize_t n;
	int status;

	hang_child = pid;
	if (waitpid(pid, &status, 0) < 0)
		return fail(r, "waitpid failed");
	hang_child = 0;
	n = read(fd, detail, sizeof(detail) - 1);
	detail[n > 0 ? n : 0] = '\0';
	if (WIFSIGNALED(status))
		return fail(r, "child killed by signal %d%s", WTERMSIG(status),
			    WTERMSIG(status) == SIGALRM ? " (hung)" : "");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return fail(r, "child: %s", detail);
	return PASS;
}

static void fd_close(void *p)
{
	close((int)(intptr_t)p);
}

/*
 * The parent uses a handle, forks, waits for the child (which works on
 * new handles, with other keys for HMAC), then finishes on the old handle;
 * that must match an unforked run, and the known answer must still hold.
 */
static enum outcome run_fork(const struct ctx *c, const struct check *k,
			     struct result *r)
{
	unsigned char *msg = pattern(FORK_MSG, 18);
	unsigned char want[FORK_MSG + 2 * MAX_OUT], out[FORK_MSG + 2 * MAX_OUT];
	size_t want_len, len;
	struct stream s;
	int fds[2], ret;
	pid_t pid;

	(void)k;
	if (msg == NULL)
		return fail(r, "out of memory");
	ret = stream_run(c, msg, want, &want_len);
	if (ret < 0)
		return gnutls_fail(r, "unforked run", ret);
	ret = stream_open(&s, c);
	if (ret >= 0)
		ret = stream_step(&s, 0, msg, out);
	if (ret < 0)
		return gnutls_fail(r, "before fork", ret);
	len = ret;

	if (pipe(fds) < 0)
		return fail(r, "pipe failed");
	defer(fd_close, (void *)(intptr_t)fds[0]);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[1]);
		return fail(r, "fork failed");
	}
	if (pid == 0)
		fork_child(c, fds[1]);
	close(fds[1]);
	if (fork_wait(r, pid, fds[0]) != PASS)
		return FAIL;

	ret = stream_step(&s, 1, msg, out + len);
	if (ret < 0)
		return gnutls_fail(r, "parent after fork", ret);
	len += ret;
	if (len != want_len)
		return fail(r, "parent after fork: %zu bytes, want %zu", len,
			    want_len);
	if (compare(r, "parent's handle after fork", out, want, len) != PASS)
		return FAIL;
	if (kat_any(c, r) != PASS)
		return fail(r, "parent after fork: %s", r->detail);
	return PASS;
}

/* ---- the checks ---- */

#define LARGE(name, size, slow)                                 \
	{                                                       \
		"large-" name, K_AEAD, run_large, size, 0, slow \
	}
#define TAG(name, size)                                                      \
	{ "tag-flip-" name, K_AEAD, run_tag_flip, size, 0, 0 },              \
	{                                                                    \
		"tag-flip-" name "-clear", K_AEAD, run_tag_clear, size, 0, 0 \
	}

static const struct check checks[] = {
	{ "kat", K_ALL, run_kat, 0, 0, 0 },
	LARGE("64KiB", 64 * KIB, 0),
	LARGE("65537", 65537, 0),
	LARGE("200000", 200000, 0),
	LARGE("300000", 300000, 0),
	LARGE("1MiB", MIB, 0),
	LARGE("16MiB", 16 * MIB, 0),
	LARGE("64MiB", 64 * MIB, 1),
	TAG("16", 16),
	TAG("1000", 1000),
	TAG("70000", 70000),
	{ "empty", K_AEAD, run_aead_case, 0, 0, 0 },
	{ "empty", K_CBC, run_cbc_empty, 0, 0, 0 },
	{ "empty", K_MACS, run_mac_empty, 0, 0, 0 },
	{ "aad-only", K_AEAD, run_aead_case, AAD_SIZE, 0, 0 },
	{ "aad-only-70000", K_AEAD, run_aead_case, 70000, 0, 0 },
	{ "data-no-aad", K_AEAD, run_aead_case, 0, 1000, 0 },
	{ "misaligned", K_AEAD, run_misaligned_aead, 0, 0, 0 },
	{ "misaligned", K_CBC, run_misaligned_cbc, 0, 0, 0 },
	{ "misaligned", K_MACS, run_misaligned_mac, 0, 0, 0 },
	{ "in-place", K_AEAD, run_in_place_aead, 0, 0, 0 },
	{ "in-place", K_CBC, run_in_place_cbc, 0, 0, 0 },
	{ "key-size-invalid", K_CIPHERS, run_key_invalid, 0, 0, 0 },
	{ "key-size-other-aes", K_CIPHERS, run_key_other, 0, 0, 0 },
	{ "key-empty", K_HMAC, run_hmac_key, 0, 0, 0 },
	{ "key-1000", K_HMAC, run_hmac_key, 1000, 0, 0 },
	{ "cbc-chain", K_CBC, run_cbc_chain, 0, 0, 0 },
	{ "copy", K_MACS, run_copy, 0, 0, 0 },
	{ "fork", K_ALL, run_fork, 0, 0, 0 },
};

/* ---- the run ---- */

static char hang_msg[512];
static size_t hang_len;

/* A check that hangs ends the run: report it and the tally so far. */
static void on_alarm(int sig)
{
	ssize_t n;

	(void)sig;
	if (hang_child > 0)
		kill(hang_child, SIGKILL);
	n = write(STDOUT_FILENO, hang_msg, hang_len);
	(void)n;
	_exit(EXIT_FAIL);
}

static void arm(const char *alg, const char *check, const struct tally *t)
{
	int n;

	n = snprintf(hang_msg, sizeof(hang_msg),
		     "edge %s %s: FAIL (no result after %u s: hung)\n"
		     "edge: %u passed, %u failed, %u skipped (stopped)\n",
		     alg, check, opt.timeout, t->passed, t->failed + 1,
		     t->skipped);
	hang_len = n < 0 ? 0 : (size_t)n;
	if (hang_len >= sizeof(hang_msg))
		hang_len = sizeof(hang_msg) - 1;
	alarm(opt.timeout);
}

static const char *const outcome_names[] = { "PASS", "FAIL", "SKIP" };

static void report(const char *alg, const struct check *k,
		   const struct result *r, double secs, struct tally *t)
{
	printf("edge %s %s: %s", alg, k->name, outcome_names[r->out]);
	if (r->out != SKIP)
		printf(" (%.2f s)", secs);
	if (r->detail[0])
		printf(": %s", r->detail);
	printf("\n");
	if (r->out == PASS)
		t->passed++;
	else if (r->out == FAIL)
		t->failed++;
	else
		t->skipped++;
}

static void run_check(const struct ctx *c, const struct check *k,
		      struct tally *t)
{
	struct result r = { PASS, "" };
	double start;

	if (k->slow && opt.quick) {
		skip(&r, "--quick");
		report(c->alg->name, k, &r, 0, t);
		return;
	}
	if (k->run == run_large && opt.max_large > 0 && k->a > opt.max_large) {
		skip(&r, "larger than EDGE_MAX_LARGE");
		report(c->alg->name, k, &r, 0, t);
		return;
	}
	arm(c->alg->name, k->name, t);
	start = now();
	r.out = k->run(c, k, &r);
	alarm(0);
	release_all();
	report(c->alg->name, k, &r, now() - start, t);
}

static int unhex(const char *s, struct bytes *out)
{
	size_t len = strlen(s), i;
	unsigned v;

	if (len % 2 || len / 2 > sizeof(out->b))
		return -1;
	for (i = 0; i < len / 2; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out->b[i] = v;
	}
	out->n = len / 2;
	return 0;
}

static int load_kat(const struct alg_def *a, struct kat *k)
{
	return unhex(a->kat.key, &k->key) | unhex(a->kat.nonce, &k->nonce) |
	       unhex(a->kat.aad, &k->aad) | unhex(a->kat.msg, &k->msg) |
	       unhex(a->kat.out, &k->out);
}

/* Sizes of the algorithm, and whether this GnuTLS has it at all. */
static int ctx_init(struct ctx *c, const struct alg_def *a)
{
	memset(c, 0, sizeof(*c));
	c->alg = a;
	if (load_kat(a, &c->kat) < 0 ||
	    (a->empty && unhex(a->empty, &c->empty) < 0)) {
		printf("ERROR: bad known answer for %s in the table\n",
		       a->name);
		exit(EXIT_ERROR);
	}
	if (a->kind & K_CIPHERS) {
		c->key_size = gnutls_cipher_get_key_size(a->id);
		c->nonce_size = gnutls_cipher_get_iv_size(a->id);
		c->tag_size = gnutls_cipher_get_tag_size(a->id);
	} else {
		c->key_size = a->kind == K_HMAC ? 32 : 0;
		c->out_size = gnutls_hash_get_len(a->id);
	}
	if (c->key_size > MAX_KEY || c->nonce_size > MAX_NONCE ||
	    c->tag_size > MAX_OUT || c->out_size > MAX_OUT)
		return GNUTLS_E_INTERNAL_ERROR;
	fill_pattern(c->key, c->key_size, 1);
	fill_pattern(c->nonce, c->nonce_size, 2);
	fill_pattern(c->aad, sizeof(c->aad), 3);
	return 0;
}

static int supported(const struct ctx *c)
{
	gnutls_aead_cipher_hd_t a;
	gnutls_cipher_hd_t h;
	struct mac_hd m;
	int ret;

	if (c->alg->kind == K_AEAD)
		ret = aead_new(c, c->key, c->key_size, &a);
	else if (c->alg->kind == K_CBC)
		ret = cbc_new(c, c->key, c->key_size, c->nonce, &h);
	else
		ret = mac_new(c, c->key, c->key_size, &m);
	release_all();
	return ret;
}

static void run_alg(const struct alg_def *a, struct tally *t)
{
	struct ctx c;
	size_t i;
	int ret;

	ret = ctx_init(&c, a);
	if (ret == 0)
		ret = supported(&c);
	if (ret < 0) {
		printf("edge %s: SKIP: not supported by this GnuTLS: %s\n",
		       a->name, gnutls_strerror(ret));
		t->skipped++;
		return;
	}
	for (i = 0; i < ARRAY_SIZE(checks); i++)
		if (checks[i].kinds & a->kind)
			run_check(&c, &checks[i], t);
}

static void read_env(void)
{
	const char *s;

	opt.timeout = DEFAULT_TIMEOUT;
	s = getenv("EDGE_TIMEOUT");
	if (s != NULL && atoi(s) > 0)
		opt.timeout = atoi(s);
	s = getenv("EDGE_STRICT_CLEAR");
	opt.strict_clear = s != NULL && strcmp(s, "1") == 0;
	s = getenv("EDGE_STRICT_KEYSIZE");
	opt.strict_keysize = s != NULL && strcmp(s, "1") == 0;
	s = getenv("EDGE_ALLOW_NO_COPY");
	opt.allow_no_copy = s != NULL && strcmp(s, "1") == 0;
	s = getenv("EDGE_MAX_LARGE");
	opt.max_large = s != NULL ? strtoul(s, NULL, 10) : 0;
}

static int usage(const char *prog)
{
	size_t i;

	printf("ERROR: usage: %s [--quick] ALGORITHM|all; algorithms:", prog);
	for (i = 0; i < ARRAY_SIZE(algs); i++)
		printf(" %s", algs[i].name);
	printf("\n");
	return EXIT_ERROR;
}

int main(int argc, char **argv)
{
	struct tally t = { 0, 0, 0 };
	const char *want;
	size_t i, matched = 0;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "--quick") == 0)
		opt.quick = 1;
	else if (argc != 2)
		return usage(argv[0]);
	want = argv[argc - 1];
	read_env();
	signal(SIGALRM, on_alarm);

	ret = gnutls_global_init();
	if (ret < 0) {
		printf("SKIP: gnutls_global_init: %s\n", gnutls_strerror(ret));
		return EXIT_SKIP;
	}
	for (i = 0; i < ARRAY_SIZE(algs); i++) {
		if (strcmp(want, "all") != 0 && strcmp(want, algs[i].name) != 0)
			continue;
		matched++;
		run_alg(&algs[i], &t);
	}
	if (matched == 0)
		return usage(argv[0]);

	printf("edge: %u passed, %u failed, %u skipped\n", t.passed, t.failed,
	       t.skipped);
	gnutls_global_deinit();
	if (t.failed)
		return EXIT_FAIL;
	if (t.passed == 0) {
		printf("SKIP: no check could run\n");
		return EXIT_SKIP;
	}
	return EXIT_PASS;
}
