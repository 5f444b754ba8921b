/* What upstream's AF_ALG backend (lib/accelerated/afalg.c) does, through
 * GnuTLS's public API; devel/upstream-defects runs it.  One case per
 * run: the library is whichever LD_LIBRARY_PATH gives.
 *
 *   upstream-defects gcm SIZE     AES-128-GCM encryption of SIZE bytes
 *   upstream-defects copy         gnutls_hash_copy() of a SHA-256 context
 *   upstream-defects oneshot N    N one-shot SHA-256 hashes (run under strace)
 *   upstream-defects nofile       SHA-256 with no descriptor left
 *   upstream-defects exec         AF_ALG sockets seen by an executed program
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

static unsigned afalg_fds(void)
{
	unsigned n = 0;
	int fd, domain;
	socklen_t len;

	for (fd = 0; fd < 1024; fd++) {
		len = sizeof(domain);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
		    domain == AF_ALG)
			n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 20], out[(1 << 20) + 16];
	const char *what = argc > 1 ? argv[1] : "";
	unsigned char key[16] = { 0 }, nonce[12] = { 0 }, md[32];
	gnutls_datum_t k = { key, sizeof(key) };
	int ret;

	if (strcmp(what, "gcm") == 0) {
		gnutls_aead_cipher_hd_t h;
		size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 300000;
		size_t outsize = sizeof(out);

		if (size > sizeof(buf))
			size = sizeof(buf);
		gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &k);
		ret = gnutls_aead_cipher_encrypt(h, nonce, 12, NULL, 0, 16, buf,
						 size, out, &outsize);
		printf("gcm %zu bytes: %s\n", size,
		       ret < 0 ? gnutls_strerror(ret) : "done");
	} else if (strcmp(what, "copy") == 0) {
		gnutls_hash_hd_t h, c;

		gnutls_hash_init(&h, GNUTLS_DIG_SHA256);
		gnutls_hash(h, "abc", 3);
		c = gnutls_hash_copy(h);
		printf("gnutls_hash_copy: %s\n", c ? "a copy" : "NULL");
	} else if (strcmp(what, "oneshot") == 0) {
		unsigned i, n = argc > 2 ? atoi(argv[2]) : 100;

		for (i = 0; i < n; i++)
			gnutls_hash_fast(GNUTLS_DIG_SHA256, "abc", 3, md);
		printf("%u one-shot hashes\n", n);
	} else if (strcmp(what, "nofile") == 0) {
		struct rlimit r;
		int fd;

		/* use up every descriptor; software needs none */
		while ((fd = dup(0)) >= 0)
			;
		ret = gnutls_hash_fast(GNUTLS_DIG_SHA256, "abc", 3, md);
		getrlimit(RLIMIT_NOFILE, &r);
		printf("gnutls_hash_fast with no descriptor left: %s\n",
		       ret < 0 ? gnutls_strerror(ret) : "ok");
	} else if (strcmp(what, "exec") == 0) {
		gnutls_hash_hd_t h;
		gnutls_cipher_hd_t c;
		gnutls_datum_t iv = { nonce, 12 };
		pid_t pid;

		gnutls_hash_init(&h, GNUTLS_DIG_SHA256);
		gnutls_hash(h, "abc", 3);
		gnutls_cipher_init(&c, GNUTLS_CIPHER_AES_128_CBC, &k, &iv);
		printf("AF_ALG sockets in the process: %u\n", afalg_fds());
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "count", (char *)NULL);
			_exit(2);
		}
		waitpid(pid, &ret, 0);
	} else if (strcmp(what, "count") == 0) {
		printf("AF_ALG sockets in the executed program: %u\n",
		       afalg_fds());
	} else {
		fprintf(stderr, "usage: see the source\n");
		return 2;
	}
	return 0;
}
