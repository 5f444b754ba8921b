/*
 * Contract steps of the AEAD ciphers (see contract.c):
 *
 *   init [KEYSIZE]         gnutls_aead_cipher_init() with a new key
 *   setkey [KEYSIZE]       gnutls_aead_cipher_set_key()
 *   seal LEN [aad=N] [nonce=N] [inplace] [offset=K] [nonceout] [times=N]
 *                          gnutls_aead_cipher_encrypt(); nonceout: the
 *                          nonce is read from where the output goes;
 *                          times: N messages one after another
 *   sealv LEN [aad=N] [pieces=N]   gnutls_aead_cipher_encryptv()
 *   sealv2 LEN [aad=N]     gnutls_aead_cipher_encryptv2(), in place
 *   open [inplace] [offset=K] [nonceout] [short] [null]
 *                          decrypts the last sealed message (short: into
 *                          a byte too little room, refused with the
 *                          message left as it was; null: a message
 *                          without text into a NULL output)
 *   openv2                 gnutls_aead_cipher_decryptv2() of it
 *   forge [room=N] [null]  decrypts it with a bit flipped: a tag failure,
 *                          (module active) no plaintext left, and the N
 *                          bytes of room after the text untouched
 *   cinit [noiv]           gnutls_cipher_init() on the AEAD algorithm
 *   civ / cauth N / cenc N / ctag     the incremental calls on it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "contract.h"

#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#define MAX_NONCE 16
#define MAX_AAD 4096
#define MAX_PIECES 16

struct message {
	uint8_t nonce[MAX_NONCE];
	size_t nonce_len;
	uint8_t aad[MAX_AAD];
	size_t aad_len;
	uint8_t *msg, *sealed; /* sealed: ciphertext || tag */
	size_t len;
};

struct aead {
	gnutls_aead_cipher_hd_t h;
	gnutls_cipher_hd_t ch;
	uint8_t key[REF_MAX_KEY];
	size_t key_size;
	struct message last;
	struct message inc; /* the incremental message so far */
};

static bool covers(const struct ref_alg *a)
{
	return a->family == F_AEAD;
}

static void *start(struct run *r)
{
	(void)r;
	return calloc(1, sizeof(struct aead));
}

static void clear(struct message *m)
{
	free(m->msg);
	free(m->sealed);
	memset(m, 0, sizeof(*m));
}

static void finish(struct run *r)
{
	struct aead *x = r->fam;

	if (x->h != NULL)
		gnutls_aead_cipher_deinit(x->h);
	if (x->ch != NULL)
		gnutls_cipher_deinit(x->ch);
	clear(&x->last);
	clear(&x->inc);
	free(x);
}

static size_t tag_size(const struct run *r)
{
	return r->alg->tag_size;
}

/* "init" (a new context) or "setkey": a new key; it becomes the
 * model's only if the library takes it. */
static int new_key(struct run *r, const struct step *s)
{
	bool init = s->verb[0] == 'i';
	struct aead *x = r->fam;
	uint8_t key[REF_MAX_KEY];
	gnutls_datum_t d = { key, arg_num(s, 0, r->alg->key_size) };
	int ret;

	if (d.size > sizeof(key))
		return fail(r, s, "key too long");
	rng_fill(&r->rng, key, d.size);
	if (init) {
		if (x->h != NULL)
			gnutls_aead_cipher_deinit(x->h);
		x->h = NULL;
		ret = gnutls_aead_cipher_init(&x->h, r->alg->id, &d);
		if (ret < 0)
			x->h = NULL;
	} else {
		ret = gnutls_aead_cipher_set_key(x->h, &d);
	}
	ret = check_ret(r, s, ret);
	if (ret == 0) {
		memcpy(x->key, key, d.size);
		x->key_size = d.size;
	}
	return ret < 0 ? -1 : 0;
}

/* A random message for this step. */
static void make_message(struct run *r, const struct step *s, struct message *m)
{
	clear(m);
	m->len = arg_num(s, 0, 64);
	m->nonce_len = flag_num(s, "nonce", 12);
	m->aad_len = flag_num(s, "aad", 13);
	if (m->aad_len > MAX_AAD)
		m->aad_len = MAX_AAD;
	m->msg = xmalloc(m->len);
	m->sealed = xmalloc(m->len + REF_MAX_TAG);
	rng_fill(&r->rng, m->nonce, m->nonce_len);
	rng_fill(&r->rng, m->aad, m->aad_len);
	rng_fill(&r->rng, m->msg, m->len);
}

/* The message's nonce, or with nonceout a copy of it at the start of
 * out (which has room for it): a caller may keep the nonce where the
 * result goes, as a TLS record keeps its explicit nonce before the
 * text; the library must read it before it writes there. */
static const uint8_t *nonce_at(const struct step *s, const struct message *m,
			       uint8_t *out)
{
	if (!has_flag(s, "nonceout"))
		return m->nonce;
	memcpy(out, m->nonce, m->nonce_len);
	return out;
}

static int expect_sealed(struct run *r, const struct step *s, struct message *m,
			 const uint8_t *got)
{
	struct aead *x = r->fam;

	ref_aead(r->alg, x->key, m->nonce, m->nonce_len, m->aad, m->aad_len,
		 m->msg, m->len, m->sealed);
	return compare(r, s, "ciphertext and tag", got, m->sealed,
		       m->len + tag_size(r));
}

static int seal_once(struct run *r, const struct step *s);

/* "times=N": N messages, one after another (an application's calls) */
static int step_seal(struct run *r, const struct step *s)
{
	long i, n = flag_num(s, "times", 1);
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++)
		ret = seal_once(r, s);
	return ret;
}

static int seal_once(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	struct message *m = &x->last;
	size_t off = flag_num(s, "offset", 0), out_len, room;
	uint8_t *buf, *in, *out;
	int ret;

	make_message(r, s, m);
	room = m->len + tag_size(r);
	buf = xmalloc(room + off + 16);
	out = buf + off;
	in = m->msg;
	if (has_flag(s, "inplace")) {
		memcpy(out, m->msg, m->len);
		in = out;
	}
	out_len = room;
	ret = gnutls_aead_cipher_encrypt(x->h, nonce_at(s, m, out),
					 m->nonce_len, m->aad, m->aad_len,
					 tag_size(r), in, m->len, out,
					 &out_len);
	ret = check_ret(r, s, ret);
	if (ret == 0 && out_len != room)
		ret = fail(r, s, "%zu bytes out, expected %zu", out_len, room);
	if (ret == 0)
		ret = expect_sealed(r, s, m, out);
	free(buf);
	return ret < 0 ? -1 : 0;
}

/* The message in up to N pieces (some of them empty). */
static int split(struct run *r, uint8_t *p, size_t len, unsigned pieces,
		 giovec_t *iov)
{
	unsigned n = 0;
	size_t take;

	while (len > 0 && n + 1 < pieces) {
		take = rng_below(&r->rng, len + 1);
		iov[n].iov_base = p;
		iov[n++].iov_len = take;
		p += take;
		len -= take;
	}
	iov[n].iov_base = p;
	iov[n++].iov_len = len;
	return n;
}

/* "sealv" or "sealv2" */
static int step_sealv(struct run *r, const struct step *s)
{
	bool v2 = s->verb[5] == '2';
	struct aead *x = r->fam;
	struct message *m = &x->last;
	unsigned pieces = flag_num(s, "pieces", 4);
	giovec_t iov[MAX_PIECES], aiov[1];
	size_t room, out_len, tlen = tag_size(r);
	uint8_t *copy, *out, tag[REF_MAX_TAG];
	int n, ret;

	if (pieces > MAX_PIECES)
		pieces = MAX_PIECES;
	make_message(r, s, m);
	room = m->len + tlen;
	copy = xmalloc(m->len);
	memcpy(copy, m->msg, m->len);
	n = split(r, copy, m->len, pieces, iov);
	aiov[0].iov_base = m->aad;
	aiov[0].iov_len = m->aad_len;
	out = xmalloc(room);
	if (v2) {
		out_len = tlen;
		ret = gnutls_aead_cipher_encryptv2(x->h, m->nonce, m->nonce_len,
						   aiov, 1, iov, n, tag,
						   &out_len);
		memcpy(out, copy, m->len);
		memcpy(out + m->len, tag, tlen);
	} else {
		out_len = room;
		ret = gnutls_aead_cipher_encryptv(x->h, m->nonce, m->nonce_len,
						  aiov, 1, tlen, iov, n, out,
						  &out_len);
	}
	ret = check_ret(r, s, ret);
	if (ret == 0)
		ret = expect_sealed(r, s, m, out);
	free(copy);
	free(out);
	return ret < 0 ? -1 : 0;
}

static int step_open(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	struct message *m = &x->last;
	size_t off = flag_num(s, "offset", 0), sealed = m->len + tag_size(r);
	size_t out_len = m->len;
	uint8_t *buf, *in, *out;
	bool inplace = has_flag(s, "inplace");
	int ret;

	if (m->msg == NULL)
		return fail(r, s, "nothing sealed yet");
	buf = xmalloc(sealed + off + 16);
	out = buf + off;
	in = m->sealed;
	if (inplace) {
		memcpy(out, m->sealed, sealed);
		in = out;
	}
	if (has_flag(s, "short") && out_len > 0)
		out_len--;
	ret = gnutls_aead_cipher_decrypt(
		x->h, nonce_at(s, m, out), m->nonce_len, m->aad, m->aad_len,
		tag_size(r), in, sealed,
		has_flag(s, "null") && m->len == 0 ? NULL : out, &out_len);
	ret = check_ret(r, s, ret);
	if (ret > 0 && inplace &&
	    compare(r, s, "the message after a refused decryption", in,
		    m->sealed, sealed) < 0)
		ret = -1;
	if (ret == 0 && out_len != m->len)
		ret = fail(r, s, "%zu bytes out, expected %zu", out_len,
			   m->len);
	if (ret == 0)
		ret = compare(r, s, "plaintext", out, m->msg, m->len);
	free(buf);
	return ret < 0 ? -1 : 0;
}

static int step_openv2(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	struct message *m = &x->last;
	giovec_t iov[MAX_PIECES], aiov[1];
	uint8_t *copy;
	int n, ret;

	if (m->msg == NULL)
		return fail(r, s, "nothing sealed yet");
	copy = xmalloc(m->len);
	memcpy(copy, m->sealed, m->len);
	n = split(r, copy, m->len, flag_num(s, "pieces", 4), iov);
	aiov[0].iov_base = m->aad;
	aiov[0].iov_len = m->aad_len;
	ret = gnutls_aead_cipher_decryptv2(x->h, m->nonce, m->nonce_len, aiov,
					   1, iov, n, m->sealed + m->len,
					   tag_size(r));
	ret = check_ret(r, s, ret);
	if (ret == 0)
		ret = compare(r, s, "plaintext", copy, m->msg, m->len);
	free(copy);
	return ret < 0 ? -1 : 0;
}

/* A flipped bit anywhere in ciphertext or tag: a tag failure; where the
 * module is active, the output holds no plaintext (stock GnuTLS leaves
 * it there). */
static int step_forge(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	struct message *m = &x->last;
	size_t sealed = m->len + tag_size(r), i, bit;
	size_t room = flag_num(s, "room", 0), out_len = m->len + room;
	uint8_t *forged, *out;
	int ret;

	if (m->msg == NULL)
		return fail(r, s, "nothing sealed yet");
	forged = xmalloc(sealed);
	out = xmalloc(out_len);
	memcpy(forged, m->sealed, sealed);
	bit = rng_below(&r->rng, sealed * 8);
	forged[bit / 8] ^= 1 << (bit % 8);
	memset(out, 0xaa, out_len);
	ret = gnutls_aead_cipher_decrypt(
		x->h, m->nonce, m->nonce_len, m->aad, m->aad_len, tag_size(r),
		forged, sealed,
		has_flag(s, "null") && out_len == 0 ? NULL : out, &out_len);
	if (ret != GNUTLS_E_DECRYPTION_FAILED)
		ret = fail(r, s, "a forged message gave %s",
			   ret < 0 ? gnutls_strerror_name(ret) : "plaintext");
	else
		ret = 0;
	for (i = 0; ret == 0 && r->kernel && i < m->len; i++)
		if (out[i] != 0 && out[i] != 0xaa)
			ret = fail(r, s, "plaintext left after a tag failure");
	for (i = m->len; ret == 0 && i < m->len + room; i++)
		if (out[i] != 0xaa)
			ret = fail(r, s,
				   "byte %zu of the room after the text "
				   "changed by a tag failure",
				   i - m->len);
	free(forged);
	free(out);
	return ret;
}

/* The incremental API on an AEAD algorithm. */
static int step_cinit(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	gnutls_datum_t key = { x->key, x->key_size };
	gnutls_datum_t iv = { x->inc.nonce, 12 };
	int ret;

	if (x->ch != NULL)
		gnutls_cipher_deinit(x->ch);
	x->ch = NULL;
	clear(&x->inc);
	if (x->key_size == 0) {
		x->key_size = r->alg->key_size;
		rng_fill(&r->rng, x->key, x->key_size);
		key.size = x->key_size;
	}
	rng_fill(&r->rng, x->inc.nonce, 12);
	x->inc.nonce_len = 12;
	ret = gnutls_cipher_init(&x->ch, r->alg->id, &key,
				 has_flag(s, "noiv") ? NULL : &iv);
	if (ret < 0)
		x->ch = NULL;
	return check_ret(r, s, ret) < 0 ? -1 : 0;
}

static int step_civ(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;

	(void)s;
	clear(&x->inc);
	rng_fill(&r->rng, x->inc.nonce, 12);
	x->inc.nonce_len = 12;
	gnutls_cipher_set_iv(x->ch, x->inc.nonce, 12);
	return 0;
}

static int step_cauth(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	size_t len = arg_num(s, 0, 13);
	int ret;

	if (x->inc.aad_len + len > MAX_AAD)
		return fail(r, s, "too much AAD");
	rng_fill(&r->rng, x->inc.aad + x->inc.aad_len, len);
	ret = gnutls_cipher_add_auth(x->ch, x->inc.aad + x->inc.aad_len, len);
	ret = check_ret(r, s, ret);
	if (ret == 0)
		x->inc.aad_len += len;
	return ret < 0 ? -1 : 0;
}

/* The incremental ciphertext so far against the reference's prefix. */
static int step_cenc(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	struct message *m = &x->inc;
	size_t len = arg_num(s, 0, 64);
	uint8_t *out = xmalloc(len), *want;
	int ret;

	m->msg = realloc(m->msg, m->len + len + 1);
	rng_fill(&r->rng, m->msg + m->len, len);
	ret = gnutls_cipher_encrypt2(x->ch, m->msg + m->len, len, out, len);
	ret = check_ret(r, s, ret);
	if (ret == 0) {
		m->len += len;
		want = xmalloc(m->len + REF_MAX_TAG);
		ref_aead(r->alg, x->key, m->nonce, 12, m->aad, m->aad_len,
			 m->msg, m->len, want);
		ret = compare(r, s, "ciphertext", out, want + m->len - len,
			      len);
		free(want);
	}
	free(out);
	return ret < 0 ? -1 : 0;
}

static int step_ctag(struct run *r, const struct step *s)
{
	struct aead *x = r->fam;
	struct message *m = &x->inc;
	uint8_t tag[REF_MAX_TAG], *want;
	int ret;

	ret = check_ret(r, s, gnutls_cipher_tag(x->ch, tag, tag_size(r)));
	if (ret == 0) {
		want = xmalloc(m->len + REF_MAX_TAG);
		ref_aead(r->alg, x->key, m->nonce, 12, m->aad, m->aad_len,
			 m->msg ? m->msg : (uint8_t *)"", m->len, want);
		ret = compare(r, s, "tag", tag, want + m->len, tag_size(r));
		free(want);
	}
	return ret < 0 ? -1 : 0;
}

static const struct verb verbs[] = {
	{ "init", new_key },	   { "setkey", new_key },
	{ "seal", step_seal },	   { "sealv", step_sealv },
	{ "sealv2", step_sealv },  { "open", step_open },
	{ "openv2", step_openv2 }, { "forge", step_forge },
	{ "cinit", step_cinit },   { "civ", step_civ },
	{ "cauth", step_cauth },   { "cenc", step_cenc },
	{ "ctag", step_ctag },
};

const struct harness aead_family = {
	.name = "AEAD",
	.covers = covers,
	.start = start,
	.finish = finish,
	.verbs = verbs,
	.n_verbs = N_VERBS(verbs),
};
