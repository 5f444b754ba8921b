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
 * A calibration runs in processes of this program beside it (the library
 * in a process is set up once, at start-up): one with the backend off
 * (GNUTLS_AFALG=off: GnuTLS's own code), one that sends every operation
 * the kernel takes to it (GNUTLS_AFALG=kernel), and one per other driver
 * it measures (afalgtool-calibrate.c). */

#include "config.h"

#include <errno.h>
#include <stdarg.h>
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

/* in libgnutls, GNUTLS_PRIVATE_3_4 */
int _gnutls_afalg_info(gnutls_datum_t *out);

struct alg algs[MAX_ALGS];
unsigned n_algs;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "afalgtool: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static size_t parse_threshold(const char *s)
{
	return strcmp(s, "never") == 0 ? NEVER : strtoull(s, NULL, 10);
}

void read_info(void)
{
	gnutls_datum_t info;
	char *line, *save = NULL, off[8], t0[32], t1[32], reg[16];
	char driver[64];
	int ret;

	ret = _gnutls_afalg_info(&info);
	if (ret < 0)
		die("%s", gnutls_strerror(ret));
	for (line = strtok_r((char *)info.data, "\n", &save);
	     line != NULL && n_algs < MAX_ALGS;
	     line = strtok_r(NULL, "\n", &save)) {
		struct alg *a = &algs[n_algs];

		if (sscanf(line, "%31s %7s %63s %7s %31s %31s %15s %63s",
			   a->label, a->family, a->kname, off, t0, t1, reg,
			   driver) != 8)
			continue;
		snprintf(a->driver, sizeof(a->driver), "%s",
			 strcmp(driver, "-") == 0 ? "" : driver);
		a->off = strcmp(off, "off") == 0;
		a->setting[0] = parse_threshold(t0);
		a->setting[1] = parse_threshold(t1);
		a->registered = strcmp(reg, "registered") == 0;
		n_algs++;
	}
	gnutls_free(info.data);
	if (n_algs == 0)
		die("the library describes no algorithm (a libgnutls without "
		    "the AF_ALG backend, or another version of it?)");
}

bool is_hash(const struct alg *a)
{
	return strcmp(a->family, "mac") == 0 ||
	       strcmp(a->family, "digest") == 0;
}

/* ---- the kernel: AF_ALG and /proc/crypto ---------------------------- */

/* 0 if the kernel has AF_ALG, else the errno of socket() */
static int af_alg_state(void)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Binds the algorithm's name (or the driver the settings name) once: the
 * kernel instantiates a template (ccm(aes)) only then, and /proc/crypto
 * lists it after. */
static int bind_alg(const struct alg *a)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	const char *type = strcmp(a->family, "cipher") == 0 ? "skcipher" :
			   strcmp(a->family, "aead") == 0   ? "aead" :
							      "hash";
	int fd, ret;

	fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", type);
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s",
		 a->driver[0] ? a->driver : a->kname);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	close(fd);
	return ret;
}

static struct impl impls[512];
static unsigned n_impls;

/* The value of a "field : value" line, or NULL. */
static const char *field(const char *line, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(line, name, len) != 0 ||
	    (line[len] != ' ' && line[len] != '\t'))
		return NULL;
	line = strchr(line + len, ':');
	return line != NULL ? line + 1 + strspn(line + 1, " \t") : NULL;
}

static void copy_word(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%.*s", (int)strcspn(src, " \t\n"), src);
}

void read_proc_crypto(void)
{
	struct impl e = { .priority = -1 };
	char line[256];
	const char *v;
	FILE *fp = fopen("/proc/crypto", "re");

	n_impls = 0;
	while (fp != NULL && n_impls < sizeof(impls) / sizeof(impls[0])) {
		bool end = fgets(line, sizeof(line), fp) == NULL;

		if (end || line[0] == '\n') {
			if (e.name[0] != 0)
				impls[n_impls++] = e;
			memset(&e, 0, sizeof(e));
			e.priority = -1;
			if (end)
				break;
		} else if ((v = field(line, "name")) != NULL) {
			copy_word(e.name, sizeof(e.name), v);
		} else if ((v = field(line, "driver")) != NULL) {
			copy_word(e.driver, sizeof(e.driver), v);
		} else if ((v = field(line, "module")) != NULL) {
			copy_word(e.module, sizeof(e.module), v);
		} else if ((v = field(line, "priority")) != NULL) {
			e.priority = atoi(v);
		} else if ((v = field(line, "async")) != NULL) {
			e.async = strncmp(v, "yes", 3) == 0;
		}
	}
	if (fp != NULL)
		fclose(fp);
}

/* Drivers built on CPU instructions, or plain C, as the kernel names
 * them (arm64's "-ce" suffix, but not Allwinner's sun8i-ce device);
 * anything else that is asynchronous looks like a device. */
bool is_device(const struct impl *d)
{
	static const char *const cpu[] = {
		"generic", "aesni", "avx", "ssse3",  "sse2", "clmul",
		"simd",	   "-ni",   "_ni", "x86_64", "neon", "arm64"
	};
	size_t len = strlen(d->driver);
	unsigned i;

	for (i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		if (strstr(d->driver, cpu[i]) != NULL)
			return false;
	if (len >= 3 && strcmp(d->driver + len - 3, "-ce") == 0 &&
	    strstr(d->driver, "sun8i") == NULL)
		return false;
	return d->async;
}

/* The implementations of kname, highest priority (the one binding the
 * name reaches) first. */
unsigned impls_of(const char *kname, const struct impl **out, unsigned max)
{
	unsigned i, j, n = 0;

	for (i = 0; i < n_impls && n < max; i++) {
		if (strcmp(impls[i].name, kname) != 0)
			continue;
		for (j = n; j > 0 && out[j - 1]->priority < impls[i].priority;
		     j--)
			out[j] = out[j - 1];
		out[j] = &impls[i];
		n++;
	}
	return n;
}

static void print_impl(const struct impl *d)
{
	printf("%s (priority %d%s%s, %s)", d->driver, d->priority,
	       d->module[0] ? ", module " : "", d->module,
	       is_device(d) ? "looks like a device" : "CPU instructions");
}

/* ---- settings, as the library reads them ----------------------------- */

static void format_size(char *buf, size_t size, size_t t)
{
	if (t == NEVER)
		snprintf(buf, size, "never");
	else
		snprintf(buf, size, "%zu", t);
}

/* A setting's value, as the [afalg] section and GNUTLS_AFALG take it. */
void format_value(char *buf, size_t size, bool off, const size_t *t,
		  const char *driver)
{
	char a[32], b[32];
	size_t len;

	if (off) {
		snprintf(buf, size, "off");
	} else if (t[0] == NEVER && t[1] == NEVER) {
		snprintf(buf, size, "auto");
	} else if (t[0] == 0 && t[1] == 0) {
		snprintf(buf, size, "kernel");
	} else {
		format_size(a, sizeof(a), t[0]);
		format_size(b, sizeof(b), t[1]);
		if (t[0] == t[1])
			snprintf(buf, size, "%s", a);
		else
			snprintf(buf, size, "%s/%s", a, b);
	}
	len = strlen(buf);
	if (!off && driver != NULL && driver[0] != 0)
		snprintf(buf + len, size - len, "@%s", driver);
}

const char *dir_name(const struct alg *a, int dir)
{
	if (is_hash(a))
		return dir ? "one-shot" : "message";
	return dir ? "decrypt" : "encrypt";
}

/* Why the library takes the path it takes. */
static void print_path(const struct alg *a, int afalg, bool device)
{
	char t0[32], t1[32];

	if (a->off)
		printf("off: set by the operator\n");
	else if (gnutls_fips140_mode_enabled())
		printf("GnuTLS's own code: FIPS mode registers nothing\n");
	else if (afalg != 0)
		printf("GnuTLS's own code: the kernel has no AF_ALG (%s)\n",
		       strerror(afalg));
	else if (a->bound != 0)
		printf("GnuTLS's own code: the kernel has no %s (%s)\n",
		       a->driver[0] ? a->driver : a->kname, strerror(a->bound));
	else if (a->setting[0] == NEVER && a->setting[1] == NEVER)
		printf("GnuTLS's own code (not registered): nothing measured "
		       "for it%s\n",
		       device ? "; its driver looks like a device: "
				"afalgtool --calibrate measures it" :
				"");
	else if (!a->registered)
		printf("GnuTLS's own code: not registered (--debug=2 says "
		       "why)\n");
	else if (a->setting[0] == 0 && a->setting[1] == 0)
		printf("kernel: every operation the kernel takes\n");
	else {
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

static void describe(int afalg)
{
	const struct impl *d[16];
	char value[160];
	unsigned i, j, n, u;

	if (afalg == 0)
		read_proc_crypto();
	for (i = 0; i < n_algs; i++) {
		struct alg *a = &algs[i];

		n = afalg == 0 ?
			    impls_of(a->kname, d, sizeof(d) / sizeof(d[0])) :
			    0;
		u = in_use(a, d, n);
		printf("%s: kernel %s, driver ", a->label, a->kname);
		if (u < n)
			print_impl(d[u]);
		else if (a->driver[0])
			printf("%s (not listed for %s)", a->driver, a->kname);
		else
			printf("(none)");
		printf("\n");
		for (j = 0; j < n; j++) {
			if (j == u)
				continue;
			printf("  also ");
			print_impl(d[j]);
			printf("\n");
		}
		format_value(value, sizeof(value), a->off, a->setting,
			     a->driver);
		printf("  setting %s; ", value);
		print_path(a, afalg, u < n && is_device(d[u]));
	}
}

static void tls_log_func(int level, const char *str)
{
	fprintf(stderr, "|<%d>| %s", level, str);
}

int main(int argc, char **argv)
{
	unsigned i;
	int afalg;

	if (getenv("AFALGTOOL_WORKER") != NULL)
		return calibration_worker();

	optionProcess(&afalgtoolOptions, argc, argv);
	if (HAVE_OPT(DEBUG)) {
		gnutls_global_set_log_function(tls_log_func);
		gnutls_global_set_log_level(OPT_VALUE_DEBUG);
	}
	read_info();
	afalg = af_alg_state();
	for (i = 0; i < n_algs; i++)
		algs[i].bound = afalg == 0 ? bind_alg(&algs[i]) : afalg;

	if (HAVE_OPT(CALIBRATE))
		return calibrate_main(afalg);
	describe(afalg);
	return 0;
}
