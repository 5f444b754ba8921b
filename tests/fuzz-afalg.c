/*
 * libFuzzer target: the input is a small program run through the public
 * GnuTLS API on one algorithm of the module, every result compared byte
 * for byte with Nettle (tests/reference.h), with kernel faults injected
 * by the test's own seam over the C library's calls (seam.h).  A mismatch, a wrong error code, a
 * refused valid message or an accepted forged one aborts (libFuzzer then
 * keeps the input as crash-*); so do the sanitizers' reports.
 *
 * The program: one byte picks the algorithm (reference.h's table), eight
 * seed the data (keys, IVs, nonces, messages: generated, not read from
 * the input), then operations until the input ends, each an opcode byte
 * and its operands:
 *
 *   every family   fault CALL ERRNO SKIP COUNT   (seam_fault())
 *                  clear                         (seam_fault(NULL))
 *   CBC, XTS       encrypt or decrypt SIZE PIECES SPLITS... FLAGS
 *                  set-iv, new context (a new key)
 *   AEAD           seal and open NONCE AAD SIZE TAG FLAGS (in place,
 *                  misaligned, tampered), set-key (re-key the handle),
 *                  set-key with a refused size, new handle
 *   MAC, digest    update SIZE PIECES SPLITS..., output, copy, swap with
 *                  the copy, _fast() SIZE, new context (HMAC: new key)
 *
 * Sizes are small (mostly below 4 KiB, a few around the kernel's 64 KiB
 * request limit, the most a hash message the module holds for the
 * kernel) so that a run is quick under emulation.  No fault may lose a
 * message, nor put the library into its error state.
 *
 * Environment: FUZZ_MODULE=1 says that the module is in front of every
 * algorithm (GNUTLS_AFALG=kernel on a kernel with AF_ALG).  Then a failed
 * AEAD decryption must leave zeros in the output (the module clears it;
 * GnuTLS alone does not), and GCM handles are re-keyed too: GnuTLS
 * 3.7.9's own x86 AES-GCM re-keys wrongly (aes_gcm_cipher_setkey()
 * derives the GHASH key by encrypting the old one in place instead of a
 * zero block), which the module avoids by keying a new software context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include "reference.h"
#include "seam.h"

#define BLOCK 16
#define MAX_OPS 48 /* per input */
#define MAX_AAD 600
#define HASH_MAX (3 * 64 * 1024) /* past the 64 KiB the module holds */


static int module_in_front;

/* ---- reading the program ----------------------------------------------- */

struct prog {
	const uint8_t *p;
	size_t n;
};

static unsigned u8(struct prog *g)
{
	if (g->n == 0)
		return 0;
	g->n--;
	return *g->p++;
}

static unsigned u16(struct prog *g)
{
	unsigned v = u8(g);

	return v | u8(g) << 8;
}

/* Mostly small, sometimes up to 20000, sometimes around 64 KiB. */
static size_t size(struct prog *g)
{
	unsigned v = u16(g);

	if (v < 0x8000)
		return v % 257;
	if (v < 0xc000)
		return v % 4097;
	if (v < 0xff00)
		return v % 20001;
	return 65536 - 128 + (v & 0xff);
}

/* ---- the state of one input -------------------------------------------- */

struct fz {
	const struct ref_alg *a;
	struct rng rng;
	unsigned op;
	const char *what; /* the current operation, for reports */
	uint8_t key[REF_MAX_HMAC_KEY];
	size_t key_len;

	/* CBC, XTS: one handle; GnuTLS chains each direction separately */
	gnutls_cipher_hd_t ch;
	uint8_t iv[2][BLOCK]; /* encryption, decryption */

	gnutls_aead_cipher_hd_t ah;

	/* MAC, digest: a message and maybe a copy of one */
	struct msg {
		int live;
		void *h; /* gnutls_hash_hd_t or gnutls_hmac_hd_t */
		struct ref_stream ref;
		size_t len;
	} m[2];
};

static struct fz fz;

static void failure(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr,
		"fuzz-afalg: %s, operation %u (%s): ", fz.a ? fz.a->name : "?",
		fz.op, fz.what ? fz.what : "setup");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static void must(int ret, const char *call)
{
	if (ret < 0)
		failure("%s: %s", call, gnutls_strerror(ret));
}

static void same(const void *got, const void *want, size_t len,
		 const char *what)
{
	const uint8_t *x = got, *y = want;
	size_t i;

	if (len == 0 || memcmp(x, y, len) == 0)
		return;
	for (i = 0; x[i] == y[i]; i++)
		;
	failure("%s differs from Nettle at byte %zu of %zu", what, i, len);
}

static uint8_t *random_bytes(size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	if (p == NULL)
		failure("out of memory");
	rng_fill(&fz.rng, p, len);
	return p;
}

/* ---- faults ------------------------------------------------------------ */

static void op_fault(struct prog *g)
{
	static const char *const calls[] = { "socket", "bind",	 "accept",
					     "setkey", "setopt", "send",
					     "recv" };
	static const char *const errs[] = { "ENOMEM", "EINVAL",	 "EBUSY",
					    "EAGAIN", "EINTR",	 "EMFILE",
					    "EPERM",  "EBADMSG", "SHORT" };
	char spec[64];
	unsigned c = u8(g) % 7, e = u8(g) % 9, skip = u8(g) % 16;
	unsigned count = u8(g) % 4;

	fz.what = "fault";
	snprintf(spec, sizeof(spec), "%s:%s:%u:%u", calls[c], errs[e], skip,
		 count);
	if (seam_fault(spec) < 0)
		failure("the seam refused the fault %s", spec);
}

static void op_clear(void)
{
	fz.what = "clear";
	seam_fault(NULL);
}

/* ---- CBC and XTS ------------------------------------------------------- */

static void cipher_new(void)
{
	gnutls_datum_t k, v;

	if (fz.ch != NULL)
		gnutls_cipher_deinit(fz.ch);
	fz.key_len = fz.a->key_size;
	rng_fill(&fz.rng, fz.key, fz.key_len);
	rng_fill(&fz.rng, fz.iv[0], BLOCK);
	memcpy(fz.iv[1], fz.iv[0], BLOCK);
	k = (gnutls_datum_t){ fz.key, fz.key_len };
	v = (gnutls_datum_t){ fz.iv[0], BLOCK };
	must(gnutls_cipher_init(&fz.ch, fz.a->id, &k, &v),
	     "gnutls_cipher_init");
}

static void op_set_iv(void)
{
	fz.what = "set-iv";
	rng_fill(&fz.rng, fz.iv[0], BLOCK);
	memcpy(fz.iv[1], fz.iv[0], BLOCK);
	gnutls_cipher_set_iv(fz.ch, fz.iv[0], BLOCK);
}

/* CBC: whole blocks in 1..4 calls; XTS: one data unit of >= 16 bytes
 * (each call is one, with the current tweak).  FLAGS: bit 0 in place,
 * bits 1-4 misalignment. */
static void op_crypt(struct prog *g, int enc)
{
	int xts = fz.a->family == F_XTS;
	size_t len = size(g), off, cut[5], i, n;
	unsigned pieces = 1 + u8(g) % 4, flags, mis;
	uint8_t *src, *want, *buf, *in, *out;
	int ret;

	fz.what = enc ? "encrypt" : "decrypt";
	if (xts) {
		pieces = 1;
		len = len < BLOCK ? BLOCK : len;
	} else {
		len -= len % BLOCK;
	}
	cut[0] = 0;
	for (i = 1; i < pieces; i++)
		cut[i] = cut[i - 1] +
			 BLOCK * (u8(g) % ((len - cut[i - 1]) / BLOCK + 1));
	cut[pieces] = len;
	flags = u8(g);
	mis = (flags >> 1) & 15;

	src = random_bytes(len);
	want = malloc(len ? len : 1);
	buf = malloc(2 * len + 2 * mis + 1);
	if (want == NULL || buf == NULL)
		failure("out of memory");
	ref_cipher(fz.a, fz.key, fz.iv[!enc], enc, len, want, src);

	in = buf + mis;
	out = flags & 1 ? in : buf + len + 2 * mis;
	memcpy(in, src, len);
	for (i = 0; i < pieces; i++) {
		off = cut[i];
		n = cut[i + 1] - off;
		ret = enc ? gnutls_cipher_encrypt2(fz.ch, in + off, n,
						   out + off, n) :
			    gnutls_cipher_decrypt2(fz.ch, in + off, n,
						   out + off, n);
		must(ret,
		     enc ? "gnutls_cipher_encrypt2" : "gnutls_cipher_decrypt2");
	}
	same(out, want, len, enc ? "ciphertext" : "plaintext");
	free(src);
	free(want);
	free(buf);
}

/* ---- AEAD -------------------------------------------------------------- */

static void aead_new(void)
{
	gnutls_datum_t k;

	if (fz.ah != NULL)
		gnutls_aead_cipher_deinit(fz.ah);
	fz.key_len = fz.a->key_size;
	rng_fill(&fz.rng, fz.key, fz.key_len);
	k = (gnutls_datum_t){ fz.key, fz.key_len };
	must(gnutls_aead_cipher_init(&fz.ah, fz.a->id, &k),
	     "gnutls_aead_cipher_init");
}

static void op_set_key(void)
{
	gnutls_datum_t k;

	fz.what = "set-key";
	if (!module_in_front && strstr(fz.a->name, "-GCM") != NULL)
		return; /* see FUZZ_MODULE above */
	rng_fill(&fz.rng, fz.key, fz.key_len);
	k = (gnutls_datum_t){ fz.key, fz.key_len };
	must(gnutls_aead_cipher_set_key(fz.ah, &k),
	     "gnutls_aead_cipher_set_key");
}

/* A key no AES or ChaCha20 takes is refused and changes nothing.  Not
 * for CCM: GnuTLS's x86 AES-CCM (its software path here) ignores the
 * error of its key schedule and takes a key of any size. */
static void op_bad_key(struct prog *g)
{
	static const size_t sizes[] = { 0, 1, 15, 17, 31, 33 };
	uint8_t key[40];
	gnutls_datum_t k = { key, sizes[u8(g) % 6] };

	fz.what = "set-key refused";
	if (fz.a->ccm)
		return;
	rng_fill(&fz.rng, key, sizeof(key));
	if (gnutls_aead_cipher_set_key(fz.ah, &k) >= 0)
		failure("a %u-byte key was taken", k.size);
}

/* The tag size a call asks for: 0 (the algorithm's) or a shorter one
 * (CCM: even, 4 or more, as CCM defines them). */
static size_t tag_size(unsigned t)
{
	size_t full = fz.a->tag_size;

	if (!(t & 0x80))
		return 0;
	if (fz.a->ccm)
		return 4 + 2 * (t % ((full - 4) / 2 + 1));
	return 1 + t % full;
}

/* ciphertext || tag as Nettle makes it */
static void aead_reference(const uint8_t *nonce, size_t nonce_len,
			   const uint8_t *aad, size_t aad_len,
			   const uint8_t *msg, size_t len, size_t tag,
			   uint8_t *dst)
{
	struct ref_alg ccm = *fz.a;
	uint8_t *full;

	if (fz.a->ccm) {
		ccm.tag_size = tag;
		ref_aead(&ccm, fz.key, nonce, nonce_len, aad, aad_len, msg, len,
			 dst);
		return;
	}
	/* GCM and ChaCha20-Poly1305: a shorter tag is the full one cut */
	full = malloc(len + fz.a->tag_size);
	if (full == NULL)
		failure("out of memory");
	ref_aead(fz.a, fz.key, nonce, nonce_len, aad, aad_len, msg, len, full);
	memcpy(dst, full, len + tag);
	free(full);
}

/* Whether ciphertext || tag (CLEN bytes, a tag of T) verifies, as Nettle
 * says: every AEAD here encrypts with a keystream, which sealing zeros
 * gives, so the message decrypts to CT ^ keystream and must seal to the
 * same tag again.  A tampered message with a tag of a few bytes verifies
 * by chance (one in 256 with one byte), and must then be accepted. */
static bool reference_opens(const uint8_t *nonce, size_t nonce_len,
			    const uint8_t *aad, size_t aad_len,
			    const uint8_t *ct, size_t clen, size_t t)
{
	size_t len = clen - t, i;
	uint8_t *pt, *sealed;
	bool ok;

	if (clen < t)
		return false;
	pt = calloc(1, len + 1);
	sealed = malloc(len + t);
	if (pt == NULL || sealed == NULL)
		failure("out of memory");
	aead_reference(nonce, nonce_len, aad, aad_len, pt, len, t, sealed);
	for (i = 0; i < len; i++)
		pt[i] = ct[i] ^ sealed[i];
	aead_reference(nonce, nonce_len, aad, aad_len, pt, len, t, sealed);
	ok = memcmp(sealed + len, ct + len, t) == 0;
	free(pt);
	free(sealed);
	return ok;
}

enum tamper {
	T_NONE,
	T_BODY,
	T_AAD,
	T_NONCE,
	T_SHORT,
	N_TAMPER
};

/* Seal and open one message.  FLAGS: bit 0 seal in place, bit 1 open in
 * place, bits 2-4 misalignment, bits 5-7 tampering (0-3: none). */
static void op_seal(struct prog *g)
{
	size_t nonce_len = fz.a->ccm ? 7 + u8(g) % 7 : 12;
	size_t aad_len = u16(g) % (MAX_AAD + 1), len = size(g);
	size_t tag = tag_size(u8(g)), t, clen, plen, i;
	unsigned flags = u8(g), mis = (flags >> 2) & 7;
	enum tamper tamper = (flags >> 5) < 4 ? T_NONE : (flags >> 5) - 3;
	uint8_t nonce[13], *aad, *msg, *want, *buf, *ct, *pt;
	bool verifies;
	int ret;

	fz.what = "seal";
	/* CCM's length field has 15 - nonce_len bytes */
	if (fz.a->ccm && nonce_len == 13 && len > 0xffff)
		len = 0xffff;
	t = tag ? tag : fz.a->tag_size;
	rng_fill(&fz.rng, nonce, nonce_len);
	aad = random_bytes(aad_len);
	msg = random_bytes(len);
	want = malloc(len + t);
	buf = malloc(2 * (len + t) + 2 * mis);
	if (want == NULL || buf == NULL)
		failure("out of memory");
	aead_reference(nonce, nonce_len, aad, aad_len, msg, len, t, want);

	/* seal */
	ct = buf + mis;
	pt = flags & 1 ? ct : ct + len + t + mis;
	memcpy(pt, msg, len);
	clen = len + t;
	ret = gnutls_aead_cipher_encrypt(fz.ah, nonce, nonce_len, aad, aad_len,
					 tag, pt, len, ct, &clen);
	must(ret, "gnutls_aead_cipher_encrypt");
	if (clen != len + t)
		failure("sealed %zu bytes, not %zu", clen, len + t);
	same(ct, want, clen, "sealed message");

	/* open, maybe something else than what was sealed */
	fz.what = "open";
	switch (tamper) {
	case T_BODY:
		ct[u16(g) % clen] ^= 1 << (u8(g) % 8);
		break;
	case T_AAD:
		if (aad_len == 0)
			tamper = T_NONE;
		else
			aad[u16(g) % aad_len] ^= 1 << (u8(g) % 8);
		break;
	case T_NONCE:
		nonce[u8(g) % nonce_len] ^= 1 << (u8(g) % 8);
		break;
	case T_SHORT:
		clen--;
		break;
	default:
		break;
	}
	/* before an in-place decryption overwrites it */
	verifies = tamper != T_NONE &&
		   reference_opens(nonce, nonce_len, aad, aad_len, ct, clen, t);
	pt = flags & 2 ? ct : ct + len + t + mis;
	plen = len;
	ret = gnutls_aead_cipher_decrypt(fz.ah, nonce, nonce_len, aad, aad_len,
					 tag, ct, clen, pt, &plen);
	if (verifies) {
		must(ret, "gnutls_aead_cipher_decrypt (a tampered message "
			  "that verifies)");
	} else if (tamper == T_NONE) {
		must(ret, "gnutls_aead_cipher_decrypt");
		if (plen != len)
			failure("opened %zu bytes, not %zu", plen, len);
		same(pt, msg, len, "opened message");
	} else if (ret != GNUTLS_E_DECRYPTION_FAILED) {
		failure("a forged message (tampering %d): %s", tamper,
			ret == 0 ? "accepted" : gnutls_strerror(ret));
	} else if (module_in_front) {
		for (i = 0; clen >= t && i < clen - t; i++)
			if (pt[i] != 0)
				failure("a failed decryption left byte %zu", i);
	}
	free(aad);
	free(msg);
	free(want);
	free(buf);
}

/* ---- MAC and digest ---------------------------------------------------- */

static int is_mac(void)
{
	return fz.a->family != F_HASH;
}

static void msg_free(struct msg *m)
{
	if (!m->live)
		return;
	if (is_mac())
		gnutls_hmac_deinit(m->h, NULL);
	else
		gnutls_hash_deinit(m->h, NULL);
	m->live = 0;
}

/* A new message; a MAC gets a new key (HMAC: of any length). */
static void msg_new(void)
{
	struct msg *m = &fz.m[0];
	gnutls_hmac_hd_t mh;
	gnutls_hash_hd_t hh;

	msg_free(m);
	fz.key_len = fz.a->family == F_HMAC ?
			     rng_below(&fz.rng, REF_MAX_HMAC_KEY + 1) :
			     fz.a->key_size;
	rng_fill(&fz.rng, fz.key, fz.key_len);
	if (is_mac()) {
		must(gnutls_hmac_init(&mh, fz.a->id, fz.key, fz.key_len),
		     "gnutls_hmac_init");
		m->h = mh;
	} else {
		must(gnutls_hash_init(&hh, fz.a->id), "gnutls_hash_init");
		m->h = hh;
	}
	ref_init(&m->ref, fz.a, fz.key, fz.key_len);
	m->len = 0;
	m->live = 1;
}

/* SIZE bytes in 1..4 calls. */
static void op_update(struct prog *g)
{
	struct msg *m = &fz.m[0];
	size_t len = size(g), room, off = 0, n;
	unsigned pieces = 1 + u8(g) % 4, i;
	uint8_t *data;

	fz.what = "update";
	room = HASH_MAX - m->len;
	if (len > room)
		len = room;
	data = random_bytes(len);
	ref_update(&m->ref, data, len);
	for (i = 0; i < pieces; i++) {
		n = i == pieces - 1 ? len - off : u16(g) % (len - off + 1);
		if (is_mac())
			must(gnutls_hmac(m->h, data + off, n), "gnutls_hmac");
		else
			must(gnutls_hash(m->h, data + off, n), "gnutls_hash");
		off += n;
	}
	m->len += len;
	free(data);
}

static void op_output(void)
{
	struct msg *m = &fz.m[0];
	uint8_t got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];

	fz.what = "output";
	ref_digest(&m->ref, want);
	if (is_mac())
		gnutls_hmac_output(m->h, got);
	else
		gnutls_hash_output(m->h, got);
	same(got, want, ref_digest_size(fz.a), "output");
	m->len = 0;
}

static void op_copy(void)
{
	struct msg *m = &fz.m[0], *c = &fz.m[1];

	fz.what = "copy";
	msg_free(c);
	c->h = is_mac() ? (void *)gnutls_hmac_copy(m->h) :
			  (void *)gnutls_hash_copy(m->h);
	if (c->h == NULL)
		failure("the copy failed");
	c->ref = m->ref;
	c->len = m->len;
	c->live = 1;
}

static void op_swap(void)
{
	struct msg t;

	fz.what = "swap";
	if (!fz.m[1].live)
		return;
	t = fz.m[0];
	fz.m[0] = fz.m[1];
	fz.m[1] = t;
}

static void op_fast(struct prog *g)
{
	uint8_t got[REF_MAX_DIGEST], want[REF_MAX_DIGEST], *data;
	size_t len = size(g);
	struct ref_stream s;

	fz.what = "fast";
	data = random_bytes(len);
	ref_init(&s, fz.a, fz.key, fz.key_len);
	ref_update(&s, data, len);
	ref_digest(&s, want);
	if (is_mac())
		must(gnutls_hmac_fast(fz.a->id, fz.key, fz.key_len, data, len,
				      got),
		     "gnutls_hmac_fast");
	else
		must(gnutls_hash_fast(fz.a->id, data, len, got),
		     "gnutls_hash_fast");
	same(got, want, ref_digest_size(fz.a), "one-shot output");
	free(data);
}

/* ---- the program ------------------------------------------------------- */

static void step(struct prog *g)
{
	unsigned code = u8(g);

	if (code % 8 == 0) {
		op_fault(g);
		return;
	}
	if (code % 8 == 1) {
		op_clear();
		return;
	}
	code /= 8;
	switch (fz.a->family) {
	case F_CBC:
	case F_XTS:
		switch (code % 4) {
		case 0:
		case 1:
			op_crypt(g, code % 4 == 0);
			break;
		case 2:
			op_set_iv();
			break;
		default:
			fz.what = "new context";
			cipher_new();
		}
		break;
	case F_AEAD:
		switch (code % 6) {
		case 0:
		case 1:
		case 2:
			op_seal(g);
			break;
		case 3:
			op_set_key();
			break;
		case 4:
			op_bad_key(g);
			break;
		default:
			fz.what = "new handle";
			aead_new();
		}
		break;
	default:
		switch (code % 7) {
		case 0:
		case 1:
			op_update(g);
			break;
		case 2:
			op_output();
			break;
		case 3:
			op_copy();
			break;
		case 4:
			op_swap();
			break;
		case 5:
			op_fast(g);
			break;
		default:
			fz.what = "new context";
			msg_new();
		}
	}
}

static void finish(void)
{
	gnutls_hash_hd_t h;

	if (fz.ch != NULL)
		gnutls_cipher_deinit(fz.ch);
	if (fz.ah != NULL)
		gnutls_aead_cipher_deinit(fz.ah);
	msg_free(&fz.m[0]);
	msg_free(&fz.m[1]);
	seam_fault(NULL);
	/* an accelerator must never stop the library */
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		failure("the library is in its error state");
	gnutls_hash_deinit(h, NULL);
}

/* At exit, so that the module logs its statistics (which run-test reads:
 * the library's own destructor leaves an application's reference). */
static void deinit(void)
{
	gnutls_global_deinit();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("FUZZ_MODULE");
	int ret;

	(void)argc;
	(void)argv;
	if (ref_check() < 0)
		abort();
	ret = gnutls_global_init();
	if (ret < 0) {
		fprintf(stderr, "fuzz-afalg: gnutls_global_init: %s\n",
			gnutls_strerror(ret));
		abort();
	}
	atexit(deinit);
	module_in_front = env != NULL && strcmp(env, "1") == 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prog g = { data, size };
	unsigned long long seed = 0;
	unsigned i;

	if (size < 9)
		return 0;
	memset(&fz, 0, sizeof(fz));
	fz.a = &ref_algs[u8(&g) % ref_algs_size];
	for (i = 0; i < 8; i++)
		seed = seed << 8 | u8(&g);
	rng_seed(&fz.rng, seed, fz.a->name);
	seam_fault(NULL);

	if (ref_is_cipher(fz.a))
		cipher_new();
	else if (fz.a->family == F_AEAD)
		aead_new();
	else
		msg_new();
	for (fz.op = 0; g.n > 0 && fz.op < MAX_OPS; fz.op++)
		step(&g);
	finish();
	return 0;
}
