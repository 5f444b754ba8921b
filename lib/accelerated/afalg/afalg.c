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

/* Registration of the kernel crypto API (AF_ALG) backend.  An algorithm
 * is registered only where the operator's settings send some of its
 * operations to the kernel (settings.c); it is then asked first, ahead of
 * what GnuTLS had for it, which becomes its software path.  Every other
 * algorithm runs GnuTLS's own code, with nothing of the module in
 * between.  Registering makes no system call: AF_ALG is first touched
 * when an operation the settings send to the kernel runs (probe.c).  In
 * FIPS mode nothing is registered: the kernel is outside GnuTLS's module
 * boundary. */

#include "config.h"
#include "errors.h"
#include "accelerated/afalg.h"

#ifdef ENABLE_AFALG

#include "afalg-int.h"
#include "afalg-compat.h"
#include "fips.h"

#include <stdio.h>
#include <string.h>

static const char *const family_names[] = {
	[AFALG_CIPHER] = "cipher",
	[AFALG_AEAD] = "aead",
	[AFALG_MAC] = "mac",
	[AFALG_DIGEST] = "digest",
};

static bool wanted(const struct afalg_alg *alg)
{
	return !alg->off && (alg->threshold[0] != AFALG_NEVER ||
			     alg->threshold[1] != AFALG_NEVER);
}

/* What GnuTLS has for the algorithm becomes its software path. */
static void take_software(struct afalg_alg *alg)
{
	switch (alg->family) {
	case AFALG_CIPHER:
	case AFALG_AEAD:
		alg->soft.cipher = _gnutls_get_crypto_cipher(alg->id);
		if (alg->soft.cipher == NULL)
			alg->soft.cipher = _afalg_builtin_cipher();
		break;
	case AFALG_MAC:
		alg->soft.mac = _gnutls_get_crypto_mac(alg->id);
		if (alg->soft.mac == NULL)
			alg->soft.mac = _afalg_builtin_mac();
		break;
	case AFALG_DIGEST:
		alg->soft.digest = _gnutls_get_crypto_digest(alg->id);
		if (alg->soft.digest == NULL)
			alg->soft.digest = _afalg_builtin_digest();
		break;
	}
}

/* The module in front of the software path. */
static int register_alg(struct afalg_alg *alg)
{
	const gnutls_crypto_cipher_st *ops = &_afalg_cipher_ops;

	switch (alg->family) {
	case AFALG_AEAD:
		/* one-shot only where software is (x86 CCM) */
		ops = alg->soft.cipher->setiv == NULL ?
			      &_afalg_aead_oneshot_ops :
			      &_afalg_aead_ops;
		/* fall through */
	case AFALG_CIPHER:
		return gnutls_crypto_single_cipher_register(
			alg->id, AFALG_PRIORITY, ops, 0);
	case AFALG_MAC:
		_afalg_hash_ops(alg);
		return gnutls_crypto_single_mac_register(
			alg->id, AFALG_PRIORITY, &alg->ops.mac, 0);
	case AFALG_DIGEST:
		_afalg_hash_ops(alg);
		return gnutls_crypto_single_digest_register(
			alg->id, AFALG_PRIORITY, &alg->ops.digest, 0);
	}
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

static void format_threshold(char *buf, size_t size, size_t t)
{
	if (t == AFALG_NEVER)
		snprintf(buf, size, "never");
	else
		snprintf(buf, size, "%zu", t);
}

/* A row as this initialisation starts it: nothing learnt yet.  (The
 * module requires <stdatomic.h>, where gnutls_atomic_deinit() frees
 * nothing: contexts may outlive gnutls_global_deinit() and count on.) */
static void row_init(struct afalg_alg *alg)
{
	alg->registered = false;
	atomic_store(&alg->state, AFALG_UNTRIED);
	atomic_store(&alg->logged, 0);
	atomic_store(&alg->probe_tries, 0);
	atomic_store(&alg->probe_skip, 0);
	alg->why[0] = 0;
	gnutls_atomic_init(&alg->kernel_ops);
	gnutls_atomic_init(&alg->soft_ops);
	gnutls_atomic_init(&alg->failures);
}

/* Called once per gnutls_global_init(), after the system configuration
 * is loaded (lib/global.c). */
int _gnutls_afalg_init(void)
{
	char t0[32], t1[32];
	unsigned i, n = 0;
	int ret;

	_afalg_settings_apply();
	_afalg_probe_reset();
	for (i = 0; i < _afalg_algs_size; i++) {
		row_init(&_afalg_algs[i]);
		n += wanted(&_afalg_algs[i]);
	}
	if (n == 0) {
		_gnutls_debug_log("afalg: no algorithm is set to use the "
				  "kernel: nothing registered\n");
		return 0;
	}
	if (_gnutls_fips_mode_enabled()) {
		_gnutls_debug_log("afalg: FIPS mode: nothing registered\n");
		return 0;
	}
	_afalg_index();

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if (!wanted(alg))
			continue;
		take_software(alg);
		ret = register_alg(alg);
		if (ret < 0) {
			_gnutls_debug_log("afalg: cannot register %s: %s\n",
					  alg->label, gnutls_strerror(ret));
			continue;
		}
		alg->registered = true;
		format_threshold(t0, sizeof(t0), alg->threshold[0]);
		format_threshold(t1, sizeof(t1), alg->threshold[1]);
		_gnutls_debug_log("afalg: registered %s %s (%s%s), kernel "
				  "from %s/%s bytes\n",
				  family_names[alg->family], alg->label,
				  alg->driver[0] ? "driver " : "",
				  alg->driver[0] ? alg->driver : alg->kname, t0,
				  t1);
	}
	return 0;
}

/* Which path carried the work, for a person reading the debug log
 * (GNUTLS_DEBUG_LEVEL=2) and the tests of programs that have no other
 * way to say; afalgtool reads _gnutls_afalg_report(). */
static void log_stats(void)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];
		unsigned kernel_ops = gnutls_atomic_val(&alg->kernel_ops);
		unsigned soft_ops = gnutls_atomic_val(&alg->soft_ops);

		if (!alg->registered || kernel_ops + soft_ops == 0)
			continue;
		_gnutls_debug_log(
			"afalg: stats %s %s: %u kernel, %u software\n",
			family_names[alg->family], _afalg_name(alg), kernel_ops,
			soft_ops);
	}
}

void _gnutls_afalg_deinit(void)
{
	unsigned i;

	if (unlikely(_gnutls_log_level >= 2))
		log_stats();
	for (i = 0; i < _afalg_algs_size; i++) {
		_afalg_algs[i].registered = false;
		gnutls_atomic_deinit(&_afalg_algs[i].kernel_ops);
		gnutls_atomic_deinit(&_afalg_algs[i].soft_ops);
		gnutls_atomic_deinit(&_afalg_algs[i].failures);
	}
	_afalg_settings_release();
}

/* For afalgtool: the backend as this process has it, version 1 of the
 * report.  The first line is "afalg-report 1"; then a line per
 * algorithm of space-separated KEY=VALUE fields, "why" last and running
 * to the end of the line: label, family, kernel-name, driver ("-": the
 * kernel's pick), off (0, 1), threshold (TWO/SIZES: encrypt/decrypt, or
 * for MACs and digests never/one-shot; "never" where none), registered
 * (0, 1), state (untried, ready, unusable, no-af-alg), kernel-ops and
 * software-ops (counted at debug level 2), failures (kernel calls that
 * failed), why.  A reader skips keys it does not know; a change that
 * would mislead an older reader takes a new version.  With
 * GNUTLS_AFALG_REPORT_PROBE every algorithm not off is first tried in
 * the kernel, as at its first use. */
int _gnutls_afalg_report(unsigned version, unsigned flags, gnutls_datum_t *out)
{
	gnutls_buffer_st buf;
	char t0[32], t1[32];
	const char *state, *why;
	unsigned i;
	int ret;

	if (version != 1)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	_gnutls_buffer_init(&buf);
	ret = _gnutls_buffer_append_printf(&buf, "afalg-report 1\n");
	for (i = 0; i < _afalg_algs_size && ret >= 0; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if ((flags & GNUTLS_AFALG_REPORT_PROBE) && !alg->off &&
		    !_gnutls_fips_mode_enabled()) {
			if (!alg->registered)
				take_software(alg);
			(void)_afalg_kernel_usable(alg);
		}
		state = _afalg_state_text(alg, &why);
		format_threshold(t0, sizeof(t0), alg->threshold[0]);
		format_threshold(t1, sizeof(t1), alg->threshold[1]);
		ret = _gnutls_buffer_append_printf(
			&buf,
			"label=%s family=%s kernel-name=%s driver=%s off=%d "
			"threshold=%s/%s registered=%d state=%s kernel-ops=%u "
			"software-ops=%u failures=%u why=%s\n",
			alg->label, family_names[alg->family], alg->kname,
			alg->driver[0] ? alg->driver : "-", alg->off, t0, t1,
			alg->registered, state,
			gnutls_atomic_val(&alg->kernel_ops),
			gnutls_atomic_val(&alg->soft_ops),
			gnutls_atomic_val(&alg->failures), why);
	}
	if (ret < 0) {
		_gnutls_buffer_clear(&buf);
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	}
	return _gnutls_buffer_to_datum(&buf, out, 1);
}

#else /* !ENABLE_AFALG */

/* Exported in every build (libgnutls.map): a build without the backend
 * has nothing to report. */
int _gnutls_afalg_report(unsigned version, unsigned flags, gnutls_datum_t *out)
{
	(void)version;
	(void)flags;
	(void)out;
	return gnutls_assert_val(GNUTLS_E_UNIMPLEMENTED_FEATURE);
}

#endif /* ENABLE_AFALG */
