/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * The GnuTLS is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public License
 * as published by the Free Software Foundation; either version 2.1 of
 * the License, or (at your option) any later version.
 *
 * This library is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>
 *
 */

/* The only file that talks to the kernel crypto API, through the AF_ALG
 * socket interface, and to the kernel's crypto netlink interface, which
 * says what a driver implements.
 *
 * A kernel context is one operation socket, accepted from a socket bound
 * to the algorithm (and keyed), which is closed at once.  A context
 * keeps its socket between operations, and uses it only while it is
 * provably the module's:
 *  - every descriptor the kernel gives the module moves at once to a
 *    number the module hands out, in the top quarter of RLIMIT_NOFILE,
 *    where an application's new descriptors, which take the lowest free
 *    number, do not land, and which no other context of the module takes
 *    while its owner may still use it;
 *  - it is adopted only as a socket of the family asked for (SO_DOMAIN),
 *    and its identity (device and inode) is kept;
 *  - before every send, receive and close that identity is checked with
 *    fstat(), and so is the process: a child of fork(), _Fork() or
 *    clone() does not use a socket its parent opened (a page the kernel
 *    wipes in a child, MADV_WIPEONFORK, tells; where it cannot, the
 *    process id);
 *  - results are read with MSG_DONTWAIT: the kernel computes them within
 *    the call, so a receive that would wait is on a socket that is not
 *    the module's, and fails instead.
 * What user space cannot prevent: between a check and the call after it
 * another thread may close the socket and put another file under its
 * number with dup2(), or after using three quarters of its descriptors;
 * and in the two system calls between socket() or accept4() returning
 * a low number and the module moving it, a thread that closes that
 * number and opens another descriptor there would have it closed.
 *
 * No state lives only in the kernel: a cipher request carries its IV, a
 * hash message is sent whole.  So a socket that fails or is lost costs a
 * new one, or software, never an answer.  Sends never raise SIGPIPE. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/cryptouser.h>
#include <linux/if_alg.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/* ---- errors ------------------------------------------------------------ */

const char *_afalg_call_name(enum afalg_call call)
{
	static const char *const names[] = {
		[AFALG_CALL_SOCKET] = "socket",
		[AFALG_CALL_BIND] = "bind",
		[AFALG_CALL_SETKEY] = "setkey",
		[AFALG_CALL_AUTHSIZE] = "setting the tag size",
		[AFALG_CALL_ACCEPT] = "accept",
		[AFALG_CALL_SEND] = "sendmsg",
		[AFALG_CALL_RECV] = "recvmsg",
		[AFALG_CALL_ADOPT] = "moving the descriptor to a number of the "
				     "module's",
		[AFALG_CALL_LOST] = "the socket's identity check",
		[AFALG_CALL_NETLINK] = "the crypto netlink query",
	};

	return names[call];
}

/* errno names, not strerror() (not thread-safe, and translated) */
const char *_afalg_errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" },
		{ ENOENT, "ENOENT" },
		{ EINTR, "EINTR" },
		{ EIO, "EIO" },
		{ EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" },
		{ ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" },
		{ EBUSY, "EBUSY" },
		{ EINVAL, "EINVAL" },
		{ ENFILE, "ENFILE" },
		{ EMFILE, "EMFILE" },
		{ ENOSPC, "ENOSPC" },
		{ ENAMETOOLONG, "ENAMETOOLONG" },
		{ ELIBBAD, "ELIBBAD" },
		{ ENOTSOCK, "ENOTSOCK" },
		{ EMSGSIZE, "EMSGSIZE" },
		{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
		{ EAFNOSUPPORT, "EAFNOSUPPORT" },
		{ ENOBUFS, "ENOBUFS" },
		{ EBADMSG, "EBADMSG" },
		{ ENOKEY, "ENOKEY" },
		{ EKEYREJECTED, "EKEYREJECTED" },
	};
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	return "an error";
}

/* A failed call on an algorithm's socket: counted, and logged the first
 * time for this algorithm and call in the process. */
int _afalg_failed(struct afalg_alg *alg, enum afalg_call call, int err)
{
	unsigned bit = 1U << call;

	gnutls_atomic_increment(&alg->failures);
	if (!(atomic_fetch_or(&alg->logged, bit) & bit))
		_gnutls_debug_log("afalg: %s: %s failed: %s (%d); later "
				  "failures of it are counted, not logged\n",
				  alg->label, _afalg_call_name(call),
				  _afalg_errno_name(err), err);
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

static int why_set(struct afalg_why *why, enum afalg_refusal refusal,
		   enum afalg_call call, int err)
{
	why->refusal = refusal;
	why->call = call;
	why->err = err;
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

/* Errors that say nothing of the algorithm: ask again later.  (EBADF:
 * the socket was closed under the module.) */
static bool transient(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM ||
	       err == ENOBUFS || err == EINTR || err == EAGAIN || err == EBADF;
}

/* socket() errors that deny AF_ALG to the process: no such family (or a
 * filter that says so), or a sandbox or security module that refuses. */
static bool denied(int err)
{
	return err == EAFNOSUPPORT || err == EPERM || err == EACCES ||
	       err == EPROTONOSUPPORT || err == ESOCKTNOSUPPORT;
}

/* ---- the process's generation ------------------------------------------ */

/* A page the kernel zeroes in a child (MADV_WIPEONFORK, Linux 4.14), and
 * the last generation given out, which a child inherits: a child that
 * finds the page zeroed takes a generation above every one its
 * ancestors gave their sockets. */
static _Atomic(atomic_uint *) gen_page;
static atomic_uint gen_last;
static atomic_bool gen_tried;

static void gen_setup(void)
{
	atomic_uint *p, *none = NULL;

	if (atomic_load_explicit(&gen_tried, memory_order_acquire) ||
	    atomic_exchange(&gen_tried, true))
		return;
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, sizeof(*p), MADV_WIPEONFORK) < 0) {
		/* an older kernel: the process id tells */
		munmap(p, sizeof(*p));
		return;
	}
	atomic_store(p, atomic_fetch_add(&gen_last, 1) + 1);
	if (!atomic_compare_exchange_strong(&gen_page, &none, p))
		munmap(p, sizeof(*p));
}

static unsigned process_gen(void)
{
	atomic_uint *p = atomic_load_explicit(&gen_page, memory_order_acquire);
	unsigned g, fresh;

	if (p == NULL)
		return (unsigned)getpid();
	g = atomic_load_explicit(p, memory_order_relaxed);
	if (likely(g != 0))
		return g;
	fresh = atomic_fetch_add(&gen_last, 1) + 1;
	if (atomic_compare_exchange_strong(p, &g, fresh))
		return fresh;
	return g; /* another thread of the child set it */
}

/* ---- descriptors ------------------------------------------------------- */

/* The module's descriptors have numbers of its own: above a floor at the
 * start of the top quarter of RLIMIT_NOFILE (at most FLOOR_MAX: the
 * kernel's descriptor table grows to the highest number), where an
 * application's new descriptors, which take the lowest free number, do
 * not land; at most a quarter of RLIMIT_NOFILE (and MAX_FDS) of them, so
 * that the application keeps the rest.  The module hands out the
 * numbers itself (fd_map): a number stays the module's until the socket
 * under it is closed or found lost by its owner, so that no other
 * context of the module takes a number another context may still be
 * sending to (an application may close a module's descriptor between
 * its check and its use). */
#define FLOOR_MAX 4096
#define MAX_FDS 8192
#define FD_SLOTS (FLOOR_MAX + MAX_FDS)
#define ADOPT_TRIES 64

static atomic_uint fd_map[FD_SLOTS / 32];
static atomic_uint fd_next; /* where the next search starts */
static atomic_uint fd_count;

/* [lo, hi): where the module's next descriptor goes, or false if it has
 * its share already. */
static bool fd_range(int *lo, int *hi)
{
	struct rlimit rl;
	rlim_t cur = 1024, share;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		cur = rl.rlim_cur == RLIM_INFINITY ? (1U << 20) : rl.rlim_cur;
	share = MIN(cur / 4, MAX_FDS);
	if (atomic_load(&fd_count) >= share)
		return false;
	*lo = MIN(cur - cur / 4, FLOOR_MAX);
	*hi = MIN(*lo + share, FD_SLOTS);
	return *lo < *hi;
}

static bool slot_take(int n)
{
	unsigned bit = 1U << (n % 32);

	return !(atomic_fetch_or(&fd_map[n / 32], bit) & bit);
}

static void slot_free(int n)
{
	atomic_fetch_and(&fd_map[n / 32], ~(1U << (n % 32)));
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static bool has_domain(int fd, int domain)
{
	socklen_t len = sizeof(int);
	int d;

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &len) == 0 &&
	       d == domain;
}

/* A number of the module's, free, and fd put there. */
static int place(int fd)
{
	int lo, hi, n, tries;

	if (!fd_range(&lo, &hi)) {
		errno = EMFILE;
		return -1;
	}
	n = lo + atomic_fetch_add(&fd_next, 1) % (hi - lo);
	for (tries = 0; tries < ADOPT_TRIES;
	     tries++, n = n + 1 < hi ? n + 1 : lo) {
		if (!slot_take(n))
			continue;
		/* free, and not the application's (only where it uses
		 * three quarters of its limit, and opens a descriptor
		 * between these two calls, would dup3() close one) */
		if (fcntl(n, F_GETFD) < 0 && errno == EBADF &&
		    dup3(fd, n, O_CLOEXEC) == n)
			return n;
		slot_free(n);
	}
	errno = EMFILE;
	return -1;
}

/* Takes a descriptor the kernel just returned: puts it at a number of
 * the module's and proves it a socket of the domain asked for.  Until
 * then the number is where an application's next descriptor lands, and
 * another thread may already have put one there: the low number is
 * closed only while it is still the socket adopted. */
static int adopt(int fd, int domain, struct afalg_sock *s)
{
	struct stat st, low;
	int high, err;

	high = place(fd);
	if (high < 0) {
		err = errno;
		if (has_domain(fd, domain))
			close(fd);
		errno = err;
		return -1;
	}
	if (!has_domain(high, domain) || fstat(high, &st) < 0) {
		close(high); /* a copy of another file's descriptor */
		slot_free(high);
		errno = EBADF;
		return -1;
	}
	if (fstat(fd, &low) == 0 && same_file(&low, &st))
		close(fd);
	s->fd = high;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->gen = process_gen();
	atomic_fetch_add(&fd_count, 1);
	return 0;
}

/* One thread of the process at a time holds a low number the kernel
 * just returned: otherwise, where an application closes it, another
 * thread's socket() or accept4() could get the same number, and two
 * contexts of the module adopt one socket.  The lock is the holder's
 * process generation: a child of fork() whose parent held it takes it
 * over (no thread of the child holds it). */
static atomic_uint low_lock;

static void low_acquire(void)
{
	unsigned mine = process_gen(), held = 0;

	while (!atomic_compare_exchange_weak(&low_lock, &held, mine)) {
		if (held != mine && held != 0 &&
		    atomic_compare_exchange_weak(&low_lock, &held, mine))
			return; /* the parent's */
		held = 0;
		sched_yield();
	}
}

static void low_release(void)
{
	atomic_store(&low_lock, 0);
}

static bool same_socket(const struct afalg_sock *s)
{
	struct stat st;

	return fstat(s->fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == s->dev && st.st_ino == s->ino;
}

bool _afalg_sock_ours(const struct afalg_sock *s)
{
	return s->fd >= 0 && s->gen == process_gen() && same_socket(s);
}

/* Closes the socket if it is still the one opened (after fork() also
 * the parent's, inherited: closing it here leaves the parent's open);
 * otherwise its number is another file's now: it is forgotten.  Either
 * way the number is the module's to hand out again. */
void _afalg_sock_close(struct afalg_sock *s)
{
	if (s->fd < 0)
		return;
	if (same_socket(s))
		close(s->fd);
	slot_free(s->fd);
	atomic_fetch_sub(&fd_count, 1);
	s->fd = -1;
}

/* ---- the system calls -------------------------------------------------- */

/* EINTR is retried a few times: a call interrupted before it did
 * anything can be made again.  (Tests make these calls fail by
 * interposing the C library's functions: the module has no hook of its
 * own.) */
#define RETRIES 3

static bool retry(long ret, int *tries)
{
	return ret < 0 && errno == EINTR && ++*tries < RETRIES;
}

static int sys_socket(int domain, int type, int protocol)
{
	int ret, tries = 0;

	do
		ret = socket(domain, type | SOCK_CLOEXEC, protocol);
	while (retry(ret, &tries));
	return ret;
}

static int sys_bind(int fd, const char *type, const char *name)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int ret, tries = 0;

	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", type);
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", name);
	do
		ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	while (retry(ret, &tries));
	return ret;
}

static int sys_accept(int fd)
{
	int ret, tries = 0;

	do
		ret = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	while (retry(ret, &tries));
	return ret;
}

/* ALG_SET_KEY, or ALG_SET_AEAD_AUTHSIZE (whose value is the length) */
static int sys_setopt(int fd, int opt, const void *val, size_t size)
{
	int ret, tries = 0;

	do
		ret = setsockopt(fd, SOL_ALG, opt, val, size);
	while (retry(ret, &tries));
	return ret;
}

/* Never SIGPIPE, never waiting for room: a send buffer smaller than the
 * request (net.core.wmem_default) would wait for a read that never
 * comes. */
static long sys_send(int fd, struct msghdr *msg, int flags)
{
	int tries = 0;
	long ret;

	do
		ret = sendmsg(fd, msg, flags | MSG_NOSIGNAL | MSG_DONTWAIT);
	while (retry(ret, &tries));
	return ret;
}

static long sys_recv(int fd, struct msghdr *msg)
{
	int tries = 0;
	long ret;

	do
		ret = recvmsg(fd, msg, MSG_DONTWAIT);
	while (retry(ret, &tries));
	return ret;
}

/* ---- opening a socket -------------------------------------------------- */

/* A socket of the module's in the given domain. */
static int own_socket(int domain, int type, int protocol, struct afalg_sock *s,
		      struct afalg_why *why)
{
	int fd, err;

	gen_setup();
	low_acquire();
	fd = sys_socket(domain, type, protocol);
	if (fd < 0) {
		err = errno;
		low_release();
		return why_set(why,
			       denied(err) ? AFALG_NO_AF_ALG : AFALG_TRANSIENT,
			       AFALG_CALL_SOCKET, err);
	}
	err = adopt(fd, domain, s) < 0 ? errno : 0;
	low_release();
	if (err != 0)
		return why_set(why, AFALG_TRANSIENT, AFALG_CALL_ADOPT, err);
	return 0;
}

/* An operation socket for the algorithm, bound to name (its kernel name
 * or a driver's), keyed if key is not NULL, and accepted; the bound
 * socket is closed at once (the operation socket keeps it alive). */
int _afalg_sock_open(struct afalg_sock *s, struct afalg_alg *alg,
		     const char *name, const void *key, size_t key_size,
		     struct afalg_why *why)
{
	struct afalg_sock tfm;
	int fd, err, ret;

	ret = own_socket(AF_ALG, SOCK_SEQPACKET, 0, &tfm, why);
	if (ret < 0)
		return ret;
	ret = 0;
	if (sys_bind(tfm.fd, _afalg_type(alg), name) < 0) {
		err = errno;
		ret = why_set(why,
			      transient(err) ? AFALG_TRANSIENT : AFALG_REFUSED,
			      AFALG_CALL_BIND, err);
	} else if (key != NULL &&
		   sys_setopt(tfm.fd, ALG_SET_KEY, key, key_size) < 0) {
		/* a context's key, or a device out of sessions (QEMU's
		 * virtio-crypto says EINVAL then): nothing of the algorithm */
		ret = why_set(why, AFALG_TRANSIENT, AFALG_CALL_SETKEY, errno);
	} else if (alg->family == AFALG_AEAD &&
		   sys_setopt(tfm.fd, ALG_SET_AEAD_AUTHSIZE, NULL,
			      alg->tag_size) < 0) {
		err = errno;
		ret = why_set(why,
			      transient(err) ? AFALG_TRANSIENT : AFALG_REFUSED,
			      AFALG_CALL_AUTHSIZE, err);
	} else {
		low_acquire();
		fd = sys_accept(tfm.fd);
		err = errno;
		if (fd >= 0)
			err = adopt(fd, AF_ALG, s) < 0 ? errno : 0;
		low_release();
		if (fd < 0)
			ret = why_set(why, AFALG_TRANSIENT, AFALG_CALL_ACCEPT,
				      err);
		else if (err != 0)
			ret = why_set(why, AFALG_TRANSIENT, AFALG_CALL_ADOPT,
				      err);
		else
			s->alg = alg;
	}
	s->why = (struct afalg_why){ AFALG_TRANSIENT, AFALG_CALL_RECV, 0 };
	_afalg_sock_close(&tfm);
	if (ret < 0)
		s->fd = -1;
	return ret;
}

/* A socket bound to name and closed: a template's instance exists after
 * it (the drivers of ccm(aes)). */
int _afalg_kernel_bind(struct afalg_alg *alg, const char *name,
		       struct afalg_why *why)
{
	struct afalg_sock s;
	int ret = 0, err;

	if (own_socket(AF_ALG, SOCK_SEQPACKET, 0, &s, why) < 0)
		return GNUTLS_E_INTERNAL_ERROR;
	if (sys_bind(s.fd, _afalg_type(alg), name) < 0) {
		err = errno;
		ret = why_set(why,
			      transient(err) ? AFALG_TRANSIENT : AFALG_REFUSED,
			      AFALG_CALL_BIND, err);
	}
	_afalg_sock_close(&s);
	return ret;
}

/* ---- requests ---------------------------------------------------------- */

/* Control messages of a cipher or AEAD request. */
struct request {
	struct msghdr msg;
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(uint32_t)) * 2 +
			    CMSG_SPACE(sizeof(struct af_alg_iv) +
				       AFALG_MAX_IV_SIZE)];
	} control;
};

/* Writes one control message at p; returns where the next one goes. */
static uint8_t *put_cmsg(uint8_t *p, int type, const void *data, size_t len)
{
	struct cmsghdr c = { .cmsg_len = CMSG_LEN(len),
			     .cmsg_level = SOL_ALG,
			     .cmsg_type = type };

	memcpy(p, &c, sizeof(c));
	memcpy(p + CMSG_LEN(0), data, len);
	return p + CMSG_SPACE(len);
}

static void request_init(struct request *r, int enc, const void *iv,
			 size_t iv_size, bool aead, size_t auth_size)
{
	uint32_t op = enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	uint32_t assoclen = auth_size;
	uint8_t aiv[sizeof(struct af_alg_iv) + AFALG_MAX_IV_SIZE];
	uint32_t ivlen = iv_size;
	uint8_t *p = r->control.buf;

	memset(r, 0, sizeof(*r));
	memcpy(aiv, &ivlen, sizeof(ivlen));
	memcpy(aiv + sizeof(ivlen), iv, iv_size);
	p = put_cmsg(p, ALG_SET_OP, &op, sizeof(op));
	p = put_cmsg(p, ALG_SET_IV, aiv, sizeof(ivlen) + iv_size);
	if (aead)
		p = put_cmsg(p, ALG_SET_AEAD_ASSOCLEN, &assoclen,
			     sizeof(assoclen));
	r->msg.msg_control = r->control.buf;
	r->msg.msg_controllen = p - r->control.buf;
}

static bool overlap(const void *a, size_t a_size, const void *b, size_t b_size)
{
	const uint8_t *x = a, *y = b;

	return a_size > 0 && b_size > 0 && x < y + b_size && y < x + a_size;
}

/* A request failed: recorded in the socket (the first use of an
 * algorithm reads it), counted and logged. */
static int request_failed(struct afalg_sock *s, enum afalg_call call, int err)
{
	s->why.refusal = transient(err) ? AFALG_TRANSIENT : AFALG_REFUSED;
	s->why.call = call;
	s->why.err = err;
	return _afalg_failed(s->alg, call, err);
}

/* The socket is still the module's, before a send or receive on it. */
static int check(struct afalg_sock *s)
{
	if (likely(_afalg_sock_ours(s)))
		return 0;
	return request_failed(s, AFALG_CALL_LOST, EBADF);
}

/* Sends a request and reads its whole result; a short read or write is a
 * failure (the socket is left with a partial request: the caller closes
 * it).  An AEAD tag that does not verify is GNUTLS_E_DECRYPTION_FAILED,
 * and leaves the socket ready for the next request.  The socket was
 * checked when the caller took it (_afalg_sock_get(), or opened it), and
 * is again before its result is read. */
static int transact(struct afalg_sock *s, struct msghdr *req, size_t in_size,
		    struct iovec *out, size_t out_count, size_t out_size)
{
	struct msghdr msg = { .msg_iov = out, .msg_iovlen = out_count };
	long ret;

	ret = sys_send(s->fd, req, 0);
	if (ret != (long)in_size)
		return request_failed(s, AFALG_CALL_SEND,
				      ret < 0 ? errno : EIO);
	if (check(s) < 0)
		return GNUTLS_E_INTERNAL_ERROR;
	ret = sys_recv(s->fd, &msg);
	if (ret < 0 && errno == EBADMSG) {
		/* not a failure of the socket's: a tag that does not verify */
		s->why = (struct afalg_why){ AFALG_REFUSED, AFALG_CALL_RECV,
					     EBADMSG };
		return GNUTLS_E_DECRYPTION_FAILED;
	}
	if (ret != (long)out_size || (msg.msg_flags & MSG_TRUNC))
		return request_failed(s, AFALG_CALL_RECV,
				      ret < 0 ? errno : EIO);
	return 0;
}

/* One cipher request of at most AFALG_MAX_REQUEST bytes.  On error, in
 * is unchanged: a result that would land on the input is read into a
 * bounce buffer first. */
int _afalg_kernel_cipher(struct afalg_sock *s, int enc, const void *iv,
			 size_t iv_size, const void *in, void *out, size_t size)
{
	struct iovec iv_in = { .iov_base = (void *)in, .iov_len = size };
	struct iovec iv_out = { .iov_base = out, .iov_len = size };
	uint8_t *bounce = NULL;
	struct request r;
	int ret;

	if (overlap(in, size, out, size)) {
		bounce = gnutls_malloc(size);
		if (bounce == NULL)
			return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
		iv_out.iov_base = bounce;
	}
	request_init(&r, enc, iv, iv_size, false, 0);
	r.msg.msg_iov = &iv_in;
	r.msg.msg_iovlen = 1;
	ret = transact(s, &r.msg, size, &iv_out, 1, size);
	if (bounce != NULL) {
		if (ret == 0)
			memcpy(out, bounce, size);
		gnutls_memset(bounce, 0, size);
		gnutls_free(bounce);
	}
	return ret;
}

/* One AEAD request.  The kernel reads AAD || input and writes AAD ||
 * output; the AAD it writes back lands in scratch space.  On error, the
 * input is unchanged and out holds no result. */
int _afalg_kernel_aead(struct afalg_sock *s, int enc, const void *iv,
		       size_t iv_size, const void *auth, size_t auth_size,
		       const void *in, size_t in_size, void *out,
		       size_t out_size)
{
	struct iovec src[2] = { { (void *)auth, auth_size },
				{ (void *)in, in_size } };
	struct iovec dst[2];
	uint8_t scratch[64], *buf = NULL;
	size_t buf_size = 0;
	struct request r;
	int ret;

	if (auth_size > sizeof(scratch) ||
	    overlap(out, out_size, in, in_size) ||
	    overlap(out, out_size, auth, auth_size)) {
		buf_size = auth_size + out_size;
		buf = gnutls_malloc(buf_size ? buf_size : 1);
		if (buf == NULL)
			return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
		dst[0] = (struct iovec){ buf, auth_size };
		dst[1] = (struct iovec){ buf + auth_size, out_size };
	} else {
		dst[0] = (struct iovec){ scratch, auth_size };
		dst[1] = (struct iovec){ out, out_size };
	}
	request_init(&r, enc, iv, iv_size, true, auth_size);
	r.msg.msg_iov = src;
	r.msg.msg_iovlen = 2;
	ret = transact(s, &r.msg, auth_size + in_size, dst, 2,
		       auth_size + out_size);
	/* (out may be NULL for a message without text) */
	if (buf != NULL) {
		if (ret == 0 && out_size > 0)
			memcpy(out, buf + auth_size, out_size);
		gnutls_memset(buf, 0, buf_size);
		gnutls_free(buf);
	} else if (ret < 0 && out_size > 0) {
		gnutls_memset(out, 0, out_size);
	}
	return ret;
}

/* The most one send of a hash message takes: well under what one system
 * call may write (MAX_RW_COUNT, 2 GiB less a page). */
#define HASH_SEND_MAX (1UL << 30)

/* A whole hash message, and its digest.  A short write is a failure:
 * the kernel that stopped short (out of memory mid-way) has ended the
 * message. */
int _afalg_kernel_hash(struct afalg_sock *s, const void *data, size_t size,
		       void *out, size_t out_size)
{
	struct iovec iov = { (void *)data, 0 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t left = size;
	long ret;

	do {
		/* (checked when taken, and before each further piece of a
		 * message over 1 GiB) */
		if (left < size && check(s) < 0)
			return GNUTLS_E_INTERNAL_ERROR;
		iov.iov_len = MIN(left, HASH_SEND_MAX);
		left -= iov.iov_len;
		ret = sys_send(s->fd, &msg, left > 0 ? MSG_MORE : 0);
		if (ret != (long)iov.iov_len)
			return request_failed(s, AFALG_CALL_SEND,
					      ret < 0 ? errno : EIO);
		if (left > 0)
			iov.iov_base = (uint8_t *)iov.iov_base + ret;
	} while (left > 0);

	if (check(s) < 0)
		return GNUTLS_E_INTERNAL_ERROR;
	iov = (struct iovec){ out, out_size };
	ret = sys_recv(s->fd, &msg);
	if (ret != (long)out_size || (msg.msg_flags & MSG_TRUNC))
		return request_failed(s, AFALG_CALL_RECV,
				      ret < 0 ? errno : EIO);
	return 0;
}

/* A one-shot MAC or digest, on a socket of its own: the caller's buffer
 * is there for software if the kernel fails. */
int _afalg_kernel_hash_fast(struct afalg_alg *alg, const void *key,
			    size_t key_size, const void *text, size_t size,
			    void *out)
{
	uint8_t digest[AFALG_MAX_OUTPUT_SIZE];
	struct afalg_sock s;
	int ret;

	AFALG_SOCK_INIT(&s);
	/* a MAC is keyed even with an empty key */
	if (alg->family == AFALG_MAC && key == NULL)
		key = "";
	ret = _afalg_sock_get(&s, alg, alg->family == AFALG_MAC ? key : NULL,
			      key_size);
	if (ret < 0)
		return ret;
	ret = _afalg_kernel_hash(&s, text, size, digest, alg->tag_size);
	if (ret == 0)
		memcpy(out, digest, alg->tag_size);
	_afalg_sock_close(&s);
	gnutls_memset(digest, 0, sizeof(digest));
	return ret;
}

/* ---- what the kernel has ---------------------------------------------- */

/* Asks the kernel's crypto netlink interface (crypto_user) for an
 * implementation: by its exact driver name, or by its algorithm's name
 * (the one of highest priority).  0 and impl filled; or -ENOENT, the
 * kernel has none of that name now; or another -errno, the interface
 * cannot say (absent, or refused). */
int _afalg_kernel_lookup(const char *name, bool by_driver,
			 struct afalg_impl *impl)
{
	struct {
		struct nlmsghdr h;
		struct crypto_user_alg a;
	} req = { .h = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = CRYPTO_MSG_GETALG,
			 .nlmsg_flags = NLM_F_REQUEST } };
	uint32_t reply[1024]; /* aligned for the header */
	const struct nlmsghdr *h = (const struct nlmsghdr *)reply;
	const struct crypto_user_alg *got = NLMSG_DATA(h);
	const struct nlmsgerr *e = NLMSG_DATA(h);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct afalg_sock s;
	struct afalg_why why;
	long n = -1;
	int ret;

	snprintf(by_driver ? req.a.cru_driver_name : req.a.cru_name,
		 sizeof(req.a.cru_name), "%s", name);
	if (own_socket(AF_NETLINK, SOCK_RAW, NETLINK_CRYPTO, &s, &why) < 0)
		return -why.err;
	if (sendto(s.fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) == sizeof(req) &&
	    _afalg_sock_ours(&s))
		n = recv(s.fd, reply, sizeof(reply), MSG_DONTWAIT);
	ret = n < 0 ? -errno : 0;
	_afalg_sock_close(&s);
	if (ret < 0)
		return ret;
	if (n >= (long)NLMSG_LENGTH(sizeof(*e)) && h->nlmsg_type == NLMSG_ERROR)
		return e->error < 0 ? e->error : -EIO;
	if (n < (long)NLMSG_LENGTH(sizeof(*got)) ||
	    h->nlmsg_type != CRYPTO_MSG_GETALG)
		return -EIO;
	snprintf(impl->name, sizeof(impl->name), "%.*s",
		 (int)sizeof(got->cru_name), got->cru_name);
	snprintf(impl->driver, sizeof(impl->driver), "%.*s",
		 (int)sizeof(got->cru_driver_name), got->cru_driver_name);
	impl->flags = got->cru_flags;
	return 0;
}

/* A number from a file of /proc or /sys, or -1. */
static long read_number(const char *path)
{
	char buf[32];
	long n, v = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		if (sscanf(buf, "%ld", &v) != 1)
			v = -1;
	}
	return v;
}

/* Linux 7.3's allowlist of what AF_ALG binds (0: none, 1: the list, 2:
 * no AF_ALG), or -1 where the kernel has none. */
long _afalg_kernel_restrict(void)
{
	return read_number("/proc/sys/crypto/af_alg_restrict");
}

/* Whether the module that gives AF_ALG a type is loaded (0 or 1), or -1
 * where sysfs cannot say. */
int _afalg_kernel_type_loaded(const char *type)
{
	char path[64];
	struct stat st;

	if (stat("/sys/module/af_alg", &st) < 0)
		return -1;
	snprintf(path, sizeof(path), "/sys/module/algif_%s", type);
	return stat(path, &st) == 0;
}
