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

#ifndef GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H
#define GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H

#include "gnutls_int.h"
#include "crypto-backend.h"
#include "str.h"
#include <stdbool.h>
#include <stdint.h>

/* The module registers below the x86 code (80, 90), so that it is asked
 * first; whatever was registered before it becomes its software path. */
#define AFALG_PRIORITY 70

/* Rows of the algorithm table (algorithms.c) at most. */
#define AFALG_MAX_ALGS 32

/* Largest key, IV, tag and output of any algorithm in the table. */
#define AFALG_MAX_KEY_SIZE 64
#define AFALG_MAX_IV_SIZE 16 /* also the kernel's CCM counter block */
#define AFALG_MAX_OUTPUT_SIZE 64

/* A request (AAD + text + tag, or a cipher chunk) must fit in the
 * socket's send buffer, or sendmsg() waits for a reader that never
 * comes.  Larger AEAD messages go to software; cipher calls are split. */
#define AFALG_MAX_REQUEST (16 * 4096)

/* A hash message in the kernel keeps, in user space, the bytes sent
 * since its last checkpoint (a clone of the kernel state), so that a
 * failed or forked socket can be replaced without a wrong digest. */
#define AFALG_HASH_REPLAY (64 * 1024)

/* Kernel failures in a row after which the process stops using it. */
#define AFALG_MAX_FAILURES 16

/* A size threshold that no operation reaches. */
#define AFALG_NEVER SIZE_MAX

/* Bytes of work after which an algorithm in auto mode with no cached
 * thresholds is calibrated (see policy.c). */
#define AFALG_CALIBRATE_AFTER (16 * 1024 * 1024)

enum afalg_family {
	AFALG_CIPHER,
	AFALG_AEAD,
	AFALG_MAC,
	AFALG_DIGEST,
};

/* What the operator asked for an algorithm (GNUTLS_AFALG). */
enum afalg_mode {
	AFALG_MODE_OFF, /* not registered: GnuTLS as if built without us */
	AFALG_MODE_AUTO, /* kernel only where measured faster */
	AFALG_MODE_KERNEL, /* every operation the kernel takes */
};

/* Where an algorithm's thresholds came from. */
enum afalg_source {
	AFALG_FROM_DEFAULT, /* auto: software until measured */
	AFALG_FROM_CACHE,
	AFALG_FROM_CALIBRATION,
	AFALG_FROM_OVERRIDE, /* kernel mode, or a size the operator set */
	AFALG_FROM_FAILURE, /* a calibration that failed: software for the
			     * process, nothing cached */
	AFALG_FROM_TEST_CLOCK, /* a calibration by _gnutls_afalg_clock()'s
				* times: not cached */
};

extern const char *const _afalg_source_names[];

/* Row flags */
#define AFALG_CHAIN_IV 1 /* CBC: each call continues from the last block */
#define AFALG_CCM_NONCE 2 /* CCM: 7 to 13 byte nonces, kernel IV format */

/* The software implementation an algorithm falls back to: what GnuTLS had
 * registered before the module (e.g. the x86 code), or its Nettle code. */
union afalg_soft {
	const gnutls_crypto_cipher_st *cipher;
	const gnutls_crypto_mac_st *mac;
	const gnutls_crypto_digest_st *digest;
};

/* One row per algorithm: the facts, and what the process learns. */
struct afalg_alg {
	enum afalg_family family;
	int id; /* gnutls_{cipher,mac,digest}_algorithm_t */
	const char *label; /* operator's name: GnuTLS's, but HMAC-SHA1 */
	const char *kname; /* kernel crypto API name */
	unsigned key_size; /* 0: any (HMAC keys) */
	unsigned iv_size; /* IV, or AEAD nonce (CCM: the TLS one) */
	unsigned tag_size; /* AEAD tag or MAC/digest output */
	unsigned block_size;
	unsigned flags;

	/* set by _gnutls_afalg_init() (policy.c) */
	enum afalg_mode mode;
	bool forced; /* the operator named the mode explicitly */
	bool fixed; /* the operator set a size */
	bool named; /* by the source of settings being read */
	size_t fixed_size;
	bool registered;
	bool bypassed; /* auto, kept in software at every size by a cache:
			* not registered, GnuTLS's own code runs */
	union afalg_soft soft;
	/* smallest operation that goes to the kernel: for ciphers per
	 * direction (0: encrypt, 1: decrypt), for MACs and digests per kind
	 * (0: a message of a context, 1: a one-shot call); AFALG_NEVER:
	 * none */
	size_t threshold[2];
	enum afalg_source source;
	bool settled; /* thresholds known: no more accounting */
	bool soft_only; /* settled, and no operation goes to the kernel */

	/* a cached measurement, applied if its driver is still the one */
	struct {
		bool present;
		char driver[128];
		size_t threshold[2];
		const char *from;
	} cached;

	/* learnt while running */
	size_t work; /* bytes, until settled */
	unsigned calibrating; /* 1 + the fork id of the process one of
			       * whose threads calibrates it; 0: none */
	bool absent; /* the kernel has no such algorithm */
	bool announced; /* its driver was logged */
	unsigned long kernel_ops;
	unsigned long soft_ops;
};

/* An implementation the kernel has, from /proc/crypto. */
struct afalg_driver {
	char name[128];
	char module[64];
	int priority;
	bool async;
};

extern struct afalg_alg _afalg_algs[];
extern const unsigned _afalg_algs_size;

void _afalg_index(void);
struct afalg_alg *_afalg_find(enum afalg_family family, int id);
const char *_afalg_name(const struct afalg_alg *alg);
const char *_afalg_label(const struct afalg_alg *alg);
bool _afalg_nonce_ok(const struct afalg_alg *alg, size_t nonce_size);
size_t _afalg_kernel_iv(const struct afalg_alg *alg, const void *nonce,
			size_t nonce_size, uint8_t iv[AFALG_MAX_IV_SIZE]);

/* The statistics are logged at level 2 only, and only counted then: a
 * shared counter costs every operation of every thread otherwise.  (In
 * line: it is on the path of every operation.) */
inline static void _afalg_count(struct afalg_alg *alg, bool kernel)
{
	if (unlikely(_gnutls_log_level >= 2))
		__atomic_fetch_add(kernel ? &alg->kernel_ops : &alg->soft_ops,
				   1, __ATOMIC_RELAXED);
}

/* afalg.c: registration */
void _afalg_take_software(struct afalg_alg *alg);

/* policy.c: the operator's settings, the thresholds, the cache */
unsigned _afalg_read_settings(void);
void _afalg_release_settings(void);
const char *_afalg_mode_name(const struct afalg_alg *alg);
void _afalg_account(struct afalg_alg *alg, size_t size);
void _afalg_set_thresholds(struct afalg_alg *alg, size_t t0, size_t t1,
			   enum afalg_source source);
void _afalg_apply_cache(struct afalg_alg *alg);
bool _afalg_caches_found(void);
bool _afalg_cached_software(struct afalg_alg *alg);
int _afalg_save_cache(bool system);
void _afalg_calibrate_all(void);
void _afalg_kernel_driver(const char *kname, struct afalg_driver *d);
bool _afalg_driver_is_device(const struct afalg_driver *d);
void _afalg_describe(const struct afalg_alg *alg, bool probe,
		     gnutls_buffer_st *out);

/* calibrate.c */
void _afalg_calibrate(struct afalg_alg *alg);

bool _afalg_kernel_usable(const struct afalg_alg *alg);

/* A threshold, as another thread may be setting it
 * (_afalg_set_thresholds()). */
inline static size_t _afalg_threshold(const struct afalg_alg *alg, unsigned dir)
{
	return __atomic_load_n(&alg->threshold[dir], __ATOMIC_RELAXED);
}

/* Does an operation of this size go to the kernel?  dir: 0 encrypts, or
 * a hash message; 1 decrypts, or a one-shot hash.  An algorithm in auto
 * mode accounts its work until its thresholds are known. */
inline static bool _afalg_use_kernel(struct afalg_alg *alg, unsigned dir,
				     size_t size)
{
	if (unlikely(!__atomic_load_n(&alg->settled, __ATOMIC_RELAXED)))
		_afalg_account(alg, size);
	return size >= _afalg_threshold(alg, dir) && _afalg_kernel_usable(alg);
}

/* kernel.c: the only file that calls the kernel.  Every descriptor is
 * opened close-on-exec and counted against a process-wide cap; every
 * failure is counted, and AFALG_MAX_FAILURES in a row switch the kernel
 * path off for the process.  Functions return 0 or a GNUTLS_E_* code. */
bool _afalg_kernel_present(void);
bool _afalg_kernel_missing(void);
void _afalg_kernel_deinit(void);
void _afalg_kernel_atfork(void);

int _afalg_kernel_open(struct afalg_alg *alg, const void *key, size_t key_size,
		       int *op);
int _afalg_kernel_clone(int fd, int *copy);
int _afalg_kernel_copy(int fd, int *copy);
unsigned long _afalg_kernel_id(int fd);
int _afalg_kernel_probe(struct afalg_alg *alg);
void _afalg_kernel_close(int *fd);
void _afalg_kernel_drop(int *fd, unsigned forkid);

int _afalg_kernel_cipher(int op, int enc, const void *iv, size_t iv_size,
			 const void *in, void *out, size_t size);
int _afalg_kernel_aead(int op, int enc, const void *iv, size_t iv_size,
		       const void *auth, size_t auth_size, const void *in,
		       size_t in_size, void *out, size_t out_size);
int _afalg_kernel_hash(int op, const void *data, size_t size);
int _afalg_kernel_digest(int op, void *out, size_t size);
int _afalg_kernel_hash_fast(struct afalg_alg *alg, const void *key,
			    size_t key_size, const void *text, size_t size,
			    void *out);

void _afalg_kernel_failed(const char *what, int err);
void _afalg_kernel_ok(void);

/* cipher.c, mac.c: the callbacks registered with GnuTLS. */
extern const gnutls_crypto_cipher_st _afalg_cipher_ops;
extern const gnutls_crypto_cipher_st _afalg_aead_ops;
extern const gnutls_crypto_cipher_st _afalg_aead_oneshot_ops;
extern const gnutls_crypto_mac_st _afalg_mac_ops;
extern const gnutls_crypto_digest_st _afalg_digest_ops;
/* mac.c, for calibration: messages on the module's own kernel path */
int _afalg_hash_kernel_new(struct afalg_alg *alg, const void *key,
			   size_t key_size, void **ctx);
int _afalg_hash_kernel_message(void *ctx, const void *data, size_t size,
			       void *out);
void _afalg_hash_kernel_free(void *ctx);

#endif /* GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H */
