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
 * has for the algorithms not measured; to standard output, or in place of
 * a configuration file's [afalg] section (--output). */

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
		if (c->failure != NULL) {
			fprintf(fp, ": %s\n", c->failure);
			continue;
		}
		fprintf(fp, "\n");
		for (dir = 0; dir < 2; dir++) {
			write_ratios(fp, dir_name(a, dir), c->ratio[dir],
				     c->unsteady[dir], calibration_n_sizes(a));
			if (by_cpu)
				write_ratios(fp, "  wall-clock", c->wall[dir],
					     NULL, calibration_n_sizes(a));
		}
	}
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
void write_output(const char *name, double wall_bound)
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
	write_section(fp, wall_bound);
	if (ferror(fp) || fclose(fp) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		die("%s: %s", path, strerror(errno));
	}
	fprintf(stderr, "afalgtool: [afalg] written to %s\n", path);
}
