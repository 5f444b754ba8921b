/*
 * Many threads at once: each creates, uses and destroys contexts of
 * several algorithms and checks every result against Nettle, so that the
 * module's shared state (the pool of digest sockets behind
 * gnutls_hash_fast(), the descriptor count, the failure and operation
 * counters) is used from all threads together.  Run under helgrind, it
 * shows data races; run plainly, mixed-up results.
 *
 * Each thread, for --ops operations, picks one of:
 *   AES-128-GCM one-shot seal and open, in a new handle, sometimes with
 *     a tampered ciphertext;
 *   AES-128-CBC encryption in two calls, then decryption;
 *   HMAC-SHA256 in pieces with a copy taken midway, original and copy
 *     finished with different data; gnutls_hmac_fast();
 *   SHA256 in pieces with gnutls_hash_init(); gnutls_hash_fast().
 * All threads start together (a barrier), and every operation's data
 * comes from the seed and the thread number, so a failure is replayed by
 * the same command line; no result depends on how the threads interleave.
 *
 * Usage: threads [--threads N] [--ops N] [--max-size BYTES] [--seed S]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include "reference.h"

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_SKIP 77
#define EXIT_ERROR 99

#define MAX_THREADS 64
#define MAX_AAD 64
#define NONCE_SIZE 12
#define BLOCK 16
#define MAX_REPORTS 5

enum kind {
	K_GCM,
	K_CBC,
	K_HMAC,
	K_HMAC_FAST,
	K_HASH,
	K_HASH_FAST,
	N_KINDS
};

static const char *const kind_names[N_KINDS] = {
	"AES-128-GCM",	    "AES-128-CBC", "HMAC-SHA256",
	"HMAC-SHA256 fast", "SHA256",	   "SHA256 fast",
};

struct opts {
	unsigned threads;
	unsigned long ops;
	size_t max_size;
	unsigned long long seed;
};

struct worker {
	pthread_t tid;
	unsigned index;
	const struct opts *o;
	struct rng rng;
	unsigned long op;
	unsigned long ops[N_KINDS];
	unsigned long failures;
	uint8_t *msg, *out, *back, *ref;
};

static const struct ref_alg *gcm, *cbc, *hmac, *sha;
static pthread_barrier_t start;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long reports;

static void fail(struct worker *w, enum kind k, const char *fmt, ...)
{
	va_list ap;

	w->failures++;
	pthread_mutex_lock(&print_lock);
	if (++reports <= MAX_REPORTS) {
		printf("FAIL thread %u op %lu (%s): ", w->index, w->op,
		       kind_names[k]);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	pthread_mutex_unlock(&print_lock);
}

static int check(struct worker *w, enum kind k, const char *what,
		 const uint8_t *got, const uint8_t *want, size_t len)
{
	if (memcmp(got, want, len) == 0)
		return 0;
	fail(w, k, "%s differs from Nettle (%zu bytes)", what, len);
	return -1;
}

static int call(struct worker *w, enum kind k, const char *what, int ret)
{
	if (ret >= 0)
		return 0;
	fail(w, k, "%s: %s", what, gnutls_strerror(ret));
	return -1;
}

static void do_gcm(struct worker *w, size_t len)
{
	uint8_t key[16], nonce[NONCE_SIZE], aad[MAX_AAD];
	size_t aad_len = rng_below(&w->rng, MAX_AAD + 1), out_len, back_len;
	gnutls_datum_t k = { key, sizeof(key) };
	gnutls_aead_cipher_hd_t h;
	int tamper = rng_below(&w->rng, 8) == 0, ret;

	rng_fill(&w->rng, key, sizeof(key));
	rng_fill(&w->rng, nonce, sizeof(nonce));
	rng_fill(&w->rng, aad, aad_len);
	ref_aead(gcm, key, nonce, sizeof(nonce), aad, aad_len, w->msg, len,
		 w->ref);
	if (call(w, K_GCM, "gnutls_aead_cipher_init",
		 gnutls_aead_cipher_init(&h, gcm->id, &k)) < 0)
		return;
	out_len = len + gcm->tag_size;
	ret = gnutls_aead_cipher_encrypt(h, nonce, sizeof(nonce), aad, aad_len,
					 gcm->tag_size, w->msg, len, w->out,
					 &out_len);
	if (call(w, K_GCM, "gnutls_aead_cipher_encrypt", ret) < 0)
		goto out;
	if (out_len != len + gcm->tag_size) {
		fail(w, K_GCM, "sealed %zu bytes, not %zu", out_len,
		     len + gcm->tag_size);
		goto out;
	}
	if (check(w, K_GCM, "sealed message", w->out, w->ref, out_len) < 0)
		goto out;
	if (tamper)
		w->out[rng_below(&w->rng, out_len)] ^= 1
						       << rng_below(&w->rng, 8);
	back_len = len;
	ret = gnutls_aead_cipher_decrypt(h, nonce, sizeof(nonce), aad, aad_len,
					 gcm->tag_size, w->out, out_len,
					 w->back, &back_len);
	if (tamper && ret != GNUTLS_E_DECRYPTION_FAILED)
		fail(w, K_GCM, "tampered message: %s",
		     ret ? gnutls_strerror(ret) : "accepted");
	else if (!tamper &&
		 call(w, K_GCM, "gnutls_aead_cipher_decrypt", ret) == 0)
		check(w, K_GCM, "opened message", w->back, w->msg, len);
out:
	gnutls_aead_cipher_deinit(h);
}

static void do_cbc(struct worker *w, size_t len)
{
	uint8_t key[16], iv[BLOCK], chain[BLOCK];
	gnutls_datum_t k = { key, sizeof(key) }, v = { iv, sizeof(iv) };
	size_t first;
	gnutls_cipher_hd_t h;

	len -= len % BLOCK;
	first = BLOCK * rng_below(&w->rng, len / BLOCK + 1);
	rng_fill(&w->rng, key, sizeof(key));
	rng_fill(&w->rng, iv, sizeof(iv));
	memcpy(chain, iv, sizeof(iv));
	ref_cipher(cbc, key, chain, 1, len, w->ref, w->msg);

	if (call(w, K_CBC, "gnutls_cipher_init",
		 gnutls_cipher_init(&h, cbc->id, &k, &v)) < 0)
		return;
	if (call(w, K_CBC, "gnutls_cipher_encrypt2",
		 gnutls_cipher_encrypt2(h, w->msg, first, w->out, first)) ==
		    0 &&
	    call(w, K_CBC, "gnutls_cipher_encrypt2",
		 gnutls_cipher_encrypt2(h, w->msg + first, len - first,
					w->out + first, len - first)) == 0)
		check(w, K_CBC, "ciphertext", w->out, w->ref, len);
	gnutls_cipher_deinit(h);

	if (call(w, K_CBC, "gnutls_cipher_init",
		 gnutls_cipher_init(&h, cbc->id, &k, &v)) < 0)
		return;
	if (call(w, K_CBC, "gnutls_cipher_decrypt2",
		 gnutls_cipher_decrypt2(h, w->ref, len, w->back, len)) == 0)
		check(w, K_CBC, "plaintext", w->back, w->msg, len);
	gnutls_cipher_deinit(h);
}

/* HMAC-SHA256 in three pieces, a copy after the second; the copy is
 * finished with the message from the first cut on. */
static void do_hmac(struct worker *w, size_t len)
{
	uint8_t key[100], got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	size_t key_len = 1 + rng_below(&w->rng, sizeof(key));
	size_t a = rng_below(&w->rng, len + 1);
	size_t b = a + rng_below(&w->rng, len - a + 1);
	struct ref_stream s, s2;
	gnutls_hmac_hd_t h, c;

	rng_fill(&w->rng, key, key_len);
	if (call(w, K_HMAC, "gnutls_hmac_init",
		 gnutls_hmac_init(&h, hmac->id, key, key_len)) < 0)
		return;
	ref_init(&s, hmac, key, key_len);
	ref_update(&s, w->msg, b);
	s2 = s;
	if (call(w, K_HMAC, "gnutls_hmac", gnutls_hmac(h, w->msg, a)) < 0 ||
	    call(w, K_HMAC, "gnutls_hmac", gnutls_hmac(h, w->msg + a, b - a)) <
		    0)
		goto out;
	c = gnutls_hmac_copy(h);
	if (c == NULL) {
		fail(w, K_HMAC, "gnutls_hmac_copy failed");
		goto out;
	}
	ref_update(&s, w->msg + b, len - b);
	ref_digest(&s, want);
	if (call(w, K_HMAC, "gnutls_hmac",
		 gnutls_hmac(h, w->msg + b, len - b)) == 0) {
		gnutls_hmac_output(h, got);
		check(w, K_HMAC, "MAC", got, want, 32);
	}
	ref_update(&s2, w->msg + a, len - a);
	ref_digest(&s2, want);
	if (call(w, K_HMAC, "gnutls_hmac",
		 gnutls_hmac(c, w->msg + a, len - a)) == 0) {
		gnutls_hmac_output(c, got);
		check(w, K_HMAC, "MAC of the copy", got, want, 32);
	}
	gnutls_hmac_deinit(c, NULL);
out:
	gnutls_hmac_deinit(h, NULL);
}

static void do_hmac_fast(struct worker *w, size_t len)
{
	uint8_t key[32], got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	struct ref_stream s;

	rng_fill(&w->rng, key, sizeof(key));
	ref_init(&s, hmac, key, sizeof(key));
	ref_update(&s, w->msg, len);
	ref_digest(&s, want);
	if (call(w, K_HMAC_FAST, "gnutls_hmac_fast",
		 gnutls_hmac_fast(hmac->id, key, sizeof(key), w->msg, len,
				  got)) == 0)
		check(w, K_HMAC_FAST, "MAC", got, want, 32);
}

static void do_hash(struct worker *w, size_t len)
{
	uint8_t got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	size_t off = 0, n;
	struct ref_stream s;
	gnutls_hash_hd_t h;

	ref_init(&s, sha, NULL, 0);
	ref_update(&s, w->msg, len);
	ref_digest(&s, want);
	if (call(w, K_HASH, "gnutls_hash_init", gnutls_hash_init(&h, sha->id)) <
	    0)
		return;
	while (off < len) {
		n = 1 + rng_below(&w->rng, len - off);
		if (call(w, K_HASH, "gnutls_hash",
			 gnutls_hash(h, w->msg + off, n)) < 0)
			break;
		off += n;
	}
	gnutls_hash_deinit(h, got);
	if (off == len)
		check(w, K_HASH, "digest", got, want, 32);
}

static void do_hash_fast(struct worker *w, size_t len)
{
	uint8_t got[REF_MAX_DIGEST], want[REF_MAX_DIGEST];
	struct ref_stream s;

	ref_init(&s, sha, NULL, 0);
	ref_update(&s, w->msg, len);
	ref_digest(&s, want);
	if (call(w, K_HASH_FAST, "gnutls_hash_fast",
		 gnutls_hash_fast(sha->id, w->msg, len, got)) == 0)
		check(w, K_HASH_FAST, "digest", got, want, 32);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	size_t len;
	enum kind k;

	pthread_barrier_wait(&start);
	for (w->op = 0; w->op < w->o->ops; w->op++) {
		k = rng_below(&w->rng, N_KINDS);
		len = rng_below(&w->rng, w->o->max_size + 1);
		rng_fill(&w->rng, w->msg, len);
		w->ops[k]++;
		switch (k) {
		case K_GCM:
			do_gcm(w, len);
			break;
		case K_CBC:
			do_cbc(w, len);
			break;
		case K_HMAC:
			do_hmac(w, len);
			break;
		case K_HMAC_FAST:
			do_hmac_fast(w, len);
			break;
		case K_HASH:
			do_hash(w, len);
			break;
		default:
			do_hash_fast(w, len);
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: threads [--threads N] [--ops N] [--max-size BYTES] [--seed S]\n");
	exit(EXIT_ERROR);
}

static unsigned long long number(const char *arg, unsigned long long max)
{
	unsigned long long v;
	char *end;

	if (arg == NULL || *arg < '0' || *arg > '9')
		usage();
	v = strtoull(arg, &end, 0);
	if (*end || v > max)
		usage();
	return v;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	o->threads = 8;
	o->ops = 300;
	o->max_size = 4096;
	o->seed = 1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0)
			o->threads = number(argv[++i], MAX_THREADS);
		else if (strcmp(argv[i], "--ops") == 0)
			o->ops = number(argv[++i], 1UL << 31);
		else if (strcmp(argv[i], "--max-size") == 0)
			o->max_size = number(argv[++i], 1 << 20);
		else if (strcmp(argv[i], "--seed") == 0)
			o->seed = number(argv[++i], ~0ULL);
		else
			usage();
	}
	if (o->threads == 0)
		usage();
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	unsigned long totals[N_KINDS] = { 0 }, failures = 0;
	size_t room;
	struct opts o;
	char name[32];
	unsigned i, k;
	int ret;

	parse_args(argc, argv, &o);
	gcm = ref_find("AES-128-GCM");
	cbc = ref_find("AES-128-CBC");
	hmac = ref_find("HMAC-SHA256");
	sha = ref_find("SHA256");
	if (!gcm || !cbc || !hmac || !sha || ref_check() < 0)
		return EXIT_ERROR;
	ret = gnutls_global_init();
	if (ret < 0) {
		printf("SKIP: gnutls_global_init: %s\n", gnutls_strerror(ret));
		return EXIT_SKIP;
	}
	printf("threads: %u threads, %lu operations each, sizes 0..%zu, seed %llu\n",
	       o.threads, o.ops, o.max_size, o.seed);

	room = o.max_size + REF_MAX_TAG;
	pthread_barrier_init(&start, NULL, o.threads);
	for (i = 0; i < o.threads; i++) {
		w[i].index = i;
		w[i].o = &o;
		snprintf(name, sizeof(name), "thread %u", i);
		rng_seed(&w[i].rng, o.seed, name);
		w[i].msg = malloc(room);
		w[i].out = malloc(room);
		w[i].back = malloc(room);
		w[i].ref = malloc(room);
		if (!w[i].msg || !w[i].out || !w[i].back || !w[i].ref)
			return EXIT_ERROR;
		if (pthread_create(&w[i].tid, NULL, work, &w[i]) != 0) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return EXIT_ERROR;
		}
	}
	for (i = 0; i < o.threads; i++) {
		pthread_join(w[i].tid, NULL);
		failures += w[i].failures;
		for (k = 0; k < N_KINDS; k++)
			totals[k] += w[i].ops[k];
		free(w[i].msg);
		free(w[i].out);
		free(w[i].back);
		free(w[i].ref);
	}
	pthread_barrier_destroy(&start);
	gnutls_global_deinit();

	printf("threads:");
	for (k = 0; k < N_KINDS; k++)
		printf("%s %lu %s", k ? "," : "", totals[k], kind_names[k]);
	printf("; %lu failures\n", failures);
	return failures ? EXIT_FAIL : EXIT_PASS;
}
