/* devel/engine-soak.c -- an AF_ALG skcipher soak without GnuTLS: does an
 * engine (QEMU's virtio-crypto, driver virtio_crypto_aes_cbc) keep its
 * throughput over many processes, contexts, keys and request sizes?
 *
 * Runs --procs processes one after another (--parallel at a time); each
 * opens --keys contexts the way the module does (socket, bind "skcipher"
 * to --driver, ALG_SET_KEY, accept, the bound socket closed at once
 * unless --keep-tfm), re-keys each --rekeys times (a new bound socket
 * and a new accepted one, as the module does on gnutls_cipher_setkey();
 * with --keep-tfm, ALG_SET_KEY again on the kept bound socket), then
 * sends requests (sendmsg with ALG_SET_OP and ALG_SET_IV, then read) of
 * the --sizes in turn, round robin over its contexts, for --budget
 * seconds or --ops requests, and closes its sockets (--leave-open: leaves
 * them to exit()).  --path soft times Nettle's AES-CBC instead, --path
 * adaptive moves between the two by their measured cost (see PATH_*).
 *
 * One line per process: when it started, its setup (sockets and keys:
 * the device's sessions), requests, MB/s by wall clock and per CPU second
 * of the process, mean and slowest request, requests over 10 ms, the
 * close, the process's wall and CPU time (wait4), the device's interrupts,
 * its voluntary and involuntary context switches, the run time of the
 * engine's request pump (the kthread "virtioN-engine") and the CPUs'
 * idle time over it.  --interval SEC adds a line every SEC seconds within
 * a process.  A process still running --stall seconds after its budget
 * gets its kernel stack printed (/proc/PID/stack, wchan, state, syscall),
 * again every --stall seconds, and is killed after --kill seconds.
 *
 * Build and run (in the VM with the engine; see doc/engine.md):
 *     cc -O2 -Wall -o /tmp/engine-soak devel/engine-soak.c -lnettle
 *     VM_RUN_ENGINE=1 devel/vm-run /tmp/engine-soak --procs 10 --budget 1
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_alg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <nettle/aes.h>
#include <nettle/cbc.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define MAX_SIZES 16

static const char *driver = "cbc(aes)";
static int procs = 1, parallel = 1, keys = 1, rekeys = 0, key_len = 16;
static size_t sizes[MAX_SIZES] = { 16384 };
static int nsizes = 1;
static double budget = 1.0;
static long max_ops = 0;
static int keep_tfm = 0, leave_open = 0, same_key = 0, decrypt = 0;
static int out_offset = 0, pause_ms = 0;
static double stall = 10, kill_after = 0;
static double interval = 0, gap = 0;
/* Where requests go: the engine (AF_ALG), software (Nettle's AES, what
 * GnuTLS runs where it has no x86 code for the CPU, or with
 * GNUTLS_CPUID_OVERRIDE=0x1), or adaptive: requests start on the engine
 * and go to software when the median cost per byte of the engine's last
 * eight requests exceeds software's (the median of three requests at
 * start, then a moving average); from software, the median of four
 * engine requests after --probe seconds (doubling while software stays
 * cheaper, up to 16 x) decides whether to go back.  (Medians: the
 * engine's latency has a long tail under load, and one stalled request
 * should not decide.) */
enum { PATH_ENGINE, PATH_SOFT, PATH_ADAPTIVE };
static int path = PATH_ENGINE;
static double probe = 0.25;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* The engine's interrupts: the /proc/interrupts lines of the virtio
 * device virtio_crypto is bound to (all of them where none is bound). */
static char engine_dev[300];

static void find_engine(void)
{
	DIR *d = opendir("/sys/bus/virtio/drivers/virtio_crypto");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "virtio", 6) == 0) {
			snprintf(engine_dev, sizeof(engine_dev), "%s-",
				 e->d_name);
			break;
		}
	closedir(d);
}

static unsigned long long engine_irqs(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[1024];
	unsigned long long sum = 0;

	if (f == NULL || engine_dev[0] == 0) {
		if (f)
			fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (strstr(line, engine_dev) == NULL)
			continue;
		p = strchr(line, ':');
		if (p == NULL)
			continue;
		p++;
		for (;;) {
			char *end;
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += v;
			p = end;
		}
	}
	fclose(f);
	return sum;
}

/* The crypto engine's request pump (a kthread named "virtioN-engine"):
 * its run time (schedstat, ns); and the CPUs' idle time (/proc/stat). */
static int engine_pid;

static void find_engine_thread(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[64];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) && strstr(comm, "-engine") &&
		    strncmp(comm, "virtio", 6) == 0)
			engine_pid = atoi(e->d_name);
		fclose(f);
	}
	closedir(d);
}

static double engine_run_s(void)
{
	char path[64];
	unsigned long long run = 0;
	FILE *f;

	if (engine_pid == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", engine_pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &run) != 1)
		run = 0;
	fclose(f);
	return run / 1e9;
}

static double idle_s(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = { 0 };
	double hz = sysconf(_SC_CLK_TCK);

	if (f == NULL)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4]) != 5)
		v[3] = 0;
	fclose(f);
	return v[3] / hz;
}

static void cat_file(const char *prefix, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s%s", prefix, line);
	fclose(f);
	fflush(stdout);
}

/* The kernel stacks of every thread of pid, and its state. */
static void dump_stack(pid_t pid, double waited)
{
	char path[128], buf[256];
	FILE *f;

	printf("#   pid %d still running %.1f s after its budget:\n", pid,
	       waited);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f))
			if (strncmp(buf, "State:", 6) == 0)
				printf("#   %s", buf);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			printf("#   wchan: %s\n", buf);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	cat_file("#   stack: ", path);
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	cat_file("#   syscall: ", path);
	printf("#   engine interrupts: %llu\n", engine_irqs());
	fflush(stdout);
}

struct ctx {
	int tfm, op;
};

struct result {
	double setup_s, ops_s, ops_cpu_s, close_s, max_lat_s;
	long ops, slow, failures, rekeys_done, soft_ops;
	unsigned long long bytes;
	int first_error;
	char what[32];
};

static void fill_key(uint8_t *key, int n, unsigned seed)
{
	for (int i = 0; i < key_len; i++)
		key[i] = (uint8_t)(seed * 131 + n * 17 + i * 7 + 1);
}

static int open_tfm(const uint8_t *key, struct result *r, const char **what)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG,
				   .salg_type = "skcipher" };
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	(void)r;
	strncpy((char *)sa.salg_name, driver, sizeof(sa.salg_name) - 1);
	if (fd < 0) {
		*what = "socket";
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		*what = "bind";
		close(fd);
		return -1;
	}
	if (setsockopt(fd, SOL_ALG, ALG_SET_KEY, key, key_len) < 0) {
		*what = "setkey";
		close(fd);
		return -1;
	}
	return fd;
}

/* A context as the module opens one. */
static int open_ctx(struct ctx *c, const uint8_t *key, struct result *r)
{
	const char *what = NULL;
	int err;

	c->tfm = open_tfm(key, r, &what);
	if (c->tfm < 0)
		goto fail;
	c->op = accept4(c->tfm, NULL, NULL, SOCK_CLOEXEC);
	if (c->op < 0) {
		what = "accept";
		err = errno;
		close(c->tfm);
		c->tfm = -1;
		errno = err;
		goto fail;
	}
	if (!keep_tfm) {
		close(c->tfm);
		c->tfm = -1;
	}
	return 0;
fail:
	if (r->first_error == 0) {
		r->first_error = errno;
		snprintf(r->what, sizeof(r->what), "%s", what);
	}
	r->failures++;
	c->op = -1;
	return -1;
}

static void close_ctx(struct ctx *c)
{
	if (c->op >= 0)
		close(c->op);
	if (c->tfm >= 0)
		close(c->tfm);
	c->op = c->tfm = -1;
}

static int rekey_ctx(struct ctx *c, const uint8_t *key, struct result *r)
{
	if (keep_tfm && c->tfm >= 0) {
		/* the kept bound socket takes the new key (Linux 6.1
		 * refuses it, EBUSY, while an accepted socket is open) */
		if (setsockopt(c->tfm, SOL_ALG, ALG_SET_KEY, key, key_len) <
		    0) {
			if (r->first_error == 0) {
				r->first_error = errno;
				snprintf(r->what, sizeof(r->what), "rekey");
			}
			r->failures++;
			return -1;
		}
		return 0;
	}
	close_ctx(c);
	return open_ctx(c, key, r);
}

static int request(int op, int enc, const uint8_t *iv, const uint8_t *in,
		   uint8_t *out, size_t size)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4) + CMSG_SPACE(4 + 16)];
	} u;
	struct iovec iov = { .iov_base = (void *)in, .iov_len = size };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	struct af_alg_iv *aiv;
	ssize_t n;
	size_t got = 0;

	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_OP;
	cm->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(cm) = enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	cm = CMSG_NXTHDR(&msg, cm);
	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_IV;
	cm->cmsg_len = CMSG_LEN(4 + 16);
	aiv = (struct af_alg_iv *)CMSG_DATA(cm);
	aiv->ivlen = 16;
	memcpy(aiv->iv, iv, 16);
	n = sendmsg(op, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n != (ssize_t)size)
		return n < 0 ? -errno : -EIO;
	while (got < size) {
		n = read(op, out + got, size - got);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += n;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double w[16];

	memcpy(w, v, n * sizeof(*v));
	qsort(w, n, sizeof(*w), cmp_double);
	return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

/* Software: one context per process, keyed once, as GnuTLS keeps one. */
static struct {
	int ready, enc;
	union {
		struct aes128_ctx a128;
		struct aes192_ctx a192;
		struct aes256_ctx a256;
	} c;
	nettle_cipher_func *f;
} soft;

static int soft_request(int enc, const uint8_t *key, const uint8_t *iv,
			const uint8_t *in, uint8_t *out, size_t size)
{
	uint8_t v[16];

	if (!soft.ready || soft.enc != enc) {
		switch (key_len) {
		case 16:
			if (enc)
				aes128_set_encrypt_key(&soft.c.a128, key);
			else
				aes128_set_decrypt_key(&soft.c.a128, key);
			soft.f = enc ? (nettle_cipher_func *)aes128_encrypt :
				       (nettle_cipher_func *)aes128_decrypt;
			break;
		case 24:
			if (enc)
				aes192_set_encrypt_key(&soft.c.a192, key);
			else
				aes192_set_decrypt_key(&soft.c.a192, key);
			soft.f = enc ? (nettle_cipher_func *)aes192_encrypt :
				       (nettle_cipher_func *)aes192_decrypt;
			break;
		default:
			if (enc)
				aes256_set_encrypt_key(&soft.c.a256, key);
			else
				aes256_set_decrypt_key(&soft.c.a256, key);
			soft.f = enc ? (nettle_cipher_func *)aes256_encrypt :
				       (nettle_cipher_func *)aes256_decrypt;
			break;
		}
		soft.ready = 1;
		soft.enc = enc;
	}
	memcpy(v, iv, 16);
	if (enc)
		cbc_encrypt(&soft.c, soft.f, 16, v, size, out, in);
	else
		cbc_decrypt(&soft.c, soft.f, 16, v, size, out, in);
	return 0;
}

static void run_child(int index, int outfd)
{
	struct ctx *c = calloc(keys, sizeof(*c));
	struct result r = { 0 };
	size_t max_size = 0;
	uint8_t key[64], iv[16], *in, *outbuf, *out;
	double t0, t1, c0, deadline, next_report, last_t, last_c, next_probe, a0;
	int use_soft = path == PATH_SOFT;
	double soft_cost = 0, win[8], probe_gap = probe;
	int nwin = 0;
	unsigned long long last_bytes = 0, last_irq = engine_irqs();
	int i, k;

	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max_size)
			max_size = sizes[i];
	in = mmap(NULL, max_size + 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	outbuf = mmap(NULL, max_size + 8192, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == NULL || in == MAP_FAILED || outbuf == MAP_FAILED)
		_exit(2);
	out = outbuf + out_offset;
	memset(in, 0x5a, max_size);
	memset(outbuf, 0, max_size + 8192);
	memset(iv, 0xf0, sizeof(iv));

	t0 = now();
	for (k = 0; k < keys; k++) {
		fill_key(key, k, same_key ? 0 : (unsigned)index);
		open_ctx(&c[k], key, &r);
	}
	for (i = 0; i < rekeys; i++)
		for (k = 0; k < keys; k++) {
			fill_key(key, k, same_key ? 0 : (unsigned)(index * 1000 + i + 1));
			if (rekey_ctx(&c[k], key, &r) == 0)
				r.rekeys_done++;
		}
	t1 = now();
	r.setup_s = t1 - t0;

	c0 = cpu_self();
	t0 = now();
	deadline = t0 + budget;
	next_report = t0 + interval;
	last_t = t0;
	last_c = c0;
	next_probe = t0;
	fill_key(key, 0, 0);
	if (path == PATH_ADAPTIVE) {
		/* software's cost per byte: the median of three requests
		 * (timed, and counted with the others) */
		double w[3];

		for (i = 0; i < 3; i++) {
			a0 = now();
			soft_request(!decrypt, key, iv, in, out, sizes[0]);
			w[i] = (now() - a0) / sizes[0];
			r.ops++;
			r.soft_ops++;
			r.bytes += sizes[0];
		}
		soft_cost = median(w, 3);
	}
	k = 0;
	for (i = 0;; i++) {
		size_t size = sizes[i % nsizes];
		double a, lat;
		int ret, tries;

		if (max_ops ? r.ops >= max_ops : now() >= deadline)
			break;
		if (interval > 0 && now() >= next_report) {
			double t = now(), cc = cpu_self();
			unsigned long long irq = engine_irqs();

			printf("#   proc %d at %5.1f s: %8.2f MB/s wall %8.2f MB/s cpu, %llu irqs\n",
			       index, t - t0, (r.bytes - last_bytes) / (t - last_t) / 1e6,
			       cc > last_c ? (r.bytes - last_bytes) / (cc - last_c) / 1e6 : 0,
			       irq - last_irq);
			fflush(stdout);
			last_t = t;
			last_c = cc;
			last_bytes = r.bytes;
			last_irq = irq;
			next_report += interval;
		}
		/* the next context that has a socket */
		for (tries = 0; tries < keys && c[k].op < 0; tries++)
			k = (k + 1) % keys;
		if (c[k].op < 0 && path != PATH_SOFT)
			break;
		if (path == PATH_ADAPTIVE && use_soft && now() >= next_probe) {
			/* back to the engine if the median of four requests
			 * now beats software; else wait twice as long (up to
			 * 16 x --probe) before the next look */
			double w[4];

			for (tries = 0; tries < 4; tries++) {
				a = now();
				ret = request(c[k].op, !decrypt, iv, in, out,
					      size);
				w[tries] = ret < 0 ? 1 : (now() - a) / size;
				r.ops++;
				r.bytes += size;
			}
			if (median(w, 4) < soft_cost) {
				use_soft = 0;
				probe_gap = probe;
			} else if (probe_gap < 16 * probe) {
				probe_gap *= 2;
			}
			next_probe = now() + probe_gap;
			continue;
		}
		a = now();
		if (use_soft) {
			ret = soft_request(!decrypt, key, iv, in, out, size);
			r.soft_ops++;
		} else {
			ret = request(c[k].op, !decrypt, iv, in, out, size);
		}
		lat = now() - a;
		/* seconds per byte of each path (0 engine, 1 software),
		 * a moving average over its requests */
		if (path == PATH_ADAPTIVE && use_soft) {
			soft_cost = 0.9 * soft_cost + 0.1 * lat / size;
		} else if (path == PATH_ADAPTIVE) {
			/* to software when the median of the engine's last
			 * eight requests costs more per byte than software */
			win[nwin++] = ret < 0 ? 1 : lat / size;
			if (nwin == 8) {
				nwin = 0;
				if (median(win, 8) > soft_cost) {
					use_soft = 1;
					next_probe = now() + probe_gap;
				}
			}
		}
		if (ret < 0) {
			if (r.first_error == 0) {
				r.first_error = -ret;
				snprintf(r.what, sizeof(r.what), "request");
			}
			r.failures++;
			close_ctx(&c[k]);
		} else {
			r.ops++;
			r.bytes += size;
		}
		if (lat > r.max_lat_s)
			r.max_lat_s = lat;
		if (lat > 0.010)
			r.slow++;
		k = (k + 1) % keys;
		if (pause_ms)
			usleep(pause_ms * 1000);
	}
	r.ops_s = now() - t0;
	r.ops_cpu_s = cpu_self() - c0;

	t0 = now();
	if (!leave_open)
		for (k = 0; k < keys; k++)
			close_ctx(&c[k]);
	r.close_s = now() - t0;
	if (write(outfd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	_exit(0);
}

struct running {
	pid_t pid;
	int fd, index;
	double start, next_dump, engine0, idle0;
	unsigned long long irq0;
};

static double total_wall, total_cpu, t_start;
static unsigned long long total_bytes;

static void finish(struct running *p, int status, struct rusage *ru)
{
	struct result r = { 0 };
	double wall = now() - p->start;
	double cpu = ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
		     ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
	unsigned long long irqs = engine_irqs() - p->irq0;
	double eng = engine_run_s() - p->engine0, idle = idle_s() - p->idle0;
	ssize_t n = read(p->fd, &r, sizeof(r));

	close(p->fd);
	if (n != sizeof(r)) {
		printf("%4d %6.1f (no result: status %#x)  wall %.2f cpu %.2f irq %llu\n",
		       p->index, p->start - t_start, status, wall, cpu, irqs);
		fflush(stdout);
		return;
	}
	total_wall += r.ops_s;
	total_cpu += r.ops_cpu_s;
	total_bytes += r.bytes;
	printf("%4d %6.1f %7.3f %7ld %9.2f %9.2f %7.2f %7.2f %6ld %7.3f %7.2f %8.2f %8llu %7ld %6ld %6.2f %6.2f",
	       p->index, p->start - t_start, r.setup_s, r.ops,
	       r.ops_s > 0 ? r.bytes / r.ops_s / 1e6 : 0,
	       r.ops_cpu_s > 0 ? r.bytes / r.ops_cpu_s / 1e6 : 0,
	       r.ops ? r.ops_s / r.ops * 1e3 : 0, r.max_lat_s * 1e3, r.slow,
	       r.close_s, wall, cpu, irqs, ru->ru_nvcsw, ru->ru_nivcsw, eng,
	       idle);
	if (path != PATH_ENGINE)
		printf("  software %ld%%", r.ops ? r.soft_ops * 100 / r.ops : 0);
	if (r.failures)
		printf("  failures %ld (first: %s: %s)", r.failures, r.what,
		       strerror(r.first_error));
	printf("\n");
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: engine-soak [--driver NAME] [--procs N] [--parallel P] [--keys K]\n"
		"       [--rekeys R] [--sizes S,...] [--budget SEC | --ops N] [--key-len 16|24|32]\n"
		"       [--keep-tfm] [--leave-open] [--same-key] [--decrypt] [--out-offset N]\n"
		"       [--pause MS] [--stall SEC] [--kill SEC] [--interval SEC] [--gap SEC]\n"
		"       [--path engine|soft|adaptive] [--probe SEC]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "driver", 1, 0, 'd' },     { "procs", 1, 0, 'n' },
		{ "parallel", 1, 0, 'P' },   { "keys", 1, 0, 'k' },
		{ "rekeys", 1, 0, 'r' },     { "sizes", 1, 0, 's' },
		{ "budget", 1, 0, 'b' },     { "ops", 1, 0, 'o' },
		{ "key-len", 1, 0, 'l' },    { "keep-tfm", 0, 0, 'T' },
		{ "leave-open", 0, 0, 'L' }, { "same-key", 0, 0, 'S' },
		{ "decrypt", 0, 0, 'D' },    { "out-offset", 1, 0, 'O' },
		{ "pause", 1, 0, 'p' },      { "stall", 1, 0, 't' },
		{ "kill", 1, 0, 'K' },
		{ "interval", 1, 0, 'I' },   { "gap", 1, 0, 'g' },
		{ "path", 1, 0, 'x' },       { "probe", 1, 0, 'X' },
		{ "help", 0, 0, 'h' },       { 0 }
	};
	struct running *run;
	int opt, started = 0, active = 0, i;
	double c_start;
	struct rusage ru_all;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': driver = optarg; break;
		case 'n': procs = atoi(optarg); break;
		case 'P': parallel = atoi(optarg); break;
		case 'k': keys = atoi(optarg); break;
		case 'r': rekeys = atoi(optarg); break;
		case 's': {
			char *p = optarg;
			nsizes = 0;
			while (*p && nsizes < MAX_SIZES) {
				sizes[nsizes++] = strtoul(p, &p, 0);
				if (*p == ',')
					p++;
			}
			break;
		}
		case 'b': budget = atof(optarg); break;
		case 'o': max_ops = atol(optarg); break;
		case 'l': key_len = atoi(optarg); break;
		case 'T': keep_tfm = 1; break;
		case 'L': leave_open = 1; break;
		case 'S': same_key = 1; break;
		case 'D': decrypt = 1; break;
		case 'O': out_offset = atoi(optarg); break;
		case 'p': pause_ms = atoi(optarg); break;
		case 't': stall = atof(optarg); break;
		case 'K': kill_after = atof(optarg); break;
		case 'I': interval = atof(optarg); break;
		case 'g': gap = atof(optarg); break;
		case 'x':
			if (strcmp(optarg, "engine") == 0)
				path = PATH_ENGINE;
			else if (strcmp(optarg, "soft") == 0)
				path = PATH_SOFT;
			else if (strcmp(optarg, "adaptive") == 0)
				path = PATH_ADAPTIVE;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 'X': probe = atof(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (procs < 1 || parallel < 1 || keys < 1 || nsizes < 1 ||
	    (key_len != 16 && key_len != 24 && key_len != 32) ||
	    out_offset < 0 || out_offset > 4096) {
		usage(stderr);
		return 2;
	}
	find_engine();
	find_engine_thread();
	printf("# engine-soak: driver %s, %d processes (%d at a time), %d keys each, %d rekeys, sizes",
	       driver, procs, parallel, keys, rekeys);
	for (i = 0; i < nsizes; i++)
		printf("%s%zu", i ? "," : " ", sizes[i]);
	printf(", %s %g%s, key %d bytes%s%s%s, path %s; engine device %s\n",
	       max_ops ? "ops" : "budget", max_ops ? (double)max_ops : budget,
	       max_ops ? "" : " s", key_len, keep_tfm ? ", bound socket kept" : "",
	       leave_open ? ", sockets left to exit" : "",
	       decrypt ? ", decrypt" : "",
	       path == PATH_ENGINE ? "engine" : path == PATH_SOFT ? "software (Nettle)" : "adaptive",
	       engine_dev[0] ? engine_dev : "(none)");
	printf("#proc  at_s setup_s     ops MB/s_wall  MB/s_cpu  ms/req  max_ms  >10ms close_s  wall_s    cpu_s     irqs    vcsw  ivcsw eng_s idle_s\n");
	fflush(stdout);

	run = calloc(parallel, sizeof(*run));
	t_start = now();
	c_start = 0;
	while (started < procs || active > 0) {
		while (started < procs && active < parallel) {
			int fds[2];
			struct running *p = NULL;

			for (i = 0; i < parallel; i++)
				if (run[i].pid == 0) {
					p = &run[i];
					break;
				}
			if (pipe(fds) < 0)
				return 1;
			if (gap > 0 && started > 0)
				usleep(gap * 1e6);
			p->index = ++started;
			p->irq0 = engine_irqs();
			p->engine0 = engine_run_s();
			p->idle0 = idle_s();
			p->start = now();
			p->next_dump = budget + stall;
			p->fd = fds[0];
			p->pid = fork();
			if (p->pid == 0) {
				close(fds[0]);
				run_child(p->index, fds[1]);
			}
			close(fds[1]);
			active++;
		}
		for (i = 0; i < parallel; i++) {
			struct running *p = &run[i];
			struct rusage ru;
			int status;
			pid_t w;
			double age;

			if (p->pid == 0)
				continue;
			w = wait4(p->pid, &status, WNOHANG, &ru);
			if (w == p->pid) {
				finish(p, status, &ru);
				p->pid = 0;
				active--;
				continue;
			}
			age = now() - p->start;
			if (max_ops == 0 && age > p->next_dump) {
				dump_stack(p->pid, age - budget);
				p->next_dump += stall;
			}
			if (kill_after > 0 && age > kill_after) {
				printf("#   killing pid %d after %.1f s\n",
				       p->pid, age);
				kill(p->pid, SIGKILL);
				kill_after = 0;
			}
		}
		usleep(20000);
	}
	getrusage(RUSAGE_CHILDREN, &ru_all);
	c_start = ru_all.ru_utime.tv_sec + ru_all.ru_utime.tv_usec / 1e6 +
		  ru_all.ru_stime.tv_sec + ru_all.ru_stime.tv_usec / 1e6;
	printf("# all: %.2f s wall, %.2f s CPU of the children; requests: %.2f MB/s by wall, %.2f by CPU\n",
	       now() - t_start, c_start,
	       total_wall > 0 ? total_bytes / total_wall / 1e6 : 0,
	       total_cpu > 0 ? total_bytes / total_cpu / 1e6 : 0);
	return 0;
}
