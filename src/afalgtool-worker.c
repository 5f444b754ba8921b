/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * GnuTLS is free software: you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation, either version 3 of the License, or
 * (at your option) any later version.
 *
 * GnuTLS is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

/* The worker of afalgtool --calibrate: a process of this program with the
 * library set up by GNUTLS_AFALG (off, kernel, or one driver), which times
 * operations through the public API as applications make them, so that
 * what a calibration compares is what an application would get. */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "afalgtool.h"

struct wctx {
	const struct alg *a;
	gnutls_cipher_hd_t cipher[2];
	gnutls_aead_cipher_hd_t aead;
	gnutls_hmac_hd_t hmac; /* a MAC's (its key checked once) */
	int id;
	uint8_t key[64];
	size_t key_size;
	uint8_t nonce[16];
	size_t nonce_size, tag_size;
};

static uint8_t in[CALIBRATION_MAX_SIZE + 64], out[CALIBRATION_MAX_SIZE + 64],
	sealed[60000 + 64];

static int wctx_init(struct wctx *w, const struct alg *a)
{
	gnutls_datum_t key, iv;
	int ret = 0, i;

	memset(w, 0, sizeof(*w));
	w->a = a;
	if (strcmp(a->family, "cipher") == 0 ||
	    strcmp(a->family, "aead") == 0) {
		w->id = gnutls_cipher_get_id(a->label);
		w->key_size = gnutls_cipher_get_key_size(w->id);
		w->nonce_size = gnutls_cipher_get_iv_size(w->id);
		w->tag_size = gnutls_cipher_get_tag_size(w->id);
	} else if (strcmp(a->family, "mac") == 0) {
		w->id = gnutls_mac_get_id(strncmp(a->label, "HMAC-", 5) == 0 ?
						  a->label + 5 :
						  a->label);
		w->key_size = gnutls_mac_get_key_size(w->id);
		if (w->key_size == 0)
			w->key_size = 32;
	} else {
		w->id = gnutls_digest_get_id(a->label);
	}
	if (w->id == 0 || w->key_size > sizeof(w->key))
		return GNUTLS_E_INVALID_REQUEST;
	gnutls_rnd(GNUTLS_RND_NONCE, w->key, w->key_size);
	gnutls_rnd(GNUTLS_RND_NONCE, w->nonce, sizeof(w->nonce));
	key = (gnutls_datum_t){ w->key, w->key_size };
	iv = (gnutls_datum_t){ w->nonce, w->nonce_size };
	if (strcmp(a->family, "cipher") == 0) {
		for (i = 0; i < 2 && ret == 0; i++)
			ret = gnutls_cipher_init(&w->cipher[i], w->id, &key,
						 &iv);
	} else if (strcmp(a->family, "aead") == 0) {
		ret = gnutls_aead_cipher_init(&w->aead, w->id, &key);
	} else if (strcmp(a->family, "mac") == 0) {
		ret = gnutls_hmac_init(&w->hmac, w->id, w->key, w->key_size);
	}
	return ret;
}

static int one_op(struct wctx *w, int dir, size_t size)
{
	size_t n = sizeof(out);

	if (w->cipher[0] != NULL)
		return dir ? gnutls_cipher_decrypt2(w->cipher[1], in, size, out,
						    size) :
			     gnutls_cipher_encrypt2(w->cipher[0], in, size, out,
						    size);
	if (w->aead != NULL)
		return dir ? gnutls_aead_cipher_decrypt(w->aead, w->nonce,
							w->nonce_size, NULL, 0,
							w->tag_size, sealed,
							size + w->tag_size, out,
							&n) :
			     gnutls_aead_cipher_encrypt(w->aead, w->nonce,
							w->nonce_size, NULL, 0,
							w->tag_size, in, size,
							out, &n);
	/* MACs and digests: the one-shot calls (their contexts are
	 * GnuTLS's own code whatever the settings) */
	if (w->hmac != NULL)
		return gnutls_hmac_fast(w->id, w->key, w->key_size, in, size,
					out);
	return gnutls_hash_fast(w->id, in, size, out);
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Requests on standard input: "LABEL DIR SIZE COUNT", answered "ok WALL
 * CPU FAILURES STATE" (seconds of COUNT operations, by wall clock and of
 * the whole process's CPU time; the kernel calls that failed meanwhile,
 * after which the library used software; what the library's report says
 * of the algorithm then), or "error WHY"; and "why LABEL", answered "why
 * TEXT", the report's reason why the kernel does not take it. */
int calibration_worker(void)
{
	static struct wctx ctx[MAX_ALGS];
	char line[256], label[32];
	unsigned dir, count, i, k, failures;
	size_t size, n;
	double wall, cpu;
	int ret;

	read_report(0);
	gnutls_rnd(GNUTLS_RND_NONCE, in, sizeof(in));
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "why %31s", label) == 1) {
			read_report(0);
			for (i = 0; i < n_algs && strcmp(algs[i].label, label);
			     i++)
				;
			printf("why %s\n", i < n_algs ? algs[i].why : "");
			fflush(stdout);
			continue;
		}
		if (sscanf(line, "%31s %u %zu %u", label, &dir, &size,
			   &count) != 4 ||
		    dir > 1 || size > CALIBRATION_MAX_SIZE) {
			printf("error bad request\n");
			fflush(stdout);
			continue;
		}
		for (i = 0; i < n_algs && strcmp(algs[i].label, label); i++)
			;
		ret = i < n_algs ? 0 : GNUTLS_E_INVALID_REQUEST;
		if (ret == 0 && ctx[i].a == NULL)
			ret = wctx_init(&ctx[i], &algs[i]);
		if (ret == 0 && ctx[i].aead != NULL && dir) {
			n = sizeof(sealed);
			ret = gnutls_aead_cipher_encrypt(
				ctx[i].aead, ctx[i].nonce, ctx[i].nonce_size,
				NULL, 0, ctx[i].tag_size, in, size, sealed, &n);
		}
		failures = i < n_algs ? algs[i].failures : 0;
		wall = now(CLOCK_MONOTONIC);
		cpu = now(CLOCK_PROCESS_CPUTIME_ID);
		for (k = 0; k < count && ret == 0; k++)
			ret = one_op(&ctx[i], dir, size);
		cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu;
		wall = now(CLOCK_MONOTONIC) - wall;
		if (ret < 0) {
			printf("error %s\n", gnutls_strerror(ret));
		} else {
			read_report(0);
			printf("ok %.9f %.9f %u %s\n", wall, cpu,
			       algs[i].failures - failures, algs[i].state);
		}
		fflush(stdout);
	}
	return 0;
}
