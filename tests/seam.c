/*
 * See seam.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include "seam.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/if_alg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

enum call { SOCKET, BIND, ACCEPT, SETKEY, SETOPT, SEND, RECV, N_CALLS };

static const char *const call_names[N_CALLS] = {
	"socket", "bind", "accept", "setkey", "setopt", "send", "recv",
};

#define SHORT (-1)
#define PASS (-2)
#define SWAP (-3)

static const struct {
	const char *name;
	int err;
} error_names[] = {
	{ "ENOMEM", ENOMEM }, { "EINVAL", EINVAL },
	{ "EBUSY", EBUSY },   { "EAGAIN", EAGAIN },
	{ "EINTR", EINTR },   { "EMFILE", EMFILE },
	{ "EPERM", EPERM },   { "EBADMSG", EBADMSG },
	{ "ENOKEY", ENOKEY }, { "EIO", EIO },
	{ "ENOENT", ENOENT }, { "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "SHORT", SHORT },   { "PASS", PASS },
	{ "SWAP", SWAP },
};

static struct {
	bool active;
	enum call call;
	int err;
	unsigned skip, count, injected;
} fault;

static void *real(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (fn == NULL) {
		fprintf(stderr, "seam: no %s after this program\n", name);
		abort();
	}
	return fn;
}

static bool is_afalg(int fd)
{
	int domain;
	socklen_t len = sizeof(domain);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
	       domain == AF_ALG;
}

/* What the call must do: 0 go on, an errno, SHORT. */
static int check(enum call call, int fd)
{
	if (!__atomic_load_n(&fault.active, __ATOMIC_ACQUIRE) ||
	    fault.call != call || (fd >= 0 && !is_afalg(fd)))
		return 0;
	if (fault.skip > 0) {
		fault.skip--;
		return 0;
	}
	if (fault.count > 0 && fault.injected >= fault.count)
		return 0;
	fault.injected++;
	/* SWAP, negative like SHORT: the call goes on, then its result is
	 * swapped */
	return fault.err == PASS ? 0 : fault.err;
}

/* ---- SWAP: an application's connection under the number returned ----- */

static const char waiting[64] = "the peer's bytes: the library must not "
				"read them";
static struct {
	int fd, peer;
	dev_t dev;
	ino_t ino;
} swapped[16];
static unsigned n_swapped;

static int swap_in(int fd)
{
	struct stat st;
	int pair[2];

	if (fd < 0 || n_swapped == 16 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
		return fd;
	/* the module's socket closed, the connection at its number */
	if (dup3(pair[0], fd, O_CLOEXEC) < 0 || fstat(fd, &st) < 0 ||
	    write(pair[1], waiting, sizeof(waiting)) != sizeof(waiting)) {
		close(pair[0]);
		close(pair[1]);
		return fd;
	}
	close(pair[0]);
	swapped[n_swapped].fd = fd;
	swapped[n_swapped].peer = pair[1];
	swapped[n_swapped].dev = st.st_dev;
	swapped[n_swapped++].ino = st.st_ino;
	return fd;
}

int seam_swapped_intact(char *why, unsigned size)
{
	char buf[sizeof(waiting)];
	struct stat st;
	unsigned i;

	for (i = 0; i < n_swapped; i++) {
		int fd = swapped[i].fd;

		if (fstat(fd, &st) < 0 || st.st_dev != swapped[i].dev ||
		    st.st_ino != swapped[i].ino)
			snprintf(why, size, "the connection at %d was closed",
				 fd);
		else if (recv(swapped[i].peer, buf, 1, MSG_DONTWAIT) >= 0)
			snprintf(why, size,
				 "the library sent bytes to the peer of %d",
				 fd);
		else if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_PEEK) !=
			 sizeof(buf))
			snprintf(why, size, "the library read from %d", fd);
		else
			continue;
		return -1;
	}
	return 0;
}

#define FAIL_WITH(err)           \
	do {                     \
		errno = (err);   \
		return -1;       \
	} while (0)

int socket(int domain, int type, int protocol)
{
	static int (*fn)(int, int, int);
	int err = domain == AF_ALG ? check(SOCKET, -1) : 0;

	if (err > 0)
		FAIL_WITH(err);
	if (fn == NULL)
		fn = real("socket");
	if (err == SWAP)
		return swap_in(fn(domain, type, protocol));
	return fn(domain, type, protocol);
}

/* ---- what the program binds and sends ------------------------------- */

#define MAX_BOUND 256
static char bound[MAX_BOUND][64];
static unsigned n_bound, splice_pages;
static pthread_mutex_t bound_lock = PTHREAD_MUTEX_INITIALIZER;

const char *seam_bound_name(unsigned i)
{
	return i < n_bound && i < MAX_BOUND ? bound[i] : NULL;
}

unsigned seam_bound_count(void)
{
	return n_bound;
}

unsigned seam_splice_pages(void)
{
	return splice_pages;
}

static void note_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_alg *sa = (const struct sockaddr_alg *)addr;

	if (addr == NULL || len < sizeof(*sa) || sa->salg_family != AF_ALG ||
	    !is_afalg(fd))
		return;
	pthread_mutex_lock(&bound_lock);
	if (n_bound < MAX_BOUND)
		snprintf(bound[n_bound], sizeof(bound[0]), "%.*s",
			 (int)sizeof(sa->salg_name), (const char *)sa->salg_name);
	n_bound++;
	pthread_mutex_unlock(&bound_lock);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*fn)(int, const struct sockaddr *, socklen_t);
	int err = check(BIND, fd);

	note_bind(fd, addr, len);
	if (err > 0)
		FAIL_WITH(err);
	if (fn == NULL)
		fn = real("bind");
	return fn(fd, addr, len);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	static int (*fn)(int, struct sockaddr *, socklen_t *, int);
	int err = check(ACCEPT, fd);

	if (err > 0)
		FAIL_WITH(err);
	if (fn == NULL)
		fn = real("accept4");
	if (err == SWAP)
		return swap_in(fn(fd, addr, len, flags));
	return fn(fd, addr, len, flags);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*fn)(int, int, int, const void *, socklen_t);
	int err = 0;

	if (level == SOL_ALG)
		err = check(name == ALG_SET_KEY ? SETKEY : SETOPT, fd);
	if (err > 0)
		FAIL_WITH(err);
	if (fn == NULL)
		fn = real("setsockopt");
	return fn(fd, level, name, val, len);
}

/* A read or write short by its last byte. */
static ssize_t shortened(ssize_t (*fn)(int, struct msghdr *, int), int fd,
			 struct msghdr *msg, int flags)
{
	struct iovec *last = NULL;
	size_t i;
	ssize_t ret;

	for (i = 0; i < msg->msg_iovlen; i++)
		if (msg->msg_iov[i].iov_len > 0)
			last = &msg->msg_iov[i];
	if (last == NULL)
		return fn(fd, msg, flags);
	last->iov_len--;
	ret = fn(fd, msg, flags);
	last->iov_len++;
	return ret;
}

#ifndef MSG_SPLICE_PAGES
#define MSG_SPLICE_PAGES 0x8000000
#endif

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*fn)(int, struct msghdr *, int);
	int err = check(SEND, fd);

	if ((flags & MSG_SPLICE_PAGES) && is_afalg(fd))
		__atomic_add_fetch(&splice_pages, 1, __ATOMIC_RELAXED);
	if (fn == NULL)
		fn = real("sendmsg");
	if (err == SHORT)
		return shortened(fn, fd, (struct msghdr *)msg, flags);
	if (err > 0)
		FAIL_WITH(err);
	return fn(fd, (struct msghdr *)msg, flags);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	static ssize_t (*fn)(int, struct msghdr *, int);
	int err = check(RECV, fd);

	if (fn == NULL)
		fn = real("recvmsg");
	if (err == SHORT)
		return shortened(fn, fd, msg, flags);
	if (err > 0)
		FAIL_WITH(err);
	return fn(fd, msg, flags);
}

int seam_fault(const char *spec)
{
	char call[16], err[16];
	unsigned skip = 0, count = 1, i;
	int n, done = fault.injected;

	if (spec != NULL && strcmp(spec, "?") == 0)
		return done;
	__atomic_store_n(&fault.active, false, __ATOMIC_RELEASE);
	fault.injected = 0;
	if (spec == NULL || *spec == 0)
		return done;

	n = sscanf(spec, "%15[a-z]:%15[A-Z]:%u:%u", call, err, &skip, &count);
	if (n < 2)
		return -1;
	for (i = 0; i < N_CALLS && strcmp(call, call_names[i]) != 0; i++)
		;
	if (i == N_CALLS)
		return -1;
	fault.call = i;
	for (i = 0; i < sizeof(error_names) / sizeof(error_names[0]) &&
		    strcmp(err, error_names[i].name) != 0;
	     i++)
		;
	if (i == sizeof(error_names) / sizeof(error_names[0]))
		return -1;
	fault.err = error_names[i].err;
	if (fault.err == PASS && n < 4)
		count = 0;
	fault.skip = skip;
	fault.count = count;
	__atomic_store_n(&fault.active, true, __ATOMIC_RELEASE);
	return done;
}
