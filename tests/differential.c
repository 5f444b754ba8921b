/*
 * Differential test: random operations through the public GnuTLS API,
 * each compared byte for byte with Nettle called directly.
 *
 * For every algorithm, --ops operations with a random key, IV or nonce,
 * AAD and message.  Message sizes run from 0 to --max-size: a third
 * uniform in 0..64, a third within 2 bytes of a multiple of 16, 64, 4096
 * or 65536, a third uniform over the whole range.  CBC and XTS go through
 * gnutls_cipher_encrypt2()/decrypt2() in several calls (CBC chaining
 * across calls, gnutls_cipher_set_iv() in between); AEADs through the
 * one-shot and the iovec APIs, with a tampered ciphertext every 10th
 * operation; MACs and digests through init/update (random pieces)/output,
 * the _fast() call and a _copy() taken at a random point, original and
 * copy then fed different data.  Every 4th cipher or AEAD operation runs
 * in place, every 3rd on buffers 1..15 bytes off alignment.
 *
 * Each algorithm's random stream comes from the seed and its name, so
 * "differential --seed S --ops N NAME" replays a reported failure.
 *
 * Usage: differential [--ops N] [--seed S] [--max-size BYTES] ALGORITHM...
 *        (ALGORITHM: "all" or a name of the table below)
 * Environment: DIFF_ALLOW_NO_COPY=1 counts a NULL from gnutls_hash_copy()
 * or gnutls_hmac_copy() as skipped instead of as a failure.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include "reference.h"

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_SKIP 77
#define EXIT_ERROR 99

#define DEFAULT_OPS 10000
#define DEFAULT_MAX_SIZE 70000
#define MAX_MAX_SIZE ((1 << 24) - 1) /* CCM with a 12-byte nonce */
#define MAX_REPORTS 5

#define MAX_KEY REF_MAX_KEY
#define MAX_HMAC_KEY REF_MAX_HMAC_KEY
#define MAX_TAG 16
#define MAX_DIGEST 64
#define MAX_AAD 512
#define NONCE_SIZE 12
#define BLOCK 16
#define MAX_SEGS 6
#define MAX_IOV 8
#define CANARY_SIZE 16
#define CANARY_BYTE 0xa5
#define POOL_SLACK 4096 /* messages start at a random 16-byte offset */
#define BUF_SLACK 256 /* tag, misalignment, canary, XTS minimum */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))


struct opts {
	unsigned long ops;
	unsigned long long seed;
	size_t max_size;
	int allow_no_copy;
};

struct bufs {
	uint8_t *pool; /* random message, AAD and key material */
	size_t pool_size;
	uint8_t *in; /* misaligned input copies */
	uint8_t *out; /* GnuTLS output */
	uint8_t *back; /* GnuTLS decryption */
	uint8_t *ref; /* Nettle output */
	uint8_t *tmp; /* tampered ciphertext */
};

struct stats {
	unsigned long ops;
	unsigned long mismatches; /* operations with at least one */
	unsigned long reports;
	unsigned long in_place;
	unsigned long misaligned;
	unsigned long multi_call;
	unsigned long iv_resets;
	unsigned long tamper;
	unsigned long vectored;
	unsigned long copies;
	unsigned long copy_skipped;
	size_t min_size;
	size_t max_size;
};

/* The state of one algorithm's run and the sizes of the current operation. */
struct run {
	const struct ref_alg *a;
	const struct opts *o;
	struct bufs *b;
	struct rng rng;
	struct stats st;
	unsigned long op;
	int failed; /* the current operation */
	size_t len;
	size_t aad_len;
	size_t key_len;
};

/* A piece of a cipher operation: one gnutls_cipher_encrypt2() call. */
struct seg {
	size_t off;
	size_t len;
	int new_iv;
	uint8_t iv[BLOCK];
};

/* Where a cipher or AEAD operation reads and writes. */
struct io {
	uint8_t *in;
	uint8_t *out;
	uint8_t *back;
	int in_place;
};


/* ---- reporting --------------------------------------------------------- */

static void mismatch(struct run *r, const char *fmt, ...)
{
	va_list ap;

	r->failed = 1;
	if (++r->st.reports > MAX_REPORTS)
		return;
	printf("MISMATCH %s (seed %llu, op %lu, message %zu, aad %zu, key %zu): ",
	       r->a->name, r->o->seed, r->op, r->len, r->aad_len, r->key_len);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int compare(struct run *r, const char *what, const uint8_t *got,
		   const uint8_t *want, size_t len)
{
	size_t i;

	if (memcmp(got, want, len) == 0)
		return 0;
	for (i = 0; got[i] == want[i]; i++)
		;
	mismatch(r, "%s differs at byte %zu of %zu", what, i, len);
	return -1;
}

static int check_ret(struct run *r, const char *call, int ret)
{
	if (ret >= 0)
		return 0;
	mismatch(r, "%s: %s", call, gnutls_strerror(ret));
	return -1;
}

static void set_canary(uint8_t *end)
{
	memset(end, CANARY_BYTE, CANARY_SIZE);
}

static void check_canary(struct run *r, const char *call, const uint8_t *end)
{
	size_t i;

	for (i = 0; i < CANARY_SIZE; i++) {
		if (end[i] != CANARY_BYTE) {
			mismatch(r, "%s wrote past the end of its output",
				 call);
			return;
		}
	}
}

/* ---- operation set-up -------------------------------------------------- */

/* A message size: small, near a block boundary, or anywhere up to max. */
static size_t pick_size(struct rng *r, size_t max)
{
	static const size_t bases[] = { 16, 64, 4096, 65536 };
	size_t base, k, n;

	switch (rng_below(r, 3)) {
	case 0:
		n = rng_below(r, 65);
		break;
	case 1:
		base = bases[rng_below(r, ARRAY_SIZE(bases))];
		k = max / base ? 1 + rng_below(r, max / base) : 1;
		n = k * base + rng_below(r, 5) - 2;
		break;
	default:
		n = rng_below(r, max + 1);
	}
	return MIN(n, max);
}

/* Random data of any length up to the maximum, 16-byte aligned. */
static uint8_t *pick_data(struct run *r)
{
	return r->b->pool + BLOCK * rng_below(&r->rng, POOL_SLACK / BLOCK);
}

static void note_sizes(struct run *r, size_t len, size_t aad_len,
		       size_t key_len)
{
	r->len = len;
	r->aad_len = aad_len;
	r->key_len = key_len;
	if (len < r->st.min_size)
		r->st.min_size = len;
	if (len > r->st.max_size)
		r->st.max_size = len;
}

static size_t misalign(struct run *r)
{
	return 1 + rng_below(&r->rng, BLOCK - 1);
}

/*
 * In place every 4th operation, misaligned every 3rd; the message is
 * copied where GnuTLS must read it from.
 */
static void pick_io(struct run *r, const uint8_t *msg, size_t len,
		    struct io *io)
{
	int odd = r->op % 3 == 0;

	io->in_place = r->op % 4 == 0;
	r->st.in_place += io->in_place;
	r->st.misaligned += odd;
	io->out = r->b->out + (odd ? misalign(r) : 0);
	io->back = r->b->back + (odd ? misalign(r) : 0);
	if (io->in_place) {
		io->in = io->back = io->out;
		memcpy(io->in, msg, len);
	} else if (odd) {
		io->in = r->b->in + misalign(r);
		memcpy(io->in, msg, len);
	} else {
		io->in = (uint8_t *)msg;
	}
}

/* ---- CBC and XTS ------------------------------------------------------- */

/* The size of the next piece of what is left: often small, else any. */
static size_t pick_piece(struct run *r, size_t left, size_t small)
{
	if (rng_below(&r->rng, 2))
		return rng_below(&r->rng, MIN(left, small) + 1);
	return rng_below(&r->rng, left + 1);
}

/* CBC: 1..MAX_SEGS calls at block boundaries, maybe a new IV between. */
static int plan_cbc(struct run *r, size_t len, struct seg *s)
{
	size_t blocks = len / BLOCK, take, off = 0;
	int n = 1, reset = -1, i;

	if (rng_below(&r->rng, 3))
		n = 2 + rng_below(&r->rng, MAX_SEGS - 1);
	if (n > 1 && rng_below(&r->rng, 4) == 0)
		reset = 1 + rng_below(&r->rng, n - 1);
	for (i = 0; i < n; i++) {
		take = i == n - 1 ? blocks : pick_piece(r, blocks, 4);
		s[i].off = off;
		s[i].len = take * BLOCK;
		s[i].new_iv = i == reset;
		if (s[i].new_iv)
			rng_fill(&r->rng, s[i].iv, BLOCK);
		off += s[i].len;
		blocks -= take;
	}
	return n;
}

/* XTS: one call per data unit of >= 16 bytes, each with its own tweak. */
static int plan_xts(struct run *r, size_t len, struct seg *s)
{
	int n = rng_below(&r->rng, 4) ? 1 : 2 + rng_below(&r->rng, 2);
	size_t off = 0, room;
	int i;

	if ((size_t)n > len / BLOCK)
		n = len / BLOCK;
	for (i = 0; i < n; i++) {
		room = len - off - BLOCK * (n - 1 - i);
		s[i].off = off;
		s[i].len = i == n - 1 ?
				   room :
				   BLOCK + rng_below(&r->rng, room - BLOCK + 1);
		s[i].new_iv = i > 0;
		rng_fill(&r->rng, s[i].iv, BLOCK);
		off += s[i].len;
	}
	return n;
}

/* The same calls through Nettle; CBC chains across them, XTS does not. */
static void cipher_reference(struct run *r, const uint8_t *key,
			     const uint8_t *iv0, const struct seg *s, int n,
			     const uint8_t *msg)
{
	uint8_t iv[BLOCK];
	int i;

	memcpy(iv, iv0, BLOCK);
	for (i = 0; i < n; i++) {
		if (s[i].new_iv)
			memcpy(iv, s[i].iv, BLOCK);
		ref_cipher(r->a, key, iv, 1, s[i].len, r->b->ref + s[i].off,
			   msg + s[i].off);
	}
}

/* All segments through one handle; decryption restarts from iv0. */
static int cipher_pass(struct run *r, gnutls_cipher_hd_t h, uint8_t *iv0,
		       struct seg *s, int n, const uint8_t *src, uint8_t *dst,
		       int encrypt)
{
	int i, ret;

	if (!encrypt)
		gnutls_cipher_set_iv(h, iv0, BLOCK);
	for (i = 0; i < n; i++) {
		if (s[i].new_iv)
			gnutls_cipher_set_iv(h, s[i].iv, BLOCK);
		if (encrypt)
			ret = gnutls_cipher_encrypt2(h, src + s[i].off,
						     s[i].len, dst + s[i].off,
						     s[i].len);
		else
			ret = gnutls_cipher_decrypt2(h, src + s[i].off,
						     s[i].len, dst + s[i].off,
						     s[i].len);
		if (check_ret(r,
			      encrypt ? "gnutls_cipher_encrypt2" :
					"gnutls_cipher_decrypt2",
			      ret) < 0)
			return -1;
	}
	return 0;
}

static size_t cipher_size(struct run *r)
{
	size_t n = pick_size(&r->rng, r->o->max_size);

	if (r->a->family == F_CBC)
		return n & ~(size_t)(BLOCK - 1);
	return n < BLOCK ? BLOCK : n;
}

static void cipher_op(struct run *r)
{
	const struct ref_alg *a = r->a;
	uint8_t key[MAX_KEY], iv[BLOCK];
	gnutls_datum_t kd = { key, a->key_size }, ivd = { iv, BLOCK };
	size_t len = cipher_size(r);
	const uint8_t *msg = pick_data(r);
	struct seg s[MAX_SEGS];
	gnutls_cipher_hd_t h;
	struct io io;
	int n, i;

	rng_fill(&r->rng, key, a->key_size);
	rng_fill(&r->rng, iv, BLOCK);
	if (a->family == F_XTS &&
	    !memcmp(key, key + a->key_size / 2, a->key_size / 2))
		key[0] ^= 1; /* XTS refuses equal halves */
	note_sizes(r, len, 0, a->key_size);
	n = a->family == F_CBC ? plan_cbc(r, len, s) : plan_xts(r, len, s);
	r->st.multi_call += n > 1;
	for (i = 0; i < n; i++)
		r->st.iv_resets += s[i].new_iv;
	cipher_reference(r, key, iv, s, n, msg);

	if (check_ret(r, "gnutls_cipher_init",
		      gnutls_cipher_init(&h, a->id, &kd, &ivd)) < 0)
		return;
	pick_io(r, msg, len, &io);
	set_canary(io.out + len);
	if (cipher_pass(r, h, iv, s, n, io.in, io.out, 1) == 0 &&
	    compare(r, "ciphertext", io.out, r->b->ref, len) == 0) {
		set_canary(io.back + len);
		if (cipher_pass(r, h, iv, s, n, io.out, io.back, 0) == 0)
			compare(r, "decryption", io.back, msg, len);
		check_canary(r, "gnutls_cipher_decrypt2", io.back + len);
	}
	check_canary(r, "gnutls_cipher_encrypt2", io.out + len);
	gnutls_cipher_deinit(h);
}

/* ---- AEAD -------------------------------------------------------------- */

struct aead_job {
	gnutls_aead_cipher_hd_t h;
	uint8_t nonce[NONCE_SIZE];
	uint8_t *aad;
	uint8_t *msg;
};

/* 1..MAX_IOV pieces, some of them empty or tiny. */
static int split_iov(struct run *r, giovec_t *iov, uint8_t *p, size_t len)
{
	int n = rng_below(&r->rng, 4) ? 1 + rng_below(&r->rng, MAX_IOV) : 1;
	size_t take;
	int i;

	for (i = 0; i < n; i++) {
		take = i == n - 1 ? len : pick_piece(r, len, 33);
		iov[i].iov_base = p;
		iov[i].iov_len = take;
		p += take;
		len -= take;
	}
	return n;
}

/* In place, the tag follows the plaintext: no canary there. */
static void aead_decrypt_check(struct run *r, struct aead_job *j,
			       const uint8_t *ct, uint8_t *pt)
{
	size_t t = r->a->tag_size, pt_len = r->len;
	int ret;

	if (pt != ct)
		set_canary(pt + r->len);
	ret = gnutls_aead_cipher_decrypt(j->h, j->nonce, NONCE_SIZE, j->aad,
					 r->aad_len, t, ct, r->len + t, pt,
					 &pt_len);
	if (check_ret(r, "gnutls_aead_cipher_decrypt", ret) < 0)
		return;
	if (pt_len != r->len)
		mismatch(r, "decryption gave %zu bytes", pt_len);
	else
		compare(r, "decryption", pt, j->msg, r->len);
	if (pt != ct)
		check_canary(r, "gnutls_aead_cipher_decrypt", pt + r->len);
}

static void aead_oneshot(struct run *r, struct aead_job *j)
{
	size_t t = r->a->tag_size, ct_len = r->len + t;
	struct io io;
	int ret;

	pick_io(r, j->msg, r->len, &io);
	set_canary(io.out + ct_len);
	ret = gnutls_aead_cipher_encrypt(j->h, j->nonce, NONCE_SIZE, j->aad,
					 r->aad_len, t, io.in, r->len, io.out,
					 &ct_len);
	if (check_ret(r, "gnutls_aead_cipher_encrypt", ret) < 0)
		return;
	check_canary(r, "gnutls_aead_cipher_encrypt", io.out + r->len + t);
	if (ct_len != r->len + t)
		mismatch(r, "encryption gave %zu bytes", ct_len);
	else if (compare(r, "ciphertext", io.out, r->b->ref, ct_len) == 0)
		aead_decrypt_check(r, j, io.out, io.back);
}

/* gnutls_aead_cipher_encryptv(): iovec input, contiguous output. */
static void aead_encryptv(struct run *r, struct aead_job *j)
{
	size_t t = r->a->tag_size, ct_len = r->len + t;
	giovec_t aiov[MAX_IOV], iov[MAX_IOV];
	struct io io;
	int an, n, ret;

	pick_io(r, j->msg, r->len, &io); /* never in place here */
	an = split_iov(r, aiov, j->aad, r->aad_len);
	n = split_iov(r, iov, io.in, r->len);
	set_canary(io.out + ct_len);
	ret = gnutls_aead_cipher_encryptv(j->h, j->nonce, NONCE_SIZE, aiov, an,
					  t, iov, n, io.out, &ct_len);
	if (check_ret(r, "gnutls_aead_cipher_encryptv", ret) < 0)
		return;
	check_canary(r, "gnutls_aead_cipher_encryptv", io.out + r->len + t);
	if (ct_len != r->len + t)
		mismatch(r, "encryptv gave %zu bytes", ct_len);
	else if (compare(r, "encryptv ciphertext", io.out, r->b->ref, ct_len) ==
		 0)
		aead_decrypt_check(r, j, io.out, io.back);
}

/* gnutls_aead_cipher_encryptv2()/decryptv2(): in place over iovecs. */
static void aead_encryptv2(struct run *r, struct aead_job *j)
{
	size_t t = r->a->tag_size, tag_len = t;
	giovec_t aiov[MAX_IOV], iov[MAX_IOV];
	uint8_t tag[MAX_TAG + CANARY_SIZE];
	struct io io;
	uint8_t *buf;
	int an, n, ret;

	pick_io(r, j->msg, r->len, &io);
	buf = io.out;
	memcpy(buf, j->msg, r->len);
	an = split_iov(r, aiov, j->aad, r->aad_len);
	n = split_iov(r, iov, buf, r->len);
	set_canary(buf + r->len);
	set_canary(tag + t);
	ret = gnutls_aead_cipher_encryptv2(j->h, j->nonce, NONCE_SIZE, aiov, an,
					   iov, n, tag, &tag_len);
	if (check_ret(r, "gnutls_aead_cipher_encryptv2", ret) < 0)
		return;
	check_canary(r, "gnutls_aead_cipher_encryptv2", buf + r->len);
	check_canary(r, "gnutls_aead_cipher_encryptv2 (tag)", tag + t);
	if (tag_len != t) {
		mismatch(r, "encryptv2 gave a %zu-byte tag", tag_len);
		return;
	}
	if (compare(r, "encryptv2 ciphertext", buf, r->b->ref, r->len) ||
	    compare(r, "encryptv2 tag", tag, r->b->ref + r->len, t))
		return;

	an = split_iov(r, aiov, j->aad, r->aad_len);
	n = split_iov(r, iov, buf, r->len);
	ret = gnutls_aead_cipher_decryptv2(j->h, j->nonce, NONCE_SIZE, aiov, an,
					   iov, n, tag, t);
	if (check_ret(r, "gnutls_aead_cipher_decryptv2", ret) == 0)
		compare(r, "decryptv2", buf, j->msg, r->len);
	check_canary(r, "gnutls_aead_cipher_decryptv2", buf + r->len);
}

/* One flipped bit anywhere in ciphertext || tag must fail the tag check. */
static void aead_tamper(struct run *r, struct aead_job *j)
{
	size_t t = r->a->tag_size, ct_len = r->len + t, pt_len = r->len;
	size_t bit = rng_below(&r->rng, ct_len * 8);
	int ret;

	r->st.tamper++;
	memcpy(r->b->tmp, r->b->ref, ct_len);
	r->b->tmp[bit / 8] ^= 1 << (bit % 8);
	ret = gnutls_aead_cipher_decrypt(j->h, j->nonce, NONCE_SIZE, j->aad,
					 r->aad_len, t, r->b->tmp, ct_len,
					 r->b->back, &pt_len);
	if (ret != GNUTLS_E_DECRYPTION_FAILED)
		mismatch(r, "tampered ciphertext (bit %zu): %s", bit,
			 ret == 0 ? "accepted" : gnutls_strerror(ret));
}

static void aead_op(struct run *r)
{
	const struct ref_alg *a = r->a;
	uint8_t key[MAX_KEY];
	gnutls_datum_t kd = { key, a->key_size };
	struct aead_job j;
	size_t aad_len, len;

	rng_fill(&r->rng, key, a->key_size);
	rng_fill(&r->rng, j.nonce, NONCE_SIZE);
	aad_len = rng_below(&r->rng, 4) ? rng_below(&r->rng, MAX_AAD + 1) : 0;
	len = pick_size(&r->rng, r->o->max_size);
	if (aad_len && rng_below(&r->rng, 8) == 0)
		len = 0; /* authenticated data only */
	j.aad = pick_data(r);
	j.msg = pick_data(r);
	note_sizes(r, len, aad_len, a->key_size);
	ref_aead(a, key, j.nonce, NONCE_SIZE, j.aad, aad_len, j.msg, len, r->b->ref);

	if (check_ret(r, "gnutls_aead_cipher_init",
		      gnutls_aead_cipher_init(&j.h, a->id, &kd)) < 0)
		return;
	if (r->op % 4 == 0) {
		aead_oneshot(r, &j); /* in place */
	} else {
		switch (rng_below(&r->rng, 4)) {
		case 0:
			r->st.vectored++;
			aead_encryptv(r, &j);
			break;
		case 1:
			r->st.vectored++;
			aead_encryptv2(r, &j);
			break;
		default:
			aead_oneshot(r, &j);
		}
	}
	if (r->op % 10 == 0)
		aead_tamper(r, &j);
	gnutls_aead_cipher_deinit(j.h);
}

/* ---- MAC and digest ---------------------------------------------------- */

union stream_hd {
	gnutls_hash_hd_t hash;
	gnutls_hmac_hd_t hmac;
};

static int is_hash(const struct ref_alg *a)
{
	return a->family == F_HASH;
}

static int gs_init(const struct ref_alg *a, union stream_hd *h, const uint8_t *key,
		   size_t key_len)
{
	if (is_hash(a))
		return gnutls_hash_init(&h->hash, a->id);
	return gnutls_hmac_init(&h->hmac, a->id, key, key_len);
}

static int gs_update(const struct ref_alg *a, union stream_hd *h,
		     const uint8_t *data, size_t len)
{
	if (is_hash(a))
		return gnutls_hash(h->hash, data, len);
	return gnutls_hmac(h->hmac, data, len);
}

static void gs_output(const struct ref_alg *a, union stream_hd *h, uint8_t *out)
{
	if (is_hash(a))
		gnutls_hash_output(h->hash, out);
	else
		gnutls_hmac_output(h->hmac, out);
}

static int gs_copy(const struct ref_alg *a, union stream_hd *h,
		   union stream_hd *copy)
{
	if (is_hash(a))
		return (copy->hash = gnutls_hash_copy(h->hash)) != NULL;
	return (copy->hmac = gnutls_hmac_copy(h->hmac)) != NULL;
}

static void gs_deinit(const struct ref_alg *a, union stream_hd *h)
{
	if (is_hash(a))
		gnutls_hash_deinit(h->hash, NULL);
	else
		gnutls_hmac_deinit(h->hmac, NULL);
}

static int gs_fast(const struct ref_alg *a, const uint8_t *key, size_t key_len,
		   const uint8_t *data, size_t len, uint8_t *out)
{
	if (is_hash(a))
		return gnutls_hash_fast(a->id, data, len, out);
	return gnutls_hmac_fast(a->id, key, key_len, data, len, out);
}

/* Feeds data in 1..4 pieces, often small ones, sometimes empty. */
static int feed(struct run *r, union stream_hd *h, const uint8_t *p, size_t len)
{
	int n = 1 + rng_below(&r->rng, 4), i, ret;
	size_t take;

	for (i = 0; i < n; i++) {
		take = i == n - 1 ? len : pick_piece(r, len, 200);
		ret = gs_update(r->a, h, p, take);
		if (check_ret(r, is_hash(r->a) ? "gnutls_hash" : "gnutls_hmac",
			      ret) < 0)
			return -1;
		p += take;
		len -= take;
	}
	return 0;
}

static int check_output(struct run *r, const char *what, union stream_hd *h,
			const uint8_t *want)
{
	uint8_t got[MAX_DIGEST + CANARY_SIZE];
	size_t size = ref_digest_size(r->a);

	set_canary(got + size);
	gs_output(r->a, h, got);
	check_canary(r, what, got + size);
	return compare(r, what, got, want, size);
}

/* The copy continues with other data than the original. */
static void check_copy(struct run *r, union stream_hd *copy,
		       struct ref_stream *ref, const uint8_t *alt,
		       size_t alt_len)
{
	uint8_t want[MAX_DIGEST];

	r->st.copies++;
	ref_update(ref, alt, alt_len);
	ref_digest(ref, want);
	if (feed(r, copy, alt, alt_len) == 0)
		check_output(r, "output of the copy", copy, want);
	gs_deinit(r->a, copy);
}

static void no_copy(struct run *r)
{
	if (r->o->allow_no_copy)
		r->st.copy_skipped++;
	else
		mismatch(r, "copy unsupported");
}

static size_t stream_key_len(struct run *r)
{
	if (r->a->family == F_HMAC)
		return rng_below(&r->rng, MAX_HMAC_KEY + 1);
	return r->a->key_size;
}

static void stream_op(struct run *r)
{
	const struct ref_alg *a = r->a;
	uint8_t key[MAX_HMAC_KEY], want[MAX_DIGEST];
	uint8_t got[MAX_DIGEST + CANARY_SIZE];
	size_t key_len = stream_key_len(r), size = ref_digest_size(a);
	size_t len = pick_size(&r->rng, r->o->max_size);
	size_t split = rng_below(&r->rng, len + 1);
	size_t alt_len = rng_below(&r->rng, MIN(len, 4096) + 1);
	const uint8_t *msg = pick_data(r), *alt = pick_data(r);
	struct ref_stream ref, ref_copy;
	union stream_hd h, copy;
	int have_copy;

	rng_fill(&r->rng, key, key_len);
	note_sizes(r, len, 0, key_len);
	ref_init(&ref, a, key, key_len);
	ref_update(&ref, msg, split);
	ref_copy = ref;
	ref_update(&ref, msg + split, len - split);
	ref_digest(&ref, want);

	set_canary(got + size);
	if (check_ret(r, is_hash(a) ? "gnutls_hash_fast" : "gnutls_hmac_fast",
		      gs_fast(a, key, key_len, msg, len, got)) == 0)
		compare(r, "_fast() output", got, want, size);
	check_canary(r, "_fast()", got + size);

	if (check_ret(r, is_hash(a) ? "gnutls_hash_init" : "gnutls_hmac_init",
		      gs_init(a, &h, key, key_len)) < 0)
		return;
	if (feed(r, &h, msg, split) == 0) {
		have_copy = gs_copy(a, &h, &copy);
		if (feed(r, &h, msg + split, len - split) == 0)
			check_output(r, "output", &h, want);
		if (have_copy)
			check_copy(r, &copy, &ref_copy, alt, alt_len);
		else
			no_copy(r);
	}
	gs_deinit(a, &h);
}

/* ---- driver ------------------------------------------------------------ */

static int probe(const struct ref_alg *a)
{
	uint8_t key[MAX_KEY], iv[BLOCK] = { 0 };
	gnutls_datum_t kd = { key, a->key_size }, ivd = { iv, BLOCK };
	gnutls_cipher_hd_t c;
	gnutls_aead_cipher_hd_t aead;
	union stream_hd h;
	size_t i;

	for (i = 0; i < sizeof(key); i++)
		key[i] = i + 1;
	switch (a->family) {
	case F_CBC:
	case F_XTS:
		if (gnutls_cipher_init(&c, a->id, &kd, &ivd) < 0)
			return 0;
		gnutls_cipher_deinit(c);
		return 1;
	case F_AEAD:
		if (gnutls_aead_cipher_init(&aead, a->id, &kd) < 0)
			return 0;
		gnutls_aead_cipher_deinit(aead);
		return 1;
	default:
		if (gs_init(a, &h, key, a->key_size) < 0)
			return 0;
		gs_deinit(a, &h);
		return 1;
	}
}

static void print_summary(const struct run *r)
{
	const struct stats *s = &r->st;

	printf("differential %s: %lu operations, %lu mismatches (seed %llu, sizes %zu..%zu",
	       r->a->name, s->ops, s->mismatches, r->o->seed,
	       s->ops ? s->min_size : 0, s->max_size);
	switch (r->a->family) {
	case F_CBC:
	case F_XTS:
		printf(", %lu in-place, %lu misaligned, %lu multi-call, %lu IV changes",
		       s->in_place, s->misaligned, s->multi_call, s->iv_resets);
		break;
	case F_AEAD:
		printf(", aad 0..%d, %lu tamper checks, %lu in-place, %lu misaligned, %lu iovec",
		       MAX_AAD, s->tamper, s->in_place, s->misaligned,
		       s->vectored);
		break;
	default:
		if (r->a->family == F_HMAC)
			printf(", keys 0..%d", MAX_HMAC_KEY);
		printf(", %lu copies", s->copies);
		if (s->copy_skipped)
			printf(", %lu copies skipped", s->copy_skipped);
	}
	printf(")\n");
}

/* Returns the mismatches, or -1 if GnuTLS lacks the algorithm. */
static long run_alg(const struct ref_alg *a, const struct opts *o, struct bufs *b)
{
	struct run r = { .a = a, .o = o, .b = b };

	if (!probe(a)) {
		printf("SKIP: %s not supported\n", a->name);
		return -1;
	}
	rng_seed(&r.rng, o->seed, a->name);
	rng_fill(&r.rng, b->pool, b->pool_size);
	r.st.min_size = (size_t)-1;
	for (r.op = 0; r.op < o->ops; r.op++) {
		if (a->family == F_CBC || a->family == F_XTS)
			cipher_op(&r);
		else if (a->family == F_AEAD)
			aead_op(&r);
		else
			stream_op(&r);
		r.st.ops++;
		r.st.mismatches += r.failed;
		r.failed = 0;
	}
	print_summary(&r);
	fflush(stdout);
	return (long)r.st.mismatches;
}

static uint8_t *alloc_buf(size_t size)
{
	uint8_t *p = aligned_alloc(64, (size + 63) & ~(size_t)63);

	if (!p) {
		fprintf(stderr, "differential: out of memory\n");
		exit(EXIT_ERROR);
	}
	return p;
}

static void alloc_bufs(struct bufs *b, size_t max_size)
{
	size_t size = max_size + BUF_SLACK;

	b->pool_size = size + POOL_SLACK + MAX_AAD;
	b->pool = alloc_buf(b->pool_size);
	b->in = alloc_buf(size);
	b->out = alloc_buf(size);
	b->back = alloc_buf(size);
	b->ref = alloc_buf(size);
	b->tmp = alloc_buf(size);
}

static void free_bufs(struct bufs *b)
{
	free(b->pool);
	free(b->in);
	free(b->out);
	free(b->back);
	free(b->ref);
	free(b->tmp);
}

static void usage(void)
{
	size_t i;

	fprintf(stderr,
		"usage: differential [--ops N] [--seed S] [--max-size BYTES] ALGORITHM...\n"
		"ALGORITHM: all");
	for (i = 0; i < ref_algs_size; i++)
		fprintf(stderr, " %s", ref_algs[i].name);
	fprintf(stderr, "\n");
	exit(EXIT_ERROR);
}

static unsigned long long parse_number(const char *arg, unsigned long long max)
{
	unsigned long long v;
	char *end;

	if (!arg || *arg < '0' || *arg > '9')
		usage();
	v = strtoull(arg, &end, 0);
	if (*end || v > max)
		usage();
	return v;
}

static unsigned long long default_seed(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* Parses the options; returns the index of the first algorithm. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	const char *env = getenv("DIFF_ALLOW_NO_COPY");
	int i;

	o->ops = DEFAULT_OPS;
	o->seed = default_seed();
	o->max_size = DEFAULT_MAX_SIZE;
	o->allow_no_copy = env && strcmp(env, "1") == 0;
	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--ops") == 0)
			o->ops = parse_number(argv[++i], 1UL << 31);
		else if (strcmp(argv[i], "--seed") == 0)
			o->seed = parse_number(argv[++i], ~0ULL);
		else if (strcmp(argv[i], "--max-size") == 0)
			o->max_size = parse_number(argv[++i], MAX_MAX_SIZE);
		else
			usage();
	}
	if (i == argc)
		usage();
	return i;
}

static const struct ref_alg *find_alg(const char *name)
{
	const struct ref_alg *a = ref_find(name);

	if (a != NULL)
		return a;
	fprintf(stderr, "differential: unknown algorithm %s\n", name);
	usage();
	return NULL;
}

struct totals {
	unsigned long algs;
	unsigned long skipped;
	unsigned long long ops;
	unsigned long long mismatches;
};

static void run_one(const struct ref_alg *a, const struct opts *o, struct bufs *b,
		    struct totals *t)
{
	long m = run_alg(a, o, b);

	if (m < 0) {
		t->skipped++;
		return;
	}
	t->algs++;
	t->ops += o->ops;
	t->mismatches += m;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct bufs b;
	struct totals t = { 0 };
	size_t i;
	int first = parse_args(argc, argv, &o), arg;

	for (arg = first; arg < argc; arg++)
		if (strcasecmp(argv[arg], "all") != 0)
			find_alg(argv[arg]);
	if (ref_check() < 0)
		return EXIT_ERROR;
	alloc_bufs(&b, o.max_size);
	printf("differential: seed %llu, %lu operations per algorithm, sizes 0..%zu\n",
	       o.seed, o.ops, o.max_size);
	for (arg = first; arg < argc; arg++) {
		if (strcasecmp(argv[arg], "all") == 0)
			for (i = 0; i < ref_algs_size; i++)
				run_one(&ref_algs[i], &o, &b, &t);
		else
			run_one(find_alg(argv[arg]), &o, &b, &t);
	}
	free_bufs(&b);

	printf("differential: %lu algorithms, %llu operations, %llu mismatches",
	       t.algs, t.ops, t.mismatches);
	if (t.skipped)
		printf(", %lu skipped", t.skipped);
	printf("\n");
	if (t.mismatches)
		return EXIT_FAIL;
	return t.algs ? EXIT_PASS : EXIT_SKIP;
}
