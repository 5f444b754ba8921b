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
 * socket interface.
 *
 * A kernel context is one operation socket, accepted from a socket bound
 * to the algorithm (and keyed), which is closed at once.  A context
 * keeps its socket between operations, and uses it only while it is
 * provably the module's: opened in this process (GnuTLS's fork
 * detection), and still the same socket under its number (its inode,
 * checked before every request).  An application may close descriptors
 * it does not know of and open others under their numbers; the module
 * then forgets the number instead of writing to it or closing it.
 *
 * No state lives only in the kernel: a request carries its IV, and a
 * hash message is sent whole by its caller, who keeps it.  So a socket
 * that fails or is lost costs a new one, or software, never an answer.
 *
 * Sockets are opened close-on-exec, and sends never raise SIGPIPE. */

#include "config.h"
#include "afalg-int.h"
#include "errors.h"
#include "atfork.h"

#include <errno.h>
#include <linux/cryptouser.h>
#include <linux/if_alg.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

/* No AF_ALG in this kernel: no retry can succeed. */
static DEF_ATOMIC_INT(no_af_alg);

bool _afalg_kernel_usable(struct afalg_alg *alg)
{
	return gnutls_atomic_val(&no_af_alg) == 0 &&
	       gnutls_atomic_val(&alg->absent) == 0;
}

static int sys_error(const char *what, int err)
{
	_gnutls_debug_log("afalg: %s failed: %s\n", what, strerror(err));
	if (err == EAFNOSUPPORT && gnutls_atomic_val(&no_af_alg) == 0) {
		gnutls_atomic_increment(&no_af_alg);
		_gnutls_debug_log("afalg: the kernel has no AF_ALG: kernel "
				  "path off for this process\n");
	}
	return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
}

/* The system calls.  EINTR is retried a few times: a call interrupted
 * before it did anything can be made again.  (Tests make these calls
 * fail by interposing the C library's functions: the module has no hook
 * of its own.) */
#define RETRIES 3

static bool retry(long ret, int *tries)
{
	return ret < 0 && errno == EINTR && ++*tries < RETRIES;
}

static int sys_socket(void)
{
	int ret, tries = 0;

	do
		ret = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
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

/* Never SIGPIPE: a socket closed under the module is not the
 * application's concern. */
static long sys_send(int fd, struct msghdr *msg, int flags)
{
	int tries = 0;
	long ret;

	do
		ret = sendmsg(fd, msg, flags | MSG_NOSIGNAL);
	while (retry(ret, &tries));
	return ret;
}

static long sys_recv(int fd, struct msghdr *msg)
{
	int tries = 0;
	long ret;

	do
		ret = recvmsg(fd, msg, 0);
	while (retry(ret, &tries));
	return ret;
}

/* Descriptors: at most a quarter of RLIMIT_NOFILE, so that the
 * application keeps the rest; beyond it, contexts use software.  Two
 * threads may both take the last one: the cap is the module's manners,
 * not a limit of the kernel's. */
static DEF_ATOMIC_INT(fd_count);

static bool fd_reserve(void)
{
	struct rlimit rl;
	rlim_t cap = 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		cap = rl.rlim_cur == RLIM_INFINITY ? (1U << 18) :
						     rl.rlim_cur / 4;
	if (gnutls_atomic_val(&fd_count) >= cap)
		return false;
	gnutls_atomic_increment(&fd_count);
	return true;
}

static void fd_close(int fd)
{
	close(fd);
	gnutls_atomic_decrement(&fd_count);
}

/* A socket bound to the algorithm (by its driver's name where the
 * settings name one), keyed if key is not NULL.  An unknown algorithm
 * (ENOENT: a driver named in the settings that is gone, or a template
 * the kernel lacks) is remembered for the process. */
static int bind_alg(struct afalg_alg *alg, const void *key, size_t key_size,
		    int *tfm)
{
	static const char *const types[] = {
		[AFALG_CIPHER] = "skcipher",
		[AFALG_AEAD] = "aead",
		[AFALG_MAC] = "hash",
		[AFALG_DIGEST] = "hash",
	};
	const char *name = alg->driver[0] ? alg->driver : alg->kname;
	int err;

	if (!fd_reserve())
		return gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	*tfm = sys_socket();
	if (*tfm < 0) {
		err = errno;
		gnutls_atomic_decrement(&fd_count);
		return sys_error("socket", err);
	}
	if (sys_bind(*tfm, types[alg->family], name) < 0) {
		err = errno;
		fd_close(*tfm);
		if (err != ENOENT)
			return sys_error(name, err);
		if (gnutls_atomic_val(&alg->absent) == 0) {
			gnutls_atomic_increment(&alg->absent);
			_gnutls_debug_log("afalg: the kernel has no %s: %s "
					  "in software\n",
					  name, alg->label);
		}
		return gnutls_assert_val(GNUTLS_E_UNIMPLEMENTED_FEATURE);
	}
	if (key != NULL && sys_setopt(*tfm, ALG_SET_KEY, key, key_size) < 0) {
		err = errno;
		fd_close(*tfm);
		return sys_error("setkey", err);
	}
	if (alg->family == AFALG_AEAD &&
	    sys_setopt(*tfm, ALG_SET_AEAD_AUTHSIZE, NULL, alg->tag_size) < 0) {
		err = errno;
		fd_close(*tfm);
		return sys_error("setting the tag size", err);
	}
	return 0;
}

/* An operation socket: bound, keyed, accepted; the transformation socket
 * is closed at once (the operation socket keeps it alive). */
static int open_op(struct afalg_alg *alg, const void *key, size_t key_size,
		   int *op)
{
	int tfm, err, ret;

	ret = bind_alg(alg, key, key_size, &tfm);
	if (ret < 0)
		return ret;
	ret = 0;
	if (!fd_reserve()) {
		ret = gnutls_assert_val(GNUTLS_E_MEMORY_ERROR);
	} else if ((*op = sys_accept(tfm)) < 0) {
		err = errno;
		gnutls_atomic_decrement(&fd_count);
		ret = sys_error("accept", err);
	}
	fd_close(tfm);
	return ret;
}

/* Whether the socket under s->fd is still the one s was opened as. */
static bool same_socket(const struct afalg_sock *s)
{
	struct stat st;

	return fstat(s->fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == s->dev && st.st_ino == s->ino;
}

/* Closes the socket if it is still the module's; after fork() also the
 * parent's, inherited: closing it here leaves the parent's open.
 * Otherwise the number is another file's now (the module's socket was
 * closed by someone else): it is forgotten. */
void _afalg_sock_close(struct afalg_sock *s)
{
	if (s->fd < 0)
		return;
	if (same_socket(s))
		fd_close(s->fd);
	else
		gnutls_atomic_decrement(&fd_count);
	s->fd = -1;
}

/* The context's socket for an operation: its own, still open and of this
 * process, or a new one (key: the context's, NULL for a digest). */
int _afalg_sock_get(struct afalg_sock *s, struct afalg_alg *alg,
		    const void *key, size_t key_size)
{
	struct stat st;
	int ret;

	if (s->fd >= 0) {
		/* a child must not share its parent's socket: requests of
		 * the two processes would interleave */
		if (!_gnutls_detect_fork(s->forkid) && same_socket(s))
			return 0;
		_afalg_sock_close(s);
	}
	ret = open_op(alg, key, key_size, &s->fd);
	if (ret < 0)
		return ret;
	if (fstat(s->fd, &st) < 0) {
		fd_close(s->fd);
		s->fd = -1;
		return gnutls_assert_val(GNUTLS_E_INTERNAL_ERROR);
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->forkid = _gnutls_get_forkid();
	return 0;
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

/* Sends a request and reads its whole result; a short read or write is a
 * failure (the socket is left with a partial request: the caller closes
 * it).  An AEAD tag that does not verify is GNUTLS_E_DECRYPTION_FAILED,
 * and leaves the socket ready for the next request. */
static int transact(const struct afalg_sock *s, struct msghdr *req,
		    size_t in_size, struct iovec *out, size_t out_count,
		    size_t out_size)
{
	struct msghdr msg = { .msg_iov = out, .msg_iovlen = out_count };
	long ret;

	/* not waiting for room: a send buffer smaller than the request
	 * (net.core.wmem_default) would wait for a read that never comes */
	ret = sys_send(s->fd, req, MSG_DONTWAIT);
	if (ret != (long)in_size)
		return sys_error("sendmsg", ret < 0 ? errno : EIO);
	ret = sys_recv(s->fd, &msg);
	if (ret < 0 && errno == EBADMSG)
		return GNUTLS_E_DECRYPTION_FAILED;
	if (ret != (long)out_size)
		return sys_error("recvmsg", ret < 0 ? errno : EIO);
	return 0;
}

/* One cipher request of at most AFALG_MAX_REQUEST bytes.  On error, in
 * is unchanged: a result that would land on the input is read into a
 * bounce buffer first. */
int _afalg_kernel_cipher(const struct afalg_sock *s, int enc, const void *iv,
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
int _afalg_kernel_aead(const struct afalg_sock *s, int enc, const void *iv,
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
int _afalg_kernel_hash(const struct afalg_sock *s, const void *data,
		       size_t size, void *out, size_t out_size)
{
	struct iovec iov = { (void *)data, 0 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t left = size;
	long ret;

	do {
		iov.iov_len = MIN(left, HASH_SEND_MAX);
		left -= iov.iov_len;
		ret = sys_send(s->fd, &msg, left > 0 ? MSG_MORE : 0);
		if (ret != (long)iov.iov_len)
			return sys_error("hash update", ret < 0 ? errno : EIO);
		if (left > 0)
			iov.iov_base = (uint8_t *)iov.iov_base + ret;
	} while (left > 0);

	/* MSG_TRUNC: a longer digest than the algorithm's (a driver of
	 * another algorithm named in the settings) */
	iov = (struct iovec){ out, out_size };
	ret = sys_recv(s->fd, &msg);
	if (ret != (long)out_size || (msg.msg_flags & MSG_TRUNC))
		return sys_error("hash output", ret < 0 ? errno : EIO);
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

	/* a MAC is keyed even with an empty key */
	if (alg->family == AFALG_MAC && key == NULL)
		key = "";
	ret = open_op(alg, alg->family == AFALG_MAC ? key : NULL, key_size,
		      &s.fd);
	if (ret < 0)
		return ret;
	ret = _afalg_kernel_hash(&s, text, size, digest, alg->tag_size);
	if (ret == 0)
		memcpy(out, digest, alg->tag_size);
	fd_close(s.fd);
	gnutls_memset(digest, 0, sizeof(digest));
	return ret;
}

/* A driver named in the settings must implement the algorithm: AF_ALG
 * binds any driver of the type by its name (ctr-aes-aesni for cbc(aes)
 * would give other answers).  Asked at start-up of the kernel's crypto
 * netlink interface, after a bind that makes a template's instance; a
 * kernel that cannot say (no crypto_user) is taken at its word, with a
 * line in the log. */
bool _afalg_kernel_driver_ok(struct afalg_alg *alg)
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
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int fd;
	long n = -1;

	fd = sys_socket();
	if (fd < 0)
		return true;
	if (sys_bind(fd,
		     alg->family == AFALG_CIPHER ? "skcipher" :
		     alg->family == AFALG_AEAD	 ? "aead" :
						   "hash",
		     alg->driver) < 0) {
		close(fd); /* a driver that is not there: at first use */
		return true;
	}
	close(fd);
	snprintf(req.a.cru_driver_name, sizeof(req.a.cru_driver_name), "%s",
		 alg->driver);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO);
	if (fd >= 0) {
		if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel,
			   sizeof(kernel)) == sizeof(req))
			n = recv(fd, reply, sizeof(reply), 0);
		close(fd);
	}
	if (n < (long)NLMSG_LENGTH(sizeof(*got)) ||
	    h->nlmsg_type == NLMSG_ERROR) {
		_gnutls_debug_log("afalg: the kernel cannot say what %s "
				  "implements: taken as %s\n",
				  alg->driver, alg->kname);
		return true;
	}
	if (strncmp(got->cru_name, alg->kname, sizeof(got->cru_name)) == 0)
		return true;
	_gnutls_debug_log("afalg: %s implements %.64s, not %s: %s in "
			  "software\n",
			  alg->driver, got->cru_name, alg->kname, alg->label);
	return false;
}

/* One socket() call tells whether the kernel has AF_ALG at all. */
bool _afalg_kernel_present(void)
{
	int fd = sys_socket();
	int err = errno;

	if (fd < 0) {
		_gnutls_debug_log("afalg: AF_ALG is not available: %s\n",
				  strerror(err));
		return false;
	}
	close(fd);
	return true;
}
