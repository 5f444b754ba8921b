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

/* afalgtool: what the AF_ALG backend does with each algorithm and why,
 * and --calibrate, the operator's act that measures the kernel against
 * GnuTLS's own code and writes the result as [afalg] settings, which the
 * library only reads.
 *
 * What the library has and learns comes from its report
 * (afalgtool-common.c); to describe, afalgtool asks it to try every
 * algorithm in the kernel first, as a first use would.  A calibration
 * runs in processes of this program beside it (the library in a process
 * is set up once, at start-up): one with the backend off
 * (GNUTLS_AFALG=off: GnuTLS's own code), one that sends every operation
 * the kernel takes to it (GNUTLS_AFALG=kernel), and one per other driver
 * it measures (afalgtool-calibrate.c). */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_alg.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "afalgtool.h"
#include "afalgtool-options.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

/* Why AF_ALG does not bind a device's driver by its name, or NULL: the
 * kernels of 2026 refuse what earlier ones took (doc/kernels-2026.md). */
static const char *driver_refused(const struct alg *a, const struct impl *d)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	static char why[160];
	int fd, ret, err;
	FILE *fp;
	long restrict_level = -1;

	fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL; /* said elsewhere: AF_ALG is not available */
	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s",
		 strcmp(a->family, "cipher") == 0 ? "skcipher" :
		 strcmp(a->family, "aead") == 0	  ? "aead" :
						    "hash");
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", d->driver);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	err = errno;
	close(fd);
	if (ret == 0)
		return NULL;
	fp = fopen("/proc/sys/crypto/af_alg_restrict", "re");
	if (fp != NULL) {
		if (fscanf(fp, "%ld", &restrict_level) != 1)
			restrict_level = -1;
		fclose(fp);
	}
	if (err == ENOENT && restrict_level > 0)
		snprintf(why, sizeof(why),
			 "not on AF_ALG's allowlist (af_alg_restrict is %ld)",
			 restrict_level);
	else if (err == ENOENT && d->async)
		snprintf(why, sizeof(why),
			 "asynchronous: since Linux 7.2 AF_ALG offers only "
			 "CPU implementations");
	else
		snprintf(why, sizeof(why), "bind: %s", strerror(err));
	return why;
}

static void print_impl(const struct alg *a, const struct impl *d)
{
	const char *refused = is_device(d) ? driver_refused(a, d) : NULL;

	printf("%s (priority %d%s%s, %s%s%s)", d->driver, d->priority,
	       d->module[0] ? ", module " : "", d->module,
	       is_device(d) ? "looks like a device" : "CPU instructions",
	       refused ? "; the kernel does not bind it through AF_ALG: " : "",
	       refused ? refused : "");
}

static void format_size(char *buf, size_t size, size_t t)
{
	if (t == NEVER)
		snprintf(buf, size, "never");
	else
		snprintf(buf, size, "%zu", t);
}

/* Why the library takes the path it takes. */
static void print_path(const struct alg *a, bool device)
{
	char t0[32], t1[32];
	bool hash = is_hash(a);
	bool never = (hash || a->setting[0] == NEVER) && a->setting[1] == NEVER;

	if (a->off) {
		printf("off: set by the operator\n");
	} else if (gnutls_fips140_mode_enabled()) {
		printf("GnuTLS's own code: FIPS mode registers nothing\n");
	} else if (strcmp(a->state, "ready") != 0) {
		printf("GnuTLS's own code%s: %s\n",
		       never ? " (not registered)" : "",
		       a->why[0] ? a->why : "the kernel was not asked");
	} else if (never) {
		printf("GnuTLS's own code (not registered): nothing measured "
		       "for it%s\n",
		       device ? "; its driver looks like a device: "
				"afalgtool --calibrate measures it" :
				"");
	} else if (!a->registered) {
		printf("GnuTLS's own code: not registered (--debug=2 says "
		       "why)\n");
	} else if (hash) {
		format_size(t1, sizeof(t1), a->setting[1]);
		printf("kernel for one-shot calls from %s bytes; contexts and "
		       "shorter calls: GnuTLS's own code\n",
		       t1);
	} else if (a->setting[0] == 0 && a->setting[1] == 0) {
		printf("kernel: every operation the kernel takes\n");
	} else {
		format_size(t0, sizeof(t0), a->setting[0]);
		format_size(t1, sizeof(t1), a->setting[1]);
		printf("kernel from %s bytes (%s) and %s (%s); GnuTLS's own "
		       "code below\n",
		       t0, dir_name(a, 0), t1, dir_name(a, 1));
	}
}

/* The implementation the library binds: the driver the settings name,
 * else the highest priority; n if the named driver is not listed. */
static unsigned in_use(const struct alg *a, const struct impl *const *d,
		       unsigned n)
{
	unsigned j;

	if (a->driver[0] == 0)
		return 0;
	for (j = 0; j < n; j++)
		if (strcmp(d[j]->driver, a->driver) == 0)
			break;
	return j;
}

static void describe(void)
{
	const struct impl *d[16];
	char value[160];
	unsigned i, j, n, u;

	read_proc_crypto();
	for (i = 0; i < n_algs; i++) {
		struct alg *a = &algs[i];

		n = impls_of(a->kname, d, sizeof(d) / sizeof(d[0]));
		u = in_use(a, d, n);
		printf("%s: kernel %s, driver ", a->label, a->kname);
		if (u < n)
			print_impl(a, d[u]);
		else if (a->driver[0])
			printf("%s (not listed for %s)", a->driver, a->kname);
		else
			printf("(none listed)");
		printf("\n");
		for (j = 0; j < n; j++) {
			if (j == u)
				continue;
			printf("  also ");
			print_impl(a, d[j]);
			printf("\n");
		}
		format_value(value, sizeof(value), a, a->off, a->setting,
			     a->driver);
		printf("  setting %s; ", value);
		print_path(a, u < n && is_device(d[u]));
		/* root, where the kernel gives unprivileged processes less
		 * (Linux 7.3's af_alg_restrict) */
		if (a->unpriv_state[0] != 0 && !a->off &&
		    strcmp(a->unpriv_state, a->state) != 0)
			printf("  an unprivileged process: %s\n",
			       strcmp(a->unpriv_state, "ready") == 0 ?
				       "the kernel takes it" :
			       a->unpriv_why[0] ? a->unpriv_why :
						  a->unpriv_state);
	}
}

static void tls_log_func(int level, const char *str)
{
	fprintf(stderr, "|<%d>| %s", level, str);
}

int main(int argc, char **argv)
{
	if (getenv("AFALGTOOL_WORKER") != NULL)
		return calibration_worker();

	optionProcess(&afalgtoolOptions, argc, argv);
	if (HAVE_OPT(DEBUG)) {
		gnutls_global_set_log_function(tls_log_func);
		gnutls_global_set_log_level(OPT_VALUE_DEBUG);
	}
	if (HAVE_OPT(CALIBRATE))
		return calibrate_main();
	read_report(0);
	read_unprivileged_report();
	read_report(REPORT_PROBE);
	describe();
	return 0;
}
