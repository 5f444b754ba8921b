/*
 * The probes of a review of the backend, as an application would meet
 * them; run against a libgnutls (stock, or with the module) through the
 * public API, each printing what it found.  devel/probes builds and runs
 * them in the VM.
 *
 *   probes stall        20 MiB of AES-128-GCM in 16 KiB calls: the
 *                       median and the slowest call
 *   probes fdreuse      a SHA-256 context's socket closed by the
 *                       application (closefrom), whose number a TCP
 *                       connection then takes: the digest, and whether
 *                       the peer received anything
 *   probes forkemfile   a SHA-256 message begun before fork(), finished
 *                       in the child at its descriptor limit
 *   probes emfile MIB   a SHA-256 message of MIB MiB in 64 KiB pieces at
 *                       the descriptor limit: its time
 *
 * Every digest is compared with Nettle's.  Exit status 1 if one differs
 * or the library is left in its error state.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

static int failed;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check_digest(const char *what, const uint8_t *got,
			 const uint8_t *data, size_t len)
{
	struct sha256_ctx ref;
	uint8_t want[32];

	sha256_init(&ref);
	sha256_update(&ref, len, data);
	sha256_digest(&ref, 32, want);
	if (memcmp(got, want, 32) != 0) {
		printf("%s: WRONG digest\n", what);
		failed = 1;
	} else {
		printf("%s: digest right\n", what);
	}
}

static void check_state(const char *who)
{
	gnutls_hash_hd_t h;

	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) {
		printf("%s: the library is in its ERROR STATE\n", who);
		failed = 1;
		return;
	}
	gnutls_hash_deinit(h, NULL);
	printf("%s: library state ok\n", who);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stall(void)
{
	enum { CALLS = 1280, SIZE = 16384 };
	static uint8_t in[SIZE], out[SIZE + 16];
	static double t[CALLS];
	uint8_t key[16] = { 1 }, nonce[12] = { 0 };
	gnutls_datum_t k = { key, 16 };
	gnutls_aead_cipher_hd_t h;
	double start, med;
	size_t n;
	int i;

	if (gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &k) < 0)
		exit(99);
	for (i = 0; i < CALLS; i++) {
		nonce[0] = i;
		nonce[1] = i >> 8;
		n = sizeof(out);
		start = now();
		if (gnutls_aead_cipher_encrypt(h, nonce, 12, NULL, 0, 16, in,
					       SIZE, out, &n) < 0)
			failed = 1;
		t[i] = now() - start;
	}
	gnutls_aead_cipher_deinit(h);
	qsort(t, CALLS, sizeof(t[0]), cmp);
	med = t[CALLS / 2];
	printf("stall: %d calls of %d bytes: median %.1f us, slowest %.1f us "
	       "(%.2fx the median)\n",
	       CALLS, SIZE, med * 1e6, t[CALLS - 1] * 1e6, t[CALLS - 1] / med);
	check_state("stall");
}

static void fdreuse(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	uint8_t data[5000], out[32], buf[64];
	gnutls_hash_hd_t h;
	int lsn, conn, peer, fd;
	ssize_t got;

	memset(data, 'x', sizeof(data));
	signal(SIGPIPE, SIG_DFL); /* a send to a closed peer would kill us */
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		exit(99);
	gnutls_hash(h, data, sizeof(data));
	gnutls_hash_output(h, out);
	check_digest("fdreuse, before", out, data, sizeof(data));

	/* the application closes what it does not know of, then connects */
	lsn = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lsn < 0 || bind(lsn, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lsn, 1) < 0 ||
	    getsockname(lsn, (struct sockaddr *)&sa, &len) < 0)
		exit(99);
	for (fd = 3; fd < 1024; fd++)
		if (fd != lsn)
			close(fd);
	conn = socket(AF_INET, SOCK_STREAM, 0);
	if (conn < 0 || connect(conn, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		exit(99);
	peer = accept(lsn, NULL, NULL);
	if (peer < 0)
		exit(99);
	/* the peer has answered already: a read would not wait */
	if (write(peer, "the peer's answer, not a digest", 31) != 31)
		exit(99);
	printf("fdreuse: the connection took descriptor %d\n", conn);

	gnutls_hash(h, data, sizeof(data));
	gnutls_hash_output(h, out);
	check_digest("fdreuse, after", out, data, sizeof(data));
	got = recv(peer, buf, sizeof(buf), MSG_DONTWAIT);
	if (got > 0) {
		printf("fdreuse: the PEER RECEIVED %zd bytes\n", got);
		failed = 1;
	} else {
		printf("fdreuse: the peer received nothing\n");
	}
	gnutls_hash_deinit(h, NULL);
	check_state("fdreuse");
}

/* Descriptors up to the limit: none is left. */
static void use_up_descriptors(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 256) {
		rl.rlim_cur = 256;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while (open("/dev/null", O_RDONLY) >= 0)
		;
	if (errno != EMFILE)
		exit(99);
}

static void forkemfile(void)
{
	static uint8_t data[200000 + 3000 + 2000];
	uint8_t out[32];
	gnutls_hash_hd_t h;
	int status;
	pid_t pid;

	memset(data, 'y', sizeof(data));
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		exit(99);
	gnutls_hash(h, data, 6000);
	gnutls_hash_output(h, out);
	gnutls_hash(h, data, 200000);
	gnutls_hash(h, data + 200000, 3000);
	pid = fork();
	if (pid == 0) {
		use_up_descriptors();
		gnutls_hash(h, data + 203000, 2000);
		gnutls_hash_output(h, out);
		check_digest("forkemfile, child", out, data, sizeof(data));
		check_state("forkemfile, child");
		exit(failed);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		failed = 1;
	gnutls_hash(h, data + 203000, 2000);
	gnutls_hash_output(h, out);
	check_digest("forkemfile, parent", out, data, sizeof(data));
	gnutls_hash_deinit(h, NULL);
}

static void emfile(size_t mib)
{
	size_t total = mib << 20, done;
	uint8_t *data = malloc(total), out[32];
	gnutls_hash_hd_t h;
	double start;

	if (data == NULL)
		exit(99);
	memset(data, 'z', total);
	use_up_descriptors();
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		exit(99);
	start = now();
	for (done = 0; done < total; done += 65536)
		gnutls_hash(h, data + done, 65536);
	gnutls_hash_output(h, out);
	printf("emfile: %zu MiB at the descriptor limit in %.3f s\n", mib,
	       now() - start);
	check_digest("emfile", out, data, total);
	check_state("emfile");
	gnutls_hash_deinit(h, NULL);
	free(data);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "stall") == 0)
		stall();
	else if (strcmp(what, "fdreuse") == 0)
		fdreuse();
	else if (strcmp(what, "forkemfile") == 0)
		forkemfile();
	else if (strcmp(what, "emfile") == 0 && argc > 2)
		emfile(strtoul(argv[2], NULL, 10));
	else {
		fprintf(stderr, "usage: probes stall|fdreuse|forkemfile|emfile MIB\n");
		return 2;
	}
	return failed;
}
