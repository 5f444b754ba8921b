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

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <gnutls/gnutls.h>

/* in libgnutls, GNUTLS_PRIVATE_3_4 */
int _gnutls_afalg_info(unsigned flags, gnutls_datum_t *out);

#define INFO_CALIBRATE 1
#define INFO_SYSTEM 2

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: afalgtool [--calibrate [--system]]\n"
		"\n"
		"Prints, for each algorithm of GnuTLS's AF_ALG backend, the kernel\n"
		"algorithm and driver behind it, its mode and thresholds (the\n"
		"smallest operation that goes to the kernel), where they came from\n"
		"and the path it takes.\n"
		"\n"
		"  --calibrate  measure the thresholds now and save them in the\n"
		"               user's cache (~/.cache/gnutls/afalg)\n"
		"  --system     with --calibrate: in the system-wide cache\n"
		"               (/var/cache/gnutls/afalg), read by every user\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "calibrate", no_argument, NULL, 'c' },
		{ "system", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	gnutls_datum_t out;
	unsigned flags = 0;
	int c, ret;

	while ((c = getopt_long(argc, argv, "csh", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			flags |= INFO_CALIBRATE;
			break;
		case 's':
			flags |= INFO_SYSTEM;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc || flags == INFO_SYSTEM) {
		usage(stderr);
		return 1;
	}

	ret = gnutls_global_init();
	if (ret < 0) {
		fprintf(stderr, "afalgtool: %s\n", gnutls_strerror(ret));
		return 1;
	}
	ret = _gnutls_afalg_info(flags, &out);
	if (ret == GNUTLS_E_FILE_ERROR && (flags & INFO_CALIBRATE)) {
		fprintf(stderr, "afalgtool: the cache could not be written "
				"(GNUTLS_DEBUG_LEVEL=2 says why)\n");
		gnutls_global_deinit();
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "afalgtool: %s\n", gnutls_strerror(ret));
		gnutls_global_deinit();
		return 1;
	}
	fwrite(out.data, 1, out.size, stdout);
	gnutls_free(out.data);
	gnutls_global_deinit();
	return 0;
}
