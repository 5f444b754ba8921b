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

#ifdef ENABLE_AFALG
int _gnutls_afalg_init(void);
void _gnutls_afalg_deinit(void);

/* An entry of the [afalg] section of the system configuration, from
 * priority.c while it loads the file (see settings.c). */
void _gnutls_afalg_config(const char *name, const char *value);

/* For afalgtool: the settings of every algorithm (see afalg.c). */
int _gnutls_afalg_info(gnutls_datum_t *out);
#else
inline static int _gnutls_afalg_init(void)
{
	return 0;
}

inline static void _gnutls_afalg_deinit(void)
{
}

inline static void _gnutls_afalg_config(const char *name, const char *value)
{
	(void)name;
	(void)value;
}
#endif

#endif /* GNUTLS_LIB_ACCELERATED_AFALG_H */
