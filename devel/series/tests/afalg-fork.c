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

/* The AF_ALG backend across fork() and exec(): a hash, a MAC and a CBC
 * context with kernel sockets go on giving the right answers in the
 * parent and in the child, whichever uses them first, and no AF_ALG
 * socket reaches a program the process executes. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <assert.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <gnutls/crypto.h>

#include "afalg-common.h"

#define CHILD_ENV "GNUTLS_AFALG_TEST_FDS"

/* a hash message the backend sends to the kernel whole is at most
 * 64 KiB: ten pieces of 6000 bytes */
static uint8_t a[6000];

/* The AF_ALG sockets this process has open, as "3,5,7". */
static void afalg_fds(char *out, size_t size)
{
	int fd, domain;
	socklen_t len;
	size_t n = 0;

	out[0] = 0;
	for (fd = 0; fd < 1024; fd++) {
		len = sizeof(domain);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
		    domain != AF_ALG)
			continue;
		n += snprintf(out + n, size - n, "%s%d", n ? "," : "", fd);
		assert(n < size);
	}
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

/* SHA-256 of 60000 'a', in ten calls, forking after FORK_AT */
static void hash_across_fork(unsigned fork_at, int child_first)
{
	static const uint8_t want[32] = {
		0x95, 0x6e, 0xfa, 0xe2, 0x21, 0x95, 0x33, 0xb4,
		0x4d, 0x32, 0x82, 0x42, 0xc6, 0x08, 0x3c, 0x0e,
		0xee, 0x50, 0x36, 0x25, 0x29, 0x0f, 0xc8, 0x29,
		0xce, 0xf0, 0x7e, 0xce, 0xa6, 0xe0, 0x7c, 0x23,
	};
	gnutls_hash_hd_t h;
	uint8_t out[32];
	unsigned i;
	pid_t pid;
	int status;

	assert(gnutls_hash_init(&h, GNUTLS_DIG_SHA256) >= 0);
	for (i = 0; i < fork_at; i++)
		assert(gnutls_hash(h, a, sizeof(a)) >= 0);
	pid = fork();
	assert(pid >= 0);
	if (pid > 0 && child_first) {
		assert(waitpid(pid, &status, 0) == pid);
		check_wait_status(status);
	}
	for (; i < 10; i++)
		assert(gnutls_hash(h, a, sizeof(a)) >= 0);
	gnutls_hash_deinit(h, out);
	if (memcmp(out, want, sizeof(want)) != 0)
		fail("%s: wrong SHA-256 after fork at %u\n",
		     pid ? "parent" : "child", fork_at);
	if (pid == 0)
		exit(error_count ? 1 : 0);
	if (!child_first) {
		assert(waitpid(pid, &status, 0) == pid);
		check_wait_status(status);
	}
}

/* CBC chaining: both processes continue the same stream. */
static void cbc_across_fork(void)
{
	static const uint8_t key[16] = { 1, 2, 3 }, iv[16] = { 4, 5, 6 };
	gnutls_datum_t k = { (void *)key, 16 }, v = { (void *)iv, 16 };
	gnutls_cipher_hd_t h, ref;
	uint8_t out[4096], want[4096];
	pid_t pid;
	int status;

	assert(gnutls_cipher_init(&ref, GNUTLS_CIPHER_AES_128_CBC, &k, &v) >=
	       0);
	assert(gnutls_cipher_encrypt2(ref, a, 4096, out, 4096) >= 0);
	assert(gnutls_cipher_encrypt2(ref, a, 4096, want, 4096) >= 0);
	gnutls_cipher_deinit(ref);

	assert(gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_CBC, &k, &v) >= 0);
	assert(gnutls_cipher_encrypt2(h, a, 4096, out, 4096) >= 0);
	pid = fork();
	assert(pid >= 0);
	assert(gnutls_cipher_encrypt2(h, a, 4096, out, 4096) >= 0);
	if (memcmp(out, want, sizeof(out)) != 0)
		fail("%s: CBC did not chain across fork\n",
		     pid ? "parent" : "child");
	gnutls_cipher_deinit(h);
	if (pid == 0)
		exit(error_count ? 1 : 0);
	assert(waitpid(pid, &status, 0) == pid);
	check_wait_status(status);
}

/* Executes this program with contexts open in the kernel. */
static void exec_with_contexts(void)
{
	static const uint8_t key[32];
	gnutls_datum_t k = { (void *)key, 32 };
	gnutls_aead_cipher_hd_t aead;
	gnutls_hmac_hd_t mac;
	gnutls_hash_hd_t hash;
	uint8_t ct[1024 + 16], nonce[12] = { 0 };
	size_t size = sizeof(ct);
	char list[1024];
	pid_t pid;
	int status;

	assert(gnutls_aead_cipher_init(&aead, GNUTLS_CIPHER_AES_256_GCM, &k) >=
	       0);
	assert(gnutls_aead_cipher_encrypt(aead, nonce, 12, NULL, 0, 16, a, 1024,
					  ct, &size) >= 0);
	/* a message each ends in the kernel: the contexts keep sockets */
	assert(gnutls_hmac_init(&mac, GNUTLS_MAC_SHA256, key, 32) >= 0);
	assert(gnutls_hmac(mac, a, sizeof(a)) >= 0);
	gnutls_hmac_output(mac, ct);
	assert(gnutls_hmac(mac, a, sizeof(a)) >= 0);
	assert(gnutls_hash_init(&hash, GNUTLS_DIG_SHA384) >= 0);
	assert(gnutls_hash(hash, a, sizeof(a)) >= 0);
	gnutls_hash_output(hash, ct);
	assert(gnutls_hash(hash, a, sizeof(a)) >= 0);

	afalg_fds(list, sizeof(list));
	if (list[0] == 0)
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
	gnutls_hmac_deinit(mac, NULL);
	gnutls_hash_deinit(hash, NULL);
}

void doit(void)
{
	const char *list = getenv(CHILD_ENV);

	if (list != NULL)
		exec_child(list);
	afalg_require_kernel();
	afalg_stats_start();
	memset(a, 'a', sizeof(a));

	hash_across_fork(0, 0);
	hash_across_fork(3, 0);
	hash_across_fork(3, 1);
	hash_across_fork(7, 1);
	cbc_across_fork();
	exec_with_contexts();

	gnutls_global_deinit();
	if (afalg_stats_kernel("digest SHA256", NULL) == 0)
		fail("SHA256 did not run in the kernel\n");
	if (afalg_stats_kernel("cipher AES-128-CBC", NULL) == 0)
		fail("AES-128-CBC did not run in the kernel\n");
}
