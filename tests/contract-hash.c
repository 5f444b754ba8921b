/*
 * Contract steps of MACs and digests (see contract.c):
 *
 *   init [KEYSIZE]     gnutls_hmac_init() with a new key, or
 *                      gnutls_hash_init()
 *   update LEN [pieces=N]   gnutls_hmac()/gnutls_hash(), on the context
 *                      and on its copy if there is one (other data)
 *   output             gnutls_hmac_output()/gnutls_hash_output(): the
 *                      reference's output, whatever the kernel did
 *   output discard     the same with a NULL output: a digest's message
 *                      is dropped (GnuTLS 3.8), a MAC's goes on (GnuTLS
 *                      ignores the call); the library must not be in
 *                      its error state
 *   message LEN        update LEN, then output: one whole message
 *   copy               gnutls_hmac_copy()/gnutls_hash_copy(): the copy
 *                      goes on beside the original
 *   fast LEN           gnutls_hmac_fast()/gnutls_hash_fast()
 *   contexts N LEN     N contexts made, each fed LEN bytes and its output
 *                      checked, kept alive until the case ends (what
 *                      they hold, for "heap")
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "contract.h"

#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

struct handle {
	void *h; /* gnutls_hmac_hd_t or gnutls_hash_hd_t */
	struct ref_stream ref;
};

struct hash {
	struct handle hd[MAX_HANDLES];
	unsigned n;
	uint8_t key[REF_MAX_HMAC_KEY];
	size_t key_size;
	void **many; /* "contexts" */
	unsigned n_many;
};

static bool covers(const struct ref_alg *a)
{
	return a->family == F_HMAC || a->family == F_CMAC ||
	       a->family == F_HASH;
}

static bool is_mac(const struct run *r)
{
	return r->alg->family != F_HASH;
}

static void *start(struct run *r)
{
	(void)r;
	return calloc(1, sizeof(struct hash));
}

static void drop_all(struct run *r)
{
	struct hash *x = r->fam;
	uint8_t out[REF_MAX_DIGEST];

	while (x->n > 0) {
		void *h = x->hd[--x->n].h;

		if (is_mac(r))
			gnutls_hmac_deinit(h, out);
		else
			gnutls_hash_deinit(h, out);
	}
}

static void drop_many(struct run *r)
{
	struct hash *x = r->fam;
	uint8_t out[REF_MAX_DIGEST];

	while (x->n_many > 0) {
		void *h = x->many[--x->n_many];

		if (is_mac(r))
			gnutls_hmac_deinit(h, out);
		else
			gnutls_hash_deinit(h, out);
	}
	free(x->many);
	x->many = NULL;
}

static void finish(struct run *r)
{
	drop_all(r);
	drop_many(r);
	free(r->fam);
}

static int step_init(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	size_t key_size =
		arg_num(s, 0, r->alg->key_size ? r->alg->key_size : 32);
	uint8_t key[REF_MAX_HMAC_KEY];
	void *h = NULL;
	int ret;

	if (key_size > sizeof(key))
		return fail(r, s, "key too long");
	drop_all(r);
	rng_fill(&r->rng, key, key_size);
	if (is_mac(r))
		ret = gnutls_hmac_init((gnutls_hmac_hd_t *)&h, r->alg->id, key,
				       key_size);
	else
		ret = gnutls_hash_init((gnutls_hash_hd_t *)&h, r->alg->id);
	ret = check_ret(r, s, ret);
	if (ret == 0) {
		memcpy(x->key, key, key_size);
		x->key_size = key_size;
		x->hd[0].h = h;
		ref_init(&x->hd[0].ref, r->alg, key, key_size);
		x->n = 1;
	}
	return ret < 0 ? -1 : 0;
}

static int feed(struct run *r, const struct step *s, struct handle *hd,
		const uint8_t *p, size_t len)
{
	unsigned pieces = flag_num(s, "pieces", 1);
	size_t take;
	int ret;

	while (pieces-- > 0) {
		take = pieces == 0 ? len : rng_below(&r->rng, len + 1);
		if (is_mac(r))
			ret = gnutls_hmac(hd->h, p, take);
		else
			ret = gnutls_hash(hd->h, p, take);
		ret = check_ret(r, s, ret);
		if (ret != 0) /* 1: the error the step expects */
			return ret;
		p += take;
		len -= take;
	}
	return 0;
}

static int step_update(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	size_t len = arg_num(s, 0, 64);
	uint8_t *p = xmalloc(len);
	unsigned i;
	int ret = 0;

	for (i = 0; i < x->n && ret == 0; i++) {
		rng_fill(&r->rng, p, len);
		ret = feed(r, s, &x->hd[i], p, len);
		ref_update(&x->hd[i].ref, p, len);
	}
	free(p);
	return ret < 0 ? -1 : 0;
}

static int discard(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	uint8_t dropped[REF_MAX_DIGEST];
	unsigned i;

	for (i = 0; i < x->n; i++) {
		if (is_mac(r)) {
			/* GnuTLS ignores it: the message goes on */
			gnutls_hmac_output(x->hd[i].h, NULL);
			continue;
		}
		gnutls_hash_output(x->hd[i].h, NULL);
		ref_digest(&x->hd[i].ref, dropped);
	}
	if (library_in_error_state())
		return fail(r, s, "a discarded message stopped the library");
	return 0;
}

static int step_output(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	uint8_t got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	size_t size = ref_digest_size(r->alg);
	unsigned i;

	if (has_flag(s, "discard"))
		return discard(r, s);
	for (i = 0; i < x->n; i++) {
		if (is_mac(r))
			gnutls_hmac_output(x->hd[i].h, got);
		else
			gnutls_hash_output(x->hd[i].h, got);
		ref_digest(&x->hd[i].ref, want);
		if (compare(r, s, "output", got, want, size) < 0)
			return -1;
	}
	return 0;
}

static int step_message(struct run *r, const struct step *s)
{
	if (step_update(r, s) < 0)
		return -1;
	return step_output(r, s);
}

static int step_copy(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	void *h;

	if (x->n == 0 || x->n == MAX_HANDLES)
		return fail(r, s, "no context to copy, or too many");
	h = is_mac(r) ? (void *)gnutls_hmac_copy(x->hd[0].h) :
			(void *)gnutls_hash_copy(x->hd[0].h);
	if (h == NULL)
		return fail(r, s, "the copy failed");
	x->hd[x->n].h = h;
	x->hd[x->n].ref = x->hd[0].ref;
	x->n++;
	return 0;
}

static int step_fast(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	size_t len = arg_num(s, 0, 64), size = ref_digest_size(r->alg);
	uint8_t *p = xmalloc(len), got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	struct ref_stream ref;
	int ret;

	rng_fill(&r->rng, p, len);
	if (is_mac(r))
		ret = gnutls_hmac_fast(r->alg->id, x->key, x->key_size, p, len,
				       got);
	else
		ret = gnutls_hash_fast(r->alg->id, p, len, got);
	ret = check_ret(r, s, ret);
	if (ret == 0) {
		ref_init(&ref, r->alg, x->key, x->key_size);
		ref_update(&ref, p, len);
		ref_digest(&ref, want);
		ret = compare(r, s, "output", got, want, size);
	}
	free(p);
	return ret < 0 ? -1 : 0;
}

static int step_contexts(struct run *r, const struct step *s)
{
	struct hash *x = r->fam;
	long n = arg_num(s, 0, 1), len = arg_num(s, 1, 64), i;
	size_t size = ref_digest_size(r->alg);
	uint8_t key[REF_MAX_HMAC_KEY], got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	size_t key_size = r->alg->key_size ? r->alg->key_size : 32;
	uint8_t *p = xmalloc(len);
	struct ref_stream ref;
	void *h;
	int ret = 0;

	drop_many(r);
	x->many = xmalloc(n * sizeof(*x->many));
	rng_fill(&r->rng, key, key_size);
	rng_fill(&r->rng, p, len);
	ref_init(&ref, r->alg, key, key_size);
	ref_update(&ref, p, len);
	ref_digest(&ref, want);
	for (i = 0; i < n && ret == 0; i++) {
		if (is_mac(r))
			ret = gnutls_hmac_init((gnutls_hmac_hd_t *)&h,
					       r->alg->id, key, key_size);
		else
			ret = gnutls_hash_init((gnutls_hash_hd_t *)&h,
					       r->alg->id);
		if (ret < 0) {
			ret = fail(r, s, "context %ld: init failed", i);
			break;
		}
		x->many[x->n_many++] = h;
		if (is_mac(r)) {
			ret = gnutls_hmac(h, p, len);
			gnutls_hmac_output(h, got);
		} else {
			ret = gnutls_hash(h, p, len);
			gnutls_hash_output(h, got);
		}
		if (ret < 0)
			ret = fail(r, s, "context %ld: update failed", i);
		else
			ret = compare(r, s, "output", got, want, size);
	}
	free(p);
	return ret < 0 ? -1 : 0;
}

static const struct verb verbs[] = {
	{ "init", step_init },	   { "update", step_update },
	{ "output", step_output }, { "copy", step_copy },
	{ "fast", step_fast },	   { "contexts", step_contexts },
	{ "message", step_message },
};

const struct harness hash_family = {
	.name = "MAC/digest",
	.covers = covers,
	.start = start,
	.finish = finish,
	.verbs = verbs,
	.n_verbs = N_VERBS(verbs),
};
