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

/* The operator's settings: the GNUTLS_AFALG variable, and the [afalg]
 * section of GnuTLS's system-wide configuration file, whose entries
 * priority.c hands over while it loads the file in gnutls_global_init().
 * Nothing is measured here: afalgtool --calibrate measures, and writes
 * what it found as settings.
 *
 * A value is "off" (not registered), "auto" (the default: GnuTLS's own
 * code), "kernel" (every operation the kernel takes), or the smallest
 * operation that goes to the kernel: SIZE, or SIZE/SIZE per direction
 * (encrypt/decrypt), each a number of bytes or "never"; for MACs and
 * digests SIZE is that of a one-shot call (their contexts are GnuTLS's
 * own code: hash.c), and of SIZE/SIZE the second counts; "@DRIVER" after
 * it binds that implementation by its driver name instead of the one the
 * kernel picks.  GNUTLS_AFALG is a comma-separated list of VALUE (every
 * algorithm) and NAME=VALUE (commas within a driver's parentheses do not
 * separate); the file has "mode = VALUE" and "NAME = VALUE".  What applies to an
 * algorithm, first found first: the variable's entry for it, the
 * variable's value for all, the file's entry for it, the file's value
 * for all.  An invalid entry is logged and ignored. */

#include "config.h"
#include "afalg-int.h"
#include "c-ctype.h"
#include "c-strcase.h"
#include "accelerated/afalg.h"

#include <string.h>

struct setting {
	bool set;
	bool off;
	size_t threshold[2];
	char driver[AFALG_MAX_DRIVER];
};

struct source {
	const char *name;
	struct setting all;
	struct setting alg[AFALG_MAX_ALGS];
};

static struct source file_settings = { .name = "[afalg]" };
static struct source env_settings = { .name = "GNUTLS_AFALG" };

/* The file's entries of the load in this initialisation are taken; those
 * of a reload (gnutls_priority_init() after the file changed, in any
 * thread, under priority.c's lock) are not. */
static atomic_bool taken;

/* What the log shows of an invalid entry, at most. */
#define LOG_MAX 64

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

static bool same_word(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && c_strncasecmp(s, word, len) == 0;
}

/* A number of bytes, or "never". */
static bool parse_size(const char *s, size_t len, size_t *size)
{
	size_t v = 0, i, d;

	s = trim(s, &len);
	if (same_word(s, len, "never")) {
		*size = AFALG_NEVER;
		return true;
	}
	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		d = s[i] - '0';
		if (s[i] < '0' || s[i] > '9' || v > (SIZE_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*size = v;
	return true;
}

/* A driver's name, as /proc/crypto lists it: "cbc-aes-aesni",
 * "ccm_base(ctr-aes-aesni,cbcmac(aes-aesni))". */
static bool parse_driver(const char *s, size_t len, char *driver)
{
	size_t i;
	int depth = 0;

	s = trim(s, &len);
	if (len == 0 || len >= AFALG_MAX_DRIVER)
		return false;
	for (i = 0; i < len && depth >= 0; i++) {
		if (!c_isalnum(s[i]) && strchr("-_(),.", s[i]) == NULL)
			return false;
		depth += (s[i] == '(') - (s[i] == ')');
	}
	if (depth != 0)
		return false;
	memcpy(driver, s, len);
	driver[len] = 0;
	return true;
}

static bool parse_value(const char *s, size_t len, struct setting *set)
{
	const char *slash, *at;

	s = trim(s, &len);
	*set = (struct setting){ .set = true };
	at = memchr(s, '@', len);
	if (at != NULL) {
		if (!parse_driver(at + 1, s + len - at - 1, set->driver))
			return false;
		len = at - s;
		s = trim(s, &len);
	}
	/* a driver for an algorithm that does not use the kernel is a
	 * mistake */
	if (same_word(s, len, "off")) {
		set->off = true;
		return at == NULL;
	}
	if (same_word(s, len, "auto")) {
		set->threshold[0] = set->threshold[1] = AFALG_NEVER;
		return at == NULL;
	}
	if (same_word(s, len, "kernel"))
		return true;
	slash = memchr(s, '/', len);
	if (slash == NULL) {
		if (!parse_size(s, len, &set->threshold[0]))
			return false;
		set->threshold[1] = set->threshold[0];
		return true;
	}
	return parse_size(s, slash - s, &set->threshold[0]) &&
	       parse_size(slash + 1, s + len - slash - 1, &set->threshold[1]);
}

/* NAME=VALUE for one algorithm, or (name NULL) VALUE for all; false if
 * it is invalid (and ignored). */
static bool add_entry(struct source *src, const char *name, size_t name_len,
		      const char *value, size_t len)
{
	struct afalg_alg *alg = NULL;
	struct setting set;

	if (name != NULL) {
		name = trim(name, &name_len);
		alg = _afalg_find_label(name, name_len);
	}
	if ((name != NULL && alg == NULL) || !parse_value(value, len, &set)) {
		_gnutls_debug_log("afalg: ignoring '%.*s%s%s%.*s%s' in %s\n",
				  (int)MIN(name_len, LOG_MAX), name ? name : "",
				  name_len > LOG_MAX ? "..." : "",
				  name ? "=" : "", (int)MIN(len, LOG_MAX),
				  value, len > LOG_MAX ? "..." : "", src->name);
		return false;
	}
	if (alg != NULL)
		src->alg[alg - _afalg_algs] = set;
	else
		src->all = set;
	return true;
}

/* An entry of [afalg]: "mode = auto" for every algorithm, "AES-128-CBC =
 * kernel" for one.  False if it is invalid: priority.c then rejects
 * the file where GNUTLS_SYSTEM_PRIORITY_FAIL_ON_INVALID says so, as for
 * every other section. */
bool _gnutls_afalg_config(const char *name, const char *value)
{
	if (c_strcasecmp(name, "mode") == 0)
		name = NULL;
	if (atomic_load(&taken)) {
		struct source check = { .name = "[afalg]" };

		/* a reload: checked, not taken */
		return add_entry(&check, name, name ? strlen(name) : 0, value,
				 strlen(value));
	}
	return add_entry(&file_settings, name, name ? strlen(name) : 0, value,
			 strlen(value));
}

/* GNUTLS_AFALG: entries separated by commas (but within a driver's
 * parentheses); blanks alone between two are none. */
static void read_env(struct source *src)
{
	const char *s = secure_getenv("GNUTLS_AFALG"), *start, *eq;
	unsigned depth;
	size_t len;

	memset(&src->all, 0, sizeof(src->all));
	memset(src->alg, 0, sizeof(src->alg));
	while (s != NULL && *s != 0) {
		for (start = s, depth = 0; *s != 0 && (*s != ',' || depth > 0);
		     s++) {
			depth += *s == '(';
			depth -= *s == ')' && depth > 0;
		}
		/* an unclosed parenthesis: the next comma ends the entry
		 * (which is then invalid), not the variable */
		if (depth > 0)
			s = start + strcspn(start, ",");
		eq = memchr(start, '=', s - start);
		len = s - start;
		start = trim(start, &len);
		if (eq != NULL)
			add_entry(src, start, eq - start, eq + 1, s - eq - 1);
		else if (len > 0)
			add_entry(src, NULL, 0, start, len);
		if (*s != 0)
			s++;
	}
}

/* Each algorithm's settings, from the file's entries of this
 * initialisation and the variable. */
void _afalg_settings_apply(void)
{
	const struct setting *order[4], *set;
	unsigned i, k;

	read_env(&env_settings);
	atomic_store(&taken, true);
	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		order[0] = &env_settings.alg[i];
		order[1] = &env_settings.all;
		order[2] = &file_settings.alg[i];
		order[3] = &file_settings.all;
		for (k = 0; k < 4 && !order[k]->set; k++)
			;
		set = k < 4 ? order[k] : NULL;
		alg->off = set != NULL && set->off;
		alg->threshold[0] = set != NULL ? set->threshold[0] :
						  AFALG_NEVER;
		alg->threshold[1] = set != NULL ? set->threshold[1] :
						  AFALG_NEVER;
		/* a MAC or digest context is GnuTLS's own code: only the
		 * one-shot size counts */
		if (alg->family == AFALG_MAC || alg->family == AFALG_DIGEST)
			alg->threshold[0] = AFALG_NEVER;
		_gnutls_str_cpy(alg->driver, AFALG_MAX_DRIVER,
				set != NULL ? set->driver : "");
	}
}

/* The next initialisation takes the entries of the next load. */
void _afalg_settings_release(void)
{
	atomic_store(&taken, false);
	memset(&file_settings.all, 0, sizeof(file_settings.all));
	memset(file_settings.alg, 0, sizeof(file_settings.alg));
}
