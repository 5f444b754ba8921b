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

/* Which operations go to the kernel.
 *
 * The operator sets a mode per algorithm, in the [afalg] section of
 * GnuTLS's system-wide configuration file and in GNUTLS_AFALG, which wins:
 * off (not registered), kernel (every operation the kernel takes), auto
 * (the default), or a size in bytes (operations of at least that size).
 *
 * In auto mode an algorithm starts in software.  Its thresholds, the
 * smallest operation that goes to the kernel in each direction, come
 * from a cache of earlier measurements on the same kernel, drivers, CPU
 * and library; failing that, once the algorithm has done
 * AFALG_CALIBRATE_AFTER bytes of work in the process, both paths are
 * timed (calibrate.c) and the result is cached. */

#include "config.h"
#include "afalg-int.h"
#include "atfork.h"
#include "errors.h"
#include "fips.h"
#include "inih/ini.h"
#include "c-strcase.h"
#include "c-ctype.h"
#include <accelerated/afalg.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define CACHE_FORMAT "gnutls-afalg-cache 1"
#define SYSTEM_CACHE "/var/cache/gnutls/afalg"
/* a cache has a line per algorithm, each shorter than 200 bytes */
#define CACHE_MAX 8192

static const char *const mode_names[] = {
	[AFALG_MODE_OFF] = "off",
	[AFALG_MODE_AUTO] = "auto",
	[AFALG_MODE_KERNEL] = "kernel",
};

/* a threshold cache read at start-up had a measurement that counts */
static bool caches_found;
/* algorithms in auto mode without a measurement from the caches read so
 * far */
static unsigned uncached;

/* Whether the algorithm's thresholds are measured (or taken from a
 * cache): auto mode, and no size set by the operator. */
static bool measured(const struct afalg_alg *alg)
{
	return alg->mode == AFALG_MODE_AUTO && !alg->fixed;
}

const char *const _afalg_source_names[] = {
	[AFALG_FROM_DEFAULT] = "default",
	[AFALG_FROM_CACHE] = "cache",
	[AFALG_FROM_CALIBRATION] = "calibration",
	[AFALG_FROM_OVERRIDE] = "override",
	[AFALG_FROM_FAILURE] = "a failed calibration",
	[AFALG_FROM_TEST_CLOCK] = "a test's clock",
};

/* ---- settings ---------------------------------------------------------- */

/* The settings and the cache are parsed at start-up, by hand, over
 * (pointer, length) words: under emulation each new path through the C
 * library costs more to run once than these loops. */

/* Whether s[0..len) is word: exactly, or in any case. */
static bool same_word(const char *s, size_t len, const char *word, bool exact)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (word[i] == 0 ||
		    (exact ? s[i] != word[i] :
			     c_tolower(s[i]) != c_tolower(word[i])))
			return false;
	return word[len] == 0;
}

/* s[0..len) as a size in bytes: decimal digits only; -1 if not one. */
static int parse_size(const char *s, size_t len, size_t *size)
{
	size_t v = 0, i, d;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		d = s[i] - '0';
		if (s[i] < '0' || s[i] > '9' || v > (SIZE_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*size = v;
	return 0;
}

/* The algorithm a name stands for: an operator's, in any case, or a
 * cache's (exact); the search starts at row hint (a cache lists the
 * algorithms in the table's order). */
static struct afalg_alg *find_label(const char *s, size_t len, unsigned hint,
				    bool exact)
{
	unsigned i, k;

	for (k = 0; k < _afalg_algs_size; k++) {
		i = (hint + k) % _afalg_algs_size;
		if (same_word(s, len, _afalg_algs[i].label, exact))
			return &_afalg_algs[i];
	}
	return NULL;
}

/* A mode name, or a size (a fixed threshold); -1 if neither. */
static int parse_value(const char *s, size_t len, size_t *size)
{
	unsigned i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (same_word(s, len, mode_names[i], true))
			return i;
	return parse_size(s, len, size) == 0 ? AFALG_MODE_AUTO : -1;
}

static void apply(struct afalg_alg *alg, int mode, size_t size, bool sized)
{
	alg->mode = mode;
	alg->forced = true;
	alg->fixed = sized;
	alg->fixed_size = size;
}

/* Starts a source of settings (the file, the environment): its entries
 * for one algorithm win over its mode for every algorithm, wherever they
 * stand. */
static void start_source(void)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++)
		_afalg_algs[i].named = false;
}

/* s[0..*len) without the blanks around it */
static const char *trim(const char *s, size_t *len)
{
	while (*len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		(*len)--;
	}
	while (*len > 0 && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
		(*len)--;
	return s;
}

/* "NAME=VALUE" for one algorithm, or a VALUE for all (name NULL) but
 * those this source names; an invalid entry is logged and ignored. */
static void apply_entry(const char *name, size_t name_len, const char *value,
			size_t len, const char *where)
{
	struct afalg_alg *alg = NULL;
	size_t size = 0;
	int mode;
	unsigned i;

	if (name != NULL)
		name = trim(name, &name_len);
	value = trim(value, &len);
	mode = parse_value(value, len, &size);

	/* an entry with an empty name is not one for every algorithm */
	if (name != NULL &&
	    (name_len == 0 ||
	     (alg = find_label(name, name_len, 0, false)) == NULL))
		mode = -1;
	if (mode < 0) {
		_gnutls_debug_log("afalg: ignoring '%.*s%s%.*s' in %s\n",
				  (int)name_len, name ? name : "",
				  name ? "=" : "", (int)len, value, where);
		return;
	}
	if (alg != NULL) {
		apply(alg, mode, size, value[0] >= '0' && value[0] <= '9');
		alg->named = true;
		return;
	}
	for (i = 0; i < _afalg_algs_size; i++)
		if (!_afalg_algs[i].named)
			apply(&_afalg_algs[i], mode, size,
			      value[0] >= '0' && value[0] <= '9');
}

/* GNUTLS_AFALG: entries separated by commas; blanks alone between two
 * are none. */
static void read_env(void)
{
	const char *s = secure_getenv("GNUTLS_AFALG"), *start, *eq;
	size_t len;

	start_source();
	while (s != NULL && *s != 0) {
		for (start = s, eq = NULL; *s != 0 && *s != ','; s++)
			if (*s == '=' && eq == NULL)
				eq = s;
		len = s - start;
		start = trim(start, &len);
		if (eq != NULL)
			apply_entry(start, eq - start, eq + 1, s - eq - 1,
				    "GNUTLS_AFALG");
		else if (len > 0)
			apply_entry(NULL, 0, start, len, "GNUTLS_AFALG");
		if (*s != 0)
			s++;
	}
}

/* The [afalg] entries of the system-wide configuration are those
 * priority.c hands over while it loads the file during
 * gnutls_global_init(), before the module's initialisation takes them
 * (in FIPS mode, where the module is initialised before the file is
 * loaded, those the module reads itself).  Entries of a later reload are
 * not taken. */
static bool config_started; /* entries of this initialisation applied */
static bool settings_taken; /* by _afalg_read_settings(), until deinit */

static void reset_settings(void)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		apply(&_afalg_algs[i], AFALG_MODE_AUTO, 0, false);
		_afalg_algs[i].forced = false;
	}
	start_source();
}

/* An entry of [afalg]: "mode = auto" for every algorithm, "AES-128-CBC =
 * kernel" for one. */
void _gnutls_afalg_config(const char *name, const char *value)
{
	if (settings_taken)
		return;
	if (!config_started) {
		reset_settings();
		config_started = true;
	}
	if (c_strcasecmp(name, "mode") == 0)
		apply_entry(NULL, 0, value, strlen(value), "[afalg]");
	else
		apply_entry(name, strlen(name), value, strlen(value),
			    "[afalg]");
}

/* The first pass over the file only checks it: GnuTLS rejects a file
 * with a syntax error as a whole, and so does the module. */
static int config_entry(void *apply, const char *section, const char *name,
			const char *value)
{
	if (apply != NULL && section != NULL &&
	    c_strcasecmp(section, "afalg") == 0)
		_gnutls_afalg_config(name, value);
	return 1;
}

/* In FIPS mode: the file, read before GnuTLS loads it. */
static void read_config(void)
{
	const char *path = secure_getenv("GNUTLS_SYSTEM_PRIORITY_FILE");
	FILE *fp;
	int fd;

	if (path == NULL)
		path = SYSTEM_PRIORITY_FILE;
	/* most systems have none: open(2) alone says so */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	fp = fdopen(fd, "r");
	if (fp == NULL) {
		close(fd);
		return;
	}
	if (ini_parse_file(fp, config_entry, NULL) != 0) {
		_gnutls_debug_log("afalg: cannot parse %s, ignoring it\n",
				  path);
	} else {
		rewind(fp);
		ini_parse_file(fp, config_entry, fp);
	}
	fclose(fp);
}

/* The next initialisation takes the entries of the next load. */
void _afalg_release_settings(void)
{
	settings_taken = false;
	config_started = false;
}

/* The thresholds, then where they came from: a thread that sees the
 * source (source_of()) sees the thresholds that came with it, so that a
 * save in another thread does not write a measurement's source with the
 * thresholds before it. */
void _afalg_set_thresholds(struct afalg_alg *alg, size_t t0, size_t t1,
			   enum afalg_source source)
{
	__atomic_store_n(&alg->threshold[0], t0, __ATOMIC_RELAXED);
	__atomic_store_n(&alg->threshold[1], t1, __ATOMIC_RELAXED);
	__atomic_store_n(&alg->source, source, __ATOMIC_RELEASE);
}

static enum afalg_source source_of(const struct afalg_alg *alg)
{
	return __atomic_load_n(&alg->source, __ATOMIC_ACQUIRE);
}

/* Which CPU features GnuTLS and Nettle were told to use: GnuTLS reads
 * its variable at each initialisation, Nettle once, when it is loaded.
 * A measurement is filed under these, though the application may change
 * its environment before it saves one. */
static char cpuid_env[128], nettle_env[128];

static void env_value(char *buf, size_t size, const char *name)
{
	const char *v = secure_getenv(name);

	_gnutls_str_cpy(buf, size, v != NULL && v[0] != 0 ? v : "-");
}

static void take_software_env(void)
{
	env_value(cpuid_env, sizeof(cpuid_env), "GNUTLS_CPUID_OVERRIDE");
	if (nettle_env[0] == 0)
		env_value(nettle_env, sizeof(nettle_env),
			  "NETTLE_FAT_OVERRIDE");
}

/* The modes of every algorithm: the configuration file, then the
 * environment; FIPS mode keeps every algorithm the operator did not set
 * to kernel off.  Returns how many are not off, or 0 if the settings
 * were taken already since the last _afalg_release_settings() (a second
 * initialisation). */
unsigned _afalg_read_settings(void)
{
	bool fips = _gnutls_fips_mode_enabled(), over;
	struct afalg_alg *alg;
	unsigned i, on = 0;
	size_t t;

	if (settings_taken)
		return 0;
	if (!config_started)
		reset_settings();
	if (fips)
		read_config();
	settings_taken = true;
	read_env();
	take_software_env();
	caches_found = false;
	uncached = 0;

	/* one pass: at start-up, under emulation, each loop costs */
	for (i = 0; i < _afalg_algs_size; i++) {
		alg = &_afalg_algs[i];
		if (fips && (!alg->forced || alg->mode != AFALG_MODE_KERNEL))
			alg->mode = AFALG_MODE_OFF;
		alg->registered = false;
		alg->bypassed = false;
		alg->absent = false;
		alg->announced = false;
		alg->kernel_ops = 0;
		alg->soft_ops = 0;
		alg->work = 0;
		alg->calibrating = 0;
		alg->cached.present = false;
		alg->cached.from = NULL;
		alg->soft_only = false;
		/* an operator's size, or kernel; else software until
		 * measured */
		over = alg->fixed || alg->mode == AFALG_MODE_KERNEL;
		t = alg->fixed ? alg->fixed_size : over ? 0 : AFALG_NEVER;
		_afalg_set_thresholds(alg, t, t,
				      over ? AFALG_FROM_OVERRIDE :
					     AFALG_FROM_DEFAULT);
		alg->settled = over || alg->mode == AFALG_MODE_OFF;
		on += alg->mode != AFALG_MODE_OFF;
		uncached += measured(alg);
	}
	if (fips)
		_gnutls_debug_log(
			"afalg: FIPS mode: only algorithms set to 'kernel' are used\n");
	return on;
}

const char *_afalg_mode_name(const struct afalg_alg *alg)
{
	return mode_names[alg->mode];
}

/* ---- what the kernel has: /proc/crypto --------------------------------- */

/* The value of a "field : value" line of /proc/crypto, or NULL. */
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

/* One entry of /proc/crypto: "async" comes after "priority", and the
 * entry of a synchronous hash has no "async" line. */
struct proc_entry {
	char name[64];
	struct afalg_driver d;
};

/* Takes entry e for d if it implements kname with a higher priority, and
 * empties e for the next entry. */
static void take_entry(struct proc_entry *e, const char *kname,
		       struct afalg_driver *d)
{
	if (strcmp(e->name, kname) == 0 && e->d.priority > d->priority)
		*d = e->d;
	memset(e, 0, sizeof(*e));
	e->d.priority = -1;
}

/* The highest priority implementation of a kernel algorithm name. */
void _afalg_kernel_driver(const char *kname, struct afalg_driver *d)
{
	struct proc_entry e = { .d.priority = -1 };
	char line[256];
	const char *v;
	FILE *fp;

	memset(d, 0, sizeof(*d));
	d->priority = -1;
	fp = fopen("/proc/crypto", "re");
	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (line[0] == '\n')
			take_entry(&e, kname, d);
		else if ((v = field(line, "name")) != NULL)
			copy_word(e.name, sizeof(e.name), v);
		else if ((v = field(line, "driver")) != NULL)
			copy_word(e.d.name, sizeof(e.d.name), v);
		else if ((v = field(line, "module")) != NULL)
			copy_word(e.d.module, sizeof(e.d.module), v);
		else if ((v = field(line, "async")) != NULL)
			e.d.async = strncmp(v, "yes", 3) == 0;
		else if ((v = field(line, "priority")) != NULL)
			e.d.priority = atoi(v);
	}
	take_entry(&e, kname, d);
	fclose(fp);
}

/* Drivers built on CPU instructions, or plain C, as the kernel names
 * them; anything else that is asynchronous looks like a device. */
bool _afalg_driver_is_device(const struct afalg_driver *d)
{
	static const char *const cpu[] = {
		"generic", "aesni", "avx",    "ssse3", "sse2", "clmul",
		"simd",	   "ni",    "x86_64", "neon",  "-ce",  "arm64"
	};
	unsigned i;

	for (i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		if (strstr(d->name, cpu[i]) != NULL)
			return false;
	return d->async && d->name[0] != 0;
}

/* ---- the cache --------------------------------------------------------- */

/* The CPU's model name: on x86 its brand string, from CPUID (the key is
 * made at start-up, and /proc/cpuinfo takes milliseconds to generate),
 * elsewhere /proc/cpuinfo's "model name". */
static void cpu_model(char *cpu, size_t size)
{
	char line[256];
	FILE *fp;
#if defined(__x86_64__) || defined(__i386__)
	unsigned r[13], i;
	const char *p;

	if (__get_cpuid_max(0x80000000, NULL) >= 0x80000004) {
		for (i = 0; i < 3; i++)
			__cpuid(0x80000002 + i, r[4 * i], r[4 * i + 1],
				r[4 * i + 2], r[4 * i + 3]);
		r[12] = 0;
		for (p = (const char *)r; *p == ' '; p++)
			;
		_gnutls_str_cpy(cpu, size, p);
		return;
	}
#endif
	_gnutls_str_cpy(cpu, size, "unknown");
	fp = fopen("/proc/cpuinfo", "re");
	while (fp != NULL && fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "model name : %127[^\n]", cpu) == 1)
			break;
	if (fp != NULL)
		fclose(fp);
}

/* What decides a measurement: a cache made under another of these is
 * foreign.  (Strings are joined with _gnutls_str_cat() rather than
 * snprintf(), here and below: this runs at start-up, where under
 * emulation every new path through the C library costs.) */
static void cache_key(char *buf, size_t size)
{
	char cpu[128];
	struct utsname u;
	/* the software path also depends on which CPU features GnuTLS and
	 * Nettle were told to use */
	/* clang-format off */
	const char *parts[] = {
		"kernel ", u.release,
		"|cpu ", cpu,
		"|gnutls ", VERSION,
		"|cpuid ", cpuid_env,
		"|nettle ", nettle_env,
	};
	/* clang-format on */
	unsigned i;

	cpu_model(cpu, sizeof(cpu));
	if (uname(&u) < 0)
		_gnutls_str_cpy(u.release, sizeof(u.release), "unknown");
	buf[0] = 0;
	/* a loop rather than a call per part: under emulation each call
	 * site run for the first time in a process costs */
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		_gnutls_str_cat(buf, size, parts[i]);
}

/* $XDG_CACHE_HOME/gnutls/afalg, or ~/.cache/gnutls/afalg; returns the
 * length of its base ($XDG_CACHE_HOME or $HOME, which xdg tells), or
 * -1. */
static int user_cache_path(char *buf, size_t size, bool *xdg)
{
	const char *base = secure_getenv("XDG_CACHE_HOME");
	const char *sub = "";

	*xdg = base != NULL && base[0] == '/';
	if (!*xdg) {
		base = secure_getenv("HOME");
		sub = "/.cache";
	}
	if (base == NULL || base[0] != '/' ||
	    strlen(base) + strlen(sub) + strlen("/gnutls/afalg") >= size)
		return -1;
	_gnutls_str_cpy(buf, size, base);
	_gnutls_str_cat(buf, size, sub);
	_gnutls_str_cat(buf, size, "/gnutls/afalg");
	return (int)strlen(base);
}

/* GNUTLS_AFALG_SYSTEM_CACHE (empty: unset), or the default; NULL if it
 * is not the absolute path of a file: a cache found where a process
 * happens to run is nobody's, and a save to "dir/" would make the
 * directory where the file goes. */
static const char *system_cache_path(void)
{
	const char *p = secure_getenv("GNUTLS_AFALG_SYSTEM_CACHE"), *last;

	if (p == NULL || p[0] == 0)
		return SYSTEM_CACHE;
	last = strrchr(p, '/');
	if (p[0] != '/' || last[1] == 0 || strcmp(last, "/.") == 0 ||
	    strcmp(last, "/..") == 0) {
		_gnutls_debug_log("afalg: no system-wide cache: "
				  "GNUTLS_AFALG_SYSTEM_CACHE is not the "
				  "absolute path of a file\n");
		return NULL;
	}
	return p;
}

/* The whole of a cache file into buf (CACHE_MAX + 1 bytes),
 * NUL-terminated, if it is a regular file of root or of this user that
 * nobody else can write and that is at most CACHE_MAX bytes; -1 if not.
 * One read(2) into the caller's buffer rather than stdio: this runs at
 * start-up, where under emulation each new path through the C library
 * costs.  A read cut short (which a small regular file does not give)
 * is taken for a corrupt file. */
static int read_cache_file(const char *path, char *buf)
{
	struct stat st;
	ssize_t n;
	int fd;

	/* not blocked by a FIFO, which is then refused */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		/* most machines have no system-wide cache: not worth a line */
		if (errno != ENOENT)
			_gnutls_debug_log("afalg: ignoring %s: %s\n", path,
					  errno == ELOOP ? "a symbolic link" :
							   strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size > CACHE_MAX) {
		_gnutls_debug_log("afalg: ignoring %s: not a private file of "
				  "at most %u bytes\n",
				  path, CACHE_MAX);
		close(fd);
		return -1;
	}
	n = read(fd, buf, st.st_size);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (n != st.st_size || strlen(buf) != (size_t)n) {
		_gnutls_debug_log("afalg: ignoring %s: cut short while read, "
				  "or with a NUL\n",
				  path);
		return -1;
	}
	return 0;
}

/* Whether the line at *p is want; *p moves past it. */
static bool take_line(const char **p, const char *want)
{
	const char *s = *p;
	size_t len;

	for (len = 0; s[len] != 0 && s[len] != '\n'; len++)
		;
	*p = s[len] != 0 ? s + len + 1 : s + len;
	return same_word(s, len, want, true);
}

/* A measurement line, "LABEL DRIVER THRESHOLD THRESHOLD" (each threshold
 * a size or "never"), its words split at spaces or tabs; word[4] is
 * there to see a fifth. */
struct cache_row {
	const char *word[5];
	size_t len[5];
	size_t threshold[2];
};

/* The row at *p; *p moves past its line.  -1 if it is malformed or does
 * not end with a newline. */
static int scan_row(const char **p, struct cache_row *row)
{
	const char *s = *p;
	unsigned n, i;

	for (n = 0; n < 5; n++) {
		while (*s == ' ' || *s == '\t')
			s++;
		row->word[n] = s;
		/* a word ends at a space, a tab, a newline or the end */
		while ((unsigned char)*s > ' ')
			s++;
		row->len[n] = s - row->word[n];
		if (row->len[n] == 0)
			break;
	}
	/* the writer ends every row with a newline: a row without one was
	 * cut short */
	if (n != 4 || *s != '\n' ||
	    row->len[1] >= sizeof(_afalg_algs[0].cached.driver))
		return -1;
	*p = s + 1;
	for (i = 0; i < 2; i++)
		if (same_word(row->word[2 + i], row->len[2 + i], "never", true))
			row->threshold[i] = AFALG_NEVER;
		else if (parse_size(row->word[2 + i], row->len[2 + i],
				    &row->threshold[i]) < 0)
			return -1;
	return 0;
}

/* A cache file (the user's or the system's, says from) is read only if
 * it is private (read_cache_file()) and every line is well formed; its
 * measurements are kept beside each algorithm (the first file read that
 * has one wins) and applied at start-up if they keep the algorithm in
 * software, else at its first operation if the kernel's driver is still
 * the one measured.  key is computed once a file opens. */
static void load_cache(const char *path, const char *from, char *key,
		       size_t key_size)
{
	char buf[CACHE_MAX + 1];
	const char *p, *rows;
	struct cache_row row;
	struct afalg_alg *alg;
	bool seen[AFALG_MAX_ALGS] = { false };
	unsigned next = 0;

	if (read_cache_file(path, buf) < 0)
		return;
	if (key[0] == 0)
		cache_key(key, key_size);
	p = buf;
	if (!take_line(&p, CACHE_FORMAT) || !take_line(&p, key)) {
		_gnutls_debug_log("afalg: ignoring %s: another format, "
				  "kernel, CPU or library than %s\n",
				  path, key);
		return;
	}
	/* nothing of a malformed file counts, not even its rows before the
	 * fault */
	for (rows = p; *p != 0;)
		if (scan_row(&p, &row) < 0) {
			_gnutls_debug_log("afalg: ignoring %s: malformed\n",
					  path);
			return;
		}
	for (p = rows; *p != 0;) {
		scan_row(&p, &row);
		alg = find_label(row.word[0], row.len[0], next, true);
		if (alg == NULL || seen[alg - _afalg_algs]) {
			_gnutls_debug_log(
				"afalg: %s: ignoring %s%.*s%s\n", path,
				alg ? "a second row of " : "the row of ",
				(int)row.len[0], row.word[0],
				alg ? "" : ": no such algorithm");
			continue;
		}
		next = alg - _afalg_algs + 1;
		seen[alg - _afalg_algs] = true;
		if (alg->cached.present)
			continue;
		memcpy(alg->cached.driver, row.word[1], row.len[1]);
		alg->cached.driver[row.len[1]] = 0;
		alg->cached.threshold[0] = row.threshold[0];
		alg->cached.threshold[1] = row.threshold[1];
		alg->cached.from = from;
		alg->cached.present = true;
		caches_found = true;
		uncached -= measured(alg);
	}
}

/* The cached measurement becomes the algorithm's thresholds. */
static void use_cached(struct afalg_alg *alg)
{
	_afalg_set_thresholds(alg, alg->cached.threshold[0],
			      alg->cached.threshold[1], AFALG_FROM_CACHE);
	_gnutls_debug_log("afalg: %s: thresholds from the %s cache\n",
			  _afalg_label(alg), alg->cached.from);
}

/* A cached measurement that sends some operations to the kernel counts
 * if the kernel still has the driver it was made with (the algorithm is
 * bound once if the kernel has not yet instantiated it).  One that keeps
 * every operation in software was taken at start-up, unchecked
 * (_afalg_cached_software()). */
void _afalg_apply_cache(struct afalg_alg *alg)
{
	struct afalg_driver d;

	if (!__atomic_load_n(&alg->cached.present, __ATOMIC_RELAXED) ||
	    source_of(alg) != AFALG_FROM_DEFAULT)
		return;
	/* one thread applies it; the others go on by the defaults until it
	 * has */
	if (!__atomic_exchange_n(&alg->cached.present, false, __ATOMIC_RELAXED))
		return;
	_afalg_kernel_driver(alg->kname, &d);
	if (d.name[0] == 0 && _afalg_kernel_probe(alg) == 0)
		_afalg_kernel_driver(alg->kname, &d);
	if (strcmp(d.name, alg->cached.driver) != 0) {
		_gnutls_debug_log(
			"afalg: %s: the %s cache measured %s, the kernel has %s\n",
			_afalg_label(alg), alg->cached.from, alg->cached.driver,
			d.name[0] ? d.name : "none");
		return;
	}
	use_cached(alg);
}

static void format_threshold(char *buf, size_t size, size_t t)
{
	if (t == AFALG_NEVER)
		snprintf(buf, size, "never");
	else
		snprintf(buf, size, "%zu", t);
}

/* 1 if path is a directory of this user's, reached through no symbolic
 * link but one of this user's or root's (another user's, made where
 * anyone can write, must not lead the save); -1 if nothing is there; 0
 * otherwise. */
static int dir_state(const char *path)
{
	struct stat st;
	uid_t uid = geteuid();

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? -1 : 0;
	if (S_ISLNK(st.st_mode) &&
	    ((st.st_uid != uid && st.st_uid != 0) || stat(path, &st) < 0))
		return 0;
	return S_ISDIR(st.st_mode) && st.st_uid == uid;
}

/* A directory of this user's, made (private) if it is missing and make
 * is set. */
static bool own_dir(const char *path, bool make)
{
	if (make && mkdir(path, 0700) < 0 && errno != EEXIST)
		return false;
	return dir_state(path) == 1;
}

/* The base of the user's cache: $HOME, which must be there, or
 * $XDG_CACHE_HOME, made if missing where its parent is this user's. */
static bool own_base(char *path, bool xdg)
{
	int state = dir_state(path);
	char *slash = strrchr(path, '/');
	bool ok;

	if (state >= 0)
		return state == 1;
	if (!xdg || slash == NULL || slash == path)
		return false;
	*slash = 0;
	ok = own_dir(path, false);
	*slash = '/';
	return ok && own_dir(path, true);
}

/* The user's cache file into path, its directories made if missing, but
 * only if its base and every directory below it are this user's: root
 * with another user's HOME (sudo -E) makes nothing of that user's its
 * own. */
static int user_cache_dirs(char *path, size_t size)
{
	bool xdg, ok;
	int base = user_cache_path(path, size, &xdg);
	char *sep;

	if (base < 0) {
		_gnutls_debug_log("afalg: no cache saved: neither "
				  "XDG_CACHE_HOME nor HOME is an absolute "
				  "path short enough\n");
		return -1;
	}
	for (sep = path + base; sep != NULL; sep = strchr(sep + 1, '/')) {
		*sep = 0;
		ok = sep == path + base ? own_base(path, xdg) :
					  own_dir(path, true);
		if (!ok)
			_gnutls_debug_log("afalg: no cache saved under %s: "
					  "not a directory of this user\n",
					  path);
		*sep = '/';
		if (!ok)
			return -1;
	}
	return 0;
}

/* The rows of the algorithms this process measured, under the driver
 * the kernel has now; written[] says which algorithms have their row (a
 * measurement without a driver to file it under replaces the old one
 * with none).  What it took from a cache is not its own: the file being
 * replaced keeps its rows, and the other cache's (the system-wide one's
 * in the user's) would hide that cache's next measurements. */
static void write_rows(FILE *fp, bool *written)
{
	char t0[32], t1[32];
	struct afalg_driver d;
	const struct afalg_alg *alg;
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		alg = &_afalg_algs[i];
		if (source_of(alg) != AFALG_FROM_CALIBRATION)
			continue;
		written[i] = true;
		_afalg_kernel_driver(alg->kname, &d);
		if (d.name[0] == 0)
			continue;
		format_threshold(t0, sizeof(t0), _afalg_threshold(alg, 0));
		format_threshold(t1, sizeof(t1), _afalg_threshold(alg, 1));
		fprintf(fp, "%s %s %s %s\n", _afalg_label(alg), d.name, t0, t1);
	}
}

/* The rows of the cache being replaced (at path, under key) of the
 * algorithms this process did not write: a measurement stays until its
 * algorithm is measured again, whether this process used it or not (or
 * had it off, or its calibration failed).  The first row of an algorithm
 * only (the one a reader takes), and nothing of a file that would not be
 * read. */
static void keep_other_rows(FILE *fp, const char *path, const char *key,
			    bool *written)
{
	char buf[CACHE_MAX + 1];
	const char *p, *rows, *start;
	struct cache_row row;
	const struct afalg_alg *alg;

	if (read_cache_file(path, buf) < 0)
		return;
	p = buf;
	if (!take_line(&p, CACHE_FORMAT) || !take_line(&p, key))
		return;
	for (rows = p; *p != 0;)
		if (scan_row(&p, &row) < 0)
			return;
	for (p = rows; *p != 0;) {
		start = p;
		scan_row(&p, &row);
		alg = find_label(row.word[0], row.len[0], 0, true);
		if (alg == NULL || written[alg - _afalg_algs])
			continue;
		written[alg - _afalg_algs] = true;
		fwrite(start, 1, p - start, fp);
	}
}

static int save_failed(const char *path, const char *what)
{
	_gnutls_debug_log("afalg: no cache saved in %s: %s: %s\n", path, what,
			  strerror(errno));
	return gnutls_assert_val(GNUTLS_E_FILE_ERROR);
}

/* The system-wide cache's name into path, whole (cut short it could
 * name another directory's file), and its directory, made if missing
 * (by a package's installation, say), readable by everyone. */
static int system_cache_dir(char *path, size_t size)
{
	const char *name = system_cache_path();
	struct stat st;
	char *slash;
	int fd, ret = 0;

	if (name == NULL)
		return gnutls_assert_val(GNUTLS_E_FILE_ERROR);
	if ((size_t)snprintf(path, size, "%s", name) >= size) {
		errno = ENAMETOOLONG;
		return save_failed(name, "its name");
	}
	slash = strrchr(path, '/');
	if (slash == path)
		return 0;
	*slash = 0;
	if (mkdir(path, 0755) == 0) {
		/* whatever the umask; not through a link put there since */
		fd = open(path,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fchmod(fd, 0755) < 0)
			ret = save_failed(path, "its new directory");
		if (fd >= 0)
			close(fd);
	} else if (errno != EEXIST) {
		ret = save_failed(path, "mkdir");
	} else if (stat(path, &st) == 0 && (st.st_mode & 05) != 05) {
		_gnutls_debug_log("afalg: %s is not open to everyone: other "
				  "users cannot read the cache\n",
				  path);
	}
	*slash = '/';
	return ret;
}

/* Writes the cache: a new file of its own name, renamed over the old
 * one, readable by its owner, or by everyone for the system cache. */
int _afalg_save_cache(bool system)
{
	char path[512], tmp[560], key[512];
	bool written[AFALG_MAX_ALGS] = { false };
	FILE *fp;
	int fd, failed;

	if (system) {
		if (system_cache_dir(path, sizeof(path)) < 0)
			return gnutls_assert_val(GNUTLS_E_FILE_ERROR);
	} else if (user_cache_dirs(path, sizeof(path)) < 0)
		return gnutls_assert_val(GNUTLS_E_FILE_ERROR);
	/* a name no other save has: not another thread's, nor one a
	 * process killed while saving left behind */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return save_failed(path, "mkostemp");
	if (fchmod(fd, system ? 0644 : 0600) < 0 ||
	    (fp = fdopen(fd, "w")) == NULL) {
		save_failed(path, "fchmod or fdopen");
		close(fd);
		unlink(tmp);
		return GNUTLS_E_FILE_ERROR;
	}
	cache_key(key, sizeof(key));
	fprintf(fp, "%s\n%s\n", CACHE_FORMAT, key);
	write_rows(fp, written);
	keep_other_rows(fp, path, key, written);
	/* a write that failed before the last one leaves the file short,
	 * whatever fclose() says of the last */
	failed = ferror(fp);
	if (fclose(fp) != 0 || failed || rename(tmp, path) < 0) {
		save_failed(path, "write or rename");
		unlink(tmp);
		return GNUTLS_E_FILE_ERROR;
	}
	_gnutls_debug_log("afalg: thresholds saved in %s\n", path);
	return 0;
}

/* ---- the decision ------------------------------------------------------ */

static void settle(struct afalg_alg *alg)
{
	/* the thresholds are final for the process: an algorithm that never
	 * goes to the kernel can skip everything that prepares for it */
	__atomic_store_n(&alg->soft_only,
			 _afalg_threshold(alg, 0) == AFALG_NEVER &&
				 _afalg_threshold(alg, 1) == AFALG_NEVER,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&alg->settled, true, __ATOMIC_RELAXED);
	if (unlikely(_gnutls_log_level >= 2)) {
		gnutls_buffer_st buf;

		_gnutls_buffer_init(&buf);
		_afalg_describe(alg, false, &buf);
		if (_gnutls_buffer_append_data(&buf, "", 1) == 0)
			_gnutls_debug_log("afalg: %s", buf.data);
		_gnutls_buffer_clear(&buf);
	}
}

/* At start-up, before anything is registered, and only then: reads the
 * caches if an algorithm is in auto mode (two open() calls when there is
 * none, one when the user's cache has every algorithm), and says whether
 * one had a measurement.  A user's measurements are of this user's
 * processes: they win over the system-wide ones, which are not read if
 * they cannot add one.  Measurements are made under the kernel they are
 * keyed by, and only of algorithms it had through AF_ALG: with one, the
 * kernel need not be asked whether it has AF_ALG. */
bool _afalg_caches_found(void)
{
	char key[512] = "", path[512];
	const char *system;
	bool xdg;

	if (uncached == 0)
		return false;
	if (user_cache_path(path, sizeof(path), &xdg) >= 0)
		load_cache(path, "user", key, sizeof(key));
	if (uncached > 0 && (system = system_cache_path()) != NULL)
		load_cache(system, "system", key, sizeof(key));
	return caches_found;
}

/* At start-up, after _afalg_caches_found(): an algorithm in auto mode
 * that a cache keeps in software at every size is settled, and the
 * caller leaves it unregistered, so that its operations take GnuTLS's
 * own code with nothing of the module in between (on most machines,
 * most algorithms).  Its driver is not checked: the default path needs
 * no driver, and the check (reading /proc/crypto) would cost more than
 * it saves. */
bool _afalg_cached_software(struct afalg_alg *alg)
{
	if (!measured(alg) || !alg->cached.present ||
	    alg->cached.threshold[0] != AFALG_NEVER ||
	    alg->cached.threshold[1] != AFALG_NEVER)
		return false;
	alg->cached.present = false;
	use_cached(alg);
	alg->bypassed = true;
	settle(alg);
	return true;
}

/* Whether this thread is to calibrate alg: not if another thread of this
 * process does.  One of the parent's, which a child forked meanwhile
 * does not have, leaves it to the child. */
static bool claim_calibration(struct afalg_alg *alg)
{
	unsigned mine = _gnutls_get_forkid() + 1;
	unsigned seen = __atomic_load_n(&alg->calibrating, __ATOMIC_RELAXED);

	do {
		if (seen == mine)
			return false;
	} while (!__atomic_compare_exchange_n(&alg->calibrating, &seen, mine,
					      false, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

/* Called for each operation of an algorithm in auto mode until its
 * thresholds are known. */
void _afalg_account(struct afalg_alg *alg, size_t size)
{
	_afalg_apply_cache(alg);
	if (source_of(alg) != AFALG_FROM_DEFAULT) {
		settle(alg);
		return;
	}
	/* a load and a store, not a locked add: a count lost to a race
	 * only delays the calibration */
	size += __atomic_load_n(&alg->work, __ATOMIC_RELAXED);
	__atomic_store_n(&alg->work, size, __ATOMIC_RELAXED);
	if (size < AFALG_CALIBRATE_AFTER)
		return;
	/* one thread measures; the others go on in software meanwhile */
	if (!claim_calibration(alg))
		return;
	_afalg_calibrate(alg);
	settle(alg);
	if (source_of(alg) == AFALG_FROM_CALIBRATION)
		_afalg_save_cache(false);
}

/* Calibrates every registered algorithm in auto mode now (the command's
 * --calibrate). */
void _afalg_calibrate_all(void)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if ((!alg->registered && !alg->bypassed) || !measured(alg))
			continue;
		if (alg->bypassed)
			_afalg_take_software(alg);
		_afalg_calibrate(alg);
		settle(alg);
	}
}

/* ---- explaining it ----------------------------------------------------- */

static void describe_threshold(gnutls_buffer_st *out, size_t t)
{
	if (t == AFALG_NEVER)
		_gnutls_buffer_append_printf(out, "never");
	else
		_gnutls_buffer_append_printf(out, "%zu", t);
}

/* Why an algorithm takes the path it takes. */
static const char *reason(const struct afalg_alg *alg)
{
	if (alg->mode == AFALG_MODE_OFF)
		return _gnutls_fips_mode_enabled() ?
			       "off: FIPS mode, not forced" :
			       "off: set by the operator";
	if (!alg->registered && !alg->bypassed)
		return "not registered";
	if (_afalg_kernel_missing())
		return "software: the kernel has no AF_ALG";
	if (alg->absent)
		return "software: the kernel has no such algorithm";
	if (!_afalg_kernel_usable(alg))
		return "software: the kernel path is off (repeated failures)";
	if (alg->mode == AFALG_MODE_KERNEL)
		return "kernel: every operation the kernel takes";
	if (_afalg_threshold(alg, 0) != AFALG_NEVER ||
	    _afalg_threshold(alg, 1) != AFALG_NEVER)
		return "kernel from the threshold up, software below";
	if (source_of(alg) == AFALG_FROM_DEFAULT)
		return "software until measured";
	if (source_of(alg) == AFALG_FROM_FAILURE)
		return "software: its calibration failed, the next process "
		       "measures again";
	if (source_of(alg) == AFALG_FROM_OVERRIDE)
		return "software: set by the operator";
	return alg->bypassed ? "software: it was faster at every size (not "
			       "registered: GnuTLS's own code runs)" :
			       "software: it was faster at every size";
}

/* The facts of an algorithm and its path.  probe: a driver the kernel
 * has not made yet (a template such as ccm(aes) is made at its first
 * use) is asked for by binding the algorithm once; the debug log at
 * start-up does not, so that logging changes nothing the process does. */
void _afalg_describe(const struct afalg_alg *alg, bool probe,
		     gnutls_buffer_st *out)
{
	static const char *const dirs[][2] = {
		[AFALG_CIPHER] = { "encrypt", "decrypt" },
		[AFALG_AEAD] = { "encrypt", "decrypt" },
		[AFALG_MAC] = { "message", "one-shot" },
		[AFALG_DIGEST] = { "message", "one-shot" },
	};
	struct afalg_driver d;

	_afalg_kernel_driver(alg->kname, &d);
	if (d.name[0] == 0 && probe && (alg->registered || alg->bypassed) &&
	    _afalg_kernel_probe((struct afalg_alg *)alg) == 0)
		_afalg_kernel_driver(alg->kname, &d);
	_gnutls_buffer_append_printf(out, "%s: kernel %s, driver %s",
				     _afalg_label(alg), alg->kname,
				     d.name[0]		  ? d.name :
				     probe || alg->absent ? "(none)" :
							    "(not asked)");
	if (d.name[0])
		_gnutls_buffer_append_printf(
			out, " (priority %d%s%s, %s)", d.priority,
			d.module[0] ? ", module " : "", d.module,
			_afalg_driver_is_device(&d) ? "looks like a device" :
						      "CPU instructions");
	if (alg->mode == AFALG_MODE_OFF) {
		_gnutls_buffer_append_printf(out, "\n  mode off; %s\n",
					     reason(alg));
		return;
	}
	_gnutls_buffer_append_printf(out, "\n  mode %s; thresholds %s ",
				     mode_names[alg->mode],
				     dirs[alg->family][0]);
	describe_threshold(out, _afalg_threshold(alg, 0));
	_gnutls_buffer_append_printf(out, ", %s ", dirs[alg->family][1]);
	describe_threshold(out, _afalg_threshold(alg, 1));
	_gnutls_buffer_append_printf(out, " (from %s); %s\n",
				     _afalg_source_names[source_of(alg)],
				     reason(alg));
}
