/*
 * tls-bench: TLS record throughput over a real TCP connection on the
 * loopback interface, both ends in this machine: a client process that
 * sends application data in records of one size, and a server process
 * (forked) that receives it.  Through GnuTLS's public API only, so that
 * it runs against any libgnutls (LD_LIBRARY_PATH); the transport is the
 * socket itself (gnutls_transport_set_int), so that GnuTLS may hand the
 * records to the kernel (kTLS) where its configuration file says
 * "ktls = true" in [global] and its build has --enable-ktls.
 *
 *   tls-bench [--cipher NAME] [--version 1.2|1.3] [--record BYTES]
 *             [--seconds S] [--priority STRING]
 *
 * Key exchange (the handshake is not what is measured): TLS 1.2 a
 * pre-shared key; TLS 1.3 a certificate made at start (GnuTLS 3.7 ties an
 * external PSK to SHA-256, which TLS_AES_256_GCM_SHA384 cannot use).
 * The client sends records of --record bytes for --seconds, then closes
 * (close_notify); the server reads until then and reports its CPU time
 * through a pipe.  Prints one line of key=value
 * fields: the negotiated cipher and version, bytes, records, wall
 * seconds (from the first record sent to the server's last read), user
 * and system seconds of each end over the same span, MB/s by wall clock
 * and by the two ends' CPU time together, whether GnuTLS says kTLS is on
 * at each end (gnutls_transport_is_ktls_enabled: 1 receive, 2 send, 3
 * both), the kernel's TLS counters (/proc/net/tls_stat: TlsTxSw, TlsRxSw,
 * TlsTxDevice, TlsRxDevice, TlsDecryptError) before and after, and, for
 * a libgnutls with the AF_ALG module, its operation counts of the
 * record cipher at each end (kernel and software, from the module's
 * report; the module counts at debug level 2 only, which this program
 * then sets, with a log function that drops the lines, unless
 * GNUTLS_DEBUG_LEVEL is set).  A kTLS that GnuTLS turned on without
 * giving the kernel the keys (3.7.9 does that for ciphers it has no kTLS
 * code for) moves no TlsTxSw counter: the line says so (ktls_keys=no).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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
#include <gnutls/socket.h>
#include <gnutls/x509.h>

#define MAX_RECORD 16384

static const char *cipher = "AES-128-GCM";
static const char *version = "1.3";
static size_t record = 16384;
static double seconds = 1.0;
static const char *priority;
static char prio_buf[512];
static gnutls_certificate_credentials_t server_cert, client_cert;

static const unsigned char psk_key[16] = { 0x0b, 0xad, 0xc0, 0xde, 1, 2, 3,
					   4,	 5,    6,    7,	   8, 9, 10,
					   11,	 12 };

static void die(const char *what, int ret)
{
	fprintf(stderr, "tls-bench: %s: %s\n", what,
		ret < 0 ? gnutls_strerror(ret) : strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void cpu(double *user, double *sys)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	*user = u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6;
	*sys = u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

/* /proc/net/tls_stat's counters that tell where records went. */
static const char *const tls_stat_names[] = { "TlsTxSw", "TlsRxSw",
					      "TlsTxDevice", "TlsRxDevice",
					      "TlsDecryptError" };
#define N_STATS 5

static int tls_stat(long long *v)
{
	char name[64];
	long long x;
	FILE *f = fopen("/proc/net/tls_stat", "r");
	int i, found = 0;

	for (i = 0; i < N_STATS; i++)
		v[i] = -1;
	if (!f)
		return 0;
	while (fscanf(f, "%63s %lld", name, &x) == 2) {
		for (i = 0; i < N_STATS; i++)
			if (!strcmp(name, tls_stat_names[i])) {
				v[i] = x;
				found = 1;
			}
	}
	fclose(f);
	return found;
}

/* The module's operation counts of one algorithm (label): kernel and
 * software; -1 where the library has no module. */
static void afalg_ops(const char *label, long *kernel, long *soft)
{
	int (*report)(unsigned, unsigned, gnutls_datum_t *);
	gnutls_datum_t out = { NULL, 0 };
	char want[80], *p, *line, *save = NULL;

	*kernel = *soft = -1;
	*(void **)&report = dlsym(RTLD_DEFAULT, "_gnutls_afalg_report");
	if (!report || report(1, 0, &out) < 0 || !out.data)
		return;
	snprintf(want, sizeof(want), "label=%s ", label);
	for (line = strtok_r((char *)out.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		if ((p = strstr(line, " kernel-ops=")))
			*kernel = atol(p + 12);
		if ((p = strstr(line, " software-ops=")))
			*soft = atol(p + 14);
	}
	gnutls_free(out.data);
}

static int psk_server_cb(gnutls_session_t s, const char *user,
			 gnutls_datum_t *key)
{
	(void)s;
	(void)user;
	key->data = gnutls_malloc(sizeof(psk_key));
	if (!key->data)
		return -1;
	memcpy(key->data, psk_key, sizeof(psk_key));
	key->size = sizeof(psk_key);
	return 0;
}

/* A self-signed ECDSA certificate for the server, made at start; the
 * client verifies nothing. */
static void make_certificates(void)
{
	gnutls_x509_privkey_t key;
	gnutls_x509_crt_t crt;
	time_t t = time(NULL);
	int ret;

	if ((ret = gnutls_x509_privkey_init(&key)) < 0 ||
	    (ret = gnutls_x509_privkey_generate(
		     key, GNUTLS_PK_ECDSA,
		     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) <
		    0 ||
	    (ret = gnutls_x509_crt_init(&crt)) < 0 ||
	    (ret = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (ret = gnutls_x509_crt_set_serial(crt, "\x01", 1)) < 0 ||
	    (ret = gnutls_x509_crt_set_activation_time(crt, t - 3600)) < 0 ||
	    (ret = gnutls_x509_crt_set_expiration_time(crt, t + 86400)) < 0 ||
	    (ret = gnutls_x509_crt_set_dn(crt, "CN=tls-bench", NULL)) < 0 ||
	    (ret = gnutls_x509_crt_set_key(crt, key)) < 0 ||
	    (ret = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256,
					 0)) < 0 ||
	    (ret = gnutls_certificate_allocate_credentials(&server_cert)) <
		    0 ||
	    (ret = gnutls_certificate_set_x509_key(server_cert, &crt, 1,
						   key)) < 0 ||
	    (ret = gnutls_certificate_allocate_credentials(&client_cert)) < 0)
		die("a certificate", ret);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
}

static void quiet_log(int level, const char *line)
{
	(void)level;
	(void)line;
}

static gnutls_session_t open_session(int fd, unsigned flags)
{
	gnutls_session_t s;
	const char *err = NULL;
	int ret;

	if ((ret = gnutls_init(&s, flags)) < 0)
		die("gnutls_init", ret);
	if ((ret = gnutls_priority_set_direct(s, priority, &err)) < 0) {
		fprintf(stderr, "tls-bench: priority at '%s'\n",
			err ? err : "?");
		die("gnutls_priority_set_direct", ret);
	}
	if (flags & GNUTLS_SERVER) {
		gnutls_psk_server_credentials_t c;

		gnutls_psk_allocate_server_credentials(&c);
		gnutls_psk_set_server_credentials_function(c, psk_server_cb);
		gnutls_credentials_set(s, GNUTLS_CRD_PSK, c);
		gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, server_cert);
	} else {
		gnutls_psk_client_credentials_t c;
		gnutls_datum_t key = { (unsigned char *)psk_key,
				       sizeof(psk_key) };

		gnutls_psk_allocate_client_credentials(&c);
		gnutls_psk_set_client_credentials(c, "bench", &key,
						  GNUTLS_PSK_KEY_RAW);
		gnutls_credentials_set(s, GNUTLS_CRD_PSK, c);
		gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, client_cert);
	}
	gnutls_transport_set_int(s, fd);
	do {
		ret = gnutls_handshake(s);
	} while (ret < 0 && !gnutls_error_is_fatal(ret));
	if (ret < 0)
		die("handshake", ret);
	return s;
}

static void wait_fd(int fd, short events)
{
	struct pollfd p = { fd, events, 0 };

	poll(&p, 1, 1000);
}

/* The server: reads until close_notify, then writes its figures to the
 * pipe: bytes user sys ktls kernel-ops software-ops. */
static void server(int lfd, int report_fd)
{
	static unsigned char buf[MAX_RECORD + 256];
	gnutls_session_t s;
	long long bytes = 0;
	double u0, s0, u1, s1;
	long kops, sops;
	int fd, ret;
	char line[256];

	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept", 0);
	s = open_session(fd, GNUTLS_SERVER);
	cpu(&u0, &s0);
	for (;;) {
		ret = gnutls_record_recv(s, buf, sizeof(buf));
		if (ret > 0) {
			bytes += ret;
			continue;
		}
		if (ret == 0)
			break;
		if (ret == GNUTLS_E_AGAIN || ret == GNUTLS_E_INTERRUPTED) {
			/* kTLS's receive is non-blocking in 3.7 */
			wait_fd(fd, POLLIN);
			continue;
		}
		die("server: gnutls_record_recv", ret);
	}
	cpu(&u1, &s1);
	afalg_ops(gnutls_cipher_get_name(gnutls_cipher_get(s)), &kops, &sops);
	snprintf(line, sizeof(line), "%lld %.6f %.6f %d %ld %ld\n", bytes,
		 u1 - u0, s1 - s0, (int)gnutls_transport_is_ktls_enabled(s),
		 kops, sops);
	if (write(report_fd, line, strlen(line)) < 0)
		die("server: write", 0);
	gnutls_deinit(s);
	close(fd);
	exit(0);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tls-bench [--cipher NAME] [--version 1.2|1.3] [--record BYTES]\n"
		"                 [--seconds S] [--priority STRING]\n"
		"  NAME: AES-128-GCM (default), AES-256-GCM, CHACHA20-POLY1305,\n"
		"        AES-128-CBC, AES-256-CBC (TLS 1.2 only, with HMAC-SHA1), ...\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "cipher", required_argument, NULL, 'c' },
		{ "version", required_argument, NULL, 'v' },
		{ "record", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "priority", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static unsigned char buf[MAX_RECORD];
	struct sockaddr_in a = { 0 };
	socklen_t alen = sizeof(a);
	int lfd, fd, pipefd[2], opt, ret, status, one = 1;
	long long bytes = 0, records = 0, st0[N_STATS], st1[N_STATS];
	double t0, t1, u0, s0, u1, s1, su, ss, wall;
	long kops, sops, skops, ssops;
	int sktls, ktls;
	long long sbytes;
	gnutls_session_t s;
	pid_t pid;
	char line[256];
	ssize_t n;
	const char *mac;
	int have_stat;

	while ((opt = getopt_long(argc, argv, "c:v:r:s:p:h", options, NULL)) !=
	       -1) {
		switch (opt) {
		case 'c':
			cipher = optarg;
			break;
		case 'v':
			version = optarg;
			break;
		case 'r':
			record = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'p':
			priority = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || record == 0 || record > MAX_RECORD ||
	    !(seconds > 0) ||
	    (strcmp(version, "1.2") && strcmp(version, "1.3"))) {
		usage(stderr);
		return 2;
	}
	if (!priority) {
		/* CBC suites: the MAC of the PSK suite (SHA1), AEAD otherwise;
		 * TLS 1.2 by the PSK, TLS 1.3 by the certificate */
		mac = strstr(cipher, "CBC") ? "+SHA1" : "+AEAD";
		snprintf(prio_buf, sizeof(prio_buf),
			 "NORMAL:-VERS-ALL:+VERS-TLS%s:-CIPHER-ALL:+%s:"
			 "-MAC-ALL:%s%s",
			 version, cipher, mac,
			 strcmp(version, "1.3") ? ":-KX-ALL:+PSK" : "");
		priority = prio_buf;
	}
	signal(SIGPIPE, SIG_IGN);
	if (gnutls_global_init() < 0)
		die("gnutls_global_init", GNUTLS_E_INTERNAL_ERROR);
	/* the module's counts (one atomic increment per operation); a
	 * debug level the caller set is left as it is */
	if (dlsym(RTLD_DEFAULT, "_gnutls_afalg_report") &&
	    getenv("GNUTLS_DEBUG_LEVEL") == NULL) {
		gnutls_global_set_log_function(quiet_log);
		gnutls_global_set_log_level(2);
	}
	make_certificates();

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) < 0)
		die("listen on 127.0.0.1", 0);
	if (pipe(pipefd) < 0)
		die("pipe", 0);
	/* before the handshakes: the kernel counts a connection when
	 * GnuTLS gives it the keys, at the end of the handshake */
	have_stat = tls_stat(st0);
	pid = fork();
	if (pid < 0)
		die("fork", 0);
	if (pid == 0) {
		close(pipefd[0]);
		server(lfd, pipefd[1]);
	}
	close(pipefd[1]);
	close(lfd);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect", 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	s = open_session(fd, GNUTLS_CLIENT);
	memset(buf, 0x5a, sizeof(buf));

	cpu(&u0, &s0);
	t0 = now();
	do {
		int i;

		for (i = 0; i < 16; i++) {
			ret = gnutls_record_send(s, buf, record);
			if (ret == GNUTLS_E_AGAIN ||
			    ret == GNUTLS_E_INTERRUPTED) {
				wait_fd(fd, POLLOUT);
				i--;
				continue;
			}
			if (ret < 0)
				die("client: gnutls_record_send", ret);
			bytes += ret;
			records++;
		}
	} while (now() - t0 < seconds);
	do {
		ret = gnutls_bye(s, GNUTLS_SHUT_WR);
	} while (ret == GNUTLS_E_AGAIN || ret == GNUTLS_E_INTERRUPTED);
	cpu(&u1, &s1);
	n = read(pipefd[0], line, sizeof(line) - 1);
	t1 = now();
	if (n <= 0) {
		fprintf(stderr, "tls-bench: the server did not report\n");
		return 1;
	}
	line[n] = 0;
	if (sscanf(line, "%lld %lf %lf %d %ld %ld", &sbytes, &su, &ss, &sktls,
		   &skops, &ssops) != 6)
		die("server's report", 0);
	waitpid(pid, &status, 0);
	tls_stat(st1);
	afalg_ops(gnutls_cipher_get_name(gnutls_cipher_get(s)), &kops, &sops);
	ktls = gnutls_transport_is_ktls_enabled(s);
	wall = t1 - t0;

	printf("cipher=%s version=%s record=%zu bytes=%lld records=%lld "
	       "received=%lld wall=%.6f client_user=%.6f client_sys=%.6f "
	       "server_user=%.6f server_sys=%.6f mbps_wall=%.3f mbps_cpu=%.3f "
	       "ktls_client=%d ktls_server=%d",
	       gnutls_cipher_get_name(gnutls_cipher_get(s)),
	       gnutls_protocol_get_name(gnutls_protocol_get_version(s)), record,
	       bytes, records, sbytes, wall, u1 - u0, s1 - s0, su, ss,
	       bytes / wall / 1e6,
	       bytes / (u1 - u0 + s1 - s0 + su + ss) / 1e6, ktls, sktls);
	if (have_stat) {
		int i;

		for (i = 0; i < N_STATS; i++)
			printf(" %s=%lld", tls_stat_names[i], st1[i] - st0[i]);
		/* TlsTxSw counts connections whose transmit keys the kernel
		 * took: two sessions with keys add two (one each way) */
		printf(" ktls_keys=%s",
		       !ktls && !sktls ? "-" :
		       st1[0] - st0[0] > 0 && st1[1] - st0[1] > 0 ? "yes" :
								     "no");
	} else {
		printf(" tls_stat=none");
	}
	printf(" afalg_client_kernel=%ld afalg_client_software=%ld "
	       "afalg_server_kernel=%ld afalg_server_software=%ld\n",
	       kops, sops, skops, ssops);
	gnutls_deinit(s);
	close(fd);
	gnutls_global_deinit();
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			       sbytes == bytes ?
		       0 :
		       1;
}
