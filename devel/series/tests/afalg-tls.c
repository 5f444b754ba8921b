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

/* TLS sessions whose records go through the AF_ALG backend: client and
 * server in one process over memory, 256 KiB each way in full-size
 * records, a key update in TLS 1.3; the statistics must show that the
 * record encryption ran in the kernel, and the record MAC of a CBC
 * cipher suite did not (MAC contexts are GnuTLS's own code, whose
 * padding-independent work the record layer relies on). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <assert.h>
#include <gnutls/crypto.h>

#include "afalg-common.h"
#include "cert-common.h"
#include "eagain-common.h"

#define RECORD 16384
#define RECORDS 16

static uint8_t data[RECORD], back[RECORD];

/* Sends RECORDS full records from one side; the other reads them back. */
static void transfer(gnutls_session_t from, gnutls_session_t to,
		     const char *name)
{
	unsigned i, j;
	ssize_t ret;
	size_t got;

	for (i = 0; i < RECORDS; i++) {
		for (j = 0; j < RECORD; j++)
			data[j] = i + j * 3;
		do
			ret = gnutls_record_send(from, data, RECORD);
		while (ret == GNUTLS_E_AGAIN || ret == GNUTLS_E_INTERRUPTED);
		if (ret != RECORD)
			fail("%s: send: %s\n", name, gnutls_strerror(ret));
		for (got = 0; got < RECORD; got += ret) {
			do
				ret = gnutls_record_recv(to, back + got,
							 RECORD - got);
			while (ret == GNUTLS_E_AGAIN ||
			       ret == GNUTLS_E_INTERRUPTED);
			if (ret <= 0)
				fail("%s: recv: %s\n", name,
				     gnutls_strerror(ret));
		}
		if (memcmp(data, back, RECORD) != 0)
			fail("%s: record %u differs\n", name, i);
	}
}

static void session(const char *prio, int tls13)
{
	gnutls_certificate_credentials_t scred, ccred;
	gnutls_session_t server, client;
	int sret, cret;

	assert(gnutls_certificate_allocate_credentials(&scred) >= 0);
	assert(gnutls_certificate_set_x509_key_mem(
		       scred, &server_ca3_localhost_cert, &server_ca3_key,
		       GNUTLS_X509_FMT_PEM) >= 0);
	assert(gnutls_init(&server, GNUTLS_SERVER) >= 0);
	assert(gnutls_priority_set_direct(server, prio, NULL) >= 0);
	assert(gnutls_credentials_set(server, GNUTLS_CRD_CERTIFICATE, scred) >=
	       0);
	gnutls_transport_set_push_function(server, server_push);
	gnutls_transport_set_pull_function(server, server_pull);
	gnutls_transport_set_ptr(server, server);

	assert(gnutls_certificate_allocate_credentials(&ccred) >= 0);
	assert(gnutls_certificate_set_x509_trust_mem(ccred, &ca3_cert,
						     GNUTLS_X509_FMT_PEM) >= 0);
	assert(gnutls_init(&client, GNUTLS_CLIENT) >= 0);
	assert(gnutls_priority_set_direct(client, prio, NULL) >= 0);
	assert(gnutls_credentials_set(client, GNUTLS_CRD_CERTIFICATE, ccred) >=
	       0);
	gnutls_transport_set_push_function(client, client_push);
	gnutls_transport_set_pull_function(client, client_pull);
	gnutls_transport_set_ptr(client, client);

	HANDSHAKE(client, server);
	if (debug)
		success("%s: %s\n", prio, gnutls_session_get_desc(client));

	transfer(client, server, prio);
	transfer(server, client, prio);
	if (tls13) {
		/* new keys on both sides: new kernel contexts */
		do
			cret = gnutls_session_key_update(client,
							 GNUTLS_KU_PEER);
		while (cret == GNUTLS_E_AGAIN || cret == GNUTLS_E_INTERRUPTED);
		if (cret < 0)
			fail("key update: %s\n", gnutls_strerror(cret));
		transfer(client, server, prio);
		transfer(server, client, prio);
		transfer(client, server, prio);
	}

	gnutls_bye(client, GNUTLS_SHUT_WR);
	gnutls_bye(server, GNUTLS_SHUT_WR);
	gnutls_deinit(client);
	gnutls_deinit(server);
	gnutls_certificate_free_credentials(scred);
	gnutls_certificate_free_credentials(ccred);
	reset_buffers();
}

static const char *const in_kernel[] = {
	"AES-128-GCM",
	"AES-256-GCM",
	"CHACHA20-POLY1305",
	"AES-128-CBC",
};

void doit(void)
{
	unsigned long kernel;
	unsigned i;

	afalg_require_kernel();
	afalg_stats_start();

	session("NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM", 1);
	session("NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305",
		1);
	session("NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM", 0);
	session("NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-CBC:"
		"-MAC-ALL:+SHA1:%NO_ETM",
		0);

	for (i = 0; i < sizeof(in_kernel) / sizeof(in_kernel[0]); i++) {
		if (afalg_refused(in_kernel[i])) {
			afalg_check_ran(in_kernel[i]);
			continue;
		}
		kernel = afalg_ops(in_kernel[i], NULL);
		if (debug)
			success("%s: %lu in the kernel\n", in_kernel[i],
				kernel);
		if (kernel < RECORDS)
			fail("%s: %lu operations in the kernel\n", in_kernel[i],
			     kernel);
	}
	if (afalg_ops("HMAC-SHA1", NULL) != 0)
		fail("the record MAC ran in the kernel\n");
	gnutls_global_deinit();
}
