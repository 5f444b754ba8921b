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

/* The [afalg] section afalgtool --calibrate writes: the thresholds found,
 * the measurements behind them as comments, and the settings the library
 * has for the algorithms not measured; to standard output, or (--output)
 * in place of a configuration file's [afalg] section, or where
 * crypto-policies keeps local additions.  Never through a link: a file
 * the tool does not own is not written. */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "afalgtool.h"

static const size_t sizes[N_SIZES] = CALIBRATION_SIZES;

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
static void write_measured(FILE *fp, const struct alg *a, bool by_cpu)
{
	unsigned j;
	int dir;

	for (j = 0; j < a->n_cand; j++) {
		const struct candidate *c = &a->cand[j];

		fprintf(fp, "# %s, %s%s%s", a->label,
			c->driver[0] ? "driver " : "the kernel's pick",
			c->driver,
			j == a->chosen && a->n_cand > 1 ? " (chosen)" : "");
		if (c->failure[0] != 0) {
			fprintf(fp, ": %s\n", c->failure);
			continue;
		}
		fprintf(fp, "\n");
		/* a MAC's or digest's one-shot calls only */
		for (dir = is_hash(a); dir < 2; dir++) {
			write_ratios(fp, dir_name(a, dir), c->ratio[dir],
				     c->unsteady[dir], calibration_n_sizes(a));
			if (by_cpu)
				write_ratios(fp, "  wall-clock", c->wall[dir],
					     NULL, calibration_n_sizes(a));
		}
	}
}

/* Settings that send work to the kernel where only privileged processes
 * may bind the algorithm (Linux 7.3's af_alg_restrict): said in the
 * section and on standard error; others run GnuTLS's own code. */
static void warn_privileged(FILE *fp, const struct alg *a, const char *value)
{
	if (strcmp(value, "auto") == 0 || strcmp(value, "off") == 0 ||
	    a->unpriv_state[0] == 0 || strcmp(a->unpriv_state, "ready") == 0)
		return;
	fprintf(fp,
		"# %s: for processes without CAP_NET_ADMIN the kernel refuses "
		"it (%s): they run GnuTLS's own code\n",
		a->label, a->unpriv_why);
	fprintf(stderr,
		"afalgtool: %s: only privileged processes get the kernel: %s\n",
		a->label, a->unpriv_why);
}

/* The [afalg] section: what was measured, and what the library has now
 * for the algorithms that were not; wall_bound is the criterion's (0: by
 * wall-clock time). */
void write_section(FILE *fp, double wall_bound)
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
	if (wall_bound != 0)
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
			write_measured(fp, a, wall_bound != 0);
			format_value(
				value, sizeof(value), a, false,
				a->cand[a->chosen].found,
				a->cand[a->chosen].found[0] == NEVER &&
						a->cand[a->chosen].found[1] ==
							NEVER ?
					"" :
					a->cand[a->chosen].driver);
		} else {
			if (a->failure[0] != 0)
				fprintf(fp, "# %s: %s\n", a->label, a->failure);
			format_value(value, sizeof(value), a, a->off,
				     a->setting, a->driver);
			if (strcmp(value, "auto") == 0 && a->failure[0] == 0)
				continue;
		}
		fprintf(fp, "%s = %s\n", a->label, value);
		warn_privileged(fp, a, value);
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

/* The temporary file removed, errno as it was: before die() on a failure
 * while replacing, so that nothing is left beside the file. */
static void drop(const char *tmp)
{
	int err = errno;

	unlink(tmp);
	errno = err;
}

/* The old file's owner and SELinux label on the new file (before its
 * mode: a change of owner clears set-id bits).  Where either cannot be
 * kept, nothing is replaced. */
static void keep_owner_label(int fd, const char *tmp, const char *path,
			     const struct stat *st)
{
	static const char name[] = "security.selinux";
	char *label, *now;
	struct stat made;
	ssize_t n, m;

	/* the new file's group may be the directory's (setgid, grpid) */
	if (fstat(fd, &made) < 0 ||
	    ((made.st_uid != st->st_uid || made.st_gid != st->st_gid) &&
	     fchown(fd, st->st_uid, st->st_gid) < 0)) {
		drop(tmp);
		die("%s: its owner (%u:%u) cannot be kept: %s; not replaced",
		    path, (unsigned)st->st_uid, (unsigned)st->st_gid,
		    strerror(errno));
	}
	n = lgetxattr(path, name, NULL, 0);
	if (n == 0 || (n < 0 && (errno == ENODATA || errno == ENOTSUP)))
		return;
	label = n > 0 ? malloc(n) : NULL;
	now = n > 0 ? malloc(n) : NULL;
	if (n < 0 || label == NULL || now == NULL ||
	    (n = lgetxattr(path, name, label, n)) <= 0) {
		if (n == 0)
			errno = ENODATA;
		drop(tmp);
		die("%s: its SELinux label cannot be read: %s; not replaced",
		    path, strerror(errno));
	}
	/* the same label already (the directory's default): nothing to set,
	 * which needs no privilege */
	m = fgetxattr(fd, name, now, n);
	if ((m != n || memcmp(now, label, n) != 0) &&
	    fsetxattr(fd, name, label, n, 0) < 0) {
		drop(tmp);
		die("%s: its SELinux label (%.*s) cannot be kept: %s; not "
		    "replaced",
		    path, (int)strnlen(label, n), label, strerror(errno));
	}
	free(label);
	free(now);
}

/* Writes path anew, through a new file in its directory renamed over it,
 * whose owner, SELinux label and mode it keeps: the old file's other
 * sections and the new [afalg] section (keep: the old file's sections
 * but [afalg]). */
static void replace_file(const char *path, bool keep, double wall_bound)
{
	char tmp[PATH_MAX + 16], line[4096];
	bool in_afalg = false, afalg, newline = true;
	struct stat st;
	mode_t mode = 0644;
	bool existed;
	FILE *old = NULL, *fp;
	int fd;

	existed = lstat(path, &st) == 0;
	if (existed)
		mode = st.st_mode & 07777;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		die("%s: name too long", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		die("%s: %s", tmp, strerror(errno));
	if (existed)
		keep_owner_label(fd, tmp, path, &st);
	fp = fdopen(fd, "w");
	if (fp == NULL || fchmod(fd, mode) < 0) {
		drop(tmp);
		die("%s: %s", tmp, strerror(errno));
	}
	/* the old file's other sections: all of them, or nothing replaced */
	if (keep && existed && (old = fopen(path, "re")) == NULL) {
		drop(tmp);
		die("%s: %s; not replaced", path, strerror(errno));
	}
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
	write_section(fp, wall_bound);
	if (ferror(fp) || fclose(fp) != 0 || rename(tmp, path) < 0) {
		drop(tmp);
		die("%s: %s", path, strerror(errno));
	}
}

/* The crypto-policies layout (Fedora, RHEL, openSUSE): GnuTLS's file is
 * DIR/back-ends/gnutls.config, a link into the policy of another package
 * that update-crypto-policies rewrites, which appends
 * DIR/local.d/gnutls-*.config to it.  The drop-in for name, or false. */
static bool crypto_policies_dropin(const char *name, char *dropin, size_t size)
{
	static const char tail[] = "/back-ends/gnutls.config";
	size_t len = strlen(name), dir_len;
	struct stat st;

	if (len <= sizeof(tail) - 1 ||
	    strcmp(name + len - (sizeof(tail) - 1), tail) != 0)
		return false;
	dir_len = len - (sizeof(tail) - 1);
	if ((int)snprintf(dropin, size, "%.*s/local.d", (int)dir_len, name) >=
		    (int)size ||
	    stat(dropin, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	return (int)snprintf(dropin, size, "%.*s/local.d/gnutls-afalg.config",
			     (int)dir_len, name) < (int)size;
}

/* Where --output=name writes, checked before anything is measured:
 * name itself, which is made if missing; where name is crypto-policies'
 * link, a drop-in of its own in local.d instead (*dropin true); any
 * other link, or a file with other hard links, is refused with one line:
 * writing it would change a file another package owns, or split it from
 * the names it has. */
void output_target(const char *name, char *path, size_t size, bool *dropin)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	*dropin = false;
	snprintf(path, size, "%s", name);
	if (lstat(name, &st) < 0) {
		if (errno != ENOENT)
			die("%s: %s", name, strerror(errno));
	} else if (S_ISLNK(st.st_mode)) {
		if (!crypto_policies_dropin(name, path, size)) {
			n = readlink(name, target, sizeof(target) - 1);
			target[n > 0 ? n : 0] = 0;
			die("%s is a link (to %s): not written through it; "
			    "give the file itself, or add the section "
			    "afalgtool --calibrate prints where this system "
			    "keeps local settings",
			    name, target);
		}
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			die("%s is not a regular file: not replaced", path);
		*dropin = true;
	} else if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
		die("%s is %s: not replaced", name,
		    S_ISREG(st.st_mode) ? "a file with other hard links" :
					  "not a regular file");
	}
}

/* --output=name: the [afalg] section written where output_target()
 * says. */
void write_output(const char *name, double wall_bound)
{
	char path[PATH_MAX];
	bool dropin;

	output_target(name, path, sizeof(path), &dropin);
	replace_file(path, !dropin, wall_bound);
	if (dropin)
		fprintf(stderr,
			"afalgtool: [afalg] written to %s; run "
			"update-crypto-policies to merge it into %s\n",
			path, name);
	else
		fprintf(stderr, "afalgtool: [afalg] written to %s\n", path);
}
