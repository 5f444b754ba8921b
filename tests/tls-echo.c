/*
 * A TLS echo server for the interoperability tests: it serves exactly one
 * connection and sends back every byte it receives, any byte value, until
 * the client's close_notify (or end of stream); then it sends its own
 * close_notify, deinitializes GnuTLS (the AF_ALG module logs its statistics
 * in gnutls_global_deinit()) and exits.
 *
 * Usage: tls-echo CERT KEY PRIORITY PORTFILE
 *
 * It listens on an ephemeral port of 127.0.0.1 and writes the port number
 * to PORTFILE (a temporary file renamed into place, so PORTFILE is complete
 * once it exists).  It prints the session description and the number of
 * bytes echoed to stdout, errors to stderr.  It has no time limit: the
 * caller decides how long to wait.
 *
 * The socket is non-blocking once the handshake is done: what is received
 * is queued and sent back whenever the socket takes it, and reading never
 * waits for the client to read its echo, so that a client which writes
 * everything before it reads cannot deadlock with it.
 *
 * Exit status: 0 after a complete session, 1 on any error.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <gnutls/gnutls.h>

#define RECORD_MAX 16384

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("tls-echo: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void check(int ret, const char *what)
{
	if (ret < 0)
		die("%s: %s", what, gnutls_strerror(ret));
}

/* Listens on 127.0.0.1 and publishes the port in portfile. */
static int listen_local(const char *portfile)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	char tmp[4096];
	FILE *f;
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		die("cannot listen on 127.0.0.1: %s", strerror(errno));

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", portfile) >= (int)sizeof(tmp))
		die("%s: name too long", portfile);
	f = fopen(tmp, "w");
	if (f == NULL || fprintf(f, "%u\n", ntohs(sa.sin_port)) < 0 ||
	    fclose(f) != 0 || rename(tmp, portfile) < 0)
		die("cannot write %s: %s", portfile, strerror(errno));
	return fd;
}

/* Echoes until the peer ends the stream; returns the number of bytes. */
static size_t echo(gnutls_session_t session, int fd)
{
	unsigned char *queue = NULL;
	size_t len = 0, cap = 0, off = 0, total = 0, sending = 0;
	int eof = 0;
	ssize_t ret;

	while (!eof || off < len) {
		struct pollfd p = { .fd = fd, .events = eof ? 0 : POLLIN };

		if (off < len)
			p.events |= POLLOUT;
		if (gnutls_record_check_pending(session) == 0 &&
		    poll(&p, 1, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));

		if (!eof && cap - len < RECORD_MAX) {
			cap = 2 * cap + RECORD_MAX;
			queue = realloc(queue, cap);
			if (queue == NULL)
				die("out of memory");
		}
		ret = eof ? GNUTLS_E_AGAIN :
			    gnutls_record_recv(session, queue + len, cap - len);
		if (ret == 0 || ret == GNUTLS_E_PREMATURE_TERMINATION)
			eof = 1;
		else if (ret > 0)
			len += ret;
		else if (gnutls_error_is_fatal(ret))
			check(ret, "receiving");

		/* GnuTLS sends one record of at most 'sending' bytes; after
		 * GNUTLS_E_AGAIN, the call is repeated with the same size. */
		if (sending == 0)
			sending = len - off;
		if (sending == 0)
			continue;
		ret = gnutls_record_send(session, queue + off, sending);
		if (ret > 0) {
			off += ret;
			total += ret;
			sending = 0;
			if (off == len)
				off = len = 0;
		} else if (gnutls_error_is_fatal(ret)) {
			check(ret, "sending");
		}
	}
	free(queue);
	return total;
}

int main(int argc, char **argv)
{
	gnutls_certificate_credentials_t cred;
	gnutls_session_t session;
	const char *err = NULL;
	char *desc;
	size_t total;
	int lfd, fd, ret;

	if (argc != 5) {
		fprintf(stderr, "usage: %s CERT KEY PRIORITY PORTFILE\n",
			argv[0]);
		return 1;
	}
	check(gnutls_global_init(), "gnutls_global_init");
	check(gnutls_certificate_allocate_credentials(&cred), "credentials");
	check(gnutls_certificate_set_x509_key_file(cred, argv[1], argv[2],
						   GNUTLS_X509_FMT_PEM),
	      "loading the certificate and key");

	lfd = listen_local(argv[4]);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(lfd);

	check(gnutls_init(&session, GNUTLS_SERVER | GNUTLS_NO_SIGNAL), "init");
	ret = gnutls_priority_set_direct(session, argv[3], &err);
	if (ret < 0)
		die("priority '%s' (at '%s'): %s", argv[3], err ? err : "",
		    gnutls_strerror(ret));
	check(gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, cred),
	      "credentials");
	gnutls_handshake_set_timeout(session, GNUTLS_INDEFINITE_TIMEOUT);
	gnutls_transport_set_int(session, fd);
	do
		ret = gnutls_handshake(session);
	while (ret < 0 && !gnutls_error_is_fatal(ret));
	check(ret, "handshake");
	desc = gnutls_session_get_desc(session);
	printf("tls-echo: session %s\n", desc);
	fflush(stdout);
	gnutls_free(desc);

	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		die("fcntl: %s", strerror(errno));
	total = echo(session, fd);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		die("fcntl: %s", strerror(errno));
	do
		ret = gnutls_bye(session, GNUTLS_SHUT_WR);
	while (ret < 0 && !gnutls_error_is_fatal(ret));
	check(ret, "sending close_notify");
	printf("tls-echo: echoed %zu bytes\n", total);

	close(fd);
	gnutls_deinit(session);
	gnutls_certificate_free_credentials(cred);
	gnutls_global_deinit();
	return 0;
}
