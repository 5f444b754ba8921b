/*
 * Lucky 13: a forged TLS 1.2 CBC record without Encrypt-then-MAC.
 * GnuTLS keeps its MAC check constant-time: lib/cipher-cbc.c MACs the
 * preamble and the record's data without its padding, and on failure
 * feeds the MAC extra blocks (dummy_wait()) so that the number of
 * compression-function calls does not depend on the padding.  Whatever
 * the module does with MAC data must keep that true.
 *
 * This program runs TLS 1.2 sessions with AES-128-CBC and HMAC-SHA1
 * (PSK, no EtM) in one process over memory; after each handshake it
 * forges a record of one length with the client's keys
 * (gnutls_record_get_state()): data, a wrong MAC, and a padding of
 * PADDING bytes, one padding per session; the server receives it and
 * must fail it (GNUTLS_E_DECRYPTION_FAILED).  For each padding it prints
 * what receiving the record cost, as counts, never a clock:
 *
 *   padding P: kernel-requests K mac-bytes B mac-calls C
 *
 * K: the AF_ALG requests the library made (sendmsg() on AF_ALG sockets,
 * counted by the seam, seam.c); B and C: the bytes given to Nettle's
 * HMAC-SHA1, and the calls, which this program interposes
 * (nettle_hmac_sha1_update; with GNUTLS_CPUID_OVERRIDE=0x1 GnuTLS's
 * HMAC-SHA1 is Nettle's).  lucky13.sh compares the lines with those of
 * GnuTLS's own code (GNUTLS_AFALG=off) and across the paddings.
 *
 * Usage: lucky13 [RECORD-LENGTH]   (plaintext bytes, a multiple of 16;
 * default 512)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include "seam.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <nettle/aes.h>
#include <nettle/cbc.h>
#include <nettle/hmac.h>

#define EXIT_FAIL 1
#define EXIT_ERROR 99

#define PRIORITY                                                            \
	"NONE:+VERS-TLS1.2:+AES-128-CBC:+SHA1:+PSK:+SIGN-ALL:+COMP-NULL:" \
	"%NO_ETM"

/* ---- Nettle's HMAC-SHA1 update, counted -------------------------------- */

static unsigned long long mac_bytes, mac_calls;

/* Exported (the program is linked with -rdynamic), so that libgnutls's
 * reference to Nettle's function reaches this one first. */
void nettle_hmac_sha1_update(struct hmac_sha1_ctx *ctx, size_t length,
			     const uint8_t *data)
{
	static void (*real)(struct hmac_sha1_ctx *, size_t, const uint8_t *);

	if (real == NULL)
		real = dlsym(RTLD_NEXT, "nettle_hmac_sha1_update");
	if (real == NULL) {
		fprintf(stderr, "lucky13: no nettle_hmac_sha1_update\n");
		exit(EXIT_ERROR);
	}
	mac_bytes += length;
	mac_calls++;
	real(ctx, length, data);
}

/* ---- sessions over memory ---------------------------------------------- */

struct queue {
	uint8_t data[1 << 16];
	size_t off, len;
};

struct end {
	gnutls_session_t s;
	struct queue *in, *out;
};

static void error(const char *fmt, ...)
{
	va_list ap;

	fputs("lucky13: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_ERROR);
}

static ssize_t push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	struct queue *q = ((struct end *)p)->out;

	if (q->off + q->len + len > sizeof(q->data))
		error("a queue is full");
	memcpy(q->data + q->off + q->len, data, len);
	q->len += len;
	return len;
}

static ssize_t pull(gnutls_transport_ptr_t p, void *data, size_t len)
{
	struct end *e = p;
	struct queue *q = e->in;

	if (q->len == 0) {
		gnutls_transport_set_errno(e->s, EAGAIN);
		return -1;
	}
	if (len > q->len)
		len = q->len;
	memcpy(data, q->data + q->off, len);
	q->off += len;
	q->len -= len;
	if (q->len == 0)
		q->off = 0;
	return len;
}

static gnutls_psk_client_credentials_t client_cred;
static gnutls_psk_server_credentials_t server_cred;
static const gnutls_datum_t psk = { (void *)"0123456789abcdef0123456789abcdef",
				    32 };

static int server_psk(gnutls_session_t s, const char *user,
		      gnutls_datum_t *key)
{
	(void)s;
	(void)user;
	key->data = gnutls_malloc(psk.size);
	if (key->data == NULL)
		return -1;
	memcpy(key->data, psk.data, psk.size);
	key->size = psk.size;
	return 0;
}

static void end_init(struct end *e, unsigned flags, struct queue *in,
		     struct queue *out)
{
	int ret;

	e->in = in;
	e->out = out;
	if (gnutls_init(&e->s, flags | GNUTLS_NONBLOCK) < 0)
		error("gnutls_init failed");
	ret = gnutls_priority_set_direct(e->s, PRIORITY, NULL);
	if (ret < 0)
		error("priority: %s", gnutls_strerror(ret));
	ret = gnutls_credentials_set(e->s, GNUTLS_CRD_PSK,
				     flags & GNUTLS_CLIENT ?
					     (void *)client_cred :
					     (void *)server_cred);
	if (ret < 0)
		error("credentials: %s", gnutls_strerror(ret));
	gnutls_transport_set_ptr(e->s, e);
	gnutls_transport_set_push_function(e->s, push);
	gnutls_transport_set_pull_function(e->s, pull);
	gnutls_handshake_set_timeout(e->s, 0);
}

static void handshake(struct end end[2])
{
	int done[2] = { 0, 0 }, ret, i, rounds = 0;

	while (!done[0] || !done[1]) {
		if (++rounds > 1000)
			error("the handshake does not end");
		for (i = 0; i < 2; i++) {
			if (done[i])
				continue;
			ret = gnutls_handshake(end[i].s);
			if (ret == 0)
				done[i] = 1;
			else if (gnutls_error_is_fatal(ret))
				error("handshake (%s): %s",
				      i ? "server" : "client",
				      gnutls_strerror(ret));
		}
	}
}

/* ---- a forged record --------------------------------------------------- */

/* A record of plain_len bytes of plaintext under the client's keys: data,
 * a MAC that is wrong, and a padding of pad + 1 bytes of value pad. */
static size_t forge(gnutls_session_t client, size_t plain_len, unsigned pad,
		    uint8_t *out)
{
	gnutls_datum_t mac_key, iv, key;
	uint8_t seq[8], plain[16384], *p = plain;
	struct aes128_ctx aes;
	uint8_t civ[16];
	size_t data_len = plain_len - 20 - (pad + 1), i;
	int ret;

	ret = gnutls_record_get_state(client, 0, &mac_key, &iv, &key, seq);
	if (ret < 0 || key.size != 16)
		error("gnutls_record_get_state: %s", gnutls_strerror(ret));
	for (i = 0; i < data_len; i++)
		*p++ = (uint8_t)(i * 7);
	memset(p, 0xa5, 20); /* not the record's MAC */
	p += 20;
	memset(p, pad, pad + 1);
	for (i = 0; i < 16; i++)
		civ[i] = (uint8_t)(i * 31 + pad);
	/* header, explicit IV, CBC(IV, plaintext) */
	out[0] = 23;
	out[1] = 3;
	out[2] = 3;
	out[3] = (16 + plain_len) >> 8;
	out[4] = (16 + plain_len) & 0xff;
	memcpy(out + 5, civ, 16);
	aes128_set_encrypt_key(&aes, key.data);
	cbc_encrypt(&aes, (nettle_cipher_func *)aes128_encrypt, 16, civ,
		    plain_len, out + 5 + 16, plain);
	return 5 + 16 + plain_len;
}

int main(int argc, char **argv)
{
	static const unsigned paddings[] = { 0,	 1,   15,  16,	63,
					     64, 127, 128, 200, 255 };
	size_t plain_len = argc > 1 ? strtoul(argv[1], NULL, 10) : 512;
	static struct queue wire[2];
	uint8_t record[16384 + 64], buf[16384];
	unsigned i, failed = 0;
	unsigned long long b0, c0;
	int ret, requests;

	if (plain_len % 16 != 0 || plain_len < 16 + 20 + 256 ||
	    plain_len > 16384)
		error("RECORD-LENGTH: a multiple of 16 from 304 to 16384");
	if (gnutls_psk_allocate_client_credentials(&client_cred) < 0 ||
	    gnutls_psk_set_client_credentials(client_cred, "user", &psk,
					      GNUTLS_PSK_KEY_RAW) < 0 ||
	    gnutls_psk_allocate_server_credentials(&server_cred) < 0)
		error("credentials");
	gnutls_psk_set_server_credentials_function(server_cred, server_psk);

	for (i = 0; i < sizeof(paddings) / sizeof(paddings[0]); i++) {
		struct end end[2];
		size_t n;

		memset(wire, 0, sizeof(wire));
		end_init(&end[0], GNUTLS_CLIENT, &wire[1], &wire[0]);
		end_init(&end[1], GNUTLS_SERVER, &wire[0], &wire[1]);
		handshake(end);
		if (gnutls_mac_get(end[1].s) != GNUTLS_MAC_SHA1 ||
		    gnutls_session_etm_status(end[1].s))
			error("not a CBC-SHA1 session without EtM");
		/* one real record first: the record layer's contexts are
		 * made and used once */
		if (gnutls_record_send(end[0].s, "hello", 5) != 5 ||
		    gnutls_record_recv(end[1].s, buf, sizeof(buf)) != 5)
			error("a real record was not received");

		n = forge(end[0].s, plain_len, paddings[i], record);
		push(&end[0], record, n);
		seam_fault("send:PASS:0:0");
		b0 = mac_bytes;
		c0 = mac_calls;
		ret = gnutls_record_recv(end[1].s, buf, sizeof(buf));
		requests = seam_fault(NULL);
		if (ret != GNUTLS_E_DECRYPTION_FAILED) {
			printf("FAIL padding %u: the forged record gave %s\n",
			       paddings[i],
			       ret < 0 ? gnutls_strerror(ret) : "data");
			failed++;
		}
		printf("padding %u: kernel-requests %d mac-bytes %llu "
		       "mac-calls %llu\n",
		       paddings[i], requests, mac_bytes - b0, mac_calls - c0);
		gnutls_deinit(end[0].s);
		gnutls_deinit(end[1].s);
	}
	gnutls_psk_free_client_credentials(client_cred);
	gnutls_psk_free_server_credentials(server_cred);
	return failed ? EXIT_FAIL : 0;
}
