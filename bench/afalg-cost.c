/*
 * afalg-cost: what a context or a TLS session costs in resources, through
 * GnuTLS's public API only (so against any libgnutls: LD_LIBRARY_PATH),
 * with whatever settings the environment gives (GNUTLS_AFALG).
 *
 *   afalg-cost contexts N        N contexts of each family, each used once
 *   afalg-cost sessions N        N TLS 1.3 sessions (N client-server pairs
 *                                in this process over socketpairs, PSK,
 *                                AES-128-GCM), each sends a record each way
 *   afalg-cost init              microseconds of gnutls_global_init()
 *
 * For contexts and sessions it prints one line per family (or "session")
 * of key=value fields, per context (per session end, i.e. one
 * gnutls_session_t): descriptors, kernel memory (the whole system's slab,
 * /proc/meminfo's Slab and SUnreclaim, so run it where nothing else
 * runs), heap (mallinfo2's bytes in use) and resident memory, each as the
 * difference between before the contexts were made and after all were
 * used, divided by N; and the same after all were freed (what is left).
 * Families: cipher (AES-128-CBC: gnutls_cipher_init, one 1024-byte
 * encryption), aead (AES-128-GCM: gnutls_aead_cipher_init, one 1024-byte
 * encryption), mac (HMAC-SHA256: gnutls_hmac_init, 1024 bytes, output),
 * digest (SHA256: gnutls_hash_init, 1024 bytes, output).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

struct snap {
	long fds, slab_kb, sunreclaim_kb, rss_kb;
	long long heap;
};

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static long field_kb(const char *path, const char *name)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

static void snap(struct snap *s)
{
	struct mallinfo2 mi;

	/* let the kernel free what closed sockets left to RCU */
	usleep(50000);
	mi = mallinfo2();
	s->heap = (long long)mi.uordblks + (long long)mi.hblkhd;
	s->fds = count_fds();
	s->slab_kb = field_kb("/proc/meminfo", "Slab");
	s->sunreclaim_kb = field_kb("/proc/meminfo", "SUnreclaim");
	s->rss_kb = field_kb("/proc/self/status", "VmRSS");
}

static void print(const char *what, int n, const struct snap *a,
		  const struct snap *b, const struct snap *c)
{
	printf("%s n=%d fds=%.2f slab_bytes=%.0f sunreclaim_bytes=%.0f "
	       "heap_bytes=%.0f rss_bytes=%.0f left_fds=%.2f "
	       "left_slab_bytes=%.0f left_heap_bytes=%.0f\n",
	       what, n, (double)(b->fds - a->fds) / n,
	       (b->slab_kb - a->slab_kb) * 1024.0 / n,
	       (b->sunreclaim_kb - a->sunreclaim_kb) * 1024.0 / n,
	       (double)(b->heap - a->heap) / n,
	       (b->rss_kb - a->rss_kb) * 1024.0 / n,
	       (double)(c->fds - a->fds) / n,
	       (c->slab_kb - a->slab_kb) * 1024.0 / n,
	       (double)(c->heap - a->heap) / n);
	fflush(stdout);
}

static unsigned char key[64], iv[16], data[1024 + 64], out[1024 + 64];

static int contexts(int n)
{
	void **h = calloc(n, sizeof(*h));
	gnutls_datum_t k = { key, 16 }, v = { iv, 16 };
	struct snap a, b, c;
	int fam, i, ret;
	size_t len;
	static const char *const names[] = { "cipher", "aead", "mac",
					     "digest" };

	memset(key, 7, sizeof(key));
	memset(data, 1, sizeof(data));
	for (fam = 0; fam < 4; fam++) {
		/* one context first: what GnuTLS sets up once (tables, the
		 * module's first use of the algorithm) is not counted */
		for (i = -1; i < n; i++) {
			void **p = i < 0 ? &h[0] : &h[i];

			if (i == 0)
				snap(&a);
			switch (fam) {
			case 0:
				ret = gnutls_cipher_init(
					(gnutls_cipher_hd_t *)p,
					GNUTLS_CIPHER_AES_128_CBC, &k, &v);
				if (ret >= 0)
					ret = gnutls_cipher_encrypt2(*p, data,
								     1024, out,
								     sizeof(out));
				break;
			case 1:
				ret = gnutls_aead_cipher_init(
					(gnutls_aead_cipher_hd_t *)p,
					GNUTLS_CIPHER_AES_128_GCM, &k);
				len = sizeof(out);
				if (ret >= 0)
					ret = gnutls_aead_cipher_encrypt(
						*p, iv, 12, NULL, 0, 16, data,
						1024, out, &len);
				break;
			case 2:
				ret = gnutls_hmac_init((gnutls_hmac_hd_t *)p,
						       GNUTLS_MAC_SHA256, key,
						       32);
				if (ret >= 0 &&
				    (ret = gnutls_hmac(*p, data, 1024)) >= 0)
					gnutls_hmac_output(*p, out);
				break;
			default:
				ret = gnutls_hash_init((gnutls_hash_hd_t *)p,
						       GNUTLS_DIG_SHA256);
				if (ret >= 0 &&
				    (ret = gnutls_hash(*p, data, 1024)) >= 0)
					gnutls_hash_output(*p, out);
				break;
			}
			if (ret < 0) {
				fprintf(stderr, "afalg-cost: %s: %s\n",
					names[fam], gnutls_strerror(ret));
				return 1;
			}
			if (i < 0) {
				switch (fam) {
				case 0:
					gnutls_cipher_deinit(*p);
					break;
				case 1:
					gnutls_aead_cipher_deinit(*p);
					break;
				case 2:
					gnutls_hmac_deinit(*p, NULL);
					break;
				default:
					gnutls_hash_deinit(*p, NULL);
				}
			}
		}
		snap(&b);
		for (i = 0; i < n; i++) {
			switch (fam) {
			case 0:
				gnutls_cipher_deinit(h[i]);
				break;
			case 1:
				gnutls_aead_cipher_deinit(h[i]);
				break;
			case 2:
				gnutls_hmac_deinit(h[i], NULL);
				break;
			default:
				gnutls_hash_deinit(h[i], NULL);
			}
		}
		snap(&c);
		print(names[fam], n, &a, &b, &c);
	}
	free(h);
	return 0;
}

static const unsigned char psk[16] = { 1, 2, 3, 4, 5, 6, 7, 8,
				       9, 10, 11, 12, 13, 14, 15, 16 };

static int psk_cb(gnutls_session_t s, const char *user, gnutls_datum_t *k)
{
	(void)s;
	(void)user;
	k->data = gnutls_malloc(sizeof(psk));
	memcpy(k->data, psk, sizeof(psk));
	k->size = sizeof(psk);
	return 0;
}

static int sessions(int n)
{
	static const char prio[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:"
				   "+AES-128-GCM:-KX-ALL:+PSK";
	gnutls_session_t *cl = calloc(n, sizeof(*cl)),
			 *sv = calloc(n, sizeof(*sv));
	gnutls_psk_client_credentials_t cc;
	gnutls_psk_server_credentials_t sc;
	gnutls_datum_t k = { (unsigned char *)psk, sizeof(psk) };
	struct snap a, b, c;
	char buf[64];
	int i, fds[2], r1, r2, rounds;

	gnutls_psk_allocate_client_credentials(&cc);
	gnutls_psk_set_client_credentials(cc, "cost", &k, GNUTLS_PSK_KEY_RAW);
	gnutls_psk_allocate_server_credentials(&sc);
	gnutls_psk_set_server_credentials_function(sc, psk_cb);
	for (i = -1; i < n; i++) {
		gnutls_session_t *c0 = i < 0 ? &cl[0] : &cl[i];
		gnutls_session_t *s0 = i < 0 ? &sv[0] : &sv[i];

		if (i == 0)
			snap(&a);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0) {
			perror("afalg-cost: socketpair");
			return 1;
		}
		fcntl(fds[0], F_SETFL, O_NONBLOCK);
		fcntl(fds[1], F_SETFL, O_NONBLOCK);
		gnutls_init(c0, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
		gnutls_init(s0, GNUTLS_SERVER | GNUTLS_NONBLOCK);
		gnutls_priority_set_direct(*c0, prio, NULL);
		gnutls_priority_set_direct(*s0, prio, NULL);
		gnutls_credentials_set(*c0, GNUTLS_CRD_PSK, cc);
		gnutls_credentials_set(*s0, GNUTLS_CRD_PSK, sc);
		gnutls_transport_set_int(*c0, fds[0]);
		gnutls_transport_set_int(*s0, fds[1]);
		r1 = r2 = GNUTLS_E_AGAIN;
		for (rounds = 0; (r1 < 0 || r2 < 0) && rounds < 100; rounds++) {
			if (r1 < 0)
				r1 = gnutls_handshake(*c0);
			if (r2 < 0)
				r2 = gnutls_handshake(*s0);
			if ((r1 < 0 && gnutls_error_is_fatal(r1)) ||
			    (r2 < 0 && gnutls_error_is_fatal(r2)))
				break;
		}
		if (r1 < 0 || r2 < 0) {
			fprintf(stderr, "afalg-cost: handshake: %s / %s\n",
				gnutls_strerror(r1), gnutls_strerror(r2));
			return 1;
		}
		/* a record each way: both ends' read and write contexts used */
		memset(buf, 3, sizeof(buf));
		if (gnutls_record_send(*c0, buf, sizeof(buf)) < 0 ||
		    gnutls_record_recv(*s0, buf, sizeof(buf)) <= 0 ||
		    gnutls_record_send(*s0, buf, sizeof(buf)) < 0 ||
		    gnutls_record_recv(*c0, buf, sizeof(buf)) <= 0) {
			fprintf(stderr, "afalg-cost: a record failed\n");
			return 1;
		}
		if (i < 0) {
			gnutls_deinit(*c0);
			gnutls_deinit(*s0);
			close(fds[0]);
			close(fds[1]);
		}
	}
	snap(&b);
	for (i = 0; i < n; i++) {
		int f0, f1;

		f0 = gnutls_transport_get_int(cl[i]);
		f1 = gnutls_transport_get_int(sv[i]);
		gnutls_deinit(cl[i]);
		gnutls_deinit(sv[i]);
		close(f0);
		close(f1);
	}
	snap(&c);
	/* per session end: a socketpair's two descriptors are one per end,
	 * the transport's share, counted in too */
	print("session", 2 * n, &a, &b, &c);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	int n = argc > 2 ? atoi(argv[2]) : 32;
	int ret;

	if (argc >= 2 && !strcmp(argv[1], "init")) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = gnutls_global_init();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("init_us=%.1f status=%d\n",
		       (t1.tv_sec - t0.tv_sec) * 1e6 +
			       (t1.tv_nsec - t0.tv_nsec) / 1e3,
		       ret);
		gnutls_global_deinit();
		return ret < 0;
	}
	if (argc < 2 || n < 1 ||
	    (strcmp(argv[1], "contexts") && strcmp(argv[1], "sessions"))) {
		fprintf(stderr,
			"usage: afalg-cost contexts|sessions [N] | init\n");
		return 2;
	}
	if (gnutls_global_init() < 0)
		return 1;
	ret = !strcmp(argv[1], "contexts") ? contexts(n) : sessions(n);
	gnutls_global_deinit();
	return ret;
}
