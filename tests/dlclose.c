/*
 * Defect 7: an application that dlopen()s libgnutls, uses it from worker
 * threads and dlclose()s it while they still run.  A per-thread cache
 * with a destructor in the library crashed the workers as they exited,
 * and their cached sockets outlived gnutls_global_deinit().
 *
 * The workers hash with gnutls_hash_fast() (in the kernel suite, on the
 * module's one-shot sockets), each digest compared with Nettle's, then
 * wait; the main thread closes the library, checks that it is gone and
 * that no AF_ALG socket is left open, and lets the workers exit; then
 * again, with the application's own gnutls_global_init() left without
 * its deinit.  This program is not linked with libgnutls (Nettle, which
 * libgnutls loads too, is the reference).
 *
 * Usage: dlclose [LIBGNUTLS]   (default libgnutls.so.30, found through
 *                               LD_LIBRARY_PATH)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <dlfcn.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

#define WORKERS 4
#define HASHES 20
#define GNUTLS_DIG_SHA256 6

typedef int (*hash_fast_fn)(int algorithm, const void *text, size_t size,
			    void *digest);

static hash_fast_fn hash_fast;
static pthread_barrier_t hashed, closed;
static int worker_failures;

static void *worker(void *arg)
{
	unsigned char text[4096], digest[32], want[32];
	struct sha256_ctx ref;
	int i;

	memset(text, (int)(long)arg, sizeof(text));
	sha256_init(&ref);
	sha256_update(&ref, sizeof(text), text);
	sha256_digest(&ref, sizeof(want), want);
	for (i = 0; i < HASHES; i++) {
		memset(digest, 0, sizeof(digest));
		if (hash_fast(GNUTLS_DIG_SHA256, text, sizeof(text), digest) <
			    0 ||
		    memcmp(digest, want, sizeof(want)) != 0)
			__atomic_add_fetch(&worker_failures, 1,
					   __ATOMIC_RELAXED);
	}
	pthread_barrier_wait(&hashed);
	/* the library is unloaded while we wait here */
	pthread_barrier_wait(&closed);
	return NULL;
}

static int afalg_sockets(void)
{
	int fd, n = 0, domain;
	socklen_t len;
	struct stat st;

	for (fd = 3; fd < 4096; fd++) {
		len = sizeof(domain);
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
		    domain == AF_ALG)
			n++;
	}
	return n;
}

/* One load of the library: workers hash, the library is closed under
 * them.  init: the application also called gnutls_global_init(), and
 * not gnutls_global_deinit() (not required since GnuTLS 3.3): the
 * library's destructor then leaves its deinitialization undone. */
static int cycle(const char *path, int init)
{
	pthread_t t[WORKERS];
	int (*global_init)(void);
	void *lib;
	int i, left, status = 0;

	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		printf("SKIP: cannot load %s: %s\n", path, dlerror());
		return 77;
	}
	hash_fast = (hash_fast_fn)dlsym(lib, "gnutls_hash_fast");
	global_init = (int (*)(void))dlsym(lib, "gnutls_global_init");
	if (hash_fast == NULL || global_init == NULL) {
		printf("FAIL: no gnutls_hash_fast or gnutls_global_init in %s\n",
		       path);
		return 1;
	}
	if (init && global_init() < 0) {
		printf("FAIL: gnutls_global_init() failed\n");
		return 1;
	}
	pthread_barrier_init(&hashed, NULL, WORKERS + 1);
	pthread_barrier_init(&closed, NULL, WORKERS + 1);
	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	pthread_barrier_wait(&hashed);
	printf("dlclose%s: %d workers hashed, %d AF_ALG sockets open\n",
	       init ? " after gnutls_global_init()" : "", WORKERS,
	       afalg_sockets());

	dlclose(lib);
	if (dlopen(path, RTLD_NOW | RTLD_NOLOAD) != NULL) {
		printf("SKIP: %s stays loaded after dlclose()\n", path);
		status = 77;
	}
	left = afalg_sockets();
	printf("dlclose: library closed, %d AF_ALG sockets left open\n", left);
	if (left > 0) {
		printf("FAIL: sockets outlived the library\n");
		status = 1;
	}
	pthread_barrier_wait(&closed);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&hashed);
	pthread_barrier_destroy(&closed);
	if (worker_failures > 0) {
		printf("FAIL: %d hashes failed or differ from Nettle's\n",
		       worker_failures);
		status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "libgnutls.so.30";
	int status, init;

	for (init = 0; init <= 1; init++) {
		status = cycle(path, init);
		if (status != 0)
			return status;
	}
	printf("PASS: the workers exited after dlclose()\n");
	return 0;
}
