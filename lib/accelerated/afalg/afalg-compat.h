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

#ifndef GNUTLS_LIB_ACCELERATED_AFALG_AFALG_COMPAT_H
#define GNUTLS_LIB_ACCELERATED_AFALG_AFALG_COMPAT_H

/* The only place where the GnuTLS versions the backend builds against
 * differ: the built-in software implementations, which become the
 * software path of an algorithm that nothing else had registered.
 * GnuTLS 3.8.10 replaced the _gnutls_{cipher,mac,digest}_ops variables
 * with functions that return them (or, in FIPS mode with a PKCS#11
 * provider, the provider's).  Upstream this header is not needed. */

#include "gnutls_int.h"
#include "crypto-backend.h"

#if GNUTLS_VERSION_NUMBER >= 0x03080a
#define _afalg_builtin_cipher() _gnutls_cipher_backend()
#define _afalg_builtin_mac() _gnutls_mac_backend()
#define _afalg_builtin_digest() _gnutls_digest_backend()
#else
#include "cipher_int.h"
#include "hash_int.h"
#define _afalg_builtin_cipher() (&_gnutls_cipher_ops)
#define _afalg_builtin_mac() (&_gnutls_mac_ops)
#define _afalg_builtin_digest() (&_gnutls_digest_ops)
#endif

#endif /* GNUTLS_LIB_ACCELERATED_AFALG_AFALG_COMPAT_H */
