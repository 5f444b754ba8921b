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

/* What every part of afalgtool shares: the algorithms as the library
 * reports them (its report, version 1), the implementations the kernel
 * lists in /proc/crypto, and how a setting is written. */

#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "afalgtool.h"

/* in libgnutls, GNUTLS_PRIVATE_3_4 (lib/accelerated/afalg.h) */
int _gnutls_afalg_report(unsigned version, unsigned flags, gnutls_datum_t *out);

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
	return strncmp(s, "never", 5) == 0 ? NEVER : strtoull(s, NULL, 10);
}

/* One field of a report line ("key=value"), into a. */
static void take_field(struct alg *a, const char *key, size_t key_len,
		       const char *value, size_t len)
{
#define KEY(k) (key_len == strlen(k) && strncmp(key, k, key_len) == 0)
#define COPY(dst) snprintf(dst, sizeof(dst), "%.*s", (int)len, value)
	const char *slash;

	if (KEY("label"))
		COPY(a->label);
	else if (KEY("family"))
		COPY(a->family);
	else if (KEY("kernel-name"))
		COPY(a->kname);
	else if (KEY("driver"))
		snprintf(a->driver, sizeof(a->driver), "%.*s",
			 len == 1 && value[0] == '-' ? 0 : (int)len, value);
	else if (KEY("off"))
		a->off = value[0] == '1';
	else if (KEY("registered"))
		a->registered = value[0] == '1';
	else if (KEY("state"))
		COPY(a->state);
	else if (KEY("kernel-ops"))
		a->kernel_ops = strtoul(value, NULL, 10);
	else if (KEY("software-ops"))
		a->soft_ops = strtoul(value, NULL, 10);
	else if (KEY("failures"))
		a->failures = strtoul(value, NULL, 10);
	else if (KEY("why"))
		COPY(a->why);
	else if (KEY("threshold") &&
		 (slash = memchr(value, '/', len)) != NULL) {
		a->setting[0] = parse_threshold(value);
		a->setting[1] = parse_threshold(slash + 1);
	}
#undef KEY
#undef COPY
}

/* Parses a report (see read_report) into algs[]; unpriv: into the
 * unprivileged fields of the algorithms already there. */
static void parse_report(char *text, bool unpriv)
{
	char *line, *save = NULL, *p, *eq, *end;
	unsigned i;

	line = strtok_r(text, "\n", &save);
	if (line == NULL || strcmp(line, "afalg-report 1") != 0)
		die("the library's report is not of version 1");
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		struct alg a;

		memset(&a, 0, sizeof(a));
		for (p = line; *p != 0; p = *end ? end + 1 : end) {
			eq = strchr(p, '=');
			if (eq == NULL)
				break;
			/* why runs to the end of the line */
			end = strncmp(p, "why=", 4) == 0 ? p + strlen(p) :
							   p + strcspn(p, " ");
			if (eq < end)
				take_field(&a, p, eq - p, eq + 1, end - eq - 1);
		}
		if (a.label[0] == 0)
			continue;
		for (i = 0; i < n_algs && strcmp(algs[i].label, a.label); i++)
			;
		if (unpriv) {
			if (i < n_algs) {
				memcpy(algs[i].unpriv_state, a.state,
				       sizeof(a.state));
				memcpy(algs[i].unpriv_why, a.why,
				       sizeof(a.why));
			}
			continue;
		}
		if (i == n_algs) {
			if (n_algs == MAX_ALGS)
				continue;
			n_algs++;
		}
		/* what a calibration found stays, and what an unprivileged
		 * process was found to get */
		memcpy(a.unpriv_state, algs[i].unpriv_state,
		       sizeof(a.unpriv_state));
		memcpy(a.unpriv_why, algs[i].unpriv_why, sizeof(a.unpriv_why));
		a.measured = algs[i].measured;
		memcpy(a.failure, algs[i].failure, sizeof(a.failure));
		memcpy(a.cand, algs[i].cand, sizeof(a.cand));
		a.n_cand = algs[i].n_cand;
		a.chosen = algs[i].chosen;
		algs[i] = a;
	}
}

/* The library's report, version 1 (lib/accelerated/afalg/afalg.c): a
 * line per algorithm of "key=value" fields, "why" last and to the end of
 * the line; keys this program does not know are skipped.  With
 * GNUTLS_AFALG_REPORT_PROBE (1) the library first tries every algorithm
 * in the kernel, as at its first use.  algs[] is filled, or updated. */
void read_report(unsigned flags)
{
	gnutls_datum_t report;
	int ret;

	ret = _gnutls_afalg_report(1, flags, &report);
	if (ret == GNUTLS_E_UNIMPLEMENTED_FEATURE)
		die("this libgnutls was built without the AF_ALG backend");
	if (ret < 0)
		die("the library gives no report of version 1 (%s): a "
		    "libgnutls of another version?",
		    gnutls_strerror(ret));
	parse_report((char *)report.data, false);
	gnutls_free(report.data);
	if (n_algs == 0)
		die("the library's report names no algorithm");
}

/* Where this process is root: what an unprivileged process gets (Linux
 * 7.3's af_alg_restrict gives most names only to CAP_NET_ADMIN), from
 * the report of a child that drops to nobody, without capabilities,
 * before it tries the algorithms.  Called before this process tries
 * them (the child inherits what it learnt). */
void read_unprivileged_report(void)
{
	struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw != NULL ? pw->pw_uid : 65534;
	gid_t gid = pw != NULL ? pw->pw_gid : 65534;
	char *text = NULL;
	size_t len = 0, cap = 0;
	gnutls_datum_t report;
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0 || pipe(pipefd) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		close(pipefd[0]);
		/* its reasons come in the report, not in the log */
		gnutls_global_set_log_level(0);
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0 ||
		    _gnutls_afalg_report(1, REPORT_PROBE, &report) < 0)
			_exit(1);
		n = write(pipefd[1], report.data, report.size);
		_exit(n == (ssize_t)report.size ? 0 : 1);
	}
	close(pipefd[1]);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 16384;
			text = realloc(text, cap);
			if (text == NULL)
				die("out of memory");
		}
		n = read(pipefd[0], text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 && text != NULL) {
		text[len] = 0;
		parse_report(text, true);
	}
	free(text);
}

struct alg *find_alg(const char *label)
{
	unsigned i;

	for (i = 0; i < n_algs; i++)
		if (strcmp(algs[i].label, label) == 0)
			return &algs[i];
	return NULL;
}

bool is_hash(const struct alg *a)
{
	return strcmp(a->family, "mac") == 0 ||
	       strcmp(a->family, "digest") == 0;
}

/* ---- /proc/crypto ------------------------------------------------------ */

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

/* ---- settings, as the library reads them ------------------------------ */

static void format_size(char *buf, size_t size, size_t t)
{
	if (t == NEVER)
		snprintf(buf, size, "never");
	else
		snprintf(buf, size, "%zu", t);
}

/* A setting's value, as the [afalg] section and GNUTLS_AFALG take it: for
 * a MAC or digest the size of a one-shot call (t[1]; their contexts are
 * GnuTLS's own code). */
void format_value(char *buf, size_t size, const struct alg *a, bool off,
		  const size_t *t, const char *driver)
{
	size_t one[2] = { t[1], t[1] };
	char x[32], y[32];
	size_t len;

	if (is_hash(a))
		t = one;
	if (off) {
		snprintf(buf, size, "off");
	} else if (t[0] == NEVER && t[1] == NEVER) {
		snprintf(buf, size, "auto");
	} else if (t[0] == 0 && t[1] == 0) {
		snprintf(buf, size, "kernel");
	} else {
		format_size(x, sizeof(x), t[0]);
		format_size(y, sizeof(y), t[1]);
		if (t[0] == t[1])
			snprintf(buf, size, "%s", x);
		else
			snprintf(buf, size, "%s/%s", x, y);
	}
	len = strlen(buf);
	if (!off && driver != NULL && driver[0] != 0 &&
	    strcmp(buf, "auto") != 0)
		snprintf(buf + len, size - len, "@%s", driver);
}

/* The directions a calibration measures: for a MAC or digest only its
 * one-shot calls (1). */
const char *dir_name(const struct alg *a, int dir)
{
	if (is_hash(a))
		return dir ? "one-shot" : "context";
	return dir ? "decrypt" : "encrypt";
}
