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

#ifndef GNUTLS_LIB_ACCELERATED_AFALG_H
#define GNUTLS_LIB_ACCELERATED_AFALG_H

#include <gnutls/gnutls.h>

#include <stdbool.h>

/* For afalgtool: the backend as the process has it, in every build (one
 * without the backend answers GNUTLS_E_UNIMPLEMENTED_FEATURE); version
 * is that of the report the caller reads (1), flags
 * GNUTLS_AFALG_REPORT_PROBE or 0 (see afalg/afalg.c). */
#define GNUTLS_AFALG_REPORT_PROBE 1
int _gnutls_afalg_report(unsigned version, unsigned flags, gnutls_datum_t *out);

#ifdef ENABLE_AFALG
int _gnutls_afalg_init(void);
void _gnutls_afalg_deinit(void);

/* An entry of the [afalg] section of the system configuration, from
 * priority.c while it loads the file (see settings.c); false if it is
 * invalid. */
bool _gnutls_afalg_config(const char *name, const char *value);
#else
inline static int _gnutls_afalg_init(void)
{
	return 0;
}

inline static void _gnutls_afalg_deinit(void)
{
}

inline static bool _gnutls_afalg_config(const char *name, const char *value)
{
	(void)name;
	(void)value;
	return true;
}
#endif

#endif /* GNUTLS_LIB_ACCELERATED_AFALG_H */
