/*
 * N operations of one kind through GnuTLS's public API, nothing else
 * (devel/op-cost counts their system calls with strace, from the
 * difference of two values of N, so that start-up cancels out).
 *
 * Usage: op-cost ALGORITHM OP SIZE N
 *   ALGORITHM  AES-128-GCM, AES-128-CBC, SHA256, HMAC-SHA256
 *   OP         encrypt (ciphers), oneshot (SHA256, HMAC-SHA256)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 20], out[(1 << 20) + 64];
	unsigned char key[32] = { 1 }, iv[16] = { 2 };
	gnutls_datum_t k = { key, 16 }, v = { iv, 16 };
	size_t size, n, i, len;
	int ret = 0;

	if (argc != 5)
		return 2;
	size = strtoul(argv[3], NULL, 10);
	n = strtoul(argv[4], NULL, 10);
	if (size > sizeof(buf))
		return 2;
	if (strcmp(argv[1], "AES-128-GCM") == 0) {
		gnutls_aead_cipher_hd_t h;

		ret = gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &k);
		for (i = 0; i < n && ret == 0; i++) {
			len = sizeof(out);
			ret = gnutls_aead_cipher_encrypt(h, iv, 12, NULL, 0, 16,
							 buf, size, out, &len);
		}
	} else if (strcmp(argv[1], "AES-128-CBC") == 0) {
		gnutls_cipher_hd_t h;

		ret = gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_CBC, &k, &v);
		for (i = 0; i < n && ret == 0; i++)
			ret = gnutls_cipher_encrypt2(h, buf, size, out, size);
	} else if (strcmp(argv[1], "SHA256") == 0) {
		for (i = 0; i < n && ret == 0; i++)
			ret = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, size, out);
	} else if (strcmp(argv[1], "HMAC-SHA256") == 0) {
		for (i = 0; i < n && ret == 0; i++)
			ret = gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, 32, buf,
					       size, out);
	} else {
		return 2;
	}
	if (ret < 0) {
		fprintf(stderr, "op-cost: %s\n", gnutls_strerror(ret));
		return 1;
	}
	return 0;
}
