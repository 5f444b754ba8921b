/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * The GnuTLS is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public License
 * as published by the Free Software Foundation; either version 2.1 of
 * the License, or (at your option) any later version.
 *
 * This library is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>
 *
 */

/* Calibration: the software path and the kernel path of an algorithm
 * timed at a few sizes, in each direction, on the calling thread's CPU
 * clock (user and system time: the kernel's work is the thread's own),
 * each as the module runs it: a MAC or digest message on the module's
 * own kernel message path (mac.c), with the bytes it keeps for replay.
 * An AEAD is timed without associated data, where the kernel leads
 * most: data of 5 or 13 bytes (a TLS record's) leaves the text unaligned
 * in the kernel's buffers, which slowed its CCM by about 10% at 8192
 * bytes under emulation while software hardly changed.  Timed with 13
 * bytes, calibration kept in software the operations without such data
 * that the kernel ran 1.2-1.3x faster; timed without, the sizes it
 * gives the kernel were still the kernel's with 13 bytes (1.02-1.11x
 * in 17 of 18 measurements under emulation).
 * Each round times software, then the kernel, a few milliseconds apart;
 * a size's figure is the median over three rounds of the kernel's time
 * divided by software's, so that a change of the machine's pace (under
 * emulation up to 1.5x, for seconds at a time) hits both halves of a
 * round alike.  The threshold of a direction is the smallest measured
 * size from which the kernel takes under 95% of software's time at
 * every larger one, in two measurements: the second, of the sizes the
 * first sent to the kernel only, keeps one unlucky measurement from
 * sending work to a kernel that is not faster.
 *
 * A size that lost between two that won, or the largest size after one
 * that won, is measured once more, and counts as won if that
 * measurement wins (see retry_lone_losses()).
 *
 * Budget per algorithm: at each size, 128 KiB or 4 operations (at most
 * 256), for each path, direction and round: about 4.8 MiB per direction
 * in all, at most as much again for the second measurements, and 768
 * KiB (1.4 MiB at 60000 bytes) for each size measured once more (once
 * at most).
 *
 * Tests give the times a script instead (_gnutls_afalg_clock()): both
 * paths still run, and the kernel's time becomes a ratio of software's
 * that the test chose, so that the rules above can be checked on a real
 * kernel whatever the machine's pace. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include <accelerated/afalg.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const size_t sizes[] = { 64, 256, 1024, 4096, 8192, 16384, 60000 };
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))
#define BYTES_PER_SIZE (128 * 1024)
#define ROUNDS 3
/* The kernel must take under 95% of software's time.  Within that
 * software is kept: either path is as good, and software costs no
 * system call.  A wider margin leaves no room for a measurement's error
 * on that side: at 90%, a kernel whose real lead was 11% but measured
 * 9% kept operations in software that then ran at 0.90x of it or less
 * (vm-slow: AES-256-GCM decryption of 16384 bytes, 0.89x; vm: SHA3
 * messages of 64 KiB, 0.89-0.90x). */
#define MARGIN 0.95

static unsigned reps(size_t size)
{
	return MIN(MAX(BYTES_PER_SIZE / size, 4), 256);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the test's clock -------------------------------------------------- */

#define SCRIPT_MAX 4

/* For each size, the kernel / software ratio of its first, second, ...
 * measurement in a direction (the last one repeated); a size without one
 * loses (1.0). */
static struct {
	bool on;
	unsigned n[N_SIZES];
	double ratio[N_SIZES][SCRIPT_MAX];
} script;

static double script_ratio(unsigned i, unsigned pass)
{
	if (script.n[i] == 0)
		return 1.0;
	return script.ratio[i][MIN(pass, script.n[i] - 1)];
}

static int script_size(size_t size)
{
	unsigned i;

	for (i = 0; i < N_SIZES; i++)
		if (sizes[i] == size)
			return i;
	return -1;
}

/* One "SIZE:RATIO[,RATIO...]" of a script. */
static int script_entry(const char *spec, char **end)
{
	int i = script_size(strtoul(spec, end, 10));

	if (i < 0 || **end != ':')
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	do {
		spec = *end + 1;
		if (script.n[i] == SCRIPT_MAX)
			return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
		script.ratio[i][script.n[i]] = strtod(spec, end);
		if (*end == spec || script.ratio[i][script.n[i]] <= 0)
			return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
		script.n[i]++;
	} while (**end == ',');
	return 0;
}

/* Test interface: "SIZE:RATIO[,RATIO...] ..." makes every calibration
 * from now on take, as the kernel's time for the k-th measurement of
 * SIZE in a direction, RATIO k times software's (the last RATIO for the
 * measurements after it; 1.0 for a size not named), with SIZE one of
 * the sizes calibration measures.  Its thresholds come "from a test's
 * clock" and are not cached.  NULL or "" ends it.  Not for use while a
 * calibration runs. */
int _gnutls_afalg_clock(const char *spec)
{
	char *end;
	int ret;

	memset(&script, 0, sizeof(script));
	if (spec == NULL || *spec == 0)
		return 0;
	while (*spec != 0) {
		ret = script_entry(spec, &end);
		if (ret < 0) {
			memset(&script, 0, sizeof(script));
			return ret;
		}
		for (spec = end; *spec == ' '; spec++)
			;
	}
	script.on = true;
	return 0;
}

/* Everything a measurement needs; buffers of the largest size plus a
 * tag, and a ciphertext that the decryptions can verify. */
struct bench {
	struct afalg_alg *alg;
	uint8_t key[AFALG_MAX_KEY_SIZE];
	size_t key_size;
	uint8_t iv[AFALG_MAX_IV_SIZE];
	uint8_t *in, *out;
	void *soft;
	int op;
	void *msg; /* MACs and digests: the module's kernel message path */
	unsigned passes[N_SIZES]; /* measurements of each size, this dir */
};

static const gnutls_crypto_cipher_st *cops(const struct bench *b)
{
	return b->alg->soft.cipher;
}

static bool is_hash(const struct bench *b)
{
	return b->alg->family == AFALG_MAC || b->alg->family == AFALG_DIGEST;
}

/* dir 0 and 1 of ciphers, and of MACs and digests */
static const char *const dir_names[2][2] = { { "encrypt", "decrypt" },
					     { "message", "one-shot" } };

/* ---- one path, one direction, one size --------------------------------- */

static int soft_cipher(struct bench *b, int dec, size_t size, unsigned n)
{
	const gnutls_crypto_cipher_st *o = cops(b);
	unsigned i;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		if (b->alg->family == AFALG_AEAD && dec)
			ret = o->aead_decrypt(b->soft, b->iv, b->alg->iv_size,
					      NULL, 0, b->alg->tag_size, b->in,
					      size + b->alg->tag_size, b->out,
					      size);
		else if (b->alg->family == AFALG_AEAD)
			ret = o->aead_encrypt(b->soft, b->iv, b->alg->iv_size,
					      NULL, 0, b->alg->tag_size, b->out,
					      size, b->out,
					      size + b->alg->tag_size);
		else if (dec)
			ret = o->decrypt(b->soft, b->in, size, b->out, size);
		else
			ret = o->encrypt(b->soft, b->in, size, b->out, size);
	}
	return ret;
}

static int kernel_cipher(struct bench *b, int dec, size_t size, unsigned n)
{
	uint8_t iv[AFALG_MAX_IV_SIZE];
	size_t iv_size = _afalg_kernel_iv(b->alg, b->iv, b->alg->iv_size, iv);
	size_t tag = b->alg->tag_size;
	unsigned i;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		if (b->alg->family == AFALG_AEAD)
			ret = _afalg_kernel_aead(b->op, !dec, iv, iv_size, NULL,
						 0, b->in,
						 dec ? size + tag : size,
						 b->out,
						 dec ? size : size + tag);
		else
			ret = _afalg_kernel_cipher(b->op, !dec, iv, iv_size,
						   b->in, b->out, size);
	}
	return ret;
}

/* dir 0: a message on a context (software's, or the module's sending
 * every message to the kernel: the bytes kept for replay, checkpoints
 * and all), dir 1: the one-shot call (which opens or borrows a
 * socket). */
static int soft_hash(struct bench *b, int oneshot, size_t size, unsigned n)
{
	const struct afalg_alg *a = b->alg;
	bool mac = a->family == AFALG_MAC;
	unsigned i;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		if (oneshot && mac)
			ret = a->soft.mac->fast(a->id, NULL, 0, b->key,
						b->key_size, b->in, size,
						b->out);
		else if (oneshot)
			ret = a->soft.digest->fast(a->id, b->in, size, b->out);
		else if (mac)
			ret = a->soft.mac->hash(b->soft, b->in, size) ||
			      a->soft.mac->output(b->soft, b->out, a->tag_size);
		else
			ret = a->soft.digest->hash(b->soft, b->in, size) ||
			      a->soft.digest->output(b->soft, b->out,
						     a->tag_size);
	}
	return ret;
}

static int kernel_hash(struct bench *b, int oneshot, size_t size, unsigned n)
{
	unsigned i;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		if (oneshot)
			ret = _afalg_kernel_hash_fast(b->alg, b->key,
						      b->key_size, b->in, size,
						      b->out);
		else
			ret = _afalg_hash_kernel_message(b->msg, b->in, size,
							 b->out);
	}
	return ret;
}

/* Seconds for n operations of one path; negative if it failed. */
static double timed(struct bench *b, bool kernel, int dir, size_t size)
{
	unsigned n = reps(size);
	double start = cpu_now();
	int ret;

	if (is_hash(b))
		ret = kernel ? kernel_hash(b, dir, size, n) :
			       soft_hash(b, dir, size, n);
	else
		ret = kernel ? kernel_cipher(b, dir, size, n) :
			       soft_cipher(b, dir, size, n);
	return ret == 0 ? cpu_now() - start : -1;
}

/* ---- set-up ------------------------------------------------------------ */

static int bench_init(struct bench *b, struct afalg_alg *alg)
{
	size_t room = sizes[N_SIZES - 1] + AFALG_MAX_OUTPUT_SIZE;
	int ret;

	memset(b, 0, sizeof(*b));
	b->alg = alg;
	b->op = -1;
	b->key_size = alg->key_size ? alg->key_size : 32;
	ret = gnutls_rnd(GNUTLS_RND_NONCE, b->key, b->key_size);
	if (ret < 0)
		return ret;
	b->in = gnutls_calloc(1, room);
	b->out = gnutls_calloc(1, room);
	if (b->in == NULL || b->out == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	gnutls_rnd(GNUTLS_RND_NONCE, b->iv, sizeof(b->iv));
	if (is_hash(b))
		return _afalg_hash_kernel_new(alg, b->key, b->key_size,
					      &b->msg);
	return _afalg_kernel_open(alg, b->key, b->key_size, &b->op);
}

static int soft_init(struct bench *b, int dec)
{
	const struct afalg_alg *a = b->alg;
	int ret;

	switch (a->family) {
	case AFALG_CIPHER:
	case AFALG_AEAD:
		ret = cops(b)->init(a->id, &b->soft, !dec);
		if (ret == 0)
			ret = cops(b)->setkey(b->soft, b->key, b->key_size);
		if (ret == 0 && a->family == AFALG_CIPHER)
			ret = cops(b)->setiv(b->soft, b->iv, a->iv_size);
		return ret;
	case AFALG_MAC:
		ret = a->soft.mac->init(a->id, &b->soft);
		return ret == 0 ? a->soft.mac->setkey(b->soft, b->key,
						      b->key_size) :
				  ret;
	case AFALG_DIGEST:
		return a->soft.digest->init(a->id, &b->soft);
	}
	return GNUTLS_E_INTERNAL_ERROR;
}

static void soft_free(struct bench *b)
{
	if (b->soft == NULL)
		return;
	if (b->alg->family == AFALG_MAC)
		b->alg->soft.mac->deinit(b->soft);
	else if (b->alg->family == AFALG_DIGEST)
		b->alg->soft.digest->deinit(b->soft);
	else
		cops(b)->deinit(b->soft);
	b->soft = NULL;
}

/* An AEAD decryption needs a ciphertext that verifies: one per size. */
static int sealed_input(struct bench *b, size_t size)
{
	void *enc;
	int ret;

	ret = cops(b)->init(b->alg->id, &enc, 1);
	if (ret < 0)
		return ret;
	ret = cops(b)->setkey(enc, b->key, b->key_size);
	if (ret == 0)
		ret = cops(b)->aead_encrypt(enc, b->iv, b->alg->iv_size, NULL,
					    0, b->alg->tag_size, b->out, size,
					    b->in, size + b->alg->tag_size);
	cops(b)->deinit(enc);
	return ret;
}

/* ---- the thresholds ---------------------------------------------------- */

/* The smallest size from which ratio (kernel / software time) stays
 * under MARGIN; first is the index of the first size measured. */
static size_t threshold(const double ratio[N_SIZES], unsigned first)
{
	size_t t = AFALG_NEVER;
	int i;

	for (i = N_SIZES - 1; i >= (int)first; i--) {
		if (ratio[i] >= MARGIN)
			break;
		t = i == 0 ? 0 : sizes[i];
	}
	return t;
}

/* The figures behind a direction's threshold, at GNUTLS_DEBUG_LEVEL=2:
 * MB/s of CPU time per size, software/kernel (medians). */
static void log_dir(const struct bench *b, int dir, const double soft[N_SIZES],
		    const double kernel[N_SIZES], unsigned first)
{
	char line[512];
	size_t len = 0;
	unsigned i;

	if (likely(_gnutls_log_level < 2))
		return;
	for (i = first; i < N_SIZES && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len,
				" %zu:%.1f/%.1f", sizes[i],
				sizes[i] * reps(sizes[i]) / soft[i] / 1e6,
				kernel[i] > 0 ? sizes[i] * reps(sizes[i]) /
							kernel[i] / 1e6 :
						0.0);
	_gnutls_debug_log("afalg: %s %s, MB/s software/kernel%s:%s\n",
			  _afalg_label(b->alg), dir_names[is_hash(b)][dir],
			  first > 0 ? " (again)" : "", line);
}

static double median3(const double v[3])
{
	return MAX(MIN(v[0], v[1]), MIN(MAX(v[0], v[1]), v[2]));
}

/* Times the sizes from index first to last: soft and kernel get each
 * size's median time, ratio the median of the rounds' kernel / software
 * times.  A failure of either path ends the measurement: a size the
 * kernel failed at has no figure to go by. */
static int measure_sizes(struct bench *b, int dir, unsigned first,
			 unsigned last, double soft[N_SIZES],
			 double kernel[N_SIZES], double ratio[N_SIZES])
{
	double s[ROUNDS], k[ROUNDS], r[ROUNDS];
	unsigned i, round;
	int ret = 0;

	for (i = first; i <= last && ret == 0; i++) {
		if (b->alg->family == AFALG_AEAD && dir &&
		    (ret = sealed_input(b, sizes[i])) < 0)
			break;
		for (round = 0; round < ROUNDS && ret == 0; round++) {
			s[round] = timed(b, false, dir, sizes[i]);
			k[round] = timed(b, true, dir, sizes[i]);
			if (s[round] <= 0 || k[round] < 0)
				ret = gnutls_assert_val(
					GNUTLS_E_INTERNAL_ERROR);
			else if (script.on)
				k[round] = s[round] *
					   script_ratio(i, b->passes[i]);
			r[round] = k[round] / s[round];
		}
		if (ret < 0)
			break;
		b->passes[i]++;
		soft[i] = median3(s);
		kernel[i] = median3(k);
		ratio[i] = median3(r);
	}
	return ret;
}

/* Size i lost, and the sizes either side of it won (the size below it,
 * for the largest). */
static bool lone_loss(const double ratio[N_SIZES], unsigned first, unsigned i)
{
	return i > first && ratio[i] >= MARGIN && ratio[i - 1] < MARGIN &&
	       (i + 1 == N_SIZES || ratio[i + 1] < MARGIN);
}

/* The kernel's lead grows with the size (its cost per call is spread
 * over more bytes), so a size that lost after one that won is more
 * likely a change of the machine's pace than the kernel's: each such
 * size from index first up that won above it too, or is the largest, is
 * measured once more (once per direction: retried), and the new figure
 * counts if it won. */
static int retry_lone_losses(struct bench *b, int dir, unsigned first,
			     double ratio[N_SIZES], bool retried[N_SIZES],
			     double soft[N_SIZES], double kernel[N_SIZES])
{
	double again[N_SIZES];
	unsigned i;
	int ret = 0;

	for (i = first; i < N_SIZES && ret == 0; i++) {
		if (retried[i] || !lone_loss(ratio, first, i))
			continue;
		retried[i] = true;
		ret = measure_sizes(b, dir, i, i, soft, kernel, again);
		if (ret < 0)
			break;
		_gnutls_debug_log("afalg: %s %s: %zu bytes lost alone "
				  "(%.2f), once more: %.2f\n",
				  _afalg_label(b->alg),
				  dir_names[is_hash(b)][dir], sizes[i],
				  ratio[i], again[i]);
		if (again[i] < MARGIN)
			ratio[i] = again[i];
	}
	return ret;
}

/* A first measurement of every size; if it sends some sizes to the
 * kernel, a second of those sizes must agree.  A size won needs two
 * measurements won, and lost at most one. */
static int measure_dir(struct bench *b, int dir, size_t *t)
{
	double soft[N_SIZES], kernel[N_SIZES], ratio[N_SIZES];
	double again[N_SIZES];
	bool retried[N_SIZES] = { false };
	unsigned i, first;
	int ret;

	*t = AFALG_NEVER;
	memset(b->passes, 0, sizeof(b->passes));
	ret = soft_init(b, dir);
	if (ret == 0)
		ret = measure_sizes(b, dir, 0, N_SIZES - 1, soft, kernel,
				    ratio);
	if (ret == 0)
		ret = retry_lone_losses(b, dir, 0, ratio, retried, soft,
					kernel);
	if (ret == 0) {
		log_dir(b, dir, soft, kernel, 0);
		*t = threshold(ratio, 0);
	}
	if (ret == 0 && *t != AFALG_NEVER) {
		for (first = 0; sizes[first] < *t; first++)
			;
		ret = measure_sizes(b, dir, first, N_SIZES - 1, soft, kernel,
				    again);
		if (ret == 0) {
			log_dir(b, dir, soft, kernel, first);
			for (i = first; i < N_SIZES; i++)
				ratio[i] = MAX(ratio[i], again[i]);
			ret = retry_lone_losses(b, dir, first, ratio, retried,
						soft, kernel);
		}
		*t = ret == 0 ? threshold(ratio, first) : AFALG_NEVER;
	}
	soft_free(b);
	return ret;
}

/* Sets the thresholds of alg; a failure leaves it in software. */
void _afalg_calibrate(struct afalg_alg *alg)
{
	struct bench b;
	size_t t[2] = { AFALG_NEVER, AFALG_NEVER };
	enum afalg_source source;
	double start = cpu_now();
	int ret, dir;

	ret = bench_init(&b, alg);
	for (dir = 0; dir < 2 && ret == 0; dir++)
		ret = measure_dir(&b, dir, &t[dir]);
	_afalg_kernel_close(&b.op);
	_afalg_hash_kernel_free(b.msg);
	gnutls_memset(b.key, 0, sizeof(b.key));
	gnutls_free(b.in);
	gnutls_free(b.out);
	/* a measurement cut short says nothing about the kernel's speed:
	 * software for this process, and nothing for the cache, so that the
	 * next process measures again */
	if (ret < 0) {
		_gnutls_debug_log(
			"afalg: %s: calibration stopped after %.3f s of CPU time: %s\n",
			_afalg_label(alg), cpu_now() - start,
			gnutls_strerror(ret));
		t[0] = t[1] = AFALG_NEVER;
	} else {
		_gnutls_debug_log(
			"afalg: %s calibrated in %.3f s of CPU time%s\n",
			_afalg_label(alg), cpu_now() - start,
			script.on ? " (a test's clock)" : "");
	}
	if (ret < 0)
		source = AFALG_FROM_FAILURE;
	else
		source = script.on ? AFALG_FROM_TEST_CLOCK :
				     AFALG_FROM_CALIBRATION;
	_afalg_set_thresholds(alg, t[0], t[1], source);
}
