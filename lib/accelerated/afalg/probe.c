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

/* The first use of an algorithm in a process: whether the kernel may
 * take it.  Nothing of AF_ALG is touched before: a process that never
 * runs an operation its settings send to the kernel makes no AF_ALG
 * system call (a sandbox that kills on socket() is safe, and no
 * algif_* module is loaded for it).  At the first such operation the
 * algorithm is bound, a driver named in the settings is checked with the
 * kernel's crypto netlink interface to be one of the algorithm (of the
 * module's table, so that no other name is ever bound), and the bound
 * implementation must give the known answer that GnuTLS's own code gives
 * (a wrong driver, or a broken engine, is caught before it computes
 * anything).  The outcome holds for the process, with one debug line per
 * cause; what says nothing of the algorithm (out of descriptors, a
 * device out of sessions) is asked again, less and less often. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* cru_flags of the crypto netlink interface (include/linux/crypto.h) */
#define CRYPTO_ALG_ASYNC_FLAG 0x00000080
#define CRYPTO_ALG_KERN_DRIVER_ONLY_FLAG 0x00001000

/* logged: the algorithm's refusal; the process's AF_ALG */
#define LOGGED_REFUSAL (1U << 31)

/* AF_ALG in this process: 0 not known, else refused (the errno), and
 * logged once, with why. */
static atomic_int af_alg_refused;
static char af_alg_why[256];
static atomic_bool af_alg_why_set;

void _afalg_probe_reset(void)
{
	atomic_store(&af_alg_why_set, false);
	atomic_store(&af_alg_refused, 0);
}

static void set_state(struct afalg_alg *alg, enum afalg_state state)
{
	atomic_store_explicit(&alg->state, state, memory_order_release);
}

/* Why socket(AF_ALG) fails, as far as the errno tells. */
static const char *socket_cause(int err)
{
	switch (err) {
	case EAFNOSUPPORT:
		return "the kernel has no AF_ALG, or a filter of the "
		       "process's refuses it (seccomp, systemd's "
		       "RestrictAddressFamilies=)";
	case EPERM:
		return "refused by a filter of the process's (seccomp) or a "
		       "security module";
	case EACCES:
		return "refused by a security module (SELinux, AppArmor)";
	default:
		return "refused";
	}
}

/* Why binding name failed, from what the kernel tells of it. */
static void bind_cause(const struct afalg_alg *alg, const char *name, int err,
		       char *buf, size_t size)
{
	const char *type = _afalg_type(alg);
	struct afalg_impl impl;
	long allowlist;
	int found;

	if (err != ENOENT) {
		snprintf(buf, size, "the kernel refuses %s (bind: %s)", name,
			 _afalg_errno_name(err));
		return;
	}
	if (_afalg_kernel_type_loaded(type) == 0) {
		snprintf(buf, size,
			 "AF_ALG's %s type is not available (algif_%s is not "
			 "loaded: blocked or missing)",
			 type, type);
		return;
	}
	/* (by an algorithm's name the interface answers with one of its
	 * implementations, not the one a bind reaches: only a driver's
	 * name says whether it is asynchronous) */
	found = _afalg_kernel_lookup(name, name == alg->driver, &impl);
	allowlist = _afalg_kernel_restrict();
	if (allowlist > 0)
		snprintf(buf, size,
			 "the kernel refuses %s to this process: it is not on "
			 "AF_ALG's allowlist for it "
			 "(/proc/sys/crypto/af_alg_restrict is %ld)",
			 name, allowlist);
	else if (found == 0 && name == alg->driver &&
		 (impl.flags &
		  (CRYPTO_ALG_ASYNC_FLAG | CRYPTO_ALG_KERN_DRIVER_ONLY_FLAG)))
		snprintf(buf, size,
			 "the kernel has %s but refuses it through AF_ALG: "
			 "an asynchronous or driver-only implementation "
			 "(since Linux 7.2 AF_ALG offers only CPU "
			 "implementations)",
			 name);
	else if (found == 0)
		snprintf(buf, size,
			 "the kernel has %s but AF_ALG does not bind it "
			 "(bind: ENOENT)",
			 name);
	else if (found == -ENOENT)
		snprintf(buf, size, "the kernel has no %s", name);
	else
		snprintf(buf, size,
			 "the kernel has no %s, or refuses it (bind: ENOENT; "
			 "its crypto netlink interface cannot say which: %s)",
			 name, _afalg_errno_name(-found));
}

/* The algorithm stays in software for the process; one line says why,
 * which afalgtool's report also gives. */
static bool unusable(struct afalg_alg *alg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool unusable(struct afalg_alg *alg, const char *fmt, ...)
{
	va_list ap;

	if (!(atomic_fetch_or(&alg->logged, LOGGED_REFUSAL) & LOGGED_REFUSAL)) {
		va_start(ap, fmt);
		vsnprintf(alg->why, sizeof(alg->why), fmt, ap);
		va_end(ap);
		_gnutls_debug_log("afalg: %s: %s: software for this process\n",
				  alg->label, alg->why);
	}
	set_state(alg, AFALG_UNUSABLE);
	return false;
}

/* An answer that says nothing of the algorithm (out of descriptors or
 * memory, a device out of sessions): the operation runs in software,
 * and the algorithm is tried again after 2, 4, ... 1024 operations. */
static bool not_now(struct afalg_alg *alg)
{
	unsigned tries = atomic_fetch_add(&alg->probe_tries, 1);

	atomic_store(&alg->probe_skip, 1U << MIN(tries + 1, 10));
	return false;
}

/* socket(AF_ALG) refused: for every algorithm of the process. */
static bool no_af_alg(struct afalg_alg *alg, int err)
{
	int none = 0;
	unsigned i;

	if (atomic_compare_exchange_strong(&af_alg_refused, &none, err)) {
		snprintf(af_alg_why, sizeof(af_alg_why),
			 "AF_ALG is not available (socket: %s): %s",
			 _afalg_errno_name(err), socket_cause(err));
		atomic_store_explicit(&af_alg_why_set, true,
				      memory_order_release);
		_gnutls_debug_log("afalg: %s: GnuTLS's own code for this "
				  "process\n",
				  af_alg_why);
	}
	for (i = 0; i < _afalg_algs_size; i++)
		set_state(&_afalg_algs[i], AFALG_UNUSABLE);
	(void)alg;
	return false;
}

/* What a failed socket says of the algorithm. */
static bool refused(struct afalg_alg *alg, const char *name,
		    const struct afalg_why *why)
{
	char cause[sizeof(alg->why)];

	switch (why->refusal) {
	case AFALG_NO_AF_ALG:
		return no_af_alg(alg, why->err);
	case AFALG_TRANSIENT:
		return not_now(alg);
	case AFALG_REFUSED:
		break;
	}
	if (why->call == AFALG_CALL_BIND) {
		bind_cause(alg, name, why->err, cause, sizeof(cause));
		return unusable(alg, "%s", cause);
	}
	return unusable(alg, "%s: %s failed (%s)", name,
			_afalg_call_name(why->call),
			_afalg_errno_name(why->err));
}

/* A template's instance may be named as a driver before it exists (the
 * kernel makes it when the name is bound): "cbc(aes-generic)".  Such a
 * name is bound only if its outermost template is the algorithm's own
 * (cbc for cbc(aes); gcm_base and ccm_base, which gcm and ccm are made
 * of): never authenc, authencesn, cryptd or any other that wraps
 * another algorithm. */
static bool own_template(const struct afalg_alg *alg, const char *driver)
{
	size_t n = strcspn(alg->kname, "("), d = strcspn(driver, "(");

	if (driver[d] == 0) /* not a template's: already registered */
		return false;
	if (d == n && strncmp(driver, alg->kname, n) == 0)
		return true;
	return d == n + 5 && strncmp(driver, alg->kname, n) == 0 &&
	       strncmp(driver + n, "_base", 5) == 0;
}

/* The driver the settings name must be one of the algorithm: AF_ALG
 * binds any driver of the type by its name (ctr-aes-aesni for cbc(aes)
 * would give other answers), and any algorithm by a name that is not a
 * driver's.  The kernel's crypto netlink interface must know it by that
 * exact driver name, as an implementation of the algorithm's kernel
 * name; where it cannot say, the driver is refused.  The algorithm's own
 * name is bound first, which makes its default instance exist, and a
 * template's instance of the algorithm's own template is made by binding
 * its name (own_template()). */
static bool driver_ok(struct afalg_alg *alg)
{
	struct afalg_impl impl;
	struct afalg_why why;
	int ret;

	ret = _afalg_kernel_bind(alg, alg->kname, &why);
	if (ret < 0)
		return refused(alg, alg->kname, &why);
	ret = _afalg_kernel_lookup(alg->driver, true, &impl);
	if (ret == -ENOENT && own_template(alg, alg->driver)) {
		ret = _afalg_kernel_bind(alg, alg->driver, &why);
		if (ret < 0)
			return refused(alg, alg->driver, &why);
		ret = _afalg_kernel_lookup(alg->driver, true, &impl);
	}
	if (ret == -ENOENT)
		return unusable(alg, "the kernel has no driver named %s",
				alg->driver);
	if (ret < 0)
		return unusable(alg,
				"the kernel cannot say what %s implements "
				"(its crypto netlink interface: %s): the "
				"driver is not bound",
				alg->driver, _afalg_errno_name(-ret));
	if (strcmp(impl.driver, alg->driver) != 0 ||
	    strcmp(impl.name, alg->kname) != 0)
		return unusable(alg, "%s implements %s, not %s", alg->driver,
				impl.name, alg->kname);
	return true;
}

/* ---- the known answer -------------------------------------------------- */

#define KAT_SIZE 64 /* four AES blocks, one XTS data unit */
#define KAT_AUTH 13 /* a TLS 1.2 record's */

static void pattern(uint8_t *p, size_t size, unsigned seed)
{
	size_t i;

	for (i = 0; i < size; i++)
		p[i] = (uint8_t)(i * 29 + seed * 101 + 7);
}

/* GnuTLS's own answer, by the software path the module keeps. */
static int soft_answer(const struct afalg_alg *alg, const uint8_t *key,
		       size_t key_size, const uint8_t *iv, const uint8_t *auth,
		       const uint8_t *in, uint8_t *out)
{
	const gnutls_crypto_cipher_st *c = alg->soft.cipher;
	void *ctx = NULL;
	int ret;

	switch (alg->family) {
	case AFALG_CIPHER:
		ret = c->init(alg->id, &ctx, 1);
		if (ret == 0)
			ret = c->setkey(ctx, key, key_size);
		if (ret == 0)
			ret = c->setiv(ctx, iv, alg->iv_size);
		if (ret == 0)
			ret = c->encrypt(ctx, in, KAT_SIZE, out, KAT_SIZE);
		break;
	case AFALG_AEAD:
		ret = c->init(alg->id, &ctx, 1);
		if (ret == 0)
			ret = c->setkey(ctx, key, key_size);
		if (ret == 0)
			ret = c->aead_encrypt(ctx, iv, alg->iv_size, auth,
					      KAT_AUTH, alg->tag_size, in,
					      KAT_SIZE, out,
					      KAT_SIZE + alg->tag_size);
		break;
	case AFALG_MAC:
		return alg->soft.mac->fast(alg->id, NULL, 0, key, key_size, in,
					   KAT_SIZE, out);
	case AFALG_DIGEST:
		return alg->soft.digest->fast(alg->id, in, KAT_SIZE, out);
	default:
		return GNUTLS_E_INTERNAL_ERROR;
	}
	if (ctx != NULL)
		c->deinit(ctx);
	return ret;
}

/* The kernel's answer, on a socket bound to name. */
static int kernel_answer(struct afalg_alg *alg, const char *name,
			 const uint8_t *key, size_t key_size, const uint8_t *iv,
			 const uint8_t *auth, const uint8_t *in, uint8_t *out,
			 struct afalg_why *why)
{
	uint8_t kiv[AFALG_MAX_IV_SIZE];
	size_t kiv_size;
	struct afalg_sock s;
	int ret;

	AFALG_SOCK_INIT(&s);
	ret = _afalg_sock_open(&s, alg, name,
			       alg->family == AFALG_DIGEST ? NULL : key,
			       key_size, why);
	if (ret < 0)
		return ret;
	switch (alg->family) {
	case AFALG_CIPHER:
		ret = _afalg_kernel_cipher(&s, 1, iv, alg->iv_size, in, out,
					   KAT_SIZE);
		break;
	case AFALG_AEAD:
		kiv_size = _afalg_kernel_iv(alg, iv, alg->iv_size, kiv);
		ret = _afalg_kernel_aead(&s, 1, kiv, kiv_size, auth, KAT_AUTH,
					 in, KAT_SIZE, out,
					 KAT_SIZE + alg->tag_size);
		break;
	default:
		ret = _afalg_kernel_hash(&s, in, KAT_SIZE, out, alg->tag_size);
		break;
	}
	if (ret < 0) {
		*why = s.why;
		if (why->err == 0) /* (out of memory for a bounce buffer) */
			*why = (struct afalg_why){ AFALG_TRANSIENT,
						   AFALG_CALL_RECV, ENOMEM };
	}
	_afalg_sock_close(&s);
	return ret;
}

/* The bound implementation gives GnuTLS's answer to one request. */
static bool known_answer(struct afalg_alg *alg)
{
	const char *name = alg->driver[0] ? alg->driver : alg->kname;
	uint8_t key[AFALG_MAX_KEY_SIZE], iv[AFALG_MAX_IV_SIZE];
	uint8_t auth[KAT_AUTH], in[KAT_SIZE];
	uint8_t want[KAT_SIZE + AFALG_MAX_OUTPUT_SIZE];
	uint8_t got[KAT_SIZE + AFALG_MAX_OUTPUT_SIZE];
	size_t key_size = alg->key_size ? alg->key_size : 32;
	size_t size = alg->family == AFALG_CIPHER ? KAT_SIZE :
		      alg->family == AFALG_AEAD	  ? KAT_SIZE + alg->tag_size :
						    alg->tag_size;
	struct afalg_why why;
	bool ok;

	pattern(key, sizeof(key), 1);
	pattern(iv, sizeof(iv), 2);
	pattern(auth, sizeof(auth), 3);
	pattern(in, sizeof(in), 4);
	if (soft_answer(alg, key, key_size, iv, auth, in, want) < 0)
		return unusable(alg, "GnuTLS's own code gave no answer to "
				     "compare with");
	if (kernel_answer(alg, name, key, key_size, iv, auth, in, got, &why) <
	    0) {
		/* a request that fails on a fresh socket: tried again, up
		 * to AFALG_MAX_FAILURES times */
		if (why.call != AFALG_CALL_SEND && why.call != AFALG_CALL_RECV)
			return refused(alg, name, &why);
		if (why.refusal == AFALG_TRANSIENT ||
		    atomic_load(&alg->probe_tries) + 1 < AFALG_MAX_FAILURES)
			return not_now(alg);
		return unusable(alg,
				"%s failed its known-answer request %d "
				"times (%s: %s)",
				name, AFALG_MAX_FAILURES,
				_afalg_call_name(why.call),
				_afalg_errno_name(why.err));
	}
	ok = memcmp(want, got, size) == 0;
	gnutls_memset(key, 0, sizeof(key));
	if (!ok)
		return unusable(alg,
				"%s gave a wrong answer to a known-answer "
				"test",
				name);
	return true;
}

/* The context's socket for an operation: its own, still the module's,
 * or a new one bound to the implementation the algorithm's first use
 * accepted (key: the context's, NULL for a digest).  A refusal there
 * (AF_ALG denied since, a driver gone) holds for the process. */
int _afalg_sock_get(struct afalg_sock *s, struct afalg_alg *alg,
		    const void *key, size_t key_size)
{
	const char *name = alg->driver[0] ? alg->driver : alg->kname;
	struct afalg_why why;

	if (s->fd >= 0) {
		if (_afalg_sock_ours(s))
			return 0;
		_afalg_sock_close(s);
	}
	if (_afalg_sock_open(s, alg, name, key, key_size, &why) == 0)
		return 0;
	if (why.refusal == AFALG_TRANSIENT)
		return _afalg_failed(alg, why.call, why.err);
	/* one line, the refusal's */
	refused(alg, name, &why);
	gnutls_atomic_increment(&alg->failures);
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

/* Whether the kernel takes the algorithm in this process: decided at
 * its first use (several threads may decide at once: they come to the
 * same outcome). */
bool _afalg_probe(struct afalg_alg *alg)
{
	unsigned skip;
	int err = atomic_load(&af_alg_refused);

	if (err != 0) {
		set_state(alg, AFALG_UNUSABLE);
		return false;
	}
	/* after an answer that said nothing: not before the skip is
	 * spent */
	skip = atomic_load(&alg->probe_skip);
	if (skip > 0) {
		atomic_store(&alg->probe_skip, skip - 1);
		return false;
	}
	if (alg->driver[0] && !driver_ok(alg))
		return false;
	if (!known_answer(alg))
		return false;
	atomic_store(&alg->probe_tries, 0);
	set_state(alg, AFALG_READY);
	return true;
}

/* The outcome, for afalgtool's report: a word, and the cause. */
const char *_afalg_state_text(const struct afalg_alg *alg, const char **why)
{
	int err = atomic_load(&af_alg_refused);

	*why = "";
	switch (atomic_load(&alg->state)) {
	case AFALG_READY:
		return "ready";
	case AFALG_UNUSABLE:
		if (err != 0) {
			*why = atomic_load_explicit(&af_alg_why_set,
						    memory_order_acquire) ?
				       af_alg_why :
				       socket_cause(err);
			return "no-af-alg";
		}
		*why = alg->why;
		return "unusable";
	default:
		return "untried";
	}
}
