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
#include "atomic.h"
#include <stdatomic.h> /* configure requires it for --enable-afalg */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Registered ahead of the x86 code (80, 90): whatever GnuTLS had for an
 * algorithm becomes its software path. */
#define AFALG_PRIORITY 70

/* Rows of the algorithm table (algorithms.c) at most. */
#define AFALG_MAX_ALGS 32

/* A driver's name with its NUL, at most (sockaddr_alg's salg_name). */
#define AFALG_MAX_DRIVER 64

/* Largest key, IV, tag and output of any algorithm in the table. */
#define AFALG_MAX_KEY_SIZE 64
#define AFALG_MAX_IV_SIZE 16 /* also the kernel's CCM counter block */
#define AFALG_MAX_OUTPUT_SIZE 64

/* The largest cipher or AEAD request: it must fit in the socket's send
 * buffer (or sendmsg() waits for a reader that never comes), and
 * drivers of devices take a bounded scatterlist (QEMU's virtio-crypto
 * breaks at 32 pages).  Longer AEAD messages go to software; cipher
 * calls are split. */
#define AFALG_MAX_REQUEST (16 * 4096)

/* A context stops asking the kernel after this many failures in a row. */
#define AFALG_MAX_FAILURES 3

/* A threshold that no operation reaches. */
#define AFALG_NEVER SIZE_MAX

enum afalg_family {
	AFALG_CIPHER,
	AFALG_AEAD,
	AFALG_MAC,
	AFALG_DIGEST,
};

/* Row flags */
#define AFALG_CHAIN_IV 1 /* CBC: each call continues from the last block */
#define AFALG_CCM_NONCE 2 /* CCM: 7 to 13 byte nonces, kernel IV format */

/* What a process learnt of an algorithm at its first use (probe.c). */
enum afalg_state {
	AFALG_UNTRIED, /* not asked yet, or asked without an answer */
	AFALG_READY, /* bound, and it gave the known answer */
	AFALG_UNUSABLE, /* absent, refused, or a wrong answer: software */
};

/* What GnuTLS had registered for an algorithm before the module (e.g.
 * the x86 code), or its Nettle code. */
union afalg_soft {
	const gnutls_crypto_cipher_st *cipher;
	const gnutls_crypto_mac_st *mac;
	const gnutls_crypto_digest_st *digest;
};

/* One row per algorithm: its facts, the operator's settings, and what
 * the process learns. */
struct afalg_alg {
	enum afalg_family family;
	int id; /* gnutls_{cipher,mac,digest}_algorithm_t */
	const char *label; /* the operator's name: GnuTLS's, HMAC-SHA1 */
	const char *kname; /* kernel crypto API name */
	unsigned key_size; /* 0: any (HMAC keys) */
	unsigned iv_size; /* IV, or AEAD nonce (CCM: the TLS one) */
	unsigned tag_size; /* AEAD tag or MAC/digest output */
	unsigned block_size;
	unsigned flags;

	/* set at each gnutls_global_init() (settings.c, afalg.c): the
	 * smallest operation that goes to the kernel, for ciphers per
	 * direction (0: encrypt, 1: decrypt), for MACs and digests that of
	 * a one-shot call in [1] ([0] is AFALG_NEVER: their contexts are
	 * GnuTLS's own code), and the kernel implementation to bind by its
	 * driver name ("": the one the kernel picks for kname) */
	bool off;
	size_t threshold[2];
	char driver[AFALG_MAX_DRIVER];
	bool registered;
	union afalg_soft soft;
	/* MACs and digests: software's own functions, but for .fast */
	union {
		gnutls_crypto_mac_st mac;
		gnutls_crypto_digest_st digest;
	} ops;

	/* learnt at the first use in this process (probe.c): reset at
	 * each initialisation, kept across gnutls_global_deinit() for the
	 * contexts that outlive it (so C11 atomics, not lib/atomic.h's) */
	atomic_uint state; /* enum afalg_state */
	atomic_uint logged; /* bits: calls whose failure was logged */
	atomic_uint probe_tries; /* answers in a row that said nothing */
	atomic_uint probe_skip; /* operations before the next try */
	char why[256]; /* why the kernel does not take it */

	/* statistics of this initialisation */
	DEF_ATOMIC_INT(kernel_ops); /* counted at debug level 2 only */
	DEF_ATOMIC_INT(soft_ops);
	DEF_ATOMIC_INT(failures); /* kernel calls that failed */
};

extern struct afalg_alg _afalg_algs[];
extern const unsigned _afalg_algs_size;

/* algorithms.c: the table */
void _afalg_index(void);
struct afalg_alg *_afalg_find(enum afalg_family family, int id);
struct afalg_alg *_afalg_find_label(const char *s, size_t len);
const char *_afalg_name(const struct afalg_alg *alg);
const char *_afalg_type(const struct afalg_alg *alg);
bool _afalg_nonce_ok(const struct afalg_alg *alg, size_t nonce_size);
size_t _afalg_kernel_iv(const struct afalg_alg *alg, const void *nonce,
			size_t nonce_size, uint8_t iv[AFALG_MAX_IV_SIZE]);

/* settings.c: the operator's settings (GNUTLS_AFALG, [afalg]) become
 * each row's off and thresholds */
void _afalg_settings_apply(void);
void _afalg_settings_release(void);

/* kernel.c: the only file that makes system calls.  A socket is used
 * only while it is provably the module's: opened by this process (its
 * generation, which a child of fork(), _Fork() or clone() does not
 * share), an AF_ALG socket when it was adopted, and still the same
 * socket (its inode) under its number.  The module's descriptors have
 * numbers of its own, where an application's new ones do not land. */
/* The calls of opening and using a socket, for what failed. */
enum afalg_call {
	AFALG_CALL_SOCKET,
	AFALG_CALL_BIND,
	AFALG_CALL_SETKEY,
	AFALG_CALL_AUTHSIZE,
	AFALG_CALL_ACCEPT,
	AFALG_CALL_SEND,
	AFALG_CALL_RECV,
	AFALG_CALL_ADOPT,
	AFALG_CALL_LOST,
	AFALG_CALL_NETLINK,
};

/* Why a socket could not be opened. */
enum afalg_refusal {
	AFALG_TRANSIENT, /* out of descriptors, memory or sessions: later */
	AFALG_NO_AF_ALG, /* socket(AF_ALG) refused: for the process */
	AFALG_REFUSED, /* the algorithm (or driver) cannot be bound */
};

struct afalg_why {
	enum afalg_refusal refusal;
	enum afalg_call call;
	int err; /* errno of the failing call */
};

struct afalg_sock {
	int fd;
	unsigned gen; /* the process generation that opened it */
	dev_t dev;
	ino_t ino;
	struct afalg_alg *alg;
	struct afalg_why why; /* of its last failed request */
};

#define AFALG_SOCK_INIT(s) ((s)->fd = -1)

const char *_afalg_call_name(enum afalg_call call);
int _afalg_failed(struct afalg_alg *alg, enum afalg_call call, int err);
const char *_afalg_errno_name(int err);
bool _afalg_sock_ours(const struct afalg_sock *s);
int _afalg_sock_open(struct afalg_sock *s, struct afalg_alg *alg,
		     const char *name, const void *key, size_t key_size,
		     struct afalg_why *why);
void _afalg_sock_close(struct afalg_sock *s);
int _afalg_kernel_cipher(struct afalg_sock *s, int enc, const void *iv,
			 size_t iv_size, const void *in, void *out,
			 size_t size);
int _afalg_kernel_aead(struct afalg_sock *s, int enc, const void *iv,
		       size_t iv_size, const void *auth, size_t auth_size,
		       const void *in, size_t in_size, void *out,
		       size_t out_size);
int _afalg_kernel_hash(struct afalg_sock *s, const void *data, size_t size,
		       void *out, size_t out_size);
int _afalg_kernel_hash_fast(struct afalg_alg *alg, const void *key,
			    size_t key_size, const void *text, size_t size,
			    void *out);
int _afalg_kernel_bind(struct afalg_alg *alg, const char *name,
		       struct afalg_why *why);

/* What the kernel's crypto netlink interface says of an implementation:
 * the algorithm it implements, its driver and flags. */
struct afalg_impl {
	char name[AFALG_MAX_DRIVER];
	char driver[AFALG_MAX_DRIVER];
	uint32_t flags;
};

int _afalg_kernel_lookup(const char *name, bool by_driver,
			 struct afalg_impl *impl);
long _afalg_kernel_restrict(void);
int _afalg_kernel_type_loaded(const char *type);

/* probe.c: the first use of an algorithm in a process decides whether
 * the kernel may take it (the kernel path's only entry). */
bool _afalg_probe(struct afalg_alg *alg);
int _afalg_sock_get(struct afalg_sock *s, struct afalg_alg *alg,
		    const void *key, size_t key_size);
void _afalg_probe_reset(void);
const char *_afalg_state_text(const struct afalg_alg *alg, const char **why);

static inline bool _afalg_kernel_usable(struct afalg_alg *alg)
{
	unsigned state =
		atomic_load_explicit(&alg->state, memory_order_acquire);

	if (likely(state == AFALG_READY))
		return true;
	if (state == AFALG_UNUSABLE)
		return false;
	return _afalg_probe(alg);
}

/* Does an operation of this size go to the kernel?  dir: 0 encrypts; 1
 * decrypts, or a one-shot MAC or digest. */
inline static bool _afalg_use_kernel(struct afalg_alg *alg, unsigned dir,
				     size_t size)
{
	return size >= alg->threshold[dir] && _afalg_kernel_usable(alg);
}

/* The statistics are counted at debug level 2 only: a shared counter
 * costs every operation of every thread otherwise. */
inline static void _afalg_count(struct afalg_alg *alg, bool kernel)
{
	if (unlikely(_gnutls_log_level >= 2)) {
		if (kernel)
			gnutls_atomic_increment(&alg->kernel_ops);
		else
			gnutls_atomic_increment(&alg->soft_ops);
	}
}

/* cipher.c, aead.c, hash.c: what is registered with GnuTLS (for a MAC
 * or digest, in the row's ops) */
extern const gnutls_crypto_cipher_st _afalg_cipher_ops;
extern const gnutls_crypto_cipher_st _afalg_aead_ops;
extern const gnutls_crypto_cipher_st _afalg_aead_oneshot_ops;
void _afalg_hash_ops(struct afalg_alg *alg);

#endif /* GNUTLS_LIB_ACCELERATED_AFALG_AFALG_INT_H */
