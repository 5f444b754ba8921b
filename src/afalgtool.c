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
 * and the command that measures the thresholds in advance. */

#include <config.h>

#include <stdio.h>
#include <gnutls/gnutls.h>

#include "afalgtool-options.h"

/* in libgnutls, GNUTLS_PRIVATE_3_4 */
int _gnutls_afalg_info(unsigned flags, gnutls_datum_t *out);

#define INFO_CALIBRATE 1
#define INFO_SYSTEM 2

static void tls_log_func(int level, const char *str)
{
	fprintf(stderr, "|<%d>| %s", level, str);
}

int main(int argc, char **argv)
{
	gnutls_datum_t out;
	unsigned flags = 0;
	int ret;

	optionProcess(&afalgtoolOptions, argc, argv);
	if (HAVE_OPT(CALIBRATE))
		flags |= INFO_CALIBRATE;
	if (HAVE_OPT(SYSTEM))
		flags |= INFO_SYSTEM;
	if (HAVE_OPT(DEBUG)) {
		gnutls_global_set_log_function(tls_log_func);
		gnutls_global_set_log_level(OPT_VALUE_DEBUG);
	}

	ret = gnutls_global_init();
	if (ret < 0) {
		fprintf(stderr, "afalgtool: %s\n", gnutls_strerror(ret));
		return 1;
	}
	ret = _gnutls_afalg_info(flags, &out);
	if (ret < 0 && ret != GNUTLS_E_FILE_ERROR) {
		fprintf(stderr, "afalgtool: %s\n", gnutls_strerror(ret));
		gnutls_global_deinit();
		return 1;
	}
	/* what was measured, saved or not */
	fwrite(out.data, 1, out.size, stdout);
	gnutls_free(out.data);
	gnutls_global_deinit();
	if (ret < 0) {
		fprintf(stderr, "afalgtool: the cache could not be written "
				"(--debug=2 says why)\n");
		return 1;
	}
	return 0;
}
