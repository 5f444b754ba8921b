/*
 * Run by the contract test over exec: exits with the number of AF_ALG
 * sockets and pipes it inherited, but for the descriptors given (those
 * the test itself had open when it started).  Not linked with GnuTLS, so
 * that it starts fast under emulation.
 *
 * Usage: inherited [FD,FD,...]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

#define MAX_FD 4096

int main(int argc, char **argv)
{
	static bool skip[MAX_FD];
	const char *p = argc > 1 ? argv[1] : "";
	int fd, n = 0, domain;
	socklen_t len;
	struct stat st;

	for (; *p; p += strspn(p, "0123456789"), p += *p == ',')
		if ((fd = atoi(p)) >= 0 && fd < MAX_FD)
			skip[fd] = true;
	for (fd = 3; fd < MAX_FD; fd++) {
		if (skip[fd] || fstat(fd, &st) < 0)
			continue;
		len = sizeof(domain);
		if (S_ISFIFO(st.st_mode) ||
		    (S_ISSOCK(st.st_mode) &&
		     getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) ==
			     0 &&
		     domain == AF_ALG))
			n++;
	}
	return n > 100 ? 100 : n;
}
