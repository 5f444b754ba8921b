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
 * processes of this program (afalgtool-worker.c): one with the backend off
 * (GNUTLS_AFALG=off), one that sends every operation the kernel takes to
 * it (GNUTLS_AFALG=kernel), and one per other driver measured
 * (off,ALG=kernel@DRIVER).  They take turns size by size; the rule that
 * turns the times into thresholds is afalgtool-threshold.h, and the
 * driver with the lowest sum of that rule wins.  What was found is written
 * by afalgtool-section.c. */

#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "afalgtool.h"
#include "afalgtool-options.h"
#include "afalgtool-threshold.h"

static const size_t sizes[N_SIZES] = CALIBRATION_SIZES;
#define ROUNDS 3 /* and as many again for the sizes found to win */
#define BYTES_PER_SIZE (512 * 1024)

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

/* The criterion: wall-clock time (0), or the process's CPU time where
 * the wall-clock time is at most wall_bound times software's. */
static double wall_bound;
static const char *only;
/* --drivers: 0 the kernel's pick (and the one named), 1 also devices,
 * 2 every implementation */
static int drivers = 1;

/* Seconds of count operations, t[0] by wall clock and t[1] of CPU time;
 * -1 if the worker failed, or a kernel call failed meanwhile (the
 * library then used software); state: what the library's report says
 * of the algorithm after them (NULL: not wanted). */
static int timed(struct worker *w, const struct alg *a, int dir, size_t size,
		 unsigned count, double t[2], char state[16])
{
	char line[256], st[16];
	unsigned fails;

	fprintf(w->to, "%s %d %zu %u\n", a->label, dir, size, count);
	if (fflush(w->to) != 0 || fgets(line, sizeof(line), w->from) == NULL)
		die("the %s worker stopped", w->mode);
	if (sscanf(line, "ok %lf %lf %u %15s", &t[0], &t[1], &fails, st) != 4 ||
	    fails > 0 || t[0] <= 0)
		return -1;
	if (state != NULL)
		memcpy(state, st, sizeof(st));
	if (t[1] <= 0) /* below the clock's resolution */
		t[1] = 1e-9;
	return 0;
}

/* The worker's library's reason why the kernel does not take it. */
static void ask_why(struct worker *w, const struct alg *a, char *buf,
		    size_t size)
{
	char line[512];

	fprintf(w->to, "why %s\n", a->label);
	if (fflush(w->to) != 0 || fgets(line, sizeof(line), w->from) == NULL)
		die("the %s worker stopped", w->mode);
	line[strcspn(line, "\n")] = 0;
	snprintf(buf, size, "%s",
		 strncmp(line, "why ", 4) == 0 && line[4] ? line + 4 :
							    "no reason given");
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
	if (wall_bound == 0)
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

	for (i = first; i < calibration_n_sizes(a); i++) {
		for (p = 0; p < 2; p++) {
			bool k = (p + round) % 2;

			if (timed(k ? kernel : soft, a, dir, sizes[i],
				  reps(sizes[i]), t[k], NULL) < 0)
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
	char state[16];
	unsigned n = calibration_n_sizes(a), round, i, k = n, rounds = ROUNDS,
		 first = 0;
	const char *err;

	/* MACs and digests: one-shot calls only (their contexts are
	 * GnuTLS's own code) */
	if (dir == 0 && is_hash(a)) {
		c->found[0] = NEVER;
		return NULL;
	}
	/* the first operation tries the algorithm in the kernel and opens
	 * its socket: not timed; a driver the kernel refuses is not
	 * measured */
	if (timed(soft, a, dir, sizes[0], 1, t, NULL) < 0)
		return "software failed";
	if (timed(kernel, a, dir, sizes[0], 1, t, state) < 0)
		return "the kernel failed";
	if (strcmp(state, "ready") != 0) {
		ask_why(kernel, a, c->failure, sizeof(c->failure));
		return c->failure;
	}
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
		for (dir = 0; dir < 2 && c->failure[0] == 0; dir++) {
			const char *err = calibrate_dir(soft, k, a, c, dir);

			if (err != NULL && err != c->failure)
				snprintf(c->failure, sizeof(c->failure), "%s",
					 err);
		}
		if (k != kernel)
			reap(k);
		if (c->failure[0] == 0 && (a->cand[a->chosen].failure[0] != 0 ||
					   c->score < a->cand[a->chosen].score))
			a->chosen = j;
	}
	a->measured = a->cand[a->chosen].failure[0] == 0;
	if (!a->measured)
		snprintf(a->failure, sizeof(a->failure), "%s",
			 a->cand[a->chosen].failure);
}

static void calibrate(void)
{
	struct worker soft, kernel;
	struct timespec start, end;
	char value[160];
	unsigned i;

	if (gnutls_fips140_mode_enabled())
		die("FIPS mode: the AF_ALG backend stays off, nothing to "
		    "measure");
	/* what the kernel takes, as a first use in this process finds (and
	 * where this is root, in an unprivileged one) */
	read_report(0);
	read_unprivileged_report();
	read_report(REPORT_PROBE);
	for (i = 0; i < n_algs; i++)
		if (strcmp(algs[i].state, "no-af-alg") == 0)
			die("AF_ALG is not available: %s: nothing to measure",
			    algs[i].why);
	/* a worker that dies is reported, not a signal */
	signal(SIGPIPE, SIG_IGN);
	read_proc_crypto();
	spawn(&soft, "off");
	spawn(&kernel, "kernel");
	for (i = 0; i < n_algs; i++) {
		struct alg *a = &algs[i];

		if (a->off || !selected(a))
			continue;
		/* the kernel's own pick refused (a driver named in the
		 * settings is measured with the others) */
		if (strcmp(a->state, "unusable") == 0 && a->driver[0] == 0) {
			snprintf(a->failure, sizeof(a->failure), "%s", a->why);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &start);
		calibrate_alg(&soft, &kernel, a);
		clock_gettime(CLOCK_MONOTONIC, &end);
		format_value(value, sizeof(value), a, false,
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

/* afalgtool --calibrate [--criterion=time|cpu[:BOUND]]
 * [--drivers=default|devices|all] [--algorithms=LIST] [--output=FILE] */
int calibrate_main(void)
{
	const char *crit = HAVE_OPT(CRITERION) ? OPT_ARG(CRITERION) : "time";
	char *end;

	if (strncmp(crit, "cpu", 3) == 0 && (crit[3] == 0 || crit[3] == ':')) {
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
	/* a target refused is refused before anything is measured */
	if (HAVE_OPT(OUTPUT)) {
		char path[PATH_MAX];
		bool dropin;

		output_target(OPT_ARG(OUTPUT), path, sizeof(path), &dropin);
	}
	calibrate();
	if (HAVE_OPT(OUTPUT))
		write_output(OPT_ARG(OUTPUT), wall_bound);
	else
		write_section(stdout, wall_bound);
	return 0;
}
