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

/* Registration of the kernel crypto API (AF_ALG) backend.  Each algorithm
 * of the table that the operator has not turned off is registered ahead
 * of what GnuTLS had for it, and what GnuTLS had becomes its software
 * path; but an algorithm in auto mode that a cache keeps in software at
 * every size is left to what GnuTLS had.  Nothing is asked of the kernel
 * here beyond one socket() call, and not that when a cache has a
 * measurement: an algorithm is bound the first time an operation goes to
 * the kernel.
 *
 * GNUTLS_AFALG is a comma-separated list: a mode for every algorithm
 * (off, auto or kernel; default auto) and NAME=MODE for one, which wins
 * over it wherever it stands, e.g.
 * "auto,AES-128-CBC=kernel,HMAC-SHA256=off"; it wins over the [afalg]
 * section of the system configuration, which priority.c hands over
 * (_gnutls_afalg_config()).  In FIPS mode the module stays off unless
 * the operator names "kernel". */

#include "config.h"
#include "afalg-int.h"
#include "afalg-compat.h"
#include "errors.h"
#include "fips.h"
#include "crypto.h"
#include <accelerated/afalg.h>

#include <string.h>

static const char *const family_names[] = {
	[AFALG_CIPHER] = "cipher",
	[AFALG_AEAD] = "aead",
	[AFALG_MAC] = "mac",
	[AFALG_DIGEST] = "digest",
};

static const gnutls_crypto_cipher_st *cipher_ops(const struct afalg_alg *alg)
{
	if (alg->family == AFALG_CIPHER)
		return &_afalg_cipher_ops;
	if (alg->soft.cipher->setiv == NULL)
		return &_afalg_aead_oneshot_ops;
	return &_afalg_aead_ops;
}

/* What GnuTLS has for the algorithm becomes its software path: at
 * registration, or (an algorithm left to GnuTLS) to calibrate it. */
void _afalg_take_software(struct afalg_alg *alg)
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
	switch (alg->family) {
	case AFALG_CIPHER:
	case AFALG_AEAD:
		return gnutls_crypto_single_cipher_register(
			alg->id, AFALG_PRIORITY, cipher_ops(alg), 0);
	case AFALG_MAC:
		return gnutls_crypto_single_mac_register(
			alg->id, AFALG_PRIORITY, &_afalg_mac_ops, 0);
	case AFALG_DIGEST:
		return gnutls_crypto_single_digest_register(
			alg->id, AFALG_PRIORITY, &_afalg_digest_ops, 0);
	}
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

/* Called once per gnutls_global_init(): after the system configuration
 * is loaded, or in FIPS mode before the self-tests (lib/global.c). */
int _gnutls_afalg_init(void)
{
	unsigned i, registered = 0, bypassed = 0;
	int ret;

	/* nothing to do if every algorithm is off, or if this is a second
	 * initialisation */
	if (_afalg_read_settings() == 0)
		return 0;
	_afalg_index();
	if (!_afalg_caches_found() && !_afalg_kernel_present())
		return 0;
	_afalg_kernel_atfork();

	for (i = 0; i < _afalg_algs_size; i++) {
		struct afalg_alg *alg = &_afalg_algs[i];

		if (alg->mode == AFALG_MODE_OFF)
			continue;
		if (_afalg_cached_software(alg)) {
			bypassed++;
			continue;
		}
		_afalg_take_software(alg);
		ret = register_alg(alg);
		if (ret < 0) {
			_gnutls_debug_log("afalg: cannot register %s: %s\n",
					  _afalg_label(alg),
					  gnutls_strerror(ret));
			continue;
		}
		alg->registered = true;
		registered++;
		_gnutls_debug_log("afalg: registered %s %s (%s), mode %s\n",
				  family_names[alg->family], _afalg_label(alg),
				  alg->kname, _afalg_mode_name(alg));
	}
	_gnutls_debug_log("afalg: %u of %u algorithms registered, %u left to "
			  "GnuTLS's own code by the cache\n",
			  registered, _afalg_algs_size, bypassed);
	return 0;
}

/* The statistics say which path carried the work; tests read them from
 * the debug log (GNUTLS_DEBUG_LEVEL=2). */
static void log_stats(void)
{
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++) {
		const struct afalg_alg *alg = &_afalg_algs[i];
		unsigned long kernel_ops, soft_ops;

		kernel_ops =
			__atomic_load_n(&alg->kernel_ops, __ATOMIC_RELAXED);
		soft_ops = __atomic_load_n(&alg->soft_ops, __ATOMIC_RELAXED);
		if (!alg->registered || kernel_ops + soft_ops == 0)
			continue;
		_gnutls_debug_log(
			"afalg: stats %s %s: %lu kernel, %lu software\n",
			family_names[alg->family], _afalg_name(alg), kernel_ops,
			soft_ops);
	}
}

/* What a registration leaves is reset by the next one (policy.c), so
 * that a process that did nothing does nothing here. */
void _gnutls_afalg_deinit(void)
{
	_afalg_release_settings();
	_afalg_kernel_deinit();
	if (unlikely(_gnutls_log_level >= 2))
		log_stats();
}

/* For the afalgtool command: a description of every algorithm, after
 * calibrating them (flags & 1) and saving the thresholds in the
 * system-wide cache (flags & 2) or the user's.  A save that failed
 * returns GNUTLS_E_FILE_ERROR with the description, which has what was
 * measured. */
int _gnutls_afalg_info(unsigned flags, gnutls_datum_t *out)
{
	gnutls_buffer_st buf;
	unsigned i;
	int ret, saved = 0;

	_gnutls_buffer_init(&buf);
	for (i = 0; i < _afalg_algs_size; i++)
		if (_afalg_algs[i].registered || _afalg_algs[i].bypassed)
			break;
	if (i == _afalg_algs_size) {
		_gnutls_buffer_append_str(
			&buf, "afalg: no algorithm registered (no AF_ALG, "
			      "FIPS mode, or GNUTLS_AFALG=off)\n");
	} else {
		/* a cache lets the module register without asking the
		 * kernel: the description says whether it has AF_ALG */
		_afalg_kernel_present();
		for (i = 0; i < _afalg_algs_size; i++)
			if (_afalg_algs[i].registered)
				_afalg_apply_cache(&_afalg_algs[i]);
		if (flags & 1) {
			_afalg_calibrate_all();
			saved = _afalg_save_cache(flags & 2);
		}
		for (i = 0; i < _afalg_algs_size; i++)
			if (_afalg_algs[i].mode != AFALG_MODE_OFF ||
			    _afalg_algs[i].forced)
				_afalg_describe(&_afalg_algs[i], true, &buf);
	}
	ret = _gnutls_buffer_to_datum(&buf, out, 1);
	return ret < 0 ? ret : saved;
}
