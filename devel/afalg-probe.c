/*
 * devel/afalg-probe.c -- what a kernel's AF_ALG and NETLINK_CRYPTO do, in
 * plain system calls (no library but libc), for doc/kernels-2026.md.
 *
 *   gcc -O1 -Wall -o /tmp/afalg-probe devel/afalg-probe.c
 *   devel/vm-run /tmp/afalg-probe list          (VM_RUN_KERNEL=7.2 ...)
 *
 * Commands (one line of output per probe):
 *   list                 the fixed set below: bind by name, the driver the
 *                        kernel gave the socket, one block (or message)
 *                        against a known answer
 *   bind TYPE NAME       one of them, or any TYPE/NAME (no known answer:
 *                        bind, set a zero key where needed, accept only)
 *   getalg DRIVER        NETLINK_CRYPTO CRYPTO_MSG_GETALG with
 *                        cru_driver_name = DRIVER
 *   getalg-name NAME     the same with cru_name = NAME, driver name empty
 *   socket               socket(AF_ALG) alone
 *   netlink              socket(NETLINK_CRYPTO) alone (loads crypto_user)
 *   splice               cbc(aes) fed from a file through splice: zero-copy
 *                        or copied
 *
 * The driver is the /proc/crypto entry of NAME whose refcnt rose (or that
 * appeared) while the bound socket is open.  Errors are printed as errno
 * names.  Exit status 0 unless the program itself failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/cryptouser.h>
#include <linux/if_alg.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static void copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

static int unhex(const char *hex, unsigned char *out)
{
	int n = 0;
	for (; hex[0] && hex[1]; hex += 2)
		sscanf(hex, "%2hhx", &out[n++]);
	return n;
}

static void tohex(const unsigned char *p, int n, char *out)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* ---- /proc/crypto ------------------------------------------------------ */

struct entry {
	char driver[128], module[64], type[32], async[8];
	int priority, refcnt;
};

/* The entries whose name is NAME (at most MAX). */
static int proc_crypto(const char *name, struct entry *e, int max)
{
	FILE *f = fopen("/proc/crypto", "r");
	char line[256], key[64], val[192];
	int n = 0, match = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%63[^ :] : %191[^\n]", key, val) != 2)
			continue;
		if (!strcmp(key, "name")) {
			match = !strcmp(val, name) && n < max;
			if (match)
				memset(&e[n++], 0, sizeof *e);
			continue;
		}
		if (!match)
			continue;
		struct entry *c = &e[n - 1];
		if (!strcmp(key, "driver"))
			copy(c->driver, sizeof c->driver, val);
		else if (!strcmp(key, "module"))
			copy(c->module, sizeof c->module, val);
		else if (!strcmp(key, "type"))
			copy(c->type, sizeof c->type, val);
		else if (!strcmp(key, "async"))
			copy(c->async, sizeof c->async, val);
		else if (!strcmp(key, "priority"))
			c->priority = atoi(val);
		else if (!strcmp(key, "refcnt"))
			c->refcnt = atoi(val);
	}
	fclose(f);
	return n;
}

/* The entry of AFTER that BEFORE lacks or whose refcnt rose, else NULL. */
static const struct entry *chosen(const struct entry *before, int nb,
				  const struct entry *after, int na)
{
	const struct entry *best = NULL;
	for (int i = 0; i < na; i++) {
		int j, rose = 1;
		for (j = 0; j < nb; j++)
			if (!strcmp(after[i].driver, before[j].driver) &&
			    !strcmp(after[i].type, before[j].type)) {
				rose = after[i].refcnt > before[j].refcnt;
				break;
			}
		if (rose && (!best || after[i].priority > best->priority))
			best = &after[i];
	}
	return best;
}

/* ---- AF_ALG ------------------------------------------------------------ */

struct probe {
	const char *type, *name;
	const char *key, *iv;	/* hex */
	int authsize;		/* aead */
	const char *expect;	/* hex of the output (aead: without the AD) */
};

/* Known answers from Python's cryptography 48 (OpenSSL 3.0): key 00..0f
 * (or 00..1f), IV 10..1f, nonce 20..2b, AD 60..67, message 40..4f. */
#define K16 "000102030405060708090a0b0c0d0e0f"
#define K32 K16 "101112131415161718191a1b1c1d1e1f"
#define IV16 "101112131415161718191a1b1c1d1e1f"
#define N12 "202122232425262728292a2b"
#define MSG "404142434445464748494a4b4c4d4e4f"
#define AD "6061626364656667"

static const struct probe probes[] = {
	{ "skcipher", "cbc(aes)", K16, IV16, 0,
	  "34aa4a156d4930d99a622fed6a5d4a0c" },
	{ "skcipher", "xts(aes)", K32, IV16, 0,
	  "18a5f855221ef3a47dcd4da431fcea5f" },
	{ "aead", "gcm(aes)", K16, N12, 16,
	  "80b450e7c2b53f4ef301c59f3d82da314af97e9791b5c542fefc6352bc4e9e84" },
	/* ccm's IV: L' = 15 - 12 - 1 = 2, then the nonce, then the counter */
	{ "aead", "ccm(aes)", K16, "02" N12 "000000", 16,
	  "020b664731e03a1ed3ac4c4ea3e518b3d6dda408ba16c120606f78e35735e542" },
	{ "aead", "rfc7539(chacha20,poly1305)", K32, N12, 16,
	  "33a6ca3f55aaba7dd38ce7830572c1f716b51aadfdb475eea40f9531b56283b0" },
	{ "hash", "sha1", NULL, NULL, 0,
	  "82fcd6ea686650aeab977d7af3ad6081ab8a10de" },
	{ "hash", "sha256", NULL, NULL, 0,
	  "ba22b7dc95f6cc8765757be4bccf37cd92ece6d4987dc26a31e274c9be236921" },
	{ "hash", "sha512", NULL, NULL, 0,
	  "245d9ea982b03a72661de608e32efefd3ab29237266873cbf830ff1086cc7fae"
	  "5d0134d514393f46795981e67c061b807602cd564321b187a8f72551cabb29bb" },
	{ "hash", "sha3-256", NULL, NULL, 0,
	  "ab099daeca560b4ee5ade590640a367b34cfa13cafd139fe819275fe605b6fcc" },
	{ "hash", "hmac(sha256)", K16, NULL, 0,
	  "7f5ea372ff7c56910d48079b45db99e2102e8a77b8845d17f9f2ec9e0435f2a9" },
	{ "hash", "cmac(aes)", K16, NULL, 0,
	  "d5d3ad28a8798a3dcd83393c9df2f0dd" },
};

/* A socket bound to TYPE/NAME, or -errno (*STEP: the call that failed). */
static int alg_bind(const char *type, const char *name, const char **step)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	*step = "socket";
	if (fd < 0)
		return -errno;
	*step = "bind";
	snprintf((char *)sa.salg_type, sizeof sa.salg_type, "%s", type);
	snprintf((char *)sa.salg_name, sizeof sa.salg_name, "%s", name);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* One operation on the bound socket TFM; the result into OUT.  Returns its
 * length or -errno; *STEP names the call that failed. */
static int run_op(int tfm, const struct probe *p, unsigned char *out,
		  const char **step)
{
	unsigned char key[64], iv[32], in[64], cbuf[CMSG_SPACE(4) +
		CMSG_SPACE(sizeof(struct af_alg_iv) + 32) + CMSG_SPACE(4)];
	int klen = p->key ? unhex(p->key, key) : 0, ivlen = 0, inlen, adlen = 0;
	int aead = !strcmp(p->type, "aead"), hash = !strcmp(p->type, "hash");
	int op, n;

	*step = "setkey";
	if (klen && setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, klen) < 0)
		return -errno;
	*step = "setauthsize";
	if (aead && setsockopt(tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL,
			       p->authsize) < 0)
		return -errno;
	*step = "accept";
	op = accept(tfm, NULL, 0);
	if (op < 0)
		return -errno;
	if (aead)
		adlen = unhex(AD, in);
	inlen = adlen + unhex(MSG, in + adlen);
	if (p->iv)
		ivlen = unhex(p->iv, iv);

	struct iovec iov = { in, inlen };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (!hash) {
		struct cmsghdr *c;
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(4) + CMSG_SPACE(sizeof(struct af_alg_iv) + ivlen) +
				     (aead ? CMSG_SPACE(4) : 0);
		memset(cbuf, 0, sizeof cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_OP;
		c->cmsg_len = CMSG_LEN(4);
		*(__u32 *)CMSG_DATA(c) = ALG_OP_ENCRYPT;
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_IV;
		c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + ivlen);
		((struct af_alg_iv *)CMSG_DATA(c))->ivlen = ivlen;
		memcpy(((struct af_alg_iv *)CMSG_DATA(c))->iv, iv, ivlen);
		if (aead) {
			c = CMSG_NXTHDR(&msg, c);
			c->cmsg_level = SOL_ALG;
			c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
			c->cmsg_len = CMSG_LEN(4);
			*(__u32 *)CMSG_DATA(c) = adlen;
		}
	}
	*step = "sendmsg";
	if (sendmsg(op, &msg, 0) != inlen) {
		n = -errno;
		close(op);
		return n;
	}
	*step = "recvmsg";
	unsigned char buf[256];
	struct iovec riov = { buf, sizeof buf };
	struct msghdr rmsg = { .msg_iov = &riov, .msg_iovlen = 1 };
	if (!hash)
		riov.iov_len = inlen + (aead ? p->authsize : 0);
	n = recvmsg(op, &rmsg, 0);
	if (n < 0) {
		n = -errno;
		close(op);
		return n;
	}
	close(op);
	n -= adlen;
	memcpy(out, buf + adlen, n);
	return n;
}

/* The algorithm name (cra_name) of driver DRIVER in /proc/crypto, or NULL. */
static const char *name_of_driver(const char *driver)
{
	static char name[128];
	char line[256], key[64], val[192];
	FILE *f = fopen("/proc/crypto", "r");
	const char *found = NULL;
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof line, f)) {
		if (sscanf(line, "%63[^ :] : %191[^\n]", key, val) != 2)
			continue;
		if (!strcmp(key, "name"))
			copy(name, sizeof name, val);
		else if (!strcmp(key, "driver") && !strcmp(val, driver))
			found = name;
	}
	fclose(f);
	return found;
}

static void probe_one(const struct probe *p)
{
	struct entry before[32], after[32];
	/* bound by driver name: the entries of its algorithm name */
	const char *alg = name_of_driver(p->name);
	int nb, na, fd, n;
	unsigned char out[256];
	char hex[513];
	const char *step;

	if (!alg)
		alg = p->name;
	nb = proc_crypto(alg, before, 32);
	printf("%-8s %-26s ", p->type, p->name);
	fd = alg_bind(p->type, p->name, &step);
	if (fd < 0) {
		printf("%s %s\n", step, ename(-fd));
		return;
	}
	na = proc_crypto(alg, after, 32);
	const struct entry *c = chosen(before, nb, after, na);
	printf("bind ok  driver %s", c ? c->driver : "?");
	if (c)
		printf(" (priority %d%s%s%s)", c->priority,
		       c->module[0] ? ", module " : "", c->module,
		       !strcmp(c->async, "yes") ? ", async" : "");
	if (!p->expect) {
		printf("\n");
		close(fd);
		return;
	}
	n = run_op(fd, p, out, &step);
	if (n < 0)
		printf("  %s %s\n", step, ename(-n));
	else {
		tohex(out, n, hex);
		printf("  %s\n", !strcmp(hex, p->expect) ? "answer ok" : hex);
	}
	close(fd);
}

/* TYPE/NAME with the known answer of NAME, or of the algorithm NAME is a
 * driver of. */
static void probe_bind(const char *type, const char *name)
{
	struct probe p = { type, name, NULL, NULL, 0, NULL };
	const char *alg = name_of_driver(name);
	for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
		if (!strcmp(probes[i].type, type) &&
		    (!strcmp(probes[i].name, name) || (alg && !strcmp(probes[i].name, alg)))) {
			p = probes[i];
			p.name = name;
		}
	probe_one(&p);
}

/* The zero-copy path: 16 bytes of a file (in TMPDIR, else /tmp) spliced into
 * a cbc(aes) operation socket, then overwritten in the file before the
 * socket is read.  Zero-copy encrypts the page cache page when the result is
 * read (the new bytes); a copy at splice time keeps the old ones. */
#define SPLICE_NEW "3b9311d01bf881cc6b7cf05f9829d3be" /* message ff * 16 */
static void probe_splice(void)
{
	const struct probe *p = &probes[0];
	unsigned char key[16], ivb[16], in[16], out[16], ff[16];
	char hex[33], path[4096];
	const char *tmp = getenv("TMPDIR"), *step;
	int pfd[2], tfm, op, file;
	ssize_t n;

	printf("splice   %-26s ", p->name);
	tfm = alg_bind(p->type, p->name, &step);
	if (tfm < 0) {
		printf("%s %s\n", step, ename(-tfm));
		return;
	}
	unhex(p->key, key);
	unhex(p->iv, ivb);
	unhex(MSG, in);
	memset(ff, 0xff, sizeof ff);
	snprintf(path, sizeof path, "%s/afalg-probe.XXXXXX", tmp ? tmp : "/tmp");
	file = mkstemp(path);
	if (file < 0 || pwrite(file, in, 16, 0) != 16) {
		printf("temporary file %s\n", ename(errno));
		return;
	}
	unlink(path);
	if (setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, 16) < 0 ||
	    (op = accept(tfm, NULL, 0)) < 0 || pipe(pfd) < 0) {
		printf("setup %s\n", ename(errno));
		return;
	}
	/* The operation and IV go with an empty sendmsg marked MSG_MORE. */
	unsigned char cbuf[CMSG_SPACE(4) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)] = { 0 };
	struct msghdr msg = { .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(4);
	*(__u32 *)CMSG_DATA(c) = ALG_OP_ENCRYPT;
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + 16);
	((struct af_alg_iv *)CMSG_DATA(c))->ivlen = 16;
	memcpy(((struct af_alg_iv *)CMSG_DATA(c))->iv, ivb, 16);
	if (sendmsg(op, &msg, MSG_MORE) < 0) {
		printf("sendmsg %s\n", ename(errno));
		return;
	}
	loff_t off = 0;
	n = splice(file, &off, pfd[1], NULL, 16, 0);
	if (n != 16) {
		printf("splice file->pipe %s\n", n < 0 ? ename(errno) : "short");
		return;
	}
	n = splice(pfd[0], NULL, op, NULL, 16, 0);
	if (n != 16) {
		printf("splice pipe->socket %s\n", n < 0 ? ename(errno) : "short");
		return;
	}
	if (pwrite(file, ff, 16, 0) != 16) {
		printf("pwrite %s\n", ename(errno));
		return;
	}
	n = read(op, out, 16);
	if (n != 16) {
		printf("splice ok, read %s\n", n < 0 ? ename(errno) : "short");
		return;
	}
	tohex(out, 16, hex);
	printf("splice ok  %s\n", !strcmp(hex, p->expect) ? "copied at splice time (no zero-copy)" :
				 !strcmp(hex, SPLICE_NEW) ? "zero-copy (the page was read after the splice)" :
							       hex);
	close(file);
	close(op);
	close(tfm);
}

/* ---- NETLINK_CRYPTO ---------------------------------------------------- */

static void flags_text(unsigned f, char *out)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		/* include/linux/crypto.h of 7.3 (0x200 was GENIV up to 6.x) */
		{ 0x80, "ASYNC" },	      { 0x100, "NEED_FALLBACK" },
		{ 0x200, "DUP_FIRST" },	      { 0x400, "TESTED" },
		{ 0x800, "INSTANCE" },	      { 0x1000, "KERN_DRIVER_ONLY" },
		{ 0x2000, "INTERNAL" },	      { 0x4000, "OPTIONAL_KEY" },
		{ 0x10000, "ALLOCATES_MEMORY" }, { 0x20000, "FIPS_INTERNAL" },
		{ 0x40000, "REQ_VIRT" },      { 0x80000, "NO_FALLBACK" },
	};
	out += sprintf(out, "type %#x", f & 0xf);
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (f & names[i].bit)
			out += sprintf(out, "|%s", names[i].name);
}

static void getalg(const char *driver, const char *name)
{
	struct {
		struct nlmsghdr h;
		struct crypto_user_alg a;
	} req = { 0 };
	char buf[8192], flags[256];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO);
	ssize_t n;

	printf("getalg   %-26s ", driver ? driver : name);
	if (fd < 0) {
		printf("socket(NETLINK_CRYPTO) %s\n", ename(errno));
		return;
	}
	req.h.nlmsg_len = sizeof req;
	req.h.nlmsg_type = CRYPTO_MSG_GETALG;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	if (driver)
		snprintf(req.a.cru_driver_name, sizeof req.a.cru_driver_name, "%s", driver);
	else
		snprintf(req.a.cru_name, sizeof req.a.cru_name, "%s", name);
	if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&sa, sizeof sa) < 0) {
		printf("sendto %s\n", ename(errno));
		close(fd);
		return;
	}
	n = recv(fd, buf, sizeof buf, 0);
	close(fd);
	if (n < 0) {
		printf("recv %s\n", ename(errno));
		return;
	}
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(h, n)) {
		printf("short reply\n");
		return;
	}
	if (h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(h);
		printf("error %s\n", e->error ? ename(-e->error) : "0 (ack)");
		return;
	}
	struct crypto_user_alg *a = NLMSG_DATA(h);
	flags_text(a->cru_flags, flags);
	printf("cru_name %s  cru_driver_name %s  cru_module_name %s  cru_flags %#x (%s)  cru_refcnt %u",
	       a->cru_name, a->cru_driver_name, a->cru_module_name, a->cru_flags, flags,
	       a->cru_refcnt);
	/* attributes: the priority and the report's type */
	struct nlattr *at = (struct nlattr *)((char *)a + NLMSG_ALIGN(sizeof *a));
	int left = h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof *a));
	while (left >= (int)sizeof *at && at->nla_len >= sizeof *at && at->nla_len <= left) {
		static const char *const attr[] = {
			[CRYPTOCFGA_REPORT_LARVAL] = "larval", [CRYPTOCFGA_REPORT_HASH] = "hash",
			[CRYPTOCFGA_REPORT_BLKCIPHER] = "blkcipher (skcipher)",
			[CRYPTOCFGA_REPORT_AEAD] = "aead", [CRYPTOCFGA_REPORT_COMPRESS] = "compress",
			[CRYPTOCFGA_REPORT_RNG] = "rng", [CRYPTOCFGA_REPORT_CIPHER] = "cipher",
			[CRYPTOCFGA_REPORT_AKCIPHER] = "akcipher", [CRYPTOCFGA_REPORT_KPP] = "kpp",
			[CRYPTOCFGA_REPORT_ACOMP] = "acomp",
		};
		if (at->nla_type == CRYPTOCFGA_PRIORITY_VAL)
			printf("  priority %u", *(__u32 *)(at + 1));
		else if (at->nla_type < sizeof attr / sizeof *attr && attr[at->nla_type])
			printf("  report %s", attr[at->nla_type]);
		else
			printf("  attr %u", at->nla_type);
		left -= NLA_ALIGN(at->nla_len);
		at = (struct nlattr *)((char *)at + NLA_ALIGN(at->nla_len));
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "list";
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "list")) {
		for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
			probe_one(&probes[i]);
	} else if (!strcmp(cmd, "bind") && argc == 4) {
		probe_bind(argv[2], argv[3]);
	} else if (!strcmp(cmd, "getalg") && argc == 3) {
		getalg(argv[2], NULL);
	} else if (!strcmp(cmd, "getalg-name") && argc == 3) {
		getalg(NULL, argv[2]);
	} else if (!strcmp(cmd, "socket")) {
		fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
		printf("socket   AF_ALG                     %s\n", fd < 0 ? ename(errno) : "ok");
	} else if (!strcmp(cmd, "netlink")) {
		fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_CRYPTO);
		printf("socket   NETLINK_CRYPTO             %s\n", fd < 0 ? ename(errno) : "ok");
	} else if (!strcmp(cmd, "splice")) {
		probe_splice();
	} else {
		fprintf(stderr, "usage: %s list | bind TYPE NAME | getalg DRIVER | "
				"getalg-name NAME | socket | netlink | splice\n", argv[0]);
		return 2;
	}
	return 0;
}
