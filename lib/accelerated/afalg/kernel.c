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

/* The only file that talks to the kernel crypto API.  Functions return 0
 * or a GNUTLS_E_* code; a kernel error is logged here and the callers fall
 * back to software where they can. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <errno.h>
#include <kcapi.h>
#include <linux/if_alg.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

static int kernel_error(const char *what, ssize_t ret)
{
	if (ret == -EBADMSG)
		return GNUTLS_E_DECRYPTION_FAILED;
	_gnutls_debug_log("afalg: %s failed: %s\n", what, strerror((int)-ret));
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

/* One socket() call tells whether the kernel has AF_ALG at all; only then
 * is libkcapi asked about algorithms, with its own error messages off. */
bool _afalg_kernel_present(void)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		_gnutls_debug_log("afalg: AF_ALG is not available: %s\n",
				  strerror(errno));
		return false;
	}
	close(fd);
	kcapi_set_verbosity(KCAPI_LOG_NONE);
	return true;
}

/* Ciphers and AEAD, through libkcapi */

int _afalg_kernel_open(const struct afalg_alg *alg, struct kcapi_handle **h)
{
	int ret;

	if (alg->family == AFALG_CIPHER)
		ret = kcapi_cipher_init(h, alg->kname, 0);
	else
		ret = kcapi_aead_init(h, alg->kname, 0);
	if (ret < 0) {
		*h = NULL;
		return kernel_error(alg->kname, ret);
	}
	return 0;
}

void _afalg_kernel_close(const struct afalg_alg *alg, struct kcapi_handle *h)
{
	if (h == NULL)
		return;
	if (alg->family == AFALG_CIPHER)
		kcapi_cipher_destroy(h);
	else
		kcapi_aead_destroy(h);
}

int _afalg_kernel_setkey(const struct afalg_alg *alg, struct kcapi_handle *h,
			 const void *key, size_t key_size)
{
	int ret;

	if (alg->family == AFALG_CIPHER) {
		ret = kcapi_cipher_setkey(h, key, key_size);
	} else {
		ret = kcapi_aead_setkey(h, key, key_size);
		if (ret == 0)
			ret = kcapi_aead_settaglen(h, alg->tag_size);
	}
	return ret < 0 ? kernel_error("setkey", ret) : 0;
}

/* Encrypts or decrypts in requests of at most AFALG_CIPHER_CHUNK bytes.
 * With AFALG_CHAIN_IV (CBC) iv carries the chaining value from request to
 * request; otherwise (XTS) the caller passes one data unit, in one request.
 * On error, *done and iv tell where the caller can carry on. */
int _afalg_kernel_cipher(const struct afalg_alg *alg, struct kcapi_handle *h,
			 int enc, uint8_t *iv, const uint8_t *in, uint8_t *out,
			 size_t size, size_t *done)
{
	bool chain = alg->flags & AFALG_CHAIN_IV;
	uint8_t next_iv[AFALG_MAX_IV_SIZE];
	size_t len;
	ssize_t ret;

	while (size > 0) {
		len = chain ? MIN(size, AFALG_CIPHER_CHUNK) : size;
		/* decryption in place overwrites the next chaining value */
		if (chain && !enc)
			memcpy(next_iv, in + len - alg->iv_size, alg->iv_size);
		if (enc)
			ret = kcapi_cipher_encrypt(h, in, len, iv, out, len,
						   KCAPI_ACCESS_SENDMSG);
		else
			ret = kcapi_cipher_decrypt(h, in, len, iv, out, len,
						   KCAPI_ACCESS_SENDMSG);
		if (ret != (ssize_t)len)
			return kernel_error("cipher operation",
					    ret < 0 ? ret : -EIO);
		if (chain)
			memcpy(iv, enc ? out + len - alg->iv_size : next_iv,
			       alg->iv_size);
		*done += len;
		in += len;
		out += len;
		size -= len;
	}
	return 0;
}

/* The kernel's ccm(aes) takes the first counter block: the length of the
 * length field minus one, then the nonce (RFC 3610). */
static const void *kernel_iv(const struct afalg_alg *alg, const void *nonce,
			     size_t nonce_size, uint8_t iv[AFALG_MAX_IV_SIZE])
{
	if (!(alg->flags & AFALG_CCM_NONCE))
		return nonce;
	memset(iv, 0, AFALG_MAX_IV_SIZE);
	iv[0] = 15 - nonce_size - 1;
	memcpy(iv + 1, nonce, nonce_size);
	return iv;
}

/* One AEAD request.  The kernel takes AAD || text (|| tag) and returns
 * AAD || text (|| tag) in one buffer; out receives text (|| tag) only,
 * and nothing at all when authentication fails. */
int _afalg_kernel_aead(const struct afalg_alg *alg, struct kcapi_handle *h,
		       int enc, const void *nonce, size_t nonce_size,
		       const void *auth, size_t auth_size, const void *in,
		       size_t in_size, void *out, size_t tag_size)
{
	uint8_t iv_buf[AFALG_MAX_IV_SIZE];
	const void *iv = kernel_iv(alg, nonce, nonce_size, iv_buf);
	size_t out_size = enc ? in_size + tag_size : in_size - tag_size;
	size_t buf_size = auth_size + MAX(in_size, out_size);
	uint8_t *buf;
	ssize_t ret;

	buf = gnutls_malloc(buf_size ? buf_size : 1);
	if (buf == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	if (auth_size)
		memcpy(buf, auth, auth_size);
	if (in_size)
		memcpy(buf + auth_size, in, in_size);

	kcapi_aead_setassoclen(h, auth_size);
	if (enc)
		ret = kcapi_aead_encrypt(h, buf, auth_size + in_size, iv, buf,
					 auth_size + out_size,
					 KCAPI_ACCESS_SENDMSG);
	else
		ret = kcapi_aead_decrypt(h, buf, auth_size + in_size, iv, buf,
					 auth_size + out_size,
					 KCAPI_ACCESS_SENDMSG);

	if (ret >= 0 && (size_t)ret == auth_size + out_size) {
		if (out_size)
			memcpy(out, buf + auth_size, out_size);
		ret = 0;
	} else {
		ret = kernel_error("AEAD operation", ret < 0 ? ret : -EIO);
	}
	zeroize_temp_key(buf, buf_size);
	gnutls_free(buf);
	return ret;
}

/* MACs and digests, on the socket API.  A context has the transformation
 * socket (bound to the algorithm, holding the key) and one operation
 * socket, accepted from it once there is a key. */
struct afalg_md {
	const struct afalg_alg *alg;
	int tfm;
	int op;
};

static int md_bind(const struct afalg_alg *alg)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "hash" };
	int fd;

	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", alg->kname);
	fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kernel_error("socket", -errno);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int ret = kernel_error(alg->kname, -errno);

		close(fd);
		return ret;
	}
	return fd;
}

static int md_accept(struct afalg_md *md, int from)
{
	md->op = accept4(from, NULL, NULL, SOCK_CLOEXEC);
	return md->op < 0 ? kernel_error("accept", -errno) : 0;
}

int _afalg_md_open(const struct afalg_alg *alg, struct afalg_md **_md)
{
	struct afalg_md *md;
	int ret;

	md = gnutls_calloc(1, sizeof(*md));
	if (md == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	md->alg = alg;
	md->op = -1;
	md->tfm = md_bind(alg);
	if (md->tfm < 0) {
		ret = md->tfm;
		gnutls_free(md);
		return ret;
	}
	/* a keyed hash accepts operations only once it has a key */
	if (alg->family == AFALG_DIGEST && (ret = md_accept(md, md->tfm)) < 0) {
		_afalg_md_close(md);
		return ret;
	}
	*_md = md;
	return 0;
}

void _afalg_md_close(struct afalg_md *md)
{
	if (md == NULL)
		return;
	if (md->op >= 0)
		close(md->op);
	if (md->tfm >= 0)
		close(md->tfm);
	gnutls_free(md);
}

/* The kernel refuses a new key (EBUSY) while an operation socket is open,
 * so the old one goes first; a new key starts a new message anyway. */
int _afalg_md_setkey(struct afalg_md *md, const void *key, size_t key_size)
{
	if (md->tfm < 0)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	if (md->op >= 0) {
		close(md->op);
		md->op = -1;
	}
	if (setsockopt(md->tfm, SOL_ALG, ALG_SET_KEY, key, key_size) < 0)
		return kernel_error("setkey", -errno);
	return md_accept(md, md->tfm);
}

int _afalg_md_update(struct afalg_md *md, const void *data, size_t size)
{
	ssize_t ret;

	if (md->op < 0)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	while (size > 0) {
		ret = send(md->op, data, size, MSG_MORE);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return kernel_error("hash update",
					    ret < 0 ? -errno : -EIO);
		data = (const uint8_t *)data + ret;
		size -= ret;
	}
	return 0;
}

/* Finishes the message and leaves the socket ready for the next one. */
int _afalg_md_output(struct afalg_md *md, void *out, size_t size)
{
	uint8_t digest[AFALG_MAX_OUTPUT_SIZE];
	size_t len = md->alg->tag_size;
	ssize_t ret;

	if (md->op < 0)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	do
		ret = recv(md->op, digest, len, 0);
	while (ret < 0 && errno == EINTR);
	if (ret != (ssize_t)len)
		return kernel_error("hash output", ret < 0 ? -errno : -EIO);
	memcpy(out, digest, MIN(size, len));
	zeroize_temp_key(digest, sizeof(digest));
	return 0;
}

/* accept() on an operation socket clones its state into a new one. */
int _afalg_md_copy(const struct afalg_md *md, struct afalg_md **_copy)
{
	struct afalg_md *copy;
	int ret;

	if (md->op < 0)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	copy = gnutls_calloc(1, sizeof(*copy));
	if (copy == NULL)
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	copy->alg = md->alg;
	copy->tfm = -1; /* the key stays with the original */
	ret = md_accept(copy, md->op);
	if (ret < 0) {
		gnutls_free(copy);
		return ret;
	}
	*_copy = copy;
	return 0;
}

/* One-shot MAC and digest calls reuse a context per thread and algorithm
 * rather than opening sockets for every call.  A child after fork() must
 * not share the parent's sockets, so the cache remembers its process. */
struct oneshot_cache {
	pid_t pid;
	struct afalg_md *md[];
};

static pthread_key_t oneshot_key;
static pthread_once_t oneshot_once = PTHREAD_ONCE_INIT;
static bool oneshot_key_ok;

static void oneshot_free(void *p)
{
	struct oneshot_cache *cache = p;
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++)
		_afalg_md_close(cache->md[i]);
	gnutls_free(cache);
}

static void oneshot_key_init(void)
{
	oneshot_key_ok = pthread_key_create(&oneshot_key, oneshot_free) == 0;
}

static struct oneshot_cache *oneshot_cache(void)
{
	size_t size = _afalg_algs_size * sizeof(struct afalg_md *);
	struct oneshot_cache *cache;

	if (pthread_once(&oneshot_once, oneshot_key_init) != 0 ||
	    !oneshot_key_ok)
		return NULL;

	cache = pthread_getspecific(oneshot_key);
	if (cache != NULL && cache->pid != getpid()) {
		/* inherited over fork(): the parent keeps using the sockets,
		 * so the child drops its references and opens its own */
		unsigned i;

		for (i = 0; i < _afalg_algs_size; i++)
			_afalg_md_close(cache->md[i]);
		memset(cache->md, 0, size);
		cache->pid = getpid();
	}
	if (cache == NULL) {
		cache = gnutls_calloc(1, sizeof(*cache) + size);
		if (cache == NULL)
			return NULL;
		cache->pid = getpid();
		if (pthread_setspecific(oneshot_key, cache) != 0) {
			gnutls_free(cache);
			return NULL;
		}
	}
	return cache;
}

struct afalg_md *_afalg_md_oneshot(const struct afalg_alg *alg)
{
	struct oneshot_cache *cache = oneshot_cache();
	unsigned i = alg - _afalg_algs;

	if (cache == NULL)
		return NULL;
	if (cache->md[i] == NULL && _afalg_md_open(alg, &cache->md[i]) < 0)
		return NULL;
	return cache->md[i];
}

/* After a failure the context's state is unknown: it is not reused. */
void _afalg_md_oneshot_drop(const struct afalg_alg *alg)
{
	struct oneshot_cache *cache = oneshot_cache();
	unsigned i = alg - _afalg_algs;

	if (cache == NULL)
		return;
	_afalg_md_close(cache->md[i]);
	cache->md[i] = NULL;
}

void _afalg_kernel_deinit(void)
{
	struct oneshot_cache *cache;

	if (!oneshot_key_ok)
		return;
	cache = pthread_getspecific(oneshot_key);
	if (cache != NULL) {
		pthread_setspecific(oneshot_key, NULL);
		oneshot_free(cache);
	}
}

bool _afalg_kernel_offers(const struct afalg_alg *alg)
{
	struct kcapi_handle *h;
	int fd;

	if (alg->family == AFALG_CIPHER || alg->family == AFALG_AEAD) {
		if (_afalg_kernel_open(alg, &h) < 0)
			return false;
		_afalg_kernel_close(alg, h);
		return true;
	}
	fd = md_bind(alg);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The driver behind a kernel algorithm name (the highest priority entry
 * in /proc/crypto), for the debug log. */
void _afalg_kernel_driver(const char *kname, char *driver, size_t size)
{
	char line[256], name[128] = "", drv[128] = "";
	int prio = -1, best = -1;
	FILE *fp;

	snprintf(driver, size, "unknown");
	fp = fopen("/proc/crypto", "re");
	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "name : %127s", name) == 1)
			continue;
		if (sscanf(line, "driver : %127s", drv) == 1)
			continue;
		if (sscanf(line, "priority : %d", &prio) == 1 &&
		    strcmp(name, kname) == 0 && prio > best) {
			best = prio;
			snprintf(driver, size, "%s", drv);
		}
	}
	fclose(fp);
}
