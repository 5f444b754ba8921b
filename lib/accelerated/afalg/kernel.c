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

/* The only file that talks to the kernel crypto API (through libkcapi).
 * Functions return 0 or a GNUTLS_E_* code; a kernel error is logged here
 * and the callers fall back to software where they can. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <errno.h>
#include <kcapi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
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

int _afalg_kernel_open(const struct afalg_alg *alg, struct kcapi_handle **h)
{
	int ret;

	switch (alg->family) {
	case AFALG_CIPHER:
		ret = kcapi_cipher_init(h, alg->kname, 0);
		break;
	case AFALG_AEAD:
		ret = kcapi_aead_init(h, alg->kname, 0);
		break;
	default:
		ret = kcapi_md_init(h, alg->kname, 0);
		break;
	}
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
	switch (alg->family) {
	case AFALG_CIPHER:
		kcapi_cipher_destroy(h);
		break;
	case AFALG_AEAD:
		kcapi_aead_destroy(h);
		break;
	default:
		kcapi_md_destroy(h);
		break;
	}
}

int _afalg_kernel_setkey(const struct afalg_alg *alg, struct kcapi_handle *h,
			 const void *key, size_t key_size)
{
	int ret;

	switch (alg->family) {
	case AFALG_CIPHER:
		ret = kcapi_cipher_setkey(h, key, key_size);
		break;
	case AFALG_AEAD:
		ret = kcapi_aead_setkey(h, key, key_size);
		if (ret == 0)
			ret = kcapi_aead_settaglen(h, alg->tag_size);
		break;
	default:
		ret = kcapi_md_setkey(h, key, key_size);
		break;
	}
	return ret < 0 ? kernel_error("setkey", ret) : 0;
}

/* Encrypts or decrypts whole blocks in requests of at most
 * AFALG_CIPHER_CHUNK bytes, carrying the CBC chaining value in iv.  On
 * error, *done and iv tell where the caller can carry on. */
int _afalg_kernel_cipher(struct kcapi_handle *h, int enc, uint8_t *iv,
			 size_t iv_size, const uint8_t *in, uint8_t *out,
			 size_t size, size_t *done)
{
	uint8_t next_iv[AFALG_MAX_IV_SIZE];
	size_t len;
	ssize_t ret;

	while (size > 0) {
		len = MIN(size, AFALG_CIPHER_CHUNK);
		/* decryption in place overwrites the next chaining value */
		if (!enc)
			memcpy(next_iv, in + len - iv_size, iv_size);
		if (enc)
			ret = kcapi_cipher_encrypt(h, in, len, iv, out, len,
						   KCAPI_ACCESS_SENDMSG);
		else
			ret = kcapi_cipher_decrypt(h, in, len, iv, out, len,
						   KCAPI_ACCESS_SENDMSG);
		if (ret != (ssize_t)len)
			return kernel_error("cipher operation",
					    ret < 0 ? ret : -EIO);
		memcpy(iv, enc ? out + len - iv_size : next_iv, iv_size);
		*done += len;
		in += len;
		out += len;
		size -= len;
	}
	return 0;
}

/* One AEAD request.  The kernel takes AAD || text (|| tag) and returns
 * AAD || text (|| tag) in one buffer; out receives text (|| tag) only,
 * and nothing at all when authentication fails. */
int _afalg_kernel_aead(struct kcapi_handle *h, int enc, const void *iv,
		       const void *auth, size_t auth_size, const void *in,
		       size_t in_size, void *out, size_t tag_size)
{
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

int _afalg_kernel_hash(struct kcapi_handle *h, const void *data, size_t size)
{
	ssize_t ret;

	while (size > 0) {
		/* kcapi_md_update() takes at most INT_MAX bytes */
		size_t len = MIN(size, 1U << 30);

		ret = kcapi_md_update(h, data, len);
		if (ret < 0)
			return kernel_error("hash update", ret);
		data = (const uint8_t *)data + len;
		size -= len;
	}
	return 0;
}

/* Finishes the message and leaves the handle ready for the next one. */
int _afalg_kernel_output(const struct afalg_alg *alg, struct kcapi_handle *h,
			 void *out, size_t size)
{
	uint8_t md[AFALG_MAX_OUTPUT_SIZE];
	ssize_t ret;

	ret = kcapi_md_final(h, md, alg->tag_size);
	if (ret != (ssize_t)alg->tag_size)
		return kernel_error("hash output", ret < 0 ? ret : -EIO);
	memcpy(out, md, MIN(size, alg->tag_size));
	return 0;
}

/* One-shot MAC and digest calls reuse a handle per thread and algorithm
 * rather than opening sockets for every call.  A child after fork() must
 * not share the parent's sockets, so the cache remembers its process. */
struct oneshot_cache {
	pid_t pid;
	struct kcapi_handle *h[];
};

static pthread_key_t oneshot_key;
static pthread_once_t oneshot_once = PTHREAD_ONCE_INIT;
static bool oneshot_key_ok;

static void oneshot_free(void *p)
{
	struct oneshot_cache *cache = p;
	unsigned i;

	for (i = 0; i < _afalg_algs_size; i++)
		if (cache->pid == getpid())
			_afalg_kernel_close(&_afalg_algs[i], cache->h[i]);
	gnutls_free(cache);
}

static void oneshot_key_init(void)
{
	oneshot_key_ok = pthread_key_create(&oneshot_key, oneshot_free) == 0;
}

static struct oneshot_cache *oneshot_cache(void)
{
	struct oneshot_cache *cache;

	if (pthread_once(&oneshot_once, oneshot_key_init) != 0 ||
	    !oneshot_key_ok)
		return NULL;

	cache = pthread_getspecific(oneshot_key);
	if (cache != NULL && cache->pid != getpid()) {
		/* inherited over fork(): forget, the sockets are the parent's */
		memset(cache->h, 0, _afalg_algs_size * sizeof(cache->h[0]));
		cache->pid = getpid();
	}
	if (cache == NULL) {
		cache = gnutls_calloc(1, sizeof(*cache) +
						 _afalg_algs_size *
							 sizeof(cache->h[0]));
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

struct kcapi_handle *_afalg_kernel_oneshot(const struct afalg_alg *alg)
{
	struct oneshot_cache *cache = oneshot_cache();
	unsigned i = alg - _afalg_algs;

	if (cache == NULL)
		return NULL;
	if (cache->h[i] == NULL && _afalg_kernel_open(alg, &cache->h[i]) < 0)
		return NULL;
	return cache->h[i];
}

void _afalg_kernel_oneshot_drop(const struct afalg_alg *alg)
{
	struct oneshot_cache *cache = oneshot_cache();
	unsigned i = alg - _afalg_algs;

	if (cache == NULL)
		return;
	_afalg_kernel_close(alg, cache->h[i]);
	cache->h[i] = NULL;
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
