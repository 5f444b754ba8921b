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
 * With --closer, one more thread plays an application that closes the
 * descriptors it does not know of (as a daemon, or a program with a
 * double close, does), the module's among them, while the others work,
 * and opens connections that take the lowest free numbers, whose peers
 * have bytes waiting: no result may be wrong, no crypto call may block,
 * and the library must not close, read from or write to the
 * application's connections.  It runs until the workers are done; a
 * worker that does not finish within --limit seconds (a call blocked) is
 * a failure.
 *
 * Usage: threads [--threads N] [--ops N] [--max-size BYTES] [--seed S]
 *                [--closer] [--limit SECONDS]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
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
	int closer;
	unsigned limit;
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

/* ---- the application that closes what it does not know of ----------- */

#ifndef AF_ALG
#define AF_ALG 38
#endif
#define MAX_FD 8192
#define CONNECTIONS 8

static const char waiting[64] = "the peer's bytes, which the library must "
				"not take";
static int workers_done;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;

static bool done(void)
{
	bool d;

	pthread_mutex_lock(&done_lock);
	d = workers_done;
	pthread_mutex_unlock(&done_lock);
	return d;
}

struct connection {
	int fd, peer;
	dev_t dev;
	ino_t ino;
};

struct closer {
	pthread_t tid;
	unsigned long rounds, closed; /* module sockets closed */
	unsigned long failures;
	struct connection c[CONNECTIONS];
	unsigned n;
	bool seen[MAX_FD];
	char why[256];
};

static bool is_afalg(int fd)
{
	socklen_t len = sizeof(int);
	int domain;

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
	       domain == AF_ALG;
}

/* The application's connections are as it left them. */
static void check_connections(struct closer *c)
{
	char buf[sizeof(waiting)];
	struct stat st;
	unsigned i;

	for (i = 0; i < c->n; i++) {
		struct connection *x = &c->c[i];

		if (fstat(x->fd, &st) < 0 || st.st_dev != x->dev ||
		    st.st_ino != x->ino)
			snprintf(c->why, sizeof(c->why),
				 "the application's connection %d was closed "
				 "or replaced",
				 x->fd);
		else if (recv(x->peer, buf, 1, MSG_DONTWAIT) >= 0)
			snprintf(c->why, sizeof(c->why),
				 "the library sent data to the peer of the "
				 "application's connection %d",
				 x->fd);
		else if (recv(x->fd, buf, sizeof(buf),
			      MSG_DONTWAIT | MSG_PEEK) != sizeof(buf))
			snprintf(c->why, sizeof(c->why),
				 "the library read from the application's "
				 "connection %d",
				 x->fd);
		else
			continue;
		c->failures++;
		return;
	}
}

static void *closer(void *arg)
{
	struct closer *c = arg;
	struct stat st;
	unsigned i;
	int fd, pair[2];

	while (!done() && c->failures == 0) {
		check_connections(c);
		for (i = 0; i < c->n; i++) {
			close(c->c[i].fd);
			close(c->c[i].peer);
		}
		c->n = 0;
		/* every descriptor it does not know of (the module's) that
		 * its previous round saw too: a number the module has just
		 * got from the kernel and is moving (two system calls) is
		 * not one an application can have learnt of; closing it and
		 * opening another file there within those calls is the one
		 * thing the module cannot tell (kernel.c) */
		for (fd = 3; fd < MAX_FD; fd++) {
			bool seen = c->seen[fd];

			c->seen[fd] = is_afalg(fd);
			if (seen && c->seen[fd] && close(fd) == 0) {
				c->seen[fd] = false;
				c->closed++;
			}
		}
		/* connections, at the lowest free numbers */
		for (i = 0; i < CONNECTIONS; i++) {
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				       pair) < 0 ||
			    fstat(pair[0], &st) < 0 ||
			    write(pair[1], waiting, sizeof(waiting)) !=
				    sizeof(waiting)) {
				snprintf(c->why, sizeof(c->why),
					 "socketpair: %s", strerror(errno));
				c->failures++;
				return NULL;
			}
			c->c[c->n].fd = pair[0];
			c->c[c->n].peer = pair[1];
			c->c[c->n].dev = st.st_dev;
			c->c[c->n++].ino = st.st_ino;
		}
		c->rounds++;
	}
	check_connections(c);
	return NULL;
}

/* Ends the process where the workers are not done within the limit. */
static void *watchdog(void *arg)
{
	const struct opts *o = arg;
	struct timespec deadline;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += o->limit;
	pthread_mutex_lock(&done_lock);
	while (!workers_done && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&done_cond, &done_lock, &deadline);
	pthread_mutex_unlock(&done_lock);
	if (ret != ETIMEDOUT)
		return NULL;
	printf("FAIL the workers did not finish within %u s: a call "
	       "blocked\n",
	       o->limit);
	fflush(stdout);
	_exit(EXIT_FAIL);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: threads [--threads N] [--ops N] [--max-size BYTES] [--seed S]\n"
		"               [--closer] [--limit SECONDS]\n");
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

	memset(o, 0, sizeof(*o));
	o->threads = 8;
	o->ops = 300;
	o->max_size = 4096;
	o->seed = 1;
	o->limit = 600;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0)
			o->threads = number(argv[++i], MAX_THREADS);
		else if (strcmp(argv[i], "--ops") == 0)
			o->ops = number(argv[++i], 1UL << 31);
		else if (strcmp(argv[i], "--max-size") == 0)
			o->max_size = number(argv[++i], 1 << 20);
		else if (strcmp(argv[i], "--seed") == 0)
			o->seed = number(argv[++i], ~0ULL);
		else if (strcmp(argv[i], "--closer") == 0)
			o->closer = 1;
		else if (strcmp(argv[i], "--limit") == 0)
			o->limit = number(argv[++i], 1 << 20);
		else
			usage();
	}
	if (o->threads == 0)
		usage();
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	static struct closer c;
	unsigned long totals[N_KINDS] = { 0 }, failures = 0;
	pthread_t watchdog_tid;
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
	printf("threads: %u threads, %lu operations each, sizes 0..%zu, seed %llu%s\n",
	       o.threads, o.ops, o.max_size, o.seed,
	       o.closer ? ", an application closing the descriptors it does "
			  "not know of" :
			  "");
	if (o.closer && pthread_create(&c.tid, NULL, closer, &c) != 0)
		return EXIT_ERROR;

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
	/* a call that blocks (a receive on a socket that is not the
	 * module's) keeps its worker from finishing */
	if (pthread_create(&watchdog_tid, NULL, watchdog, &o) != 0 ||
	    pthread_detach(watchdog_tid) != 0)
		return EXIT_ERROR;
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
	pthread_mutex_lock(&done_lock);
	workers_done = 1;
	pthread_cond_broadcast(&done_cond);
	pthread_mutex_unlock(&done_lock);
	if (o.closer) {
		pthread_join(c.tid, NULL);
		printf("threads: the application closed %lu of the module's "
		       "descriptors in %lu rounds of 8 connections\n",
		       c.closed, c.rounds);
		if (c.failures) {
			printf("FAIL the application's connections: %s\n",
			       c.why);
			failures++;
		}
	}
	gnutls_global_deinit();

	printf("threads:");
	for (k = 0; k < N_KINDS; k++)
		printf("%s %lu %s", k ? "," : "", totals[k], kind_names[k]);
	printf("; %lu failures\n", failures);
	return failures ? EXIT_FAIL : EXIT_PASS;
}
