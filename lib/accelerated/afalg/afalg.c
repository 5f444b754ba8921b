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
 * between.  With nothing to register, the module makes no system call;
 * otherwise one socket() call tells whether the kernel has AF_ALG.  In
 * FIPS mode nothing is registered: the kernel is outside GnuTLS's module
 * boundary. */

#include "config.h"
#include "afalg-int.h"
#include "afalg-compat.h"
#include "errors.h"
#include "fips.h"
#include "accelerated/afalg.h"

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
		return gnutls_crypto_single_mac_register(
			alg->id, AFALG_PRIORITY, &_afalg_mac_ops, 0);
	case AFALG_DIGEST:
		return gnutls_crypto_single_digest_register(
			alg->id, AFALG_PRIORITY, &_afalg_digest_ops, 0);
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

/* Called once per gnutls_global_init(), after the system configuration
 * is loaded (lib/global.c). */
int _gnutls_afalg_init(void)
{
	char t0[32], t1[32];
	unsigned i, n = 0;
	int ret;

	_afalg_settings_apply();
	for (i = 0; i < _afalg_algs_size; i++) {
		_afalg_algs[i].registered = false;
		gnutls_atomic_init(&_afalg_algs[i].absent);
		gnutls_atomic_init(&_afalg_algs[i].kernel_ops);
		gnutls_atomic_init(&_afalg_algs[i].soft_ops);
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
	if (!_afalg_kernel_present())
		return 0;
	_afalg_index();

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if (!wanted(alg) ||
		    (alg->driver[0] && !_afalg_kernel_driver_ok(alg)))
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

/* Which path carried the work; tests read it from the debug log
 * (GNUTLS_DEBUG_LEVEL=2). */
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
	for (i = 0; i < _afalg_algs_size; i++)
		_afalg_algs[i].registered = false;
	_afalg_settings_release();
}

/* For afalgtool: a line per algorithm, "LABEL FAMILY KERNEL-NAME
 * off|on THRESHOLD THRESHOLD registered|- DRIVER|-", each threshold a
 * number of bytes or "never", DRIVER the one the settings name. */
int _gnutls_afalg_info(gnutls_datum_t *out)
{
	gnutls_buffer_st buf;
	char t0[32], t1[32];
	unsigned i;
	int ret = 0;

	_gnutls_buffer_init(&buf);
	for (i = 0; i < _afalg_algs_size && ret >= 0; i++) {
		const struct afalg_alg *alg = &_afalg_algs[i];

		format_threshold(t0, sizeof(t0), alg->threshold[0]);
		format_threshold(t1, sizeof(t1), alg->threshold[1]);
		ret = _gnutls_buffer_append_printf(
			&buf, "%s %s %s %s %s %s %s %s\n", alg->label,
			family_names[alg->family], alg->kname,
			alg->off ? "off" : "on", t0, t1,
			alg->registered ? "registered" : "-",
			alg->driver[0] ? alg->driver : "-");
	}
	if (ret < 0) {
		_gnutls_buffer_clear(&buf);
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	}
	return _gnutls_buffer_to_datum(&buf, out, 1);
}
