/*
 * Contract steps of CBC and XTS (see contract.c):
 *
 *   init [KEYSIZE] [noiv] [equal]   gnutls_cipher_init() with a new key
 *                           (equal: two equal halves) and IV
 *   setiv [LEN]             gnutls_cipher_set_iv() with a new IV (of LEN
 *                           bytes; one of other than a block is refused,
 *                           and the IV or chaining value stays)
 *   encrypt LEN [inplace] [offset=K] [short]   gnutls_cipher_encrypt2()
 *   decrypt LEN [inplace] [offset=K] [short]   gnutls_cipher_decrypt2()
 *                           (short: into a byte too little room)
 *   contexts N LEN          N more contexts, each with its own key and IV,
 *                           all open at once: each encrypts and decrypts
 *                           LEN bytes (more keys than a device holds)
 *
 * CBC chains from call to call (encryption and decryption each on their
 * own); XTS takes every call as one data unit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "contract.h"

#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

struct cipher {
	gnutls_cipher_hd_t h;
	uint8_t key[REF_MAX_KEY];
	uint8_t iv[2][REF_BLOCK]; /* encryption, decryption */
};

static bool covers(const struct ref_alg *a)
{
	return ref_is_cipher(a);
}

static void *start(struct run *r)
{
	(void)r;
	return calloc(1, sizeof(struct cipher));
}

static void finish(struct run *r)
{
	struct cipher *x = r->fam;

	if (x->h != NULL)
		gnutls_cipher_deinit(x->h);
	free(x);
}

static int step_init(struct run *r, const struct step *s)
{
	struct cipher *x = r->fam;
	uint8_t key[REF_MAX_KEY], iv[REF_BLOCK];
	gnutls_datum_t k = { key, arg_num(s, 0, r->alg->key_size) };
	gnutls_datum_t v = { iv, REF_BLOCK };
	int ret;

	if (k.size > sizeof(key))
		return fail(r, s, "key too long");
	rng_fill(&r->rng, key, k.size);
	if (has_flag(s, "equal"))
		memcpy(key + k.size / 2, key, k.size / 2);
	rng_fill(&r->rng, iv, REF_BLOCK);
	if (x->h != NULL)
		gnutls_cipher_deinit(x->h);
	ret = gnutls_cipher_init(&x->h, r->alg->id, &k,
				 has_flag(s, "noiv") ? NULL : &v);
	if (ret < 0)
		x->h = NULL;
	ret = check_ret(r, s, ret);
	if (ret == 0) {
		memcpy(x->key, key, k.size);
		memcpy(x->iv[0], iv, REF_BLOCK);
		memcpy(x->iv[1], iv, REF_BLOCK);
	}
	return ret < 0 ? -1 : 0;
}

static int step_setiv(struct run *r, const struct step *s)
{
	struct cipher *x = r->fam;
	uint8_t iv[2 * REF_BLOCK];
	size_t len = arg_num(s, 0, REF_BLOCK);

	if (len > sizeof(iv))
		return fail(r, s, "IV too long");
	rng_fill(&r->rng, iv, sizeof(iv));
	gnutls_cipher_set_iv(x->h, iv, len);
	if (len != REF_BLOCK)
		return 0;
	memcpy(x->iv[0], iv, REF_BLOCK);
	memcpy(x->iv[1], iv, REF_BLOCK);
	return 0;
}

/* "encrypt" or "decrypt" */
static int step_crypt(struct run *r, const struct step *s)
{
	int enc = s->verb[0] == 'e';
	struct cipher *x = r->fam;
	size_t len = arg_num(s, 0, 64), off = flag_num(s, "offset", 0);
	uint8_t *msg = xmalloc(len), *want = xmalloc(len);
	uint8_t *buf = xmalloc(len + off + 16), *in = msg, *out = buf + off;
	size_t room = has_flag(s, "short") && len > 0 ? len - 1 : len;
	uint8_t iv[REF_BLOCK];
	int ret;

	rng_fill(&r->rng, msg, len);
	if (has_flag(s, "inplace")) {
		memcpy(out, msg, len);
		in = out;
	}
	if (enc)
		ret = gnutls_cipher_encrypt2(x->h, in, len, out, room);
	else
		ret = gnutls_cipher_decrypt2(x->h, in, len, out, room);
	ret = check_ret(r, s, ret);
	if (ret == 0) {
		/* XTS does not chain: the model's IV stays */
		memcpy(iv, x->iv[!enc], REF_BLOCK);
		ref_cipher(r->alg, x->key,
			   r->alg->family == F_CBC ? x->iv[!enc] : iv, enc, len,
			   want, msg);
		ret = compare(r, s, enc ? "ciphertext" : "plaintext", out, want,
			      len);
	}
	free(msg);
	free(want);
	free(buf);
	return ret < 0 ? -1 : 0;
}

static int step_contexts(struct run *r, const struct step *s)
{
	size_t n = arg_num(s, 0, 1), len = arg_num(s, 1, 64), i;
	gnutls_cipher_hd_t *h;
	uint8_t(*key)[REF_MAX_KEY];
	uint8_t iv[REF_BLOCK], iv2[REF_BLOCK], *msg, *out, *want;
	gnutls_datum_t k = { NULL, r->alg->key_size }, v = { iv, REF_BLOCK };
	int ret = 0;

	if (n == 0 || len == 0)
		return fail(r, s, "contexts takes N and LEN from 1");
	h = xmalloc(n * sizeof(*h));
	key = xmalloc(n * sizeof(*key));
	msg = xmalloc(len);
	out = xmalloc(len);
	want = xmalloc(len);
	memset(h, 0, n * sizeof(*h));
	rng_fill(&r->rng, iv, REF_BLOCK);
	rng_fill(&r->rng, msg, len);
	for (i = 0; i < n && ret == 0; i++) {
		rng_fill(&r->rng, key[i], k.size);
		k.data = key[i];
		ret = check_ret(r, s,
				gnutls_cipher_init(&h[i], r->alg->id, &k, &v));
		if (ret < 0)
			h[i] = NULL;
	}
	/* every context at work while all are open */
	for (i = 0; i < n && ret == 0; i++) {
		memcpy(iv2, iv, REF_BLOCK);
		ref_cipher(r->alg, key[i], iv2, 1, len, want, msg);
		ret = check_ret(
			r, s, gnutls_cipher_encrypt2(h[i], msg, len, out, len));
		if (ret == 0)
			ret = compare(r, s, "ciphertext", out, want, len);
		if (ret == 0)
			ret = check_ret(r, s,
					gnutls_cipher_decrypt2(h[i], want, len,
							       out, len));
		if (ret == 0)
			ret = compare(r, s, "plaintext", out, msg, len);
	}
	for (i = 0; i < n; i++)
		if (h[i] != NULL)
			gnutls_cipher_deinit(h[i]);
	free(h);
	free(key);
	free(msg);
	free(out);
	free(want);
	return ret < 0 ? -1 : 0;
}

static const struct verb verbs[] = {
	{ "contexts", step_contexts }, { "init", step_init },
	{ "setiv", step_setiv },       { "encrypt", step_crypt },
	{ "decrypt", step_crypt },
};

const struct harness cipher_family = {
	.name = "cipher",
	.covers = covers,
	.start = start,
	.finish = finish,
	.verbs = verbs,
	.n_verbs = N_VERBS(verbs),
};
