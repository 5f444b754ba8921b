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

#ifndef GNUTLS_SRC_AFALGTOOL_H
#define GNUTLS_SRC_AFALGTOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NEVER SIZE_MAX
#define MAX_ALGS 32
#define N_SIZES 8 /* the sizes a calibration measures, at most */
#define CALIBRATION_SIZES                                       \
	{                                                       \
		64, 256, 1024, 4096, 8192, 16384, 60000, 262144 \
	}
#define CALIBRATION_MAX_SIZE 262144
#define MAX_CANDIDATES 4 /* drivers a calibration measures per algorithm */

/* A kernel implementation of an algorithm a calibration measures. */
struct candidate {
	char driver[64]; /* "" for the one the kernel picks */
	char failure[256]; /* "" if it was measured */
	size_t found[2];
	double ratio[2][N_SIZES]; /* kernel/software, by the criterion */
	double wall[2][N_SIZES]; /* and by wall-clock time */
	bool unsteady[2][N_SIZES];
	double score; /* lower is better; 0: never faster */
};

/* An algorithm of the backend, as the library reports it. */
struct alg {
	char label[32];
	char family[8];
	char kname[64];
	bool off;
	size_t setting[2];
	bool registered;
	char driver[64]; /* the driver the settings name, or "" */
	char state[16]; /* untried, ready, unusable, no-af-alg */
	char why[256]; /* why the kernel does not take it */
	unsigned kernel_ops, soft_ops, failures;
	/* the same for an unprivileged process (nobody, no capabilities),
	 * where this one is root: "" if not asked */
	char unpriv_state[16];
	char unpriv_why[256];
	/* calibration */
	bool measured;
	char failure[256]; /* why it was not measured, or "" */
	struct candidate cand[MAX_CANDIDATES];
	unsigned n_cand, chosen;
};

/* An implementation the kernel has, from /proc/crypto. */
struct impl {
	char name[64];
	char driver[128];
	char module[64];
	int priority;
	bool async;
};

extern struct alg algs[MAX_ALGS];
extern unsigned n_algs;

/* afalgtool-common.c: the library's report, /proc/crypto, settings */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#define REPORT_PROBE 1 /* GNUTLS_AFALG_REPORT_PROBE */
void read_report(unsigned flags);
void read_unprivileged_report(void);
struct alg *find_alg(const char *label);
bool is_hash(const struct alg *a);
const char *dir_name(const struct alg *a, int dir);
void format_value(char *buf, size_t size, const struct alg *a, bool off,
		  const size_t *t, const char *driver);
void read_proc_crypto(void);
unsigned impls_of(const char *kname, const struct impl **out, unsigned max);
bool is_device(const struct impl *d);

/* The sizes measured: the last only for ciphers, whose long calls the
 * kernel takes in requests of 64 KiB (AEAD and hash messages over 64 KiB
 * run in software). */
static inline unsigned calibration_n_sizes(const struct alg *a)
{
	return strcmp(a->family, "cipher") == 0 ? N_SIZES : N_SIZES - 1;
}

/* afalgtool-calibrate.c: --calibrate */
int calibrate_main(void);
/* afalgtool-worker.c: the processes --calibrate measures in */
int calibration_worker(void);
/* afalgtool-section.c: what --calibrate found, as an [afalg] section */
void write_section(FILE *fp, double wall_bound);
void output_target(const char *name, char *path, size_t size, bool *dropin);
void write_output(const char *name, double wall_bound);

#endif /* GNUTLS_SRC_AFALGTOOL_H */
