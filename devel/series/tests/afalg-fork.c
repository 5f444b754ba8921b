/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * GnuTLS is free software; you can redistribute it and/or modify it
 * under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 3 of the License, or
 * (at your option) any later version.
 *
 * GnuTLS is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with GnuTLS.  If not, see <https://www.gnu.org/licenses/>.
 */

/* The AF_ALG backend across fork() and exec(): a CBC and an AEAD context
 * with kernel sockets go on giving the right answers in the parent and
 * in the child, whichever uses them first, the child in the kernel on a
 * socket of its own; and no AF_ALG socket reaches a program the process
 * executes. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <assert.h>
#include <dirent.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <gnutls/crypto.h>

#include "afalg-common.h"

#define CHILD_ENV "GNUTLS_AFALG_TEST_FDS"

static uint8_t a[4096];

/* The AF_ALG sockets this process has open, as "3,5,7". */
static void afalg_fds(char *out, size_t size)
{
	DIR *dir;
	struct dirent *e;
	int fd, domain;
	socklen_t len;
	size_t n = 0;

	/* every descriptor, wherever it is: the backend keeps its sockets
	 * high in RLIMIT_NOFILE */
	out[0] = 0;
	dir = opendir("/proc/self/fd");
	assert(dir != NULL);
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(dir))
			continue;
		len = sizeof(domain);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
		    domain != AF_ALG)
			continue;
		n += snprintf(out + n, size - n, "%s%d", n ? "," : "", fd);
		assert(n < size);
	}
	closedir(dir);
}

/* In the executed program: none of the parent's AF_ALG sockets may be
 * open here. */
static void exec_child(const char *list)
{
	char mine[1024];

	afalg_fds(mine, sizeof(mine));
	if (mine[0] != 0)
		fail("AF_ALG sockets survived exec: %s (the parent had %s)\n",
		     mine, list);
	exit(0);
}

/* After fork(): with child_first, the parent waits for the child before
 * it uses the context. */
static void after_fork(pid_t pid, int child_first)
{
	int status;

	if (pid > 0 && child_first) {
		assert(waitpid(pid, &status, 0) == pid);
		check_wait_status(status);
	}
}

/* The end of the work on both sides: the child's must have run in the
 * kernel too, on a socket of its own. */
static void end_fork(pid_t pid, int child_first, const char *label,
		     unsigned long kernel_before)
{
	int status;

	if (pid == 0) {
		if (afalg_ops(label, NULL) <= kernel_before)
			fail("child: %s did not run in the kernel after "
			     "fork\n",
			     label);
		exit(error_count ? 1 : 0);
	}
	if (!child_first) {
		assert(waitpid(pid, &status, 0) == pid);
		check_wait_status(status);
	}
}

/* CBC chaining: both processes continue the same stream. */
static void cbc_across_fork(int child_first)
{
	static const uint8_t key[16] = { 1, 2, 3 }, iv[16] = { 4, 5, 6 };
	gnutls_datum_t k = { (void *)key, 16 }, v = { (void *)iv, 16 };
	gnutls_cipher_hd_t h, ref;
	uint8_t out[4096], want[4096];
	unsigned long before;
	pid_t pid;

	assert(gnutls_cipher_init(&ref, GNUTLS_CIPHER_AES_128_CBC, &k, &v) >=
	       0);
	assert(gnutls_cipher_encrypt2(ref, a, 4096, out, 4096) >= 0);
	assert(gnutls_cipher_encrypt2(ref, a, 4096, want, 4096) >= 0);
	gnutls_cipher_deinit(ref);

	assert(gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_CBC, &k, &v) >= 0);
	assert(gnutls_cipher_encrypt2(h, a, 4096, out, 4096) >= 0);
	before = afalg_ops("AES-128-CBC", NULL);
	pid = fork();
	assert(pid >= 0);
	after_fork(pid, child_first);
	assert(gnutls_cipher_encrypt2(h, a, 4096, out, 4096) >= 0);
	if (memcmp(out, want, sizeof(out)) != 0)
		fail("%s: CBC did not chain across fork\n",
		     pid ? "parent" : "child");
	gnutls_cipher_deinit(h);
	end_fork(pid, child_first, "AES-128-CBC", before);
}

/* An AEAD context opened in the kernel before fork(). */
static void aead_across_fork(int child_first)
{
	static const uint8_t key[32] = { 7, 8, 9 };
	gnutls_datum_t k = { (void *)key, 32 };
	gnutls_aead_cipher_hd_t h;
	uint8_t nonce[12] = { 1 }, ct[1024 + 16], want[1024 + 16];
	size_t size = sizeof(want);
	unsigned long before;
	pid_t pid;

	assert(gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_256_GCM, &k) >= 0);
	assert(gnutls_aead_cipher_encrypt(h, nonce, 12, NULL, 0, 16, a, 1024,
					  want, &size) >= 0);
	before = afalg_ops("AES-256-GCM", NULL);
	pid = fork();
	assert(pid >= 0);
	after_fork(pid, child_first);
	size = sizeof(ct);
	assert(gnutls_aead_cipher_encrypt(h, nonce, 12, NULL, 0, 16, a, 1024,
					  ct, &size) >= 0);
	if (size != sizeof(want) || memcmp(ct, want, size) != 0)
		fail("%s: wrong AES-256-GCM after fork\n",
		     pid ? "parent" : "child");
	gnutls_aead_cipher_deinit(h);
	end_fork(pid, child_first, "AES-256-GCM", before);
}

/* Executes this program with contexts open in the kernel. */
static void exec_with_contexts(void)
{
	static const uint8_t key[32];
	gnutls_datum_t k = { (void *)key, 32 }, v = { (void *)key, 16 };
	gnutls_aead_cipher_hd_t aead;
	gnutls_cipher_hd_t cbc;
	uint8_t ct[1024 + 16], nonce[12] = { 0 };
	size_t size = sizeof(ct);
	char list[1024];
	pid_t pid;
	int status;

	assert(gnutls_aead_cipher_init(&aead, GNUTLS_CIPHER_AES_256_GCM, &k) >=
	       0);
	assert(gnutls_aead_cipher_encrypt(aead, nonce, 12, NULL, 0, 16, a, 1024,
					  ct, &size) >= 0);
	k.size = 16;
	assert(gnutls_cipher_init(&cbc, GNUTLS_CIPHER_AES_128_CBC, &k, &v) >=
	       0);
	assert(gnutls_cipher_encrypt2(cbc, a, 1024, ct, 1024) >= 0);

	afalg_fds(list, sizeof(list));
	if (list[0] == 0 &&
	    !(afalg_refused("AES-256-GCM") && afalg_refused("AES-128-CBC")))
		fail("no AF_ALG socket is open before exec\n");
	if (debug)
		success("AF_ALG sockets before exec: %s\n", list);
	pid = fork();
	assert(pid >= 0);
	if (pid == 0) {
		setenv(CHILD_ENV, list, 1);
		execl("/proc/self/exe", "afalg-fork", (char *)NULL);
		_exit(2);
	}
	assert(waitpid(pid, &status, 0) == pid);
	check_wait_status(status);

	gnutls_aead_cipher_deinit(aead);
	gnutls_cipher_deinit(cbc);
}

void doit(void)
{
	const char *list = getenv(CHILD_ENV);

	if (list != NULL)
		exec_child(list);
	afalg_require_kernel();
	afalg_stats_start();
	memset(a, 'a', sizeof(a));

	cbc_across_fork(0);
	cbc_across_fork(1);
	aead_across_fork(0);
	aead_across_fork(1);
	exec_with_contexts();

	afalg_check_ran("AES-128-CBC");
	afalg_check_ran("AES-256-GCM");
	gnutls_global_deinit();
}
