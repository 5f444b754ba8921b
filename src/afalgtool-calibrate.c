/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * GnuTLS is free software: you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation, either version 3 of the License, or
 * (at your option) any later version.
 *
 * GnuTLS is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

/* afalgtool --calibrate: the kernel against GnuTLS's own code, in
 * processes of this program (the library in a process is set up once,
 * at start-up): one with the backend off (GNUTLS_AFALG=off), one that
 * sends every operation the kernel takes to it (GNUTLS_AFALG=kernel),
 * and one per other driver measured (off,ALG=kernel@DRIVER).  All run the
 * public API as applications do, and take turns size by size; the rule
 * that turns the times into thresholds is afalgtool-threshold.h, and the
 * driver with the lowest sum of that rule wins.  What was found is
 * written as an [afalg] section of settings. */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "afalgtool.h"
#include "afalgtool-options.h"
#include "afalgtool-threshold.h"

static const size_t sizes[N_SIZES] = { 64,   256,   1024,  4096,
				       8192, 16384, 60000, 262144 };
#define MAX_SIZE 262144

/* The sizes measured: the last only for ciphers, whose long calls the
 * kernel takes in requests of 64 KiB (AEAD and hash messages over 64 KiB
 * run in software). */
static unsigned n_sizes(const struct alg *a)
{
	return strcmp(a->family, "cipher") == 0 ? N_SIZES : N_SIZES - 1;
}
#define ROUNDS 3 /* and as many again for the sizes found to win */
#define BYTES_PER_SIZE (512 * 1024)

/* ---- the worker: one of the processes a calibration times ------------- */

/* A kernel failure the library logged (it then used software). */
static unsigned failures_logged;

static void count_failures(int level, const char *str)
{
	(void)level;
	if (strstr(str, "afalg:") != NULL &&
	    (strstr(str, "failed") != NULL || strstr(str, "has no") != NULL ||
	     strstr(str, "rejected") != NULL))
		failures_logged++;
}

struct wctx {
	const struct alg *a;
	gnutls_cipher_hd_t cipher[2];
	gnutls_aead_cipher_hd_t aead;
	gnutls_hmac_hd_t hmac;
	gnutls_hash_hd_t hash;
	int id;
	uint8_t key[64];
	size_t key_size;
	uint8_t nonce[16];
	size_t nonce_size, tag_size;
};

static uint8_t in[MAX_SIZE + 64], out[MAX_SIZE + 64], sealed[60000 + 64];

static int wctx_init(struct wctx *w, const struct alg *a)
{
	gnutls_datum_t key, iv;
	int ret = 0, i;

	memset(w, 0, sizeof(*w));
	w->a = a;
	if (strcmp(a->family, "cipher") == 0 ||
	    strcmp(a->family, "aead") == 0) {
		w->id = gnutls_cipher_get_id(a->label);
		w->key_size = gnutls_cipher_get_key_size(w->id);
		w->nonce_size = gnutls_cipher_get_iv_size(w->id);
		w->tag_size = gnutls_cipher_get_tag_size(w->id);
	} else if (strcmp(a->family, "mac") == 0) {
		w->id = gnutls_mac_get_id(strncmp(a->label, "HMAC-", 5) == 0 ?
						  a->label + 5 :
						  a->label);
		w->key_size = gnutls_mac_get_key_size(w->id);
		if (w->key_size == 0)
			w->key_size = 32;
	} else {
		w->id = gnutls_digest_get_id(a->label);
	}
	if (w->id == 0 || w->key_size > sizeof(w->key))
		return GNUTLS_E_INVALID_REQUEST;
	gnutls_rnd(GNUTLS_RND_NONCE, w->key, w->key_size);
	gnutls_rnd(GNUTLS_RND_NONCE, w->nonce, sizeof(w->nonce));
	key = (gnutls_datum_t){ w->key, w->key_size };
	iv = (gnutls_datum_t){ w->nonce, w->nonce_size };
	if (strcmp(a->family, "cipher") == 0) {
		for (i = 0; i < 2 && ret == 0; i++)
			ret = gnutls_cipher_init(&w->cipher[i], w->id, &key,
						 &iv);
	} else if (strcmp(a->family, "aead") == 0) {
		ret = gnutls_aead_cipher_init(&w->aead, w->id, &key);
	} else if (strcmp(a->family, "mac") == 0) {
		ret = gnutls_hmac_init(&w->hmac, w->id, w->key, w->key_size);
	} else {
		ret = gnutls_hash_init(&w->hash, w->id);
	}
	return ret;
}

static int one_op(struct wctx *w, int dir, size_t size)
{
	size_t n = sizeof(out);

	if (w->cipher[0] != NULL)
		return dir ? gnutls_cipher_decrypt2(w->cipher[1], in, size, out,
						    size) :
			     gnutls_cipher_encrypt2(w->cipher[0], in, size, out,
						    size);
	if (w->aead != NULL)
		return dir ? gnutls_aead_cipher_decrypt(w->aead, w->nonce,
							w->nonce_size, NULL, 0,
							w->tag_size, sealed,
							size + w->tag_size, out,
							&n) :
			     gnutls_aead_cipher_encrypt(w->aead, w->nonce,
							w->nonce_size, NULL, 0,
							w->tag_size, in, size,
							out, &n);
	if (w->hmac != NULL) {
		if (dir)
			return gnutls_hmac_fast(w->id, w->key, w->key_size, in,
						size, out);
		if (gnutls_hmac(w->hmac, in, size) < 0)
			return GNUTLS_E_INTERNAL_ERROR;
		gnutls_hmac_output(w->hmac, out);
		return 0;
	}
	if (dir)
		return gnutls_hash_fast(w->id, in, size, out);
	if (gnutls_hash(w->hash, in, size) < 0)
		return GNUTLS_E_INTERNAL_ERROR;
	gnutls_hash_output(w->hash, out);
	return 0;
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Requests on standard input, "LABEL DIR SIZE COUNT"; answers "ok WALL
 * CPU FAILURES" (seconds of COUNT operations, by wall clock and of the
 * whole process's CPU time) or "error WHY". */
int calibration_worker(void)
{
	static struct wctx ctx[MAX_ALGS];
	char line[256], label[32];
	unsigned dir, count, i, k;
	size_t size, n;
	double wall, cpu;
	int ret;

	gnutls_global_set_log_function(count_failures);
	gnutls_global_set_log_level(2);
	read_info();
	gnutls_rnd(GNUTLS_RND_NONCE, in, sizeof(in));
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "%31s %u %zu %u", label, &dir, &size,
			   &count) != 4 ||
		    dir > 1 || size > MAX_SIZE) {
			printf("error bad request\n");
			fflush(stdout);
			continue;
		}
		for (i = 0; i < n_algs && strcmp(algs[i].label, label); i++)
			;
		ret = i < n_algs ? 0 : GNUTLS_E_INVALID_REQUEST;
		if (ret == 0 && ctx[i].a == NULL)
			ret = wctx_init(&ctx[i], &algs[i]);
		if (ret == 0 && ctx[i].aead != NULL && dir) {
			n = sizeof(sealed);
			ret = gnutls_aead_cipher_encrypt(
				ctx[i].aead, ctx[i].nonce, ctx[i].nonce_size,
				NULL, 0, ctx[i].tag_size, in, size, sealed, &n);
		}
		failures_logged = 0;
		wall = now(CLOCK_MONOTONIC);
		cpu = now(CLOCK_PROCESS_CPUTIME_ID);
		for (k = 0; k < count && ret == 0; k++)
			ret = one_op(&ctx[i], dir, size);
		cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu;
		wall = now(CLOCK_MONOTONIC) - wall;
		if (ret < 0)
			printf("error %s\n", gnutls_strerror(ret));
		else
			printf("ok %.9f %.9f %u\n", wall, cpu, failures_logged);
		fflush(stdout);
	}
	return 0;
}

/* ---- calibration ------------------------------------------------------ */

struct worker {
	const char *mode;
	pid_t pid;
	FILE *to, *from;
};

static void spawn(struct worker *w, const char *mode)
{
	int to[2], from[2];

	w->mode = mode;
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	w->pid = fork();
	if (w->pid < 0)
		die("fork: %s", strerror(errno));
	if (w->pid == 0) {
		if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
			_exit(127);
		setenv("GNUTLS_AFALG", mode, 1);
		setenv("AFALGTOOL_WORKER", "1", 1);
		execl("/proc/self/exe", "afalgtool", (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	w->to = fdopen(to[1], "w");
	w->from = fdopen(from[0], "r");
	if (w->to == NULL || w->from == NULL)
		die("fdopen: %s", strerror(errno));
}

static void reap(struct worker *w)
{
	fclose(w->to);
	fclose(w->from);
	waitpid(w->pid, NULL, 0);
}

/* The criterion: wall-clock time, or the process's CPU time where the
 * wall-clock time is at most wall_bound times software's. */
static bool by_cpu;
static double wall_bound;
static const char *only;
/* --drivers: 0 the kernel's pick (and the one named), 1 also devices,
 * 2 every implementation */
static int drivers = 1;

/* Seconds of count operations, t[0] by wall clock and t[1] of CPU time;
 * -1 if the worker failed or (kernel) the library logged a kernel
 * failure. */
static int timed(struct worker *w, const struct alg *a, int dir, size_t size,
		 unsigned count, double t[2])
{
	char line[256];
	unsigned fails;

	fprintf(w->to, "%s %d %zu %u\n", a->label, dir, size, count);
	if (fflush(w->to) != 0 || fgets(line, sizeof(line), w->from) == NULL)
		die("the %s worker stopped", w->mode);
	if (sscanf(line, "ok %lf %lf %u", &t[0], &t[1], &fails) != 3 ||
	    fails > 0 || t[0] <= 0)
		return -1;
	if (t[1] <= 0) /* below the clock's resolution */
		t[1] = 1e-9;
	return 0;
}

static unsigned reps(size_t size)
{
	unsigned n = BYTES_PER_SIZE / size;

	return n < 8 ? 8 : n > 1024 ? 1024 : n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	double tmp[2 * ROUNDS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* The kernel/software ratio by the criterion, from the two clocks'. */
static double criterion(double wall, double cpu)
{
	if (!by_cpu)
		return wall;
	return wall <= wall_bound ? cpu : (wall > cpu ? wall : cpu);
}

/* Kernel/software time ratios of one size over the rounds, by wall clock
 * and of CPU time. */
struct ratios {
	double wall[2 * ROUNDS], cpu[2 * ROUNDS];
};

/* One round at the sizes from first on: software and kernel take turns,
 * in the other order each round, so that a change of the machine's pace
 * hits both. */
static const char *round_at(struct worker *soft, struct worker *kernel,
			    const struct alg *a, int dir, unsigned first,
			    unsigned round, struct ratios *r)
{
	double t[2][2];
	unsigned i, p;

	for (i = first; i < n_sizes(a); i++) {
		for (p = 0; p < 2; p++) {
			bool k = (p + round) % 2;

			if (timed(k ? kernel : soft, a, dir, sizes[i],
				  reps(sizes[i]), t[k]) < 0)
				return k ? "the kernel failed" :
					   "software failed";
		}
		r[i].wall[round] = t[1][0] / t[0][0];
		r[i].cpu[round] = t[1][1] / t[0][1];
	}
	return NULL;
}

/* What a size's rounds say, by the criterion: their median, or the worst
 * of them where some rounds win (under the margin) and others clearly
 * lose (over its inverse): an engine whose latency changes phase, where
 * a threshold must hold in either phase. */
static double size_ratio(const struct ratios *r, unsigned rounds,
			 bool *unsteady)
{
	double v[2 * ROUNDS], lo = 0, hi = 0;
	unsigned j;

	for (j = 0; j < rounds; j++) {
		v[j] = criterion(r->wall[j], r->cpu[j]);
		if (j == 0 || v[j] < lo)
			lo = v[j];
		if (j == 0 || v[j] > hi)
			hi = v[j];
	}
	*unsteady = lo < AFALG_MARGIN && hi > 1 / AFALG_MARGIN;
	return *unsteady ? hi : median(v, rounds);
}

/* The threshold of one direction for one driver: ROUNDS rounds at every
 * size, then ROUNDS more at the sizes found to go to the kernel, which
 * must win again over all the rounds. */
static const char *calibrate_dir(struct worker *soft, struct worker *kernel,
				 const struct alg *a, struct candidate *c,
				 int dir)
{
	struct ratios r[N_SIZES];
	double t[2];
	unsigned n = n_sizes(a), round, i, k = n, rounds = ROUNDS, first = 0;
	const char *err;

	/* a first operation opens the kernel's socket: not timed */
	if (timed(soft, a, dir, sizes[0], 1, t) < 0)
		return "software failed";
	if (timed(kernel, a, dir, sizes[0], 1, t) < 0)
		return "the kernel failed";
	for (round = 0; round < 2 * ROUNDS; round++) {
		if (round == ROUNDS) {
			if (k == n)
				break;
			first = k;
		}
		err = round_at(soft, kernel, a, dir, first, round, r);
		if (err != NULL)
			return err;
		if (round == ROUNDS - 1 || round == 2 * ROUNDS - 1) {
			for (i = 0; i < n; i++) {
				rounds = i < first ? ROUNDS : round + 1;
				c->ratio[dir][i] = size_ratio(
					&r[i], rounds, &c->unsteady[dir][i]);
				c->wall[dir][i] = median(r[i].wall, rounds);
			}
			k = afalg_threshold_index(c->ratio[dir], n,
						  AFALG_MARGIN);
		}
	}
	c->found[dir] = k < n ? sizes[k] : NEVER;
	for (i = k; i < n; i++)
		c->score += c->ratio[dir][i] - AFALG_MARGIN;
	return NULL;
}

/* Whether the operator asked for this algorithm (--algorithms). */
static bool selected(const struct alg *a)
{
	const char *list = only;
	size_t len = strlen(a->label);
	const char *p;

	if (list == NULL)
		return true;
	for (p = list; (p = strstr(p, a->label)) != NULL; p += len)
		if ((p == list || p[-1] == ',') &&
		    (p[len] == 0 || p[len] == ','))
			return true;
	return false;
}

/* The drivers to measure: the one the kernel picks, the one the settings
 * name, and every other that looks like a device (--drivers=default:
 * none other; all: every implementation /proc/crypto lists). */
static void find_candidates(struct alg *a)
{
	const struct impl *d[16];
	unsigned n, j;

	a->n_cand = 1;
	memset(&a->cand[0], 0, sizeof(a->cand[0]));
	n = impls_of(a->kname, d, sizeof(d) / sizeof(d[0]));
	for (j = 0; j < n && a->n_cand < MAX_CANDIDATES; j++) {
		bool named = strcmp(d[j]->driver, a->driver) == 0;

		/* d[0] is what binding the name reaches; a name AF_ALG
		 * cannot bind is left out */
		if (j == 0 || strlen(d[j]->driver) >= sizeof(a->driver) ||
		    !(named || drivers == 2 ||
		      (drivers == 1 && is_device(d[j]))))
			continue;
		memset(&a->cand[a->n_cand], 0, sizeof(a->cand[0]));
		snprintf(a->cand[a->n_cand].driver, sizeof(a->cand[0].driver),
			 "%s", d[j]->driver);
		a->n_cand++;
	}
}

static void calibrate_alg(struct worker *soft, struct worker *kernel,
			  struct alg *a)
{
	struct worker own;
	char mode[256];
	unsigned j;
	int dir;

	find_candidates(a);
	a->chosen = 0;
	for (j = 0; j < a->n_cand; j++) {
		struct candidate *c = &a->cand[j];
		struct worker *k = kernel;

		if (c->driver[0]) {
			snprintf(mode, sizeof(mode), "off,%s=kernel@%s",
				 a->label, c->driver);
			spawn(&own, mode);
			k = &own;
		}
		for (dir = 0; dir < 2 && c->failure == NULL; dir++)
			c->failure = calibrate_dir(soft, k, a, c, dir);
		if (c->driver[0])
			reap(&own);
		if (c->failure == NULL && (a->cand[a->chosen].failure != NULL ||
					   c->score < a->cand[a->chosen].score))
			a->chosen = j;
	}
	a->measured = a->cand[a->chosen].failure == NULL;
	if (!a->measured)
		a->failure = a->cand[a->chosen].failure;
}

static void calibrate(int afalg)
{
	struct worker soft, kernel;
	struct timespec start, end;
	char value[160];
	unsigned i;

	if (gnutls_fips140_mode_enabled())
		die("FIPS mode: the AF_ALG backend stays off, nothing to "
		    "measure");
	if (afalg != 0)
		die("the kernel has no AF_ALG (%s): nothing to measure",
		    strerror(afalg));
	/* a worker that dies is reported, not a signal */
	signal(SIGPIPE, SIG_IGN);
	read_proc_crypto();
	spawn(&soft, "off");
	spawn(&kernel, "kernel");
	for (i = 0; i < n_algs; i++) {
		struct alg *a = &algs[i];

		if (a->off || !selected(a))
			continue;
		if (a->bound != 0 && a->driver[0] == 0) {
			a->failure = "the kernel has no such algorithm";
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &start);
		calibrate_alg(&soft, &kernel, a);
		clock_gettime(CLOCK_MONOTONIC, &end);
		format_value(value, sizeof(value), false,
			     a->cand[a->chosen].found,
			     a->cand[a->chosen].driver);
		if (a->measured)
			fprintf(stderr,
				"afalgtool: %s: %s (%u driver%s, %.1f s)\n",
				a->label, value, a->n_cand,
				a->n_cand > 1 ? "s" : "",
				end.tv_sec - start.tv_sec +
					(end.tv_nsec - start.tv_nsec) / 1e9);
		else
			fprintf(stderr, "afalgtool: %s: %s\n", a->label,
				a->failure);
	}
	reap(&soft);
	reap(&kernel);
}

static void write_ratios(FILE *fp, const char *what, const double *v,
			 const bool *unsteady, unsigned n)
{
	unsigned j;

	fprintf(fp, "#   %s:", what);
	for (j = 0; j < n; j++)
		fprintf(fp, " %.2f%s", v[j],
			unsteady != NULL && unsteady[j] ? "!" : "");
	fprintf(fp, "\n");
}

/* The measurements of an algorithm, as comments. */
static void write_measured(FILE *fp, const struct alg *a)
{
	unsigned j;
	int dir;

	for (j = 0; j < a->n_cand; j++) {
		const struct candidate *c = &a->cand[j];

		fprintf(fp, "# %s, %s%s%s", a->label,
			c->driver[0] ? "driver " : "the kernel's pick",
			c->driver,
			j == a->chosen && a->n_cand > 1 ? " (chosen)" : "");
		if (c->failure != NULL) {
			fprintf(fp, ": %s\n", c->failure);
			continue;
		}
		fprintf(fp, "\n");
		for (dir = 0; dir < 2; dir++) {
			write_ratios(fp, dir_name(a, dir), c->ratio[dir],
				     c->unsteady[dir], n_sizes(a));
			if (by_cpu)
				write_ratios(fp, "  wall-clock", c->wall[dir],
					     NULL, n_sizes(a));
		}
	}
}

/* The [afalg] section: what was measured, and what the library has now
 * for the algorithms that were not. */
static void write_section(FILE *fp)
{
	char value[160], date[64];
	struct utsname u;
	time_t t = time(NULL);
	unsigned i, j;

	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	if (uname(&u) < 0)
		snprintf(u.release, sizeof(u.release), "unknown");
	fprintf(fp, "[afalg]\n");
	fprintf(fp, "# afalgtool --calibrate, %s, Linux %s, by ", date,
		u.release);
	if (by_cpu)
		fprintf(fp,
			"CPU time within %.2fx software's wall-clock time;\n",
			wall_bound);
	else
		fprintf(fp, "wall-clock time;\n");
	fprintf(fp, "# kernel/software time at");
	for (j = 0; j < N_SIZES; j++)
		fprintf(fp, " %zu", sizes[j]);
	fprintf(fp, " bytes (the last for ciphers only; !: rounds "
		    "disagreed, the worst kept)\n");
	for (i = 0; i < n_algs; i++) {
		const struct alg *a = &algs[i];

		if (a->measured) {
			write_measured(fp, a);
			format_value(
				value, sizeof(value), false,
				a->cand[a->chosen].found,
				a->cand[a->chosen].found[0] == NEVER &&
						a->cand[a->chosen].found[1] ==
							NEVER ?
					"" :
					a->cand[a->chosen].driver);
		} else {
			if (a->failure != NULL)
				fprintf(fp, "# %s: %s\n", a->label, a->failure);
			format_value(value, sizeof(value), a->off, a->setting,
				     a->driver);
			if (strcmp(value, "auto") == 0 && a->failure == NULL)
				continue;
		}
		fprintf(fp, "%s = %s\n", a->label, value);
	}
}

/* Whether a line of an INI file starts a section, and whether [afalg]. */
static bool section_start(const char *line, bool *afalg)
{
	size_t len;

	line += strspn(line, " \t");
	if (line[0] != '[')
		return false;
	len = strcspn(line + 1, "]");
	*afalg = len == 5 && strncasecmp(line + 1, "afalg", 5) == 0;
	return true;
}

/* Replaces the [afalg] section of path (made if missing) with the new
 * one, through a new file renamed over the old, whose mode it keeps. */
static void write_output(const char *name)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16], line[4096];
	bool in_afalg = false, afalg, newline = true;
	struct stat st;
	mode_t mode = 0644;
	FILE *old, *fp;
	int fd;

	/* a link (crypto-policies makes them) is written through */
	if (realpath(name, path) == NULL) {
		if (errno != ENOENT)
			die("%s: %s", name, strerror(errno));
		snprintf(path, sizeof(path), "%s", name);
	}
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		die("%s: %s", tmp, strerror(errno));
	fp = fdopen(fd, "w");
	if (fp == NULL || fchmod(fd, mode) < 0)
		die("%s: %s", tmp, strerror(errno));
	old = fopen(path, "re");
	while (old != NULL && fgets(line, sizeof(line), old) != NULL) {
		if (section_start(line, &afalg))
			in_afalg = afalg;
		if (!in_afalg) {
			fputs(line, fp);
			newline = line[strlen(line) - 1] == '\n';
		}
	}
	if (old != NULL)
		fclose(old);
	if (!newline)
		fputc('\n', fp);
	write_section(fp);
	if (ferror(fp) || fclose(fp) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		die("%s: %s", path, strerror(errno));
	}
	fprintf(stderr, "afalgtool: [afalg] written to %s\n", path);
}

/* afalgtool --calibrate [--criterion=time|cpu[:BOUND]]
 * [--drivers=default|devices|all]
 * [--algorithms=LIST] [--output=FILE] */
int calibrate_main(int afalg)
{
	const char *crit = HAVE_OPT(CRITERION) ? OPT_ARG(CRITERION) : "time";
	char *end;

	if (strncmp(crit, "cpu", 3) == 0 && (crit[3] == 0 || crit[3] == ':')) {
		by_cpu = true;
		wall_bound = 1.10;
		if (crit[3] == ':') {
			wall_bound = strtod(crit + 4, &end);
			if (end == crit + 4 || *end != 0 ||
			    !(wall_bound >= 1) || wall_bound > 1000)
				die("--criterion=cpu:BOUND: BOUND is a number "
				    "from 1 (the kernel's wall-clock time at "
				    "most BOUND times software's)");
		}
	} else if (strcmp(crit, "time") != 0) {
		die("--criterion is time, cpu or cpu:BOUND");
	}
	if (HAVE_OPT(DRIVERS)) {
		static const char *const names[] = { "default", "devices",
						     "all" };

		for (drivers = 0; drivers < 3; drivers++)
			if (strcmp(OPT_ARG(DRIVERS), names[drivers]) == 0)
				break;
		if (drivers == 3)
			die("--drivers is default, devices or all");
	}
	only = HAVE_OPT(ALGORITHMS) ? OPT_ARG(ALGORITHMS) : NULL;
	calibrate(afalg);
	if (HAVE_OPT(OUTPUT))
		write_output(OPT_ARG(OUTPUT));
	else
		write_section(stdout);
	return 0;
}
