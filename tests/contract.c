/*
 * The contract tests (see contract.h): reads the cases, runs their steps
 * for each algorithm they name, and the steps every family shares:
 * kernel faults, process events (fork, exec, descriptor limits, a
 * seccomp sandbox) and checks of the library's state.
 *
 * Usage: contract [--defect N] [--case NAME] [--alg NAME] [--matrix]
 *                 CASEFILE...
 *
 *   --defect N the cases of reproduced defect N (0: those of none)
 *   --matrix   run each case that has a "matrix:" line once for every
 *              kernel call x error x placement of the fault (the fault
 *              matrix), each in a child process, and report the count
 *
 * A case file holds blocks of "key: value" lines, one block per case:
 *
 *   case:    a name (first)
 *   defect:  the number of the reproduced defect it covers (optional)
 *   alg:     algorithms (names of reference.h), each runs the steps
 *   env:     NAME=VALUE... set before the library loads (the case then
 *            runs in a new process)
 *   only:    kernel: the case needs the module active (else skipped)
 *   alone:   yes: the case runs in a process of its own (a seccomp
 *            filter, or a library in error state, stays with a process)
 *   known:   a fault of stock GnuTLS that the case runs into where the
 *            module is not active: a failure there is a skip, with this
 *            text; where the module is active the case must pass
 *   errstate: GnuTLS itself puts the library into its error state in
 *            this case (why): after it the library may be there
 *   steps:   step; step; ...
 *   matrix:  steps | steps: the fault is active during the first part
 *            and cleared for the second, on the same contexts
 *
 * Shared steps:
 *   fault CALL:ERRNO[:SKIP[:COUNT]]   seam_fault() (seam.h)
 *   nofault [N]        end it; at least N faults fired (default 1)
 *   count / kernel / nokernel   count kernel requests (sendmsg) from
 *                      "count" on; "kernel": at least one was made
 *                      (checked where the module is active; with at=N,
 *                      where AF_ALG is there and GNUTLS_AFALG=N),
 *                      "nokernel": none (checked where AF_ALG is there)
 *   fork               the rest runs in parent and child, step by step
 *                      in turn (child first), both checked
 *   _fork              the same after _Fork() (glibc 2.34), which runs
 *                      no atfork handler
 *   fork concurrent    (or _fork concurrent) parent and child run the
 *                      rest at the same time, not in turns
 *   STEP ... repeat=N  any step, N times
 *   exec [N]           fork+exec a program (inherited.c) that counts the
 *                      AF_ALG sockets and pipes it inherited: none (N
 *                      times, with a thread opening kernel contexts
 *                      meanwhile)
 *   fds N              at most N AF_ALG sockets opened since the case
 *                      started
 *   nofile N           RLIMIT_NOFILE soft limit
 *   fdfull             descriptors opened (/dev/null) until none is left
 *                      (after "nofile", say); "fdfree" closes them
 *   heap [N]           marks the heap in use (mallinfo2()); with N: it
 *                      grew by at most N bytes since the mark (a case
 *                      where the heap is not glibc's, under a sanitizer
 *                      or valgrind, is skipped); "heap ref": what it grew
 *                      by since the mark is the reference; "heap over=N":
 *                      it grew by at most the reference and N
 *   closefrom          as an application that closes the descriptors it
 *                      does not know (a daemon, or its child) and opens
 *                      connections: every AF_ALG socket of the process is
 *                      closed and a connected socket takes its number,
 *                      whose peer has 64 bytes waiting to be read
 *   ownfds             each of those numbers is still that socket: the
 *                      library closed none of them, read nothing from
 *                      them and sent nothing to their peers
 *   swapped            the same of the connections a "fault CALL:SWAP"
 *                      put under the numbers socket() or accept4() had
 *                      just returned (seam.h)
 *   seccomp [ERRNO] [netlink]   socket(AF_ALG) fails with EPERM (or
 *                      EACCES, EAFNOSUPPORT) from now on; "netlink":
 *                      socket(AF_NETLINK) instead (no crypto netlink)
 *   sandbox [socket]   a seccomp filter that kills the process on any
 *                      socket(), bind(), accept(), open(), mkdir(),
 *                      rename() or unlink() from now on (a case alone);
 *                      "socket": on socket(), bind() and accept() only
 *   atmost N           at most N calls of the kind a "fault CALL:PASS"
 *                      counts since it
 *   bound              every AF_ALG socket bound since the case started
 *                      was bound to a name of the module's table (or a
 *                      driver the case's GNUTLS_AFALG names after @ and
 *                      the kernel confirmed), and no sendmsg() asked for
 *                      MSG_SPLICE_PAGES
 *   nosplice           a seccomp filter that kills the process on
 *                      splice(), vmsplice(), tee(), sendfile(),
 *                      copy_file_range() and AIO (io_setup(),
 *                      io_submit(), io_uring_setup(), io_uring_enter())
 *   logged TEXT N      N library log lines of the case (and of the
 *                      library's start) contain TEXT (where AF_ALG
 *                      is there; the library is initialised again at
 *                      start so that its start-up log is seen)
 *   reinit [NAME=VALUE...]   gnutls_global_deinit(), the library's last
 *                      (its real deinit), the environment set (an empty
 *                      VALUE unsets NAME), and gnutls_global_init(): the
 *                      case's contexts live on across it
 *   deinit             gnutls_global_deinit() (last step): the case's
 *                      contexts are freed after it, and the library
 *                      initialised again after them
 *   setenv NAME=VALUE...   the environment set under the running
 *                      library (an empty VALUE unsets NAME), as a daemon
 *                      that clears its own
 *
 * After every case the library must not be in its error state (but
 * where "errstate:" says GnuTLS itself put it there).
 *
 * Environment: GNUTLS_AFALG (kernel: the kernel suite) decides whether
 * kernel checks apply; AFALG_TEST_SEED seeds the data.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include "contract.h"
#include "seam.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_SKIP 77
#define EXIT_ERROR 99

#define MAX_STEPS 64
#define MAX_ALGS 16
#define MAX_LINE 4096

struct kase {
	char name[128];
	unsigned defect;
	char algs[MAX_ALGS][24];
	unsigned nalgs;
	char env[512];
	struct step steps[MAX_STEPS];
	unsigned nsteps;
	unsigned split; /* matrix: steps before it run under the fault */
	bool matrix;
	bool kernel_only;
	bool alone;
	char known[256];
	bool errstate_allowed;
	const char *file;
	unsigned line;
};

static const struct harness *const families[] = {
	&cipher_family,
	&aead_family,
	&hash_family,
};

static bool afalg_present; /* the kernel has AF_ALG */
static bool module_active; /* and GNUTLS_AFALG=kernel */
static long afalg_size = -1; /* GNUTLS_AFALG=N: every threshold N */

/* ---- the library's log: kept, and passed on to stderr ---------------- */

#define MAX_LOG 4096
static char *log_lines[MAX_LOG];
static unsigned log_count;

static bool log_to_stderr;

static void log_func(int level, const char *text)
{
	if (log_to_stderr)
		fprintf(stderr, "gnutls[%d]: %s", level, text);
	if (log_count < MAX_LOG)
		log_lines[log_count++] = strdup(text);
}

/* ---- helpers for the family harnesses ---------------------------------- */

int fail(struct run *r, const struct step *s, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s%s [%s] line %u, %s: ", r->known ? "KNOWN" : "FAIL",
	       r->who, r->name, r->alg ? r->alg->name : "-", s ? s->line : 0,
	       s ? s->verb : "-");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return -1;
}

static const struct {
	const char *name;
	int code;
} errors[] = {
	{ "INVALID_REQUEST", GNUTLS_E_INVALID_REQUEST },
	{ "DECRYPTION_FAILED", GNUTLS_E_DECRYPTION_FAILED },
	{ "SHORT_MEMORY_BUFFER", GNUTLS_E_SHORT_MEMORY_BUFFER },
	{ "HASH_FAILED", GNUTLS_E_HASH_FAILED },
	{ "ENCRYPTION_FAILED", GNUTLS_E_ENCRYPTION_FAILED },
	{ "UNKNOWN_CIPHER_TYPE", GNUTLS_E_UNKNOWN_CIPHER_TYPE },
	{ "LIB_IN_ERROR_STATE", GNUTLS_E_LIB_IN_ERROR_STATE },
};

/* A step's return code against what the case expects of it. */
int check_ret(struct run *r, const struct step *s, int ret)
{
	if (s->any_error && ret < 0)
		return 1;
	if (ret == s->expect)
		return ret < 0 ? 1 : 0;
	return fail(r, s, "returned %s, expected %s",
		    ret < 0 ? gnutls_strerror_name(ret) : "0",
		    s->any_error ? "an error" :
		    s->expect	 ? gnutls_strerror_name(s->expect) :
				   "0");
}

int compare(struct run *r, const struct step *s, const char *what,
	    const void *got, const void *want, size_t len)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	if (memcmp(got, want, len) == 0)
		return 0;
	for (i = 0; g[i] == w[i]; i++)
		;
	return fail(r, s, "%s differs from the reference at byte %zu of %zu",
		    what, i, len);
}

long arg_num(const struct step *s, unsigned i, long def)
{
	unsigned n, k;

	for (n = 0, k = 0; k < s->nargs; k++) {
		if (s->args[k].name[0] != 0)
			continue;
		if (n++ == i)
			return s->args[k].num;
	}
	return def;
}

bool has_flag(const struct step *s, const char *name)
{
	unsigned k;

	for (k = 0; k < s->nargs; k++)
		if (strcmp(s->args[k].name, name) == 0)
			return true;
	return false;
}

long flag_num(const struct step *s, const char *name, long def)
{
	unsigned k;

	for (k = 0; k < s->nargs; k++)
		if (strcmp(s->args[k].name, name) == 0)
			return s->args[k].num;
	return def;
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL) {
		fprintf(stderr, "contract: out of memory\n");
		exit(EXIT_ERROR);
	}
	return p;
}

bool library_in_error_state(void)
{
	gnutls_hash_hd_t h;
	int ret = gnutls_hash_init(&h, GNUTLS_DIG_SHA256);

	if (ret == 0)
		gnutls_hash_deinit(h, NULL);
	return ret == GNUTLS_E_LIB_IN_ERROR_STATE;
}

/* ---- parsing ----------------------------------------------------------- */

static int error_code(const char *name, bool *any)
{
	unsigned i;

	*any = strcmp(name, "ERROR") == 0;
	if (*any)
		return GNUTLS_E_INTERNAL_ERROR;
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (strcmp(errors[i].name, name) == 0)
			return errors[i].code;
	return 0;
}

static long to_num(const char *v)
{
	char *end;
	long n;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	n = strtol(v, &end, 0);
	if (*end == 'K')
		n *= 1024;
	else if (*end == 'M')
		n *= 1024 * 1024;
	return n;
}

/* The next argument: a word, or a "quoted text" (kept with its quotes). */
static char *next_token(char **rest)
{
	char *p = *rest + strspn(*rest, " \t"), *end;

	if (*p == 0)
		return NULL;
	end = *p == '"' ? strchr(p + 1, '"') : NULL;
	end = end != NULL ? end + 1 : p + strcspn(p, " \t");
	*rest = *end ? end + 1 : end;
	*end = 0;
	return p;
}

/* "verb arg name=value "text" ... [-> ERROR]" */
static int parse_step(char *text, struct step *s, unsigned line)
{
	char *arrow = strstr(text, "->"), *tok, *save, *eq;

	memset(s, 0, sizeof(*s));
	s->line = line;
	if (arrow != NULL) {
		*arrow = 0;
		tok = strtok_r(arrow + 2, " \t", &save);
		if (tok == NULL ||
		    (s->expect = error_code(tok, &s->any_error)) == 0)
			return -1;
	}
	tok = strtok_r(text, " \t", &save);
	if (tok == NULL || strlen(tok) >= sizeof(s->verb))
		return -1;
	strcpy(s->verb, tok);
	while ((tok = next_token(&save)) != NULL) {
		if (s->nargs == MAX_ARGS)
			return -1;
		eq = strchr(tok, '=');
		if (eq != NULL && !isdigit((unsigned char)tok[0])) {
			*eq = 0;
			snprintf(s->args[s->nargs].name,
				 sizeof(s->args[0].name), "%s", tok);
			tok = eq + 1;
		} else if (!isdigit((unsigned char)tok[0]) &&
			   strchr(tok, ':') == NULL && tok[0] != '"') {
			snprintf(s->args[s->nargs].name,
				 sizeof(s->args[0].name), "%s", tok);
			tok = "";
		}
		snprintf(s->args[s->nargs].value, sizeof(s->args[0].value),
			 "%s", tok);
		s->args[s->nargs].num = to_num(tok);
		s->nargs++;
	}
	return 0;
}

static int parse_steps(struct kase *k, char *text, unsigned line)
{
	char *save, *part;

	for (part = strtok_r(text, ";|", &save); part != NULL;
	     part = strtok_r(NULL, ";|", &save)) {
		if (k->nsteps == MAX_STEPS)
			return -1;
		if (parse_step(part, &k->steps[k->nsteps++], line) < 0)
			return -1;
	}
	return 0;
}

static int parse_field(struct kase *k, char *key, char *value, unsigned line)
{
	char *save, *tok, *bar;

	/* a field cut short would select or set something else */
	if ((strcmp(key, "case") == 0 && strlen(value) >= sizeof(k->name)) ||
	    (strcmp(key, "known") == 0 && strlen(value) >= sizeof(k->known)) ||
	    (strcmp(key, "env") == 0 && strlen(value) >= sizeof(k->env)))
		return -1;
	if (strcmp(key, "case") == 0) {
		snprintf(k->name, sizeof(k->name), "%s", value);
	} else if (strcmp(key, "defect") == 0) {
		k->defect = atoi(value);
	} else if (strcmp(key, "alg") == 0) {
		for (tok = strtok_r(value, " \t", &save); tok != NULL;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (k->nalgs == MAX_ALGS || ref_find(tok) == NULL)
				return -1;
			snprintf(k->algs[k->nalgs++], sizeof(k->algs[0]), "%s",
				 tok);
		}
	} else if (strcmp(key, "only") == 0) {
		k->kernel_only = strcmp(value, "kernel") == 0;
		if (!k->kernel_only)
			return -1;
	} else if (strcmp(key, "alone") == 0) {
		k->alone = strcmp(value, "yes") == 0;
	} else if (strcmp(key, "known") == 0) {
		snprintf(k->known, sizeof(k->known), "%s", value);
	} else if (strcmp(key, "errstate") == 0) {
		k->errstate_allowed = true;
	} else if (strcmp(key, "env") == 0) {
		snprintf(k->env, sizeof(k->env), "%s", value);
	} else if (strcmp(key, "steps") == 0 || strcmp(key, "matrix") == 0) {
		k->matrix = key[0] == 'm';
		bar = strchr(value, '|');
		if (bar != NULL) {
			*bar = 0;
			if (parse_steps(k, value, line) < 0)
				return -1;
			k->split = k->nsteps;
			value = bar + 1;
		}
		if (parse_steps(k, value, line) < 0)
			return -1;
		if (bar == NULL)
			k->split = k->nsteps;
	} else {
		return -1;
	}
	return 0;
}

/* Reads every case of a file; a syntax error ends the program. */
static struct kase *load(const char *file, unsigned *count)
{
	char line[MAX_LINE], *colon, *v, *end;
	struct kase *cases = NULL, *k = NULL;
	unsigned n = 0, lineno = 0;
	FILE *fp = fopen(file, "r");

	if (fp == NULL) {
		fprintf(stderr, "contract: cannot open %s\n", file);
		exit(EXIT_ERROR);
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		end = line + strcspn(line, "\r\n");
		*end = 0;
		if (line[0] == '#' || line[0] == 0) {
			k = line[0] == 0 ? NULL : k;
			continue;
		}
		/* a case starts with its name */
		if (k == NULL || strncmp(line, "case:", 5) == 0) {
			cases = realloc(cases, (n + 1) * sizeof(*cases));
			if (cases == NULL)
				exit(EXIT_ERROR);
			k = &cases[n++];
			memset(k, 0, sizeof(*k));
			k->file = file;
			k->line = lineno;
		}
		colon = strchr(line, ':');
		if (colon == NULL)
			goto bad;
		*colon = 0;
		for (v = colon + 1; isspace((unsigned char)*v); v++)
			;
		if (parse_field(k, line, v, lineno) < 0)
			goto bad;
	}
	fclose(fp);
	*count = n;
	return cases;
bad:
	fprintf(stderr, "contract: %s:%u: cannot parse this line\n", file,
		lineno);
	exit(EXIT_ERROR);
}

/* ---- the shared steps -------------------------------------------------- */

static int do_fault(struct run *r, const struct step *s, const char *spec)
{
	int ret = seam_fault(spec);

	if (ret < 0)
		return fail(r, s, "bad fault specification %s", spec);
	return ret;
}

/* in the accel libgnutls, GNUTLS_PRIVATE_3_4: afalgtool's report
 * (afalg/afalg.c); weak: the program is linked with the system's */
int _gnutls_afalg_report(unsigned version, unsigned flags, gnutls_datum_t *out)
	__attribute__((weak));

/* Whether the library says the kernel refused the algorithm for this
 * process (Linux 7.3's allowlist, a driver 7.2 does not bind): "kernel"
 * steps do not apply to it then. */
static bool kernel_refused(const struct ref_alg *a)
{
	gnutls_datum_t report;
	char want[64], *p;
	bool refused = false;

	if (a == NULL || _gnutls_afalg_report == NULL ||
	    _gnutls_afalg_report(1, 0, &report) < 0)
		return false;
	snprintf(want, sizeof(want), "label=%s ", a->name);
	p = strstr((char *)report.data, want);
	if (p != NULL) {
		p = strstr(p, " state=");
		refused = p != NULL && strncmp(p, " state=unusable ", 16) == 0;
	}
	gnutls_free(report.data);
	return refused;
}

static int step_nofault(struct run *r, const struct step *s)
{
	long want = arg_num(s, 0, 1);
	int fired = do_fault(r, s, NULL);

	if (fired < 0)
		return -1;
	if (module_active && !kernel_refused(r->alg) && fired < want)
		return fail(r, s, "%d faults fired, expected at least %ld",
			    fired, want);
	return 0;
}

/* "kernel" or "nokernel" */
static int step_kernel(struct run *r, const struct step *s)
{
	bool want = s->verb[0] == 'k';
	int calls = do_fault(r, s, NULL);
	long at = flag_num(s, "at", -1);
	bool checked = want ? module_active && !kernel_refused(r->alg) :
			      afalg_present;

	if (at >= 0)
		checked = afalg_present && at == afalg_size;
	if (calls < 0 || !checked)
		return calls < 0 ? -1 : 0;
	if (want && calls == 0)
		return fail(r, s, "nothing went to the kernel");
	if (!want && calls > 0)
		return fail(r, s, "%d kernel requests, expected none", calls);
	return 0;
}

/* Descriptors open when the program started are not the module's.  (The
 * module keeps its own above a floor at most 4096.) */
#define MAX_FD 8192
static bool preexisting[MAX_FD];

static void note_preexisting(void)
{
	int fd;

	for (fd = 0; fd < MAX_FD; fd++)
		preexisting[fd] = fcntl(fd, F_GETFD) >= 0;
}

static bool is_afalg(int fd)
{
	int domain;
	socklen_t len = sizeof(domain);
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
	       domain == AF_ALG;
}

/* AF_ALG sockets of this process, but for those open at the start. */
static int count_fds(void)
{
	int fd, n = 0;

	for (fd = 3; fd < MAX_FD; fd++)
		n += !preexisting[fd] && is_afalg(fd);
	return n;
}

/* Sockets the module keeps between operations (a digest's unkeyed
 * socket, pooled one-shot sockets) may be there from earlier cases: only
 * those opened during this case count. */
static int fds_at_start;
static unsigned log_at_start, cases_run;

static int step_fds(struct run *r, const struct step *s)
{
	int n = count_fds() - fds_at_start;
	long max = arg_num(s, 0, 0);

	if (n > max)
		return fail(
			r, s,
			"%d AF_ALG sockets opened in this case, at most %ld allowed",
			n, max);
	return 0;
}

/* The application's connections under the numbers of the module's
 * sockets ("closefrom"), and what became of them ("ownfds"). */
static struct {
	int fd, peer;
	dev_t dev;
	ino_t ino;
} app_files[64];
static unsigned n_app_files;

static const char waiting[64] = "the peer's bytes, which the library "
				"must not take for a digest";

static int step_closefrom(struct run *r, const struct step *s)
{
	struct stat st;
	int fd, pair[2];

	for (; n_app_files > 0; n_app_files--)
		close(app_files[n_app_files - 1].peer);
	for (fd = 3; fd < MAX_FD && n_app_files < 64; fd++) {
		if (!is_afalg(fd))
			continue;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) <
			    0 ||
		    dup3(pair[0], fd, O_CLOEXEC) < 0 || fstat(fd, &st) < 0 ||
		    write(pair[1], waiting, sizeof(waiting)) != sizeof(waiting))
			return fail(r, s, "socketpair or dup3: %s",
				    strerror(errno));
		close(pair[0]);
		app_files[n_app_files].fd = fd;
		app_files[n_app_files].peer = pair[1];
		app_files[n_app_files].dev = st.st_dev;
		app_files[n_app_files++].ino = st.st_ino;
	}
	return 0;
}

static int step_ownfds(struct run *r, const struct step *s)
{
	char buf[sizeof(waiting)];
	struct stat st;
	unsigned i;
	int fd;

	for (i = 0; i < n_app_files; i++) {
		fd = app_files[i].fd;
		if (fstat(fd, &st) < 0)
			return fail(r, s,
				    "the application's socket %d was closed",
				    fd);
		if (st.st_dev != app_files[i].dev ||
		    st.st_ino != app_files[i].ino)
			return fail(r, s,
				    "the application's socket %d was replaced",
				    fd);
		if (recv(app_files[i].peer, buf, 1, MSG_DONTWAIT) >= 0)
			return fail(r, s,
				    "the library sent data to the peer of the "
				    "application's socket %d",
				    fd);
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_PEEK) !=
		    sizeof(buf))
			return fail(r, s,
				    "the library read from the application's "
				    "socket %d",
				    fd);
	}
	return 0;
}

/* The program run over exec (inherited.c), beside this one. */
static char checker[4096];

static void find_checker(void)
{
	ssize_t n = readlink("/proc/self/exe", checker, sizeof(checker) - 16);
	char *slash;

	checker[n > 0 ? n : 0] = 0;
	slash = strrchr(checker, '/');
	strcpy(slash ? slash + 1 : checker, "inherited");
}

static int run_checker(struct run *r, const struct step *s)
{
	char list[1024] = "";
	size_t len = 0;
	int fd, status;
	pid_t pid;

	for (fd = 0; fd < MAX_FD && len + 8 < sizeof(list); fd++)
		if (preexisting[fd])
			len += snprintf(list + len, sizeof(list) - len, "%d,",
					fd);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail(r, s, "fork: %s", strerror(errno));
	if (pid == 0) {
		execl(checker, "inherited", list, NULL);
		_exit(EXIT_ERROR);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return fail(r, s, "the exec'd checker did not finish");
	if (WEXITSTATUS(status) != 0)
		return fail(
			r, s,
			"a program exec'd by the application inherited %d AF_ALG sockets or pipes",
			WEXITSTATUS(status));
	return 0;
}

/* A thread that keeps opening kernel contexts while another forks and
 * execs: a descriptor made close-on-exec after the fact would be caught
 * in between. */
static volatile int racing;

static void *race_thread(void *arg)
{
	const gnutls_datum_t key = { (void *)"0123456789abcdef", 16 };
	uint8_t nonce[12] = { 0 }, buf[64 + 16];
	size_t len;

	(void)arg;
	while (racing) {
		gnutls_aead_cipher_hd_t h;

		if (gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM,
					    &key) < 0)
			continue;
		len = sizeof(buf);
		gnutls_aead_cipher_encrypt(h, nonce, 12, NULL, 0, 16, buf, 64,
					   buf, &len);
		gnutls_aead_cipher_deinit(h);
	}
	return NULL;
}

static int step_exec(struct run *r, const struct step *s)
{
	long i, times = arg_num(s, 0, 1);
	pthread_t t;
	int ret = 0;

	if (times <= 1)
		return run_checker(r, s);
	racing = 1;
	if (pthread_create(&t, NULL, race_thread, NULL) != 0)
		return fail(r, s, "pthread_create failed");
	for (i = 0; i < times && ret == 0; i++)
		ret = run_checker(r, s);
	racing = 0;
	pthread_join(t, NULL);
	return ret;
}

static int step_nofile(struct run *r, const struct step *s)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return fail(r, s, "getrlimit: %s", strerror(errno));
	rl.rlim_cur = arg_num(s, 0, 64);
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return fail(r, s, "setrlimit: %s", strerror(errno));
	return 0;
}

/* Descriptors taken up by "fdfull". */
static int full_fds[65536];
static unsigned n_full_fds;

static int step_fdfull(struct run *r, const struct step *s)
{
	int fd;

	(void)r;
	(void)s;
	while (n_full_fds < sizeof(full_fds) / sizeof(full_fds[0]) &&
	       (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		full_fds[n_full_fds++] = fd;
	return 0;
}

static int step_fdfree(struct run *r, const struct step *s)
{
	(void)r;
	(void)s;
	while (n_full_fds > 0)
		close(full_fds[--n_full_fds]);
	return 0;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	/* large blocks are mapped on their own, and counted apart */
	return mi.uordblks + mi.hblkhd;
}

/* Whether mallinfo2() sees this process's allocations: not under a
 * sanitizer or valgrind, whose allocators are not glibc's. */
static bool heap_visible(void)
{
	size_t before = heap_in_use();
	volatile char *p = malloc(1 << 20);
	bool seen;

	if (p == NULL)
		return false;
	p[0] = 1;
	seen = heap_in_use() >= before + (1 << 20);
	free((void *)p);
	return seen;
}

static int step_heap(struct run *r, const struct step *s)
{
	static size_t mark, ref;
	size_t now = heap_in_use();
	long most = arg_num(s, 0, -1), over = flag_num(s, "over", -1);

	if (!heap_visible()) {
		r->skip = "the heap is not glibc's here (a sanitizer or "
			  "valgrind): its growth cannot be seen";
		return 0;
	}
	if (has_flag(s, "ref")) {
		ref = now > mark ? now - mark : 0;
		return 0;
	}
	if (over >= 0)
		most = ref + over;
	if (most < 0)
		mark = now;
	else if (now > mark + (size_t)most)
		return fail(r, s,
			    "the heap grew by %zu bytes, at most %ld "
			    "expected",
			    now - mark, most);
	return 0;
}

/* socket(AF_ALG, ...) fails with EPERM (or the errno named: EACCES,
 * EAFNOSUPPORT); everything else is allowed. */
static int step_seccomp(struct run *r, const struct step *s)
{
	int err = has_flag(s, "EACCES")	      ? EACCES :
		  has_flag(s, "EAFNOSUPPORT") ? EAFNOSUPPORT :
						EPERM;
	int domain = has_flag(s, "netlink") ? AF_NETLINK : AF_ALG;
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, domain, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return fail(r, s, "seccomp: %s", strerror(errno));
	return 0;
}

/* defined where AddressSanitizer is linked in */
extern void __asan_init(void) __attribute__((weak));

/* A sandbox of the kind a server sets up after its initialisation: the
 * process is killed if the library opens a socket or a file, or makes,
 * renames or removes one. */
static int step_sandbox(struct run *r, const struct step *s)
{
#define KILL_ON(nr)                                      \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		KILL_ON(SYS_socket),
		KILL_ON(SYS_bind),
		KILL_ON(SYS_accept),
		KILL_ON(SYS_accept4),
		/* "sandbox socket" ends here */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		KILL_ON(SYS_open),
		KILL_ON(SYS_openat),
		KILL_ON(SYS_creat),
		KILL_ON(SYS_mkdir),
		KILL_ON(SYS_mkdirat),
		KILL_ON(SYS_rename),
		KILL_ON(SYS_renameat),
		KILL_ON(SYS_renameat2),
		KILL_ON(SYS_unlink),
		KILL_ON(SYS_unlinkat),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
#undef KILL_ON
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	const char *preload = getenv("LD_PRELOAD");

	if (has_flag(s, "socket"))
		prog.len = 1 + 4 * 2 + 1;

	if ((preload != NULL && strstr(preload, "vgpreload") != NULL) ||
	    __asan_init != NULL) {
		r->skip = "under valgrind or a sanitizer, whose own system "
			  "calls (reports, leak checks) the sandbox would kill";
		return 0;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return fail(r, s, "seccomp: %s", strerror(errno));
	return 0;
}

static int step_logged(struct run *r, const struct step *s)
{
	char text[64];
	unsigned i, n = 0;
	long want = arg_num(s, 0, 1);
	const char *v = s->args[0].value;

	if (!afalg_present)
		return 0;
	snprintf(text, sizeof(text), "%s", v[0] == '"' ? v + 1 : v);
	text[strcspn(text, "\"")] = 0;
	want = arg_num(s, 1, 1);
	for (i = log_at_start; i < log_count; i++)
		if (strstr(log_lines[i], text) != NULL)
			n++;
	if (n != (unsigned)want)
		return fail(r, s, "%u log lines contain \"%s\", expected %ld",
			    n, text, want);
	return 0;
}

/* ---- running a case ---------------------------------------------------- */

/* After "fork", parent and child take turns over a socket pair; once
 * one side has ended (or failed), the other runs its remaining steps
 * alone. */
struct lockstep {
	bool on;
	bool child;
	pid_t pid; /* the parent's: the child */
	int fd; /* this side's end; -1 once the other side ended */
};

/* A child of a single thread that waits in futex() waits forever: no
 * other thread can wake it (a lock it inherited held, say). */
static bool stuck_in_futex(pid_t pid)
{
	char path[64], line[256];
	bool alone = false, futex;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strcmp(line, "Threads:\t1\n") == 0)
			alone = true;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	/* the system call's number, or "running" */
	futex = fscanf(f, "%255s", line) == 1 && atol(line) == SYS_futex;
	fclose(f);
	return alone && futex;
}

static void turns_end(struct lockstep *ls)
{
	if (ls->fd >= 0)
		close(ls->fd);
	ls->fd = -1;
}

/* 0: the other side gave the turn; -1: it ended; -2: the child (from
 * the parent's side) is stuck and will never give it. */
static int wait_turn(struct lockstep *ls)
{
	struct pollfd p = { ls->fd, POLLIN, 0 };
	char c;

	if (ls->fd < 0)
		return -1;
	while (!ls->child && poll(&p, 1, 100) == 0)
		if (stuck_in_futex(ls->pid))
			return -2;
	if (read(ls->fd, &c, 1) == 1)
		return 0;
	turns_end(ls);
	return -1;
}

static void give_turn(struct lockstep *ls)
{
	if (ls->fd >= 0 && send(ls->fd, "x", 1, MSG_NOSIGNAL) != 1)
		turns_end(ls);
}

static int child_stuck(struct run *r, const struct step *s, struct lockstep *ls)
{
	kill(ls->pid, SIGKILL);
	return fail(r, s,
		    "the child waits in futex() with no other thread "
		    "to wake it (a lock inherited held?)");
}

/* "fork", or "_fork": _Fork(), which runs no atfork handler (GnuTLS's
 * own fork detection rests on one). */
static int step_fork(struct run *r, const struct step *s)
{
	struct lockstep *ls = r->ls;
	int pair[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
		return fail(r, s, "socketpair: %s", strerror(errno));
	fflush(stdout);
	pid = s->verb[0] == '_' ? _Fork() : fork();
	if (pid < 0)
		return fail(r, s, "fork: %s", strerror(errno));
	ls->on = true;
	ls->child = pid == 0;
	ls->pid = pid;
	ls->fd = pair[ls->child];
	close(pair[!ls->child]);
	if (ls->child) {
		r->who = "child: ";
		/* other data than the parent's from here on, so that a
		 * request that reaches the other's socket shows */
		rng_seed(&r->rng, rng_next(&r->rng), "child");
	}
	if (has_flag(s, "concurrent")) {
		turns_end(ls); /* no turns: both at once */
		return 0;
	}
	if (!ls->child && wait_turn(ls) == -2) /* it goes first */
		return child_stuck(r, s, ls);
	return 0;
}

/* The contract program holds the library's only initialisation (main()
 * undoes the constructor's), so that gnutls_global_deinit() here is the
 * real one. */
static bool library_down;

/* NAME=VALUE arguments into the environment; an empty VALUE unsets
 * NAME. */
static void set_env_args(const struct step *s)
{
	unsigned k;

	for (k = 0; k < s->nargs; k++) {
		if (s->args[k].value[0] == 0)
			unsetenv(s->args[k].name);
		else
			setenv(s->args[k].name, s->args[k].value, 1);
	}
}

/* The environment changed under the library, as a daemon that clears
 * its own does. */
static int step_setenv(struct run *r, const struct step *s)
{
	(void)r;
	set_env_args(s);
	return 0;
}

/* "reinit" or "deinit" */
static int step_reinit(struct run *r, const struct step *s)
{
	bool up = s->verb[0] == 'r';

	gnutls_global_deinit();
	library_down = !up;
	set_env_args(s);
	if (up && gnutls_global_init() < 0)
		return fail(r, s, "gnutls_global_init() failed");
	return 0;
}

static int step_fault(struct run *r, const struct step *s)
{
	return do_fault(r, s, s->args[0].value) < 0 ? -1 : 0;
}

static int step_count(struct run *r, const struct step *s)
{
	return do_fault(r, s, "send:PASS") < 0 ? -1 : 0;
}

static int step_swapped(struct run *r, const struct step *s)
{
	char why[128];

	if (seam_swapped_intact(why, sizeof(why)) < 0)
		return fail(r, s, "%s", why);
	return 0;
}

/* The kernel names of the module's table (lib/accelerated/afalg/
 * algorithms.c): the attack surface it opens, and no more. */
static const char *const table_names[] = {
	"cbc(aes)",
	"xts(aes)",
	"gcm(aes)",
	"ccm(aes)",
	"rfc7539(chacha20,poly1305)",
	"hmac(sha1)",
	"hmac(sha224)",
	"hmac(sha256)",
	"hmac(sha384)",
	"hmac(sha512)",
	"cmac(aes)",
	"sha1",
	"sha224",
	"sha256",
	"sha384",
	"sha512",
	"sha3-224",
	"sha3-256",
	"sha3-384",
	"sha3-512",
};
static const char *const templates[] = {
	"authenc", "rfc4106", "rfc4309", "rfc4543", "seqiv", "echainiv",
	"cryptd",  "pcrypt",  "cts(",	 "essiv",   "ecb(",
};
static unsigned bound_at_start;

static bool allowed_name(const char *name)
{
	const char *env = getenv("GNUTLS_AFALG"), *p;
	size_t len = strlen(name);
	unsigned i;

	for (i = 0; i < sizeof(table_names) / sizeof(table_names[0]); i++)
		if (strcmp(name, table_names[i]) == 0)
			return true;
	/* a driver the settings name, which the module binds only after
	 * the kernel said it implements the table's name: never one of
	 * the templates that wrap another algorithm */
	for (i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
		if (strstr(name, templates[i]) != NULL)
			return false;
	for (p = env; p != NULL && (p = strchr(p, '@')) != NULL; p++)
		if (strncmp(p + 1, name, len) == 0 &&
		    (p[1 + len] == ',' || p[1 + len] == 0))
			return true;
	return false;
}

static int step_bound(struct run *r, const struct step *s)
{
	unsigned i, n = seam_bound_count();
	const char *name;

	for (i = bound_at_start; i < n; i++) {
		name = seam_bound_name(i);
		if (name != NULL && !allowed_name(name))
			return fail(r, s, "an AF_ALG socket was bound to %s",
				    name);
	}
	if (seam_splice_pages() > 0)
		return fail(r, s, "%u sendmsg() calls with MSG_SPLICE_PAGES",
			    seam_splice_pages());
	return 0;
}

/* Copy Fail's ways into the page cache (CVE-2026-31431) and AIO kill the
 * process from now on. */
static int step_nosplice(struct run *r, const struct step *s)
{
#define KILL_ON(nr)                                      \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		KILL_ON(SYS_splice),
		KILL_ON(SYS_vmsplice),
		KILL_ON(SYS_tee),
		KILL_ON(SYS_sendfile),
		KILL_ON(SYS_copy_file_range),
		KILL_ON(SYS_io_setup),
		KILL_ON(SYS_io_submit),
		KILL_ON(SYS_io_uring_setup),
		KILL_ON(SYS_io_uring_enter),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
#undef KILL_ON
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return fail(r, s, "seccomp: %s", strerror(errno));
	return 0;
}

static int step_atmost(struct run *r, const struct step *s)
{
	long most = arg_num(s, 0, 0);
	int calls = seam_fault("?");

	if (calls > most)
		return fail(r, s, "%d calls, at most %ld expected", calls,
			    most);
	return 0;
}

/* clang-format off */
static const struct verb shared_verbs[] = {
	{ "fault", step_fault },
	{ "nofault", step_nofault },
	{ "count", step_count },
	{ "atmost", step_atmost },
	{ "bound", step_bound },
	{ "nosplice", step_nosplice },
	{ "swapped", step_swapped },
	{ "kernel", step_kernel },
	{ "nokernel", step_kernel },
	{ "fork", step_fork },
	{ "_fork", step_fork },
	{ "exec", step_exec },
	{ "fds", step_fds },
	{ "nofile", step_nofile },
	{ "fdfull", step_fdfull },
	{ "fdfree", step_fdfree },
	{ "heap", step_heap },
	{ "closefrom", step_closefrom },
	{ "ownfds", step_ownfds },
	{ "seccomp", step_seccomp },
	{ "sandbox", step_sandbox },
	{ "logged", step_logged },
	{ "reinit", step_reinit },
	{ "deinit", step_reinit },
	{ "setenv", step_setenv },
};
/* clang-format on */

/* Runs the step by its verb in verbs[n]: 0 done, 1 not one of them, -1
 * failed (reported). */
static int run_verb(const struct verb *verbs, size_t n, struct run *r,
		    const struct step *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(s->verb, verbs[i].name) == 0)
			return verbs[i].fn(r, s);
	return 1;
}

static const struct harness *family_of(const struct ref_alg *a)
{
	unsigned i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (families[i]->covers(a))
			return families[i];
	return NULL;
}

/* Runs steps [from, to); 0 when all passed. */
static int run_steps(struct run *r, const struct harness *f,
		     const struct kase *k, unsigned from, unsigned to,
		     struct lockstep *ls)
{
	unsigned i;
	int ret;

	r->ls = ls;
	for (i = from; i < to && r->skip == NULL; i++) {
		const struct step *s = &k->steps[i];
		long n, times = flag_num(s, "repeat", 1);

		for (n = 0, ret = 0; n < times && ret == 0; n++) {
			ret = run_verb(shared_verbs, N_VERBS(shared_verbs), r,
				       s);
			if (ret == 1)
				ret = run_verb(f->verbs, f->n_verbs, r, s);
		}
		if (ret > 0)
			ret = fail(r, s, "unknown step for %s", f->name);
		if (ret < 0)
			return -1;
		if (ls->on && strcmp(s->verb, "fork") != 0 &&
		    strcmp(s->verb, "_fork") != 0) {
			give_turn(ls);
			if (i + 1 < to && wait_turn(ls) == -2)
				return child_stuck(r, &k->steps[i + 1], ls);
		}
	}
	return 0;
}

static void run_init(struct run *r, const struct kase *k, const char *alg)
{
	const char *seed = getenv("AFALG_TEST_SEED");

	/* no fault from earlier cases */
	seam_fault(NULL);
	bound_at_start = seam_bound_count();
	fds_at_start = count_fds();
	/* the first case of a process sees the library's start too */
	log_at_start = cases_run++ == 0 ? 0 : log_count;
	memset(r, 0, sizeof(*r));
	r->name = k->name;
	r->alg = ref_find(alg);
	r->who = "";
	r->kernel = module_active;
	r->known = k->known[0] != 0 && !module_active;
	rng_seed(&r->rng, seed ? strtoull(seed, NULL, 0) : 1, k->name);
	rng_seed(&r->rng, rng_next(&r->rng), alg);
}

/* One case, one algorithm, in this process; 0 pass, -1 fail, EXIT_SKIP
 * skipped (said why). */
static int run_case(const struct kase *k, const char *alg, unsigned from,
		    unsigned to)
{
	struct lockstep ls = { 0 };
	const struct harness *f;
	struct run r;
	int ret, status;

	run_init(&r, k, alg);
	f = family_of(r.alg);
	if (f == NULL)
		return fail(&r, NULL, "no harness for this algorithm");
	r.fam = f->start(&r);
	ret = run_steps(&r, f, k, from, to, &ls);
	/* descriptors a case took up, also where it stopped early */
	step_fdfree(&r, NULL);
	if (ret == 0 && !k->errstate_allowed && library_in_error_state())
		ret = fail(&r, NULL, "the library is in its error state");
	f->finish(&r);
	if (ret == 0 && r.skip != NULL) {
		printf("SKIP %s%s [%s]: %s\n", r.who, k->name, alg, r.skip);
		ret = EXIT_SKIP;
	}
	if (library_down) {
		library_down = false;
		if (gnutls_global_init() < 0)
			ret = fail(&r, NULL, "gnutls_global_init() failed");
	}
	if (ls.on && ls.child) {
		fflush(stdout);
		_exit(ret < 0 ? EXIT_FAIL : ret);
	}
	if (ls.on) {
		turns_end(&ls);
		if (waitpid(-1, &status, 0) < 0 || !WIFEXITED(status) ||
		    (WEXITSTATUS(status) != 0 &&
		     WEXITSTATUS(status) != EXIT_SKIP)) {
			printf("FAIL %s [%s]: the child failed\n", k->name,
			       alg);
			ret = -1;
		}
	}
	return ret;
}

/* A case with "env:" or "alone:" runs in a new process, which loads the
 * library with that environment. */
static int run_in_env(const struct kase *k, const char *alg)
{
	char env[sizeof(k->env)], *tok, *save, self[4096];
	ssize_t n;
	int status;
	pid_t pid;

	/* this program by its path, not as /proc/self/exe, which under
	 * valgrind is valgrind's own tool (valgrind's readlink() gives the
	 * program's path) */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		snprintf(env, sizeof(env), "%s", k->env);
		for (tok = strtok_r(env, " ", &save); tok != NULL;
		     tok = strtok_r(NULL, " ", &save))
			putenv(strdup(tok));
		execl(self, "contract", "--case", k->name, "--alg", alg,
		      k->file, NULL);
		_exit(EXIT_ERROR);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	if (WIFSIGNALED(status))
		printf("KILLED %s [%s]: signal %d\n", k->name, alg,
		       WTERMSIG(status));
	if (!WIFEXITED(status))
		return -1;
	if (WEXITSTATUS(status) == EXIT_SKIP)
		return EXIT_SKIP;
	return WEXITSTATUS(status) == EXIT_PASS ? 0 : -1;
}

/* ---- the fault matrix -------------------------------------------------- */

static const char *const calls[] = { "socket", "bind", "accept", "setkey",
				     "setopt", "send", "recv" };
static const char *const errnos[] = { "ENOMEM", "EINVAL",  "EBUSY",
				      "EAGAIN", "EINTR",   "EMFILE",
				      "EPERM",	"EBADMSG", "SHORT" };
/* which call to fail first, and how many: 1 (0: all that follow) */
static const unsigned placements[][2] = { { 0, 1 }, { 2, 1 }, { 0, 0 } };

struct tally {
	unsigned cases, fired, failed;
};

/* One matrix case in a child: exit 0 pass, 1 fail; the fault count goes
 * back over a pipe. */
static void matrix_case(const struct kase *k, const char *alg, const char *spec,
			struct tally *t)
{
	struct lockstep ls = { 0 };
	const struct harness *f;
	struct run r;
	int fd[2], status, fired = 0;
	pid_t pid;

	if (pipe(fd) < 0)
		exit(EXIT_ERROR);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		run_init(&r, k, alg);
		f = family_of(r.alg);
		r.fam = f->start(&r);
		seam_fault(spec);
		status = run_steps(&r, f, k, 0, k->split, &ls);
		fired = seam_fault(NULL);
		if (status == 0)
			status = run_steps(&r, f, k, k->split, k->nsteps, &ls);
		if (status == 0 && library_in_error_state())
			status = fail(&r, NULL,
				      "the library is in its error state");
		if (write(fd[1], &fired, sizeof(fired)) != sizeof(fired))
			_exit(EXIT_ERROR);
		f->finish(&r);
		fflush(stdout);
		_exit(status < 0 ? EXIT_FAIL : EXIT_PASS);
	}
	close(fd[1]);
	if (read(fd[0], &fired, sizeof(fired)) != sizeof(fired))
		fired = 0;
	close(fd[0]);
	t->cases++;
	t->fired += fired > 0;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		printf("FAIL fault matrix %s [%s] with %s\n", k->name, alg,
		       spec);
		t->failed++;
	}
}

static int run_matrix(const struct kase *k, const char *alg, struct tally *t)
{
	unsigned c, e, p, failed = t->failed;
	char spec[64];

	for (c = 0; c < sizeof(calls) / sizeof(calls[0]); c++)
		for (e = 0; e < sizeof(errnos) / sizeof(errnos[0]); e++) {
			if (strcmp(errnos[e], "SHORT") == 0 &&
			    strcmp(calls[c], "send") != 0 &&
			    strcmp(calls[c], "recv") != 0)
				continue;
			for (p = 0; p < 3; p++) {
				snprintf(spec, sizeof(spec), "%s:%s:%u:%u",
					 calls[c], errnos[e], placements[p][0],
					 placements[p][1]);
				matrix_case(k, alg, spec, t);
			}
		}
	return t->failed == failed ? 0 : -1;
}

/* ---- main -------------------------------------------------------------- */

struct opts {
	int defect;
	const char *only_case;
	const char *only_alg;
	bool matrix;
};

static bool selected(const struct opts *o, const struct kase *k)
{
	if (o->matrix != k->matrix)
		return false;
	if (o->defect >= 0 && (unsigned)o->defect != k->defect)
		return false;
	return o->only_case == NULL || strcmp(o->only_case, k->name) == 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: contract [--defect N] [--case NAME] "
			"[--alg NAME] [--matrix] CASEFILE...\n");
	exit(EXIT_ERROR);
}

int main(int argc, char **argv)
{
	struct opts o = { .defect = -1 };
	struct tally t = { 0 };
	unsigned n, i, a, passed = 0, failed = 0, skipped = 0;
	struct kase *cases;
	const char *mode = getenv("GNUTLS_AFALG");
	int arg, fd, ret;

	note_preexisting();
	find_checker();
	for (arg = 1; arg < argc && argv[arg][0] == '-'; arg++) {
		if (strcmp(argv[arg], "--matrix") == 0)
			o.matrix = true;
		else if (arg + 1 >= argc)
			usage();
		else if (strcmp(argv[arg], "--defect") == 0)
			o.defect = atoi(argv[++arg]);
		else if (strcmp(argv[arg], "--case") == 0)
			o.only_case = argv[++arg];
		else if (strcmp(argv[arg], "--alg") == 0)
			o.only_alg = argv[++arg];
		else
			usage();
	}
	if (arg == argc || ref_check() < 0)
		usage();

	/* again, with the log seen from the start (at level 2 at least,
	 * where the module logs; printed if GNUTLS_DEBUG_LEVEL asks) */
	log_to_stderr = getenv("GNUTLS_DEBUG_LEVEL") != NULL;
	if (!log_to_stderr)
		gnutls_global_set_log_level(2);
	gnutls_global_set_log_function(log_func);
	gnutls_global_deinit();
	if (gnutls_global_init() < 0) {
		printf("FAIL: gnutls_global_init() failed\n");
		return EXIT_FAIL;
	}
	fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	afalg_present = fd >= 0;
	/* "kernel", or "kernel,NAME=kernel@DRIVER..." (engine.sh) */
	module_active = afalg_present && mode != NULL &&
			strncmp(mode, "kernel", 6) == 0 &&
			(mode[6] == 0 || mode[6] == ',');
	if (mode != NULL && mode[0] >= '0' && mode[0] <= '9')
		afalg_size = strtol(mode, NULL, 10);
	if (fd >= 0)
		close(fd);
	printf("contract: %s\n",
	       module_active ?
		       "the module is active: kernel checks apply" :
		       "the module is not active here (no AF_ALG, or GNUTLS_AFALG is not kernel): software path");
	if (o.matrix && !module_active) {
		printf("SKIP: the fault matrix needs the module active (AF_ALG, GNUTLS_AFALG=kernel)\n");
		return EXIT_SKIP;
	}

	for (; arg < argc; arg++) {
		cases = load(argv[arg], &n);
		for (i = 0; i < n; i++) {
			const struct kase *k = &cases[i];

			if (!selected(&o, k))
				continue;
			if (k->kernel_only && !module_active) {
				printf("SKIP %s: needs the module active\n",
				       k->name);
				skipped++;
				continue;
			}
			for (a = 0; a < k->nalgs; a++) {
				if (o.only_alg &&
				    strcmp(o.only_alg, k->algs[a]) != 0)
					continue;
				if (o.matrix)
					ret = run_matrix(k, k->algs[a], &t);
				else if ((k->env[0] || k->alone) &&
					 o.only_case == NULL)
					ret = run_in_env(k, k->algs[a]);
				else
					ret = run_case(k, k->algs[a], 0,
						       k->nsteps);
				if (ret < 0 && k->known[0] && !module_active) {
					printf("SKIP %s [%s]: stock GnuTLS: %s\n",
					       k->name, k->algs[a], k->known);
					skipped++;
					continue;
				}
				if (ret == EXIT_SKIP) {
					skipped++;
					continue;
				}
				if (ret == 0 && !o.matrix)
					printf("PASS %s [%s]\n", k->name,
					       k->algs[a]);
				ret == 0 ? passed++ : failed++;
			}
		}
		free(cases);
	}
	if (o.matrix)
		printf("fault matrix: %u cases, %u with a fault that fired, "
		       "%u failed\n",
		       t.cases, t.fired, t.failed);
	printf("contract: %u passed, %u failed, %u skipped\n", passed, failed,
	       skipped);
	if (passed + failed == 0) {
		printf("SKIP: no case selected\n");
		return EXIT_SKIP;
	}
	return failed ? EXIT_FAIL : EXIT_PASS;
}
