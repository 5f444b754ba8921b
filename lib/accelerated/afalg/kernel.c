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
 * socket interface.  Every socket is opened close-on-exec (socket() and
 * accept4() with SOCK_CLOEXEC), so none can reach a program the
 * application executes, whichever thread forks.
 *
 * A kernel context is a single operation socket: the transformation
 * socket it was accepted from holds the key and is closed at once (the
 * operation socket keeps it alive), so a context costs one descriptor.
 * Digests accept from one unkeyed transformation socket per algorithm.
 *
 * Every system call goes through a seam that tests can make fail
 * (_gnutls_afalg_fault()). */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "locks.h"
#include "atfork.h"
#include <accelerated/afalg.h>

#include <errno.h>
#include <linux/if_alg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

/* The fault seam.  A test names one call site, the errno to fail it with
 * (or a short read or write), how many calls to let through first and
 * how many to fail (0: all). */
enum afalg_call {
	CALL_SOCKET,
	CALL_BIND,
	CALL_ACCEPT,
	CALL_SETKEY,
	CALL_SETOPT,
	CALL_SEND,
	CALL_RECV,
	N_CALLS
};

static const char *const call_names[N_CALLS] = {
	"socket", "bind", "accept", "setkey", "setopt", "send", "recv",
};

#define FAULT_SHORT (-1)
#define FAULT_PASS (-2) /* counts the calls, fails none */
#define FAULT_WAIT (-3) /* holds the call until the fault is ended */

static const struct {
	const char *name;
	int err;
} fault_errors[] = {
	{ "ENOMEM", ENOMEM },
	{ "EINVAL", EINVAL },
	{ "EBUSY", EBUSY },
	{ "EAGAIN", EAGAIN },
	{ "EINTR", EINTR },
	{ "EMFILE", EMFILE },
	{ "EPERM", EPERM },
	{ "EBADMSG", EBADMSG },
	{ "ENOKEY", ENOKEY },
	{ "EIO", EIO },
	{ "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "SHORT", FAULT_SHORT },
	{ "PASS", FAULT_PASS },
	{ "WAIT", FAULT_WAIT },
};

static struct {
	bool active;
	enum afalg_call call;
	int err;
	unsigned skip;
	unsigned count;
	unsigned injected;
} fault;

/* A held call waits for another thread to end the fault, then is made. */
static int fault_wait(void)
{
	const struct timespec ms = { 0, 1000000 };

	while (__atomic_load_n(&fault.active, __ATOMIC_ACQUIRE))
		nanosleep(&ms, NULL);
	return 0;
}

/* Returns the errno the call must fail with, FAULT_SHORT, or 0. */
static int fault_check(enum afalg_call call)
{
	if (likely(!__atomic_load_n(&fault.active, __ATOMIC_ACQUIRE)))
		return 0;
	if (fault.call != call)
		return 0;
	if (fault.skip > 0) {
		fault.skip--;
		return 0;
	}
	if (fault.count > 0 && fault.injected >= fault.count)
		return 0;
	__atomic_add_fetch(&fault.injected, 1, __ATOMIC_RELEASE);
	if (fault.err == FAULT_WAIT)
		return fault_wait();
	return fault.err;
}

/* Descriptors: at most a quarter of RLIMIT_NOFILE, so that the
 * application keeps the rest; beyond it, contexts use software.  The
 * limit is read when the first descriptor is opened, not at start-up,
 * and again whenever the cap is reached (the application may have raised
 * it since), outside the lock: no system call is made with a lock held
 * (see digest_lock).  A lock, not atomics: fd_cap is written while other
 * threads read it. */
static unsigned fd_count;
static unsigned fd_cap;
GNUTLS_STATIC_MUTEX(fd_lock);

static unsigned fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1U << 20))
		return 1U << 18;
	return rl.rlim_cur / 4;
}

/* A descriptor under the cap, with a new cap first if limit is not 0;
 * 1 if reserved, 0 if at the cap, negative if the lock failed. */
static int fd_take(unsigned limit)
{
	bool ok;

	if (gnutls_static_mutex_lock(&fd_lock) < 0)
		return gnutls_assert_val(GNUTLS_E_LOCKING_ERROR);
	if (limit > 0)
		fd_cap = limit;
	ok = fd_count < fd_cap;
	if (ok)
		fd_count++;
	gnutls_static_mutex_unlock(&fd_lock);
	return ok;
}

static bool fd_reserve(void)
{
	int ret = fd_take(0);

	if (ret == 0)
		ret = fd_take(fd_limit());
	return ret > 0;
}

/* A descriptor over the cap: a copy of a kernel message, which has no
 * other home (software does not have the message). */
static bool fd_reserve_over_cap(void)
{
	if (gnutls_static_mutex_lock(&fd_lock) < 0)
		return false;
	fd_count++;
	gnutls_static_mutex_unlock(&fd_lock);
	return true;
}

static void fd_release(void)
{
	if (gnutls_static_mutex_lock(&fd_lock) < 0)
		return;
	fd_count--;
	gnutls_static_mutex_unlock(&fd_lock);
}

/* Failures.  Running out of descriptors is the process's state, not the
 * kernel's, and an unknown algorithm is remembered per row; a kernel
 * without AF_ALG (a cache let the module register without asking) turns
 * the kernel off at once, since no retry can succeed; anything else
 * counts, and AFALG_MAX_FAILURES in a row turn the kernel off. */
static unsigned failures;
static bool kernel_off;
static bool no_af_alg;

/* Returns whether this is the first time it is learnt. */
static bool af_alg_missing(void)
{
	__atomic_store_n(&kernel_off, true, __ATOMIC_RELAXED);
	return !__atomic_exchange_n(&no_af_alg, true, __ATOMIC_RELAXED);
}

bool _afalg_kernel_missing(void)
{
	return __atomic_load_n(&no_af_alg, __ATOMIC_RELAXED);
}

void _afalg_kernel_failed(const char *what, int err)
{
	_gnutls_debug_log("afalg: %s failed: %s\n", what, strerror(err));
	if (err == EMFILE || err == ENFILE)
		return;
	if (err == EAFNOSUPPORT) {
		if (af_alg_missing())
			_gnutls_debug_log("afalg: AF_ALG is not available: "
					  "kernel path off for this process\n");
		return;
	}
	if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) ==
	    AFALG_MAX_FAILURES) {
		__atomic_store_n(&kernel_off, true, __ATOMIC_RELAXED);
		_gnutls_debug_log(
			"afalg: %u kernel failures in a row: kernel path off for this process\n",
			AFALG_MAX_FAILURES);
	}
}

void _afalg_kernel_ok(void)
{
	if (unlikely(__atomic_load_n(&failures, __ATOMIC_RELAXED) != 0))
		__atomic_store_n(&failures, 0, __ATOMIC_RELAXED);
}

bool _afalg_kernel_usable(const struct afalg_alg *alg)
{
	return !__atomic_load_n(&kernel_off, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&alg->absent, __ATOMIC_RELAXED);
}

static int sys_error(const char *what, int err)
{
	_afalg_kernel_failed(what, err);
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

/* The system calls, each behind the seam.  EINTR is retried a few times:
 * a call interrupted before it did anything can be made again. */
#define RETRIES 3

static bool fault_fail(enum afalg_call call)
{
	int err = fault_check(call);

	if (err <= 0)
		return false;
	errno = err;
	return true;
}

static bool retry(long ret, int *tries)
{
	return ret < 0 && errno == EINTR && ++*tries < RETRIES;
}

static int sys_socket(void)
{
	int ret, tries = 0;

	do
		ret = fault_fail(CALL_SOCKET) ?
			      -1 :
			      socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
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
		ret = fault_fail(CALL_BIND) ?
			      -1 :
			      bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	while (retry(ret, &tries));
	return ret;
}

static int sys_accept(int fd)
{
	int ret, tries = 0;

	do
		ret = fault_fail(CALL_ACCEPT) ?
			      -1 :
			      accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	while (retry(ret, &tries));
	return ret;
}

/* ALG_SET_KEY, or ALG_SET_AEAD_AUTHSIZE (whose value is the length) */
static int sys_setopt(enum afalg_call call, int fd, int opt, const void *val,
		      size_t size)
{
	int ret, tries = 0;

	do
		ret = fault_fail(call) ?
			      -1 :
			      setsockopt(fd, SOL_ALG, opt, val, size);
	while (retry(ret, &tries));
	return ret;
}

/* A short read or write, for the seam: the last byte is left out. */
static long shortened(long (*io)(int, struct msghdr *, int), int fd,
		      struct msghdr *msg, int flags)
{
	struct iovec *last = NULL;
	size_t i;
	long ret;

	for (i = 0; i < msg->msg_iovlen; i++)
		if (msg->msg_iov[i].iov_len > 0)
			last = &msg->msg_iov[i];
	if (last == NULL)
		return io(fd, msg, flags);
	last->iov_len--;
	ret = io(fd, msg, flags);
	last->iov_len++;
	return ret;
}

static long do_sendmsg(int fd, struct msghdr *msg, int flags)
{
	return sendmsg(fd, msg, flags);
}

static long do_recvmsg(int fd, struct msghdr *msg, int flags)
{
	return recvmsg(fd, msg, flags);
}

static long sys_io(enum afalg_call call, int fd, struct msghdr *msg, int flags)
{
	long (*io)(int, struct msghdr *, int) = call == CALL_SEND ? do_sendmsg :
								    do_recvmsg;
	int err, tries = 0;
	long ret;

	do {
		err = fault_check(call);
		if (err == FAULT_SHORT)
			return shortened(io, fd, msg, flags);
		if (err > 0) {
			errno = err;
			ret = -1;
		} else {
			ret = io(fd, msg, flags);
		}
	} while (retry(ret, &tries));
	return ret;
}

void _afalg_kernel_close(int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	fd_release();
	*fd = -1;
}

/* A context's socket, opened in the process forkid tells: closed if
 * that is this one; in a child, forgotten instead.  The child may have
 * closed what it inherited and opened files of its own under the same
 * numbers; the socket, if still there, stays unused until the child
 * exits or executes a program (it is close-on-exec). */
void _afalg_kernel_drop(int *fd, unsigned forkid)
{
	if (*fd < 0)
		return;
	if (_gnutls_detect_fork(forkid)) {
		fd_release();
		*fd = -1;
		return;
	}
	_afalg_kernel_close(fd);
}

/* A socket bound to the algorithm.  An unknown algorithm (ENOENT) is
 * remembered, and not counted as a failure. */
static int bind_alg(struct afalg_alg *alg, int *tfm)
{
	static const char *const types[] = {
		[AFALG_CIPHER] = "skcipher",
		[AFALG_AEAD] = "aead",
		[AFALG_MAC] = "hash",
		[AFALG_DIGEST] = "hash",
	};
	int err;

	if (!fd_reserve())
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	*tfm = sys_socket();
	if (*tfm < 0) {
		err = errno;
		fd_release();
		return sys_error("socket", err);
	}
	if (sys_bind(*tfm, types[alg->family], alg->kname) < 0) {
		err = errno;
		_afalg_kernel_close(tfm);
		if (err == ENOENT) {
			__atomic_store_n(&alg->absent, true, __ATOMIC_RELAXED);
			_gnutls_debug_log("afalg: kernel has no %s\n",
					  alg->kname);
			return gnutls_assert_val(
				GNUTLS_E_UNIMPLEMENTED_FEATURE);
		}
		return sys_error(alg->kname, err);
	}
	if (unlikely(_gnutls_log_level >= 2) &&
	    !__atomic_exchange_n(&alg->announced, true, __ATOMIC_RELAXED)) {
		struct afalg_driver d;

		_afalg_kernel_driver(alg->kname, &d);
		_gnutls_debug_log("afalg: %s %s runs on %s (driver %s)\n",
				  types[alg->family], _afalg_label(alg),
				  alg->kname, d.name);
	}
	return 0;
}

static int accept_op(int from, int *op, bool over_cap)
{
	int err;

	if (!(over_cap ? fd_reserve_over_cap() : fd_reserve()))
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	*op = sys_accept(from);
	if (*op < 0) {
		err = errno;
		fd_release();
		return sys_error("accept", err);
	}
	return 0;
}

/* Digests: one unkeyed transformation socket per algorithm, shared by
 * all contexts.  Idle operation sockets of one-shot calls are kept in a
 * small pool per algorithm.  A child closes its parent's at the fork
 * (child_after_fork()) and opens its own.
 *
 * No system call is made with digest_lock held: every fork() waits for
 * it (_afalg_kernel_atfork()), and other threads for each other.
 * Sockets are taken out of a slot under the lock, and closed, bound or
 * accepted on after it.  The transformation socket is in its
 * slot from its bind() on, lent to one thread at a time for its accept()
 * (a thread that needs one meanwhile binds its own): a child forked
 * during that has no such thread, and takes the socket back.
 *
 * What only a call refers to (in its own variables: a socket between
 * socket() and its slot, a keyed context's transformation socket until
 * its accept(), one bound while the slot's is lent, a calibration's) is
 * not followed into a child forked during the call, like the call's
 * memory: the child keeps those few close-on-exec descriptors unused. */
#define POOL_SIZE 2

struct digest_slot {
	bool ready; /* set up at the algorithm's first digest socket */
	bool lent; /* tfm is in a thread's accept() */
	int tfm;
	int pool[POOL_SIZE];
	unsigned pooled;
};

static struct digest_slot digest_slots[AFALG_MAX_ALGS];
GNUTLS_STATIC_MUTEX(digest_lock);

/* fork() while another thread holds fd_lock or digest_lock (held only
 * for a few loads and stores, but held) would leave the child a lock
 * that nothing releases: the forking thread takes both before fork() and
 * releases them after it, in parent and child.  No code holds one while
 * taking the other. */
static void locks_take(void)
{
	(void)gnutls_static_mutex_lock(&digest_lock);
	(void)gnutls_static_mutex_lock(&fd_lock);
}

static void locks_release(void)
{
	gnutls_static_mutex_unlock(&fd_lock);
	gnutls_static_mutex_unlock(&digest_lock);
}

static void close_held(int fd)
{
	close(fd);
	fd_count--;
}

/* In the child, with both locks held: the digests' sockets are the
 * parent's, and are closed now, while their numbers are certainly the
 * module's (once fork() returns, the child may close what it inherited
 * and open files of its own under them).  A transformation socket
 * another thread had on loan is closed too: no thread here has it. */
static void child_after_fork(void)
{
	struct digest_slot *slot;
	unsigned i;

	for (i = 0; i < AFALG_MAX_ALGS; i++) {
		slot = &digest_slots[i];
		if (!slot->ready)
			continue;
		while (slot->pooled > 0)
			close_held(slot->pool[--slot->pooled]);
		if (slot->tfm >= 0)
			close_held(slot->tfm);
		slot->tfm = -1;
		slot->lent = false;
	}
	locks_release();
}

/* Once per process (glibc forgets the handlers of a library that is
 * unloaded).  Without them a child would use its parent's pooled
 * sockets: the kernel path is off. */
void _afalg_kernel_atfork(void)
{
	static bool done;

	if (done)
		return;
	if (pthread_atfork(locks_take, locks_release, child_after_fork) == 0) {
		done = true;
		return;
	}
	__atomic_store_n(&kernel_off, true, __ATOMIC_RELAXED);
	_gnutls_debug_log("afalg: pthread_atfork() failed: kernel path off "
			  "for this process\n");
}

/* The algorithm's slot with digest_lock held, set up first if setup;
 * NULL if it cannot be locked, or is not set up and not to be. */
static struct digest_slot *lock_slot(const struct afalg_alg *alg, bool setup)
{
	struct digest_slot *slot = &digest_slots[alg - _afalg_algs];

	if (gnutls_static_mutex_lock(&digest_lock) < 0)
		return NULL;
	if (!slot->ready && setup) {
		slot->tfm = -1;
		slot->lent = false;
		slot->pooled = 0;
		slot->ready = true;
	}
	if (slot->ready)
		return slot;
	gnutls_static_mutex_unlock(&digest_lock);
	return NULL;
}

/* The slot's idle sockets move to out (POOL_SIZE of them at most); the
 * slot is locked. */
static unsigned pool_take(struct digest_slot *slot, int *out)
{
	unsigned n = slot->pooled;

	memcpy(out, slot->pool, n * sizeof(*out));
	slot->pooled = 0;
	return n;
}

static void close_all(int *fds, unsigned n)
{
	while (n > 0)
		_afalg_kernel_close(&fds[--n]);
}

/* A transformation socket a thread has bound becomes its slot's, lent
 * to the thread, if the slot has none. */
static void slot_adopt_tfm(const struct afalg_alg *alg, int tfm)
{
	struct digest_slot *slot = lock_slot(alg, false);

	if (slot == NULL)
		return;
	if (slot->tfm < 0) {
		slot->tfm = tfm;
		slot->lent = true;
	}
	gnutls_static_mutex_unlock(&digest_lock);
}

/* A transformation socket after its accept(): if it is the slot's, its
 * loan ends (and if not keep, it leaves the slot); another goes to an
 * empty slot if keep.  Else it is closed: another thread's is in the
 * slot, or the slot was emptied (gnutls_global_deinit()). */
static void slot_return_tfm(const struct afalg_alg *alg, int *tfm, bool keep)
{
	struct digest_slot *slot = lock_slot(alg, false);

	if (slot != NULL) {
		if (slot->tfm == *tfm) {
			slot->lent = false;
			if (!keep)
				slot->tfm = -1;
		} else if (slot->tfm < 0 && keep) {
			slot->tfm = *tfm;
		}
		if (slot->tfm == *tfm)
			*tfm = -1;
		gnutls_static_mutex_unlock(&digest_lock);
	}
	_afalg_kernel_close(tfm);
}

/* An operation socket of a digest: one from the pool if reuse, else a
 * new one (a context's), accepted on the slot's transformation socket
 * (or on one of this call's own while another thread has that). */
static int pool_get(struct afalg_alg *alg, bool reuse, int *op)
{
	struct digest_slot *slot = lock_slot(alg, true);
	int tfm = -1, ret;

	*op = -1;
	if (slot == NULL)
		return gnutls_assert_val(GNUTLS_E_LOCKING_ERROR);
	if (reuse && slot->pooled > 0) {
		*op = slot->pool[--slot->pooled];
	} else if (!slot->lent) {
		tfm = slot->tfm;
		slot->lent = tfm >= 0;
	}
	gnutls_static_mutex_unlock(&digest_lock);
	if (*op >= 0)
		return 0;

	ret = 0;
	if (tfm < 0) {
		ret = bind_alg(alg, &tfm);
		if (ret == 0)
			slot_adopt_tfm(alg, tfm);
	}
	if (ret == 0)
		ret = accept_op(tfm, op, false);
	if (tfm >= 0) /* on failure, bind again next time */
		slot_return_tfm(alg, &tfm, ret == 0);
	return ret;
}

/* A one-shot call's operation socket goes back to the pool; after
 * gnutls_global_deinit(), which empties the pools, it is closed. */
static void pool_put(struct afalg_alg *alg, int *op)
{
	struct digest_slot *slot = lock_slot(alg, false);

	if (slot == NULL) {
		_afalg_kernel_close(op);
		return;
	}
	if (slot->pooled < POOL_SIZE) {
		slot->pool[slot->pooled++] = *op;
		*op = -1;
	}
	gnutls_static_mutex_unlock(&digest_lock);
	_afalg_kernel_close(op);
}

/* A keyed operation socket: bind, key, accept, and close the
 * transformation socket (the operation socket keeps it alive). */
int _afalg_kernel_open(struct afalg_alg *alg, const void *key, size_t key_size,
		       int *op)
{
	int tfm, ret, err;

	*op = -1;
	if (alg->family == AFALG_DIGEST)
		return pool_get(alg, false, op);

	ret = bind_alg(alg, &tfm);
	if (ret < 0)
		return ret;
	if (sys_setopt(CALL_SETKEY, tfm, ALG_SET_KEY, key, key_size) < 0) {
		err = errno;
		ret = sys_error("setkey", err);
		goto out;
	}
	if (alg->family == AFALG_AEAD &&
	    sys_setopt(CALL_SETOPT, tfm, ALG_SET_AEAD_AUTHSIZE, NULL,
		       alg->tag_size) < 0) {
		err = errno;
		ret = sys_error("setting the tag size", err);
		goto out;
	}
	ret = accept_op(tfm, op, false);
out:
	_afalg_kernel_close(&tfm);
	return ret;
}

/* Binds the algorithm once, so that the kernel instantiates it (a
 * template such as ccm(aes) appears in /proc/crypto only then). */
int _afalg_kernel_probe(struct afalg_alg *alg)
{
	int tfm, ret;

	ret = bind_alg(alg, &tfm);
	if (ret == 0)
		_afalg_kernel_close(&tfm);
	return ret;
}

/* accept() on an operation socket clones its state (a hash message). */
int _afalg_kernel_clone(int fd, int *copy)
{
	return accept_op(fd, copy, false);
}

/* A clone that may go over the module's cap (which keeps descriptors
 * for the application): a copy of a context (gnutls_hash_copy()), which
 * refused fails the caller, or a checkpoint that replaces another. */
int _afalg_kernel_copy(int fd, int *copy)
{
	return accept_op(fd, copy, true);
}

/* What tells one of the module's sockets from a file opened later under
 * its number: its inode (0: unknown, matches nothing). */
unsigned long _afalg_kernel_id(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return 0;
	return st.st_ino;
}

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

/* Sends a request and reads its whole result into iov; a short read or
 * write is a failure (the socket is left with a partial request: the
 * caller closes it). */
static int transact(int op, struct request *r, struct iovec *in,
		    size_t in_count, size_t in_size, struct iovec *out,
		    size_t out_count, size_t out_size)
{
	struct msghdr msg = { .msg_iov = out, .msg_iovlen = out_count };
	long ret;

	r->msg.msg_iov = in;
	r->msg.msg_iovlen = in_count;
	/* not waiting for room: a send buffer smaller than the request
	 * (net.core.wmem_default) would wait for a read that never comes */
	ret = sys_io(CALL_SEND, op, &r->msg, MSG_DONTWAIT);
	if (ret != (long)in_size)
		return sys_error("sendmsg", ret < 0 ? errno : EIO);
	ret = sys_io(CALL_RECV, op, &msg, 0);
	if (ret < 0 && errno == EBADMSG)
		return GNUTLS_E_DECRYPTION_FAILED;
	if (ret != (long)out_size)
		return sys_error("recvmsg", ret < 0 ? errno : EIO);
	_afalg_kernel_ok();
	return 0;
}

/* One cipher request of at most AFALG_MAX_REQUEST bytes.  On error,
 * in is unchanged: a result that would land on the input is read into
 * a bounce buffer first. */
int _afalg_kernel_cipher(int op, int enc, const void *iv, size_t iv_size,
			 const void *in, void *out, size_t size)
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
	ret = transact(op, &r, &iv_in, 1, size, &iv_out, 1, size);
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
int _afalg_kernel_aead(int op, int enc, const void *iv, size_t iv_size,
		       const void *auth, size_t auth_size, const void *in,
		       size_t in_size, void *out, size_t out_size)
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
	ret = transact(op, &r, src, 2, auth_size + in_size, dst, 2,
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

/* Adds data to the hash message of op.  A short write is a failure: the
 * kernel that stopped short (out of memory mid-way) has ended the
 * message, and would start a new one at the next send. */
int _afalg_kernel_hash(int op, const void *data, size_t size)
{
	struct iovec iov = { (void *)data, 0 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	long ret;

	while (size > 0) {
		iov.iov_len = MIN(size, HASH_SEND_MAX);
		ret = sys_io(CALL_SEND, op, &msg, MSG_MORE);
		if (ret != (long)iov.iov_len)
			return sys_error("hash update", ret < 0 ? errno : EIO);
		iov.iov_base = (uint8_t *)iov.iov_base + ret;
		size -= ret;
	}
	return 0;
}

/* Finishes the message of op; the socket is then ready for the next. */
int _afalg_kernel_digest(int op, void *out, size_t size)
{
	struct iovec iov = { out, size };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	long ret;

	ret = sys_io(CALL_RECV, op, &msg, 0);
	if (ret != (long)size)
		return sys_error("hash output", ret < 0 ? errno : EIO);
	_afalg_kernel_ok();
	return 0;
}

/* A one-shot MAC or digest.  Digests reuse pooled sockets. */
int _afalg_kernel_hash_fast(struct afalg_alg *alg, const void *key,
			    size_t key_size, const void *text, size_t size,
			    void *out)
{
	uint8_t digest[AFALG_MAX_OUTPUT_SIZE];
	int op, ret;

	if (alg->family == AFALG_DIGEST)
		ret = pool_get(alg, true, &op);
	else
		ret = _afalg_kernel_open(alg, key, key_size, &op);
	if (ret < 0)
		return ret;
	ret = _afalg_kernel_hash(op, text, size);
	if (ret == 0)
		ret = _afalg_kernel_digest(op, digest, alg->tag_size);
	if (ret == 0) {
		memcpy(out, digest, alg->tag_size);
		if (alg->family == AFALG_DIGEST)
			pool_put(alg, &op);
	}
	_afalg_kernel_close(&op);
	gnutls_memset(digest, 0, sizeof(digest));
	return ret;
}

/* One socket() call tells whether the kernel has AF_ALG at all. */
bool _afalg_kernel_present(void)
{
	int fd = sys_socket();
	int err = errno;

	if (fd < 0) {
		_gnutls_debug_log("afalg: AF_ALG is not available: %s\n",
				  strerror(err));
		if (err == EAFNOSUPPORT)
			af_alg_missing();
		return false;
	}
	close(fd);
	return true;
}

/* Closes what the module keeps between operations, so that no
 * descriptor outlives gnutls_global_deinit(); with none open (most
 * processes) there is nothing to look at. */
void _afalg_kernel_deinit(void)
{
	int fds[POOL_SIZE + 1];
	unsigned i, n;

	/* no lock to look: gnutls_global_deinit() runs when no other
	 * thread uses the library, and most processes never open one */
	if (__atomic_load_n(&fd_count, __ATOMIC_RELAXED) == 0)
		return;
	for (i = 0; i < _afalg_algs_size; i++) {
		struct digest_slot *slot = lock_slot(&_afalg_algs[i], false);

		if (slot == NULL)
			continue;
		n = pool_take(slot, fds);
		if (!slot->lent) /* else its thread closes it */
			fds[n++] = slot->tfm;
		slot->tfm = -1;
		slot->ready = false;
		gnutls_static_mutex_unlock(&digest_lock);
		close_all(fds, n);
	}
}

/* A library unloaded without the application's last
 * gnutls_global_deinit() (not required since GnuTLS 3.3: its destructor
 * then only drops a reference) would leave what the module keeps open
 * in the process. */
static void __attribute__((destructor)) kernel_unload(void)
{
	_afalg_kernel_deinit();
}

/* Test interface: "CALL:ERRNO[:SKIP[:COUNT]]" makes the SKIP+1st call
 * to CALL fail with ERRNO, and the COUNT-1 calls after it (COUNT 0: all
 * of them); ERRNO "SHORT" makes a read or write short by a byte,
 * "PASS" only counts the calls, and "WAIT" holds the calls (in the
 * thread that makes them) until another thread ends the fault.  NULL or
 * "" ends it; "?" only returns the count.  Setting or ending a fault
 * also resets the failure count and turns the kernel path back on, so
 * that cases do not depend on each other.  Returns the number of faults
 * injected since the last call, or a negative error code for a bad
 * specification. */
int _gnutls_afalg_fault(const char *spec)
{
	char call[16], err[16];
	unsigned skip = 0, count = 1, i;
	int n, injected = __atomic_load_n(&fault.injected, __ATOMIC_ACQUIRE);

	if (spec != NULL && strcmp(spec, "?") == 0)
		return injected;

	__atomic_store_n(&fault.active, false, __ATOMIC_RELEASE);
	fault.injected = 0;
	__atomic_store_n(&failures, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&kernel_off, false, __ATOMIC_RELAXED);
	__atomic_store_n(&no_af_alg, false, __ATOMIC_RELAXED);
	if (spec == NULL || *spec == 0)
		return injected;

	n = sscanf(spec, "%15[a-z]:%15[A-Z]:%u:%u", call, err, &skip, &count);
	if (n < 2)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	for (i = 0; i < N_CALLS && strcmp(call, call_names[i]) != 0; i++)
		;
	if (i == N_CALLS)
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	fault.call = i;
	for (i = 0; i < sizeof(fault_errors) / sizeof(fault_errors[0]) &&
		    strcmp(err, fault_errors[i].name) != 0;
	     i++)
		;
	if (i == sizeof(fault_errors) / sizeof(fault_errors[0]))
		return gnutls_assert_val(GNUTLS_E_INVALID_REQUEST);
	fault.err = fault_errors[i].err;
	if (fault.err == FAULT_PASS && n < 4)
		count = 0;
	fault.skip = skip;
	fault.count = count;
	__atomic_store_n(&fault.active, true, __ATOMIC_RELEASE);
	return injected;
}
