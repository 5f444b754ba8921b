/*
 * afalg-bench: throughput of every algorithm of the AF_ALG module, through
 * GnuTLS's public API only, so that it runs against any libgnutls (stock,
 * upstream's --enable-afalg, the accel build) chosen by LD_LIBRARY_PATH.
 *
 * A cell is one algorithm, one operation and one message size.  Each cell
 * runs one untimed operation, then operations until its time budget is
 * spent, and reports the operations, the bytes, the wall-clock seconds and
 * the process CPU seconds (user and system, from getrusage: AF_ALG work
 * done in the kernel is system time), hence MB/s by wall clock, MB/s by CPU
 * time and operations per second (MB = 10^6 bytes).
 *
 * With --copy, every operation first copies its input into the buffer it
 * reads, as a TLS record is read into a buffer and then decrypted, and
 * the copy is timed with it.  Under QEMU's emulation, software AES right
 * after the copy can be several times slower, depending on the code
 * between the two (see the README); elsewhere the copy costs every column
 * alike.
 *
 * Operations, per family:
 *   cipher  encrypt, decrypt: one gnutls_cipher_init() per cell, then
 *           gnutls_cipher_encrypt2()/decrypt2() of one message per operation
 *   aead    encrypt, decrypt: gnutls_aead_cipher_encrypt()/decrypt() (one
 *           shot, no AAD); decrypt takes a valid ciphertext, so every tag
 *           verifies
 *   mac     oneshot: gnutls_hmac_fast(); incremental: one gnutls_hmac_init()
 *           per cell, then gnutls_hmac() and gnutls_hmac_output()
 *   digest  oneshot: gnutls_hash_fast(); incremental: one gnutls_hash_init()
 *           per cell, then gnutls_hash() and gnutls_hash_output()
 *
 * With the module (0.3.0 and later) only the one-shot calls of MACs and
 * digests can go to the kernel: a MAC's or digest's context is GnuTLS's
 * own code whatever the settings, so the incremental cells run software
 * in every column (devel/bench-report says so of them).
 *
 * Usage: afalg-bench [--algorithms LIST] [--sizes LIST] [--budget SECONDS]
 *                    [--csv FILE] [--copy] [--progress] [--quiet]
 *        afalg-bench --serve [--sizes LIST]
 *        afalg-bench --list
 *
 * With --serve it measures one cell per request: it reads lines of
 * "ALGORITHM OP SIZE SECONDS" on stdin and answers each with the cell's CSV
 * row on stdout (the header first), or a line "error: ..." (SIZE at most
 * the largest of --sizes).  devel/bench-env keeps one such process per
 * column and has them take turns cell by cell, in slices of a cell's
 * budget, so that a change of the machine's pace hits every column alike.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

enum family {
	CIPHER,
	AEAD,
	MAC,
	DIGEST
};
enum op {
	ENCRYPT,
	DECRYPT,
	ONESHOT,
	INCREMENTAL
};

static const char *const family_names[] = { "cipher", "aead", "mac", "digest" };
static const char *const op_names[] = { "encrypt", "decrypt", "oneshot",
					"incremental" };

/* The two operations each family is measured with. */
static const enum op family_ops[][2] = {
	[CIPHER] = { ENCRYPT, DECRYPT },
	[AEAD] = { ENCRYPT, DECRYPT },
	[MAC] = { ONESHOT, INCREMENTAL },
	[DIGEST] = { ONESHOT, INCREMENTAL },
};

struct alg {
	const char *name;
	enum family family;
	int id; /* gnutls_{cipher,mac,digest}_algorithm_t */
};

/* The module's table (lib/accelerated/afalg/algorithms.c), in its order. */
static const struct alg algs[] = {
	{ "AES-128-CBC", CIPHER, GNUTLS_CIPHER_AES_128_CBC },
	{ "AES-192-CBC", CIPHER, GNUTLS_CIPHER_AES_192_CBC },
	{ "AES-256-CBC", CIPHER, GNUTLS_CIPHER_AES_256_CBC },
	{ "AES-128-XTS", CIPHER, GNUTLS_CIPHER_AES_128_XTS },
	{ "AES-256-XTS", CIPHER, GNUTLS_CIPHER_AES_256_XTS },
	{ "AES-128-GCM", AEAD, GNUTLS_CIPHER_AES_128_GCM },
	{ "AES-256-GCM", AEAD, GNUTLS_CIPHER_AES_256_GCM },
	{ "AES-128-CCM", AEAD, GNUTLS_CIPHER_AES_128_CCM },
	{ "AES-256-CCM", AEAD, GNUTLS_CIPHER_AES_256_CCM },
	{ "AES-128-CCM-8", AEAD, GNUTLS_CIPHER_AES_128_CCM_8 },
	{ "AES-256-CCM-8", AEAD, GNUTLS_CIPHER_AES_256_CCM_8 },
	{ "CHACHA20-POLY1305", AEAD, GNUTLS_CIPHER_CHACHA20_POLY1305 },
	{ "HMAC-SHA1", MAC, GNUTLS_MAC_SHA1 },
	{ "HMAC-SHA224", MAC, GNUTLS_MAC_SHA224 },
	{ "HMAC-SHA256", MAC, GNUTLS_MAC_SHA256 },
	{ "HMAC-SHA384", MAC, GNUTLS_MAC_SHA384 },
	{ "HMAC-SHA512", MAC, GNUTLS_MAC_SHA512 },
	{ "AES-CMAC-128", MAC, GNUTLS_MAC_AES_CMAC_128 },
	{ "AES-CMAC-256", MAC, GNUTLS_MAC_AES_CMAC_256 },
	{ "SHA1", DIGEST, GNUTLS_DIG_SHA1 },
	{ "SHA224", DIGEST, GNUTLS_DIG_SHA224 },
	{ "SHA256", DIGEST, GNUTLS_DIG_SHA256 },
	{ "SHA384", DIGEST, GNUTLS_DIG_SHA384 },
	{ "SHA512", DIGEST, GNUTLS_DIG_SHA512 },
	{ "SHA3-224", DIGEST, GNUTLS_DIG_SHA3_224 },
	{ "SHA3-256", DIGEST, GNUTLS_DIG_SHA3_256 },
	{ "SHA3-384", DIGEST, GNUTLS_DIG_SHA3_384 },
	{ "SHA3-512", DIGEST, GNUTLS_DIG_SHA3_512 },
};

#define N_ALGS (sizeof(algs) / sizeof(algs[0]))
#define MAX_SIZES 32
#define SLACK 64 /* room for a tag after a message */

static const size_t default_sizes[] = { 16,   64,    256,   1024,
					8192, 16384, 65536, 1048576 };

/* One cell's state: its handle and buffers.  plain holds random bytes;
 * data is the input, plain itself or, for AEAD decryption, its ciphertext
 * and tag in ct; with --copy each operation copies it to in and reads it
 * there; out takes the output. */
struct cell {
	const struct alg *alg;
	enum op op;
	size_t size;
	union {
		gnutls_cipher_hd_t cipher;
		gnutls_aead_cipher_hd_t aead;
		gnutls_hmac_hd_t mac;
		gnutls_hash_hd_t hash;
	} h;
	unsigned char key[64], nonce[16];
	size_t key_size, nonce_size, tag_size;
	const unsigned char *plain, *data;
	unsigned char *ct, *in, *out;
	int copy; /* --copy: data is copied to in before each operation */
};

struct result {
	uint64_t ops;
	double wall, user, sys;
};

static void fill(unsigned char *p, size_t n, uint32_t seed)
{
	while (n--) {
		seed = seed * 1103515245 + 12345;
		*p++ = seed >> 16;
	}
}

static double seconds(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The input arrives: with --copy, copied to where the operation reads
 * it. */
static const unsigned char *arrive(struct cell *c)
{
	size_t n = c->size;

	if (!c->copy)
		return c->data;
	if (c->alg->family == AEAD && c->op == DECRYPT)
		n += c->tag_size;
	memcpy(c->in, c->data, n);
	return c->in;
}

/* One operation of the cell; GnuTLS's return code. */
static int run_op(struct cell *c)
{
	size_t len = c->size + SLACK;
	const unsigned char *in = arrive(c);

	switch (c->alg->family) {
	case CIPHER:
		if (c->op == ENCRYPT)
			return gnutls_cipher_encrypt2(c->h.cipher, in,
						      c->size, c->out, len);
		return gnutls_cipher_decrypt2(c->h.cipher, in, c->size,
					      c->out, len);
	case AEAD:
		if (c->op == ENCRYPT)
			return gnutls_aead_cipher_encrypt(
				c->h.aead, c->nonce, c->nonce_size, NULL, 0,
				c->tag_size, in, c->size, c->out, &len);
		return gnutls_aead_cipher_decrypt(c->h.aead, c->nonce,
						  c->nonce_size, NULL, 0,
						  c->tag_size, in,
						  c->size + c->tag_size, c->out,
						  &len);
	case MAC:
		if (c->op == ONESHOT)
			return gnutls_hmac_fast(c->alg->id, c->key, c->key_size,
						in, c->size, c->out);
		if (gnutls_hmac(c->h.mac, in, c->size) < 0)
			return GNUTLS_E_INTERNAL_ERROR;
		gnutls_hmac_output(c->h.mac, c->out);
		return 0;
	case DIGEST:
		if (c->op == ONESHOT)
			return gnutls_hash_fast(c->alg->id, in, c->size,
						c->out);
		if (gnutls_hash(c->h.hash, in, c->size) < 0)
			return GNUTLS_E_INTERNAL_ERROR;
		gnutls_hash_output(c->h.hash, c->out);
		return 0;
	}
	return GNUTLS_E_INTERNAL_ERROR;
}

/* Creates the cell's handle (none for the one-shot calls).  For AEAD
 * decryption, encrypts the message into ct, so that its tag verifies, and
 * checks that it decrypts back. */
static int setup(struct cell *c)
{
	const struct alg *a = c->alg;
	gnutls_datum_t key = { c->key, 0 }, iv = { c->nonce, 0 };
	size_t len = c->size + SLACK;
	int ret = 0;

	if (a->family == CIPHER || a->family == AEAD) {
		c->key_size = gnutls_cipher_get_key_size(a->id);
		c->nonce_size = gnutls_cipher_get_iv_size(a->id);
		c->tag_size = gnutls_cipher_get_tag_size(a->id);
	} else if (a->family == MAC) {
		c->key_size = gnutls_hmac_get_key_size(a->id);
	}
	/* random keys: the two halves of an XTS key differ */
	fill(c->key, sizeof(c->key), a->id * 7 + 1);
	fill(c->nonce, sizeof(c->nonce), a->id * 7 + 2);
	key.size = c->key_size;
	iv.size = c->nonce_size;
	c->data = c->plain;

	switch (a->family) {
	case CIPHER:
		return gnutls_cipher_init(&c->h.cipher, a->id, &key, &iv);
	case AEAD:
		ret = gnutls_aead_cipher_init(&c->h.aead, a->id, &key);
		if (ret < 0 || c->op == ENCRYPT)
			return ret;
		ret = gnutls_aead_cipher_encrypt(c->h.aead, c->nonce,
						 c->nonce_size, NULL, 0,
						 c->tag_size, c->plain, c->size,
						 c->ct, &len);
		c->data = c->ct;
		if (ret >= 0)
			ret = run_op(c);
		if (ret >= 0 && memcmp(c->out, c->plain, c->size) != 0)
			ret = GNUTLS_E_DECRYPTION_FAILED;
		if (ret < 0)
			gnutls_aead_cipher_deinit(c->h.aead);
		return ret;
	case MAC:
		if (c->op == INCREMENTAL)
			ret = gnutls_hmac_init(&c->h.mac, a->id, c->key,
					       c->key_size);
		return ret;
	case DIGEST:
		if (c->op == INCREMENTAL)
			ret = gnutls_hash_init(&c->h.hash, a->id);
		return ret;
	}
	return GNUTLS_E_INTERNAL_ERROR;
}

static void teardown(struct cell *c)
{
	switch (c->alg->family) {
	case CIPHER:
		gnutls_cipher_deinit(c->h.cipher);
		break;
	case AEAD:
		gnutls_aead_cipher_deinit(c->h.aead);
		break;
	case MAC:
		if (c->op == INCREMENTAL)
			gnutls_hmac_deinit(c->h.mac, NULL);
		break;
	case DIGEST:
		if (c->op == INCREMENTAL)
			gnutls_hash_deinit(c->h.hash, NULL);
		break;
	}
}

/* Runs operations until the budget is spent.  The clock is read after
 * every batch; the next batch is sized to take half of the time left at
 * the pace so far, and at most twice the last one, so that a cell overshoots
 * its budget by about one operation however uneven the pace. */
static int time_cell(struct cell *c, double budget, struct result *r)
{
	struct rusage u0, u1;
	struct timespec t0;
	uint64_t batch = 1, i;
	double now, next;
	int ret;

	ret = run_op(c); /* untimed: first use of the handle */
	if (ret < 0)
		return ret;
	r->ops = 0;
	getrusage(RUSAGE_SELF, &u0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (i = 0; i < batch; i++) {
			ret = run_op(c);
			if (ret < 0)
				return ret;
		}
		r->ops += batch;
		now = since(&t0);
		if (now >= budget)
			break;
		next = (budget - now) / (now / r->ops) / 2;
		batch = next < 1 ? 1 : next > 2 * batch ? 2 * batch : next;
	}
	getrusage(RUSAGE_SELF, &u1);
	r->wall = now;
	r->user = seconds(&u1.ru_utime) - seconds(&u0.ru_utime);
	r->sys = seconds(&u1.ru_stime) - seconds(&u0.ru_stime);
	return 0;
}

static const char csv_header[] =
	"family,algorithm,op,size,ops,bytes,wall_s,user_s,sys_s,"
	"mbps_wall,mbps_cpu,ops_per_s\n";
static const char table_format[] =
	"%-7s %-18s %-11s %8s %9s %8s %8s %11s %11s %11s\n";

static void report(FILE *table, FILE *csv, const struct cell *c,
		   const struct result *r)
{
	double bytes = (double)r->ops * c->size, cpu = r->user + r->sys;
	double mb_wall = bytes / r->wall / 1e6;
	double mb_cpu = cpu > 0 ? bytes / cpu / 1e6 : 0;
	char size[24], ops[24], wall[24], cpus[24], mbw[24], mbc[24], opss[24];

	if (csv) {
		fprintf(csv,
			"%s,%s,%s,%zu,%llu,%.0f,%.6f,%.6f,%.6f,%.3f,%.3f,%.3f\n",
			family_names[c->alg->family], c->alg->name,
			op_names[c->op], c->size, (unsigned long long)r->ops,
			bytes, r->wall, r->user, r->sys, mb_wall, mb_cpu,
			r->ops / r->wall);
		fflush(csv); /* a run that is stopped keeps its rows */
	}
	if (!table)
		return;
	snprintf(size, sizeof(size), "%zu", c->size);
	snprintf(ops, sizeof(ops), "%llu", (unsigned long long)r->ops);
	snprintf(wall, sizeof(wall), "%.3f", r->wall);
	snprintf(cpus, sizeof(cpus), "%.3f", cpu);
	snprintf(mbw, sizeof(mbw), "%.2f", mb_wall);
	snprintf(mbc, sizeof(mbc), "%.2f", mb_cpu);
	snprintf(opss, sizeof(opss), "%.0f", r->ops / r->wall);
	fprintf(table, table_format, family_names[c->alg->family], c->alg->name,
		op_names[c->op], size, ops, wall, cpus, mbw, mbc, opss);
	fflush(table);
}

/* Sets the cell up, times it and reports it; GnuTLS's error code, also
 * reported on stderr. */
static int measure(struct cell *c, double budget, FILE *table, FILE *csv)
{
	struct result r = { 0 };
	int ret;

	ret = setup(c);
	if (ret >= 0) {
		ret = time_cell(c, budget, &r);
		teardown(c);
	}
	if (ret < 0) {
		fprintf(stderr, "afalg-bench: %s %s %zu: %s\n", c->alg->name,
			op_names[c->op], c->size, gnutls_strerror(ret));
		return ret;
	}
	report(table, csv, c, &r);
	return 0;
}

static const struct alg *find_alg(const char *name)
{
	size_t i;

	for (i = 0; i < N_ALGS; i++)
		if (strcasecmp(algs[i].name, name) == 0)
			return &algs[i];
	return NULL;
}

/* LIST: names and families ("aead"), comma separated; "all" is all. */
static int select_algs(char *list, int *chosen)
{
	char *name, *save = NULL;
	size_t i, f;

	for (name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		const struct alg *a = find_alg(name);
		int found = a != NULL;

		if (a)
			chosen[a - algs] = 1;
		for (f = 0; f < 4; f++) {
			if (strcasecmp(name, family_names[f]) &&
			    strcasecmp(name, "all"))
				continue;
			for (i = 0; i < N_ALGS; i++)
				if (algs[i].family == f ||
				    !strcasecmp(name, "all"))
					chosen[i] = 1;
			found = 1;
		}
		if (!found) {
			fprintf(stderr,
				"afalg-bench: unknown algorithm %s (see --list)\n",
				name);
			return -1;
		}
	}
	return 0;
}

static int find_op(const struct alg *a, const char *name, enum op *op)
{
	unsigned k;

	for (k = 0; k < 2; k++) {
		if (strcmp(op_names[family_ops[a->family][k]], name) == 0) {
			*op = family_ops[a->family][k];
			return 0;
		}
	}
	return -1;
}

/* --serve: one cell per line of stdin, its CSV row on stdout. */
static int serve(struct cell *c, size_t max_size)
{
	char line[256], name[64], op[32], *end;
	double budget;
	unsigned long size;
	int n;

	fputs(csv_header, stdout);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "%63s %31s %lu %lf%n", name, op, &size,
			   &budget, &n) != 4 ||
		    (end = line + n, strspn(end, " \n") != strlen(end))) {
			printf("error: not ALGORITHM OP SIZE SECONDS\n");
		} else if ((c->alg = find_alg(name)) == NULL ||
			   find_op(c->alg, op, &c->op) < 0) {
			printf("error: unknown algorithm or operation\n");
		} else if (size == 0 || size > max_size || !(budget > 0)) {
			printf("error: size not in 1..%zu or budget not > 0\n",
			       max_size);
		} else {
			c->size = size;
			if (measure(c, budget, NULL, stdout) < 0)
				printf("error: %s %s %lu failed\n", name, op,
				       size);
		}
		fflush(stdout);
	}
	return 0;
}

static int parse_sizes(char *list, size_t *sizes, size_t *n)
{
	char *s, *end, *save = NULL;

	*n = 0;
	for (s = strtok_r(list, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || *end || v == 0 || v % 16 || v > 64 << 20 ||
		    *n == MAX_SIZES) {
			fprintf(stderr,
				"afalg-bench: bad size %s (a multiple of 16, up to 64 MiB)\n",
				s);
			return -1;
		}
		sizes[(*n)++] = v;
	}
	return *n ? 0 : -1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: afalg-bench [OPTIONS]\n"
		"  -a, --algorithms LIST  names or families (cipher, aead, mac, digest),\n"
		"                         comma separated (default: all)\n"
		"  -s, --sizes LIST       message sizes in bytes, multiples of 16\n"
		"                         (default: 16,64,256,1024,8192,16384,65536,1048576)\n"
		"  -b, --budget SECONDS   time per cell (default: 0.2)\n"
		"  -o, --csv FILE         also write the results as CSV to FILE\n"
		"      --copy             copy the input in before each operation (timed)\n"
		"  -p, --progress         report progress and time left on stderr\n"
		"  -q, --quiet            no table on stdout\n"
		"  -l, --list             list the (chosen) algorithms and their operations\n"
		"      --serve            measure the cells named on stdin, one per line:\n"
		"                         ALGORITHM OP SIZE SECONDS (CSV rows on stdout)\n"
		"Library: whichever libgnutls the dynamic linker finds (LD_LIBRARY_PATH).\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "algorithms", required_argument, NULL, 'a' },
		{ "sizes", required_argument, NULL, 's' },
		{ "budget", required_argument, NULL, 'b' },
		{ "csv", required_argument, NULL, 'o' },
		{ "progress", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "list", no_argument, NULL, 'l' },
		{ "serve", no_argument, NULL, 'S' },
		{ "copy", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int chosen[N_ALGS] = { 0 }, any = 0, list = 0, progress = 0, status = 0;
	int serving = 0;
	size_t sizes[MAX_SIZES], n_sizes = 0, max_size = 0, i, j, k, done = 0;
	size_t total = 0;
	double budget = 0.2;
	FILE *csv = NULL, *table = stdout;
	struct timespec start;
	struct cell c = { 0 };
	unsigned char *plain;
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "a:s:b:o:pqlh", options, NULL)) !=
	       -1) {
		switch (opt) {
		case 'a':
			if (select_algs(optarg, chosen) < 0)
				return 2;
			any = 1;
			break;
		case 's':
			if (parse_sizes(optarg, sizes, &n_sizes) < 0)
				return 2;
			break;
		case 'b':
			budget = strtod(optarg, &end);
			if (*end || !(budget > 0)) {
				fprintf(stderr, "afalg-bench: bad budget %s\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			csv = fopen(optarg, "w");
			if (!csv) {
				perror(optarg);
				return 2;
			}
			break;
		case 'p':
			progress = 1;
			break;
		case 'q':
			table = NULL;
			break;
		case 'l':
			list = 1;
			break;
		case 'S':
			serving = 1;
			break;
		case 'C':
			c.copy = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (gnutls_global_init() < 0) {
		fprintf(stderr, "afalg-bench: gnutls_global_init failed\n");
		return 1;
	}
	if (!any)
		for (i = 0; i < N_ALGS; i++)
			chosen[i] = 1;
	if (list) {
		for (i = 0; i < N_ALGS; i++)
			if (chosen[i])
				printf("%-7s %-18s %s,%s\n",
				       family_names[algs[i].family],
				       algs[i].name,
				       op_names[family_ops[algs[i].family][0]],
				       op_names[family_ops[algs[i].family][1]]);
		gnutls_global_deinit();
		return 0;
	}
	if (!n_sizes) {
		n_sizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
		memcpy(sizes, default_sizes, sizeof(default_sizes));
	}
	for (j = 0; j < n_sizes; j++)
		if (sizes[j] > max_size)
			max_size = sizes[j];

	plain = malloc(max_size + SLACK);
	c.ct = malloc(max_size + SLACK);
	c.in = malloc(max_size + SLACK);
	c.out = malloc(max_size + SLACK);
	if (!plain || !c.ct || !c.in || !c.out) {
		fprintf(stderr, "afalg-bench: out of memory\n");
		return 1;
	}
	fill(plain, max_size + SLACK, 1);
	c.plain = plain;

	if (serving) {
		status = serve(&c, max_size);
		goto out;
	}
	for (i = 0; i < N_ALGS; i++)
		total += chosen[i] ? 2 * n_sizes : 0;
	if (csv)
		fputs(csv_header, csv);
	if (table) {
		printf("# afalg-bench: GnuTLS %s, %.3f s per cell, MB = 10^6 bytes,"
		       " CPU = user + system\n",
		       gnutls_check_version(NULL), budget);
		printf(table_format, "family", "algorithm", "op", "size", "ops",
		       "wall_s", "cpu_s", "MB/s_wall", "MB/s_cpu", "ops/s");
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < N_ALGS; i++) {
		if (!chosen[i])
			continue;
		for (k = 0; k < 2; k++) {
			c.alg = &algs[i];
			c.op = family_ops[algs[i].family][k];
			if (progress) {
				double spent = since(&start);
				double left =
					done ? spent / done * (total - done) :
					       (total - done) * budget;

				fprintf(stderr,
					"afalg-bench: %s %s (%zu/%zu cells), about %.0f s left\n",
					c.alg->name, op_names[c.op], done + 1,
					total, left);
			}
			for (j = 0; j < n_sizes; j++, done++) {
				c.size = sizes[j];
				if (measure(&c, budget, table, csv) < 0)
					status = 1;
			}
		}
	}
out:
	if (csv && fclose(csv) != 0) {
		perror("afalg-bench: writing the CSV file");
		status = 1;
	}
	free(plain);
	free(c.ct);
	free(c.in);
	free(c.out);
	gnutls_global_deinit();
	return status;
}
