/*
 * Many TLS sessions at once and one after another: client and server
 * sessions live in this one process and talk over in-memory byte queues
 * (no sockets, no threads).  Every call is non-blocking; the program
 * alternates between the two sides of a pair until the pair is done.
 *
 * Usage: tls-sessions [--sequential N] [--concurrent M] [--bytes B]
 *                     [--nofile L] [--key-update] [--priority P]
 *                     [--seed S]
 *
 *   --sequential N  N sessions one after another: each is handshaken,
 *                   carries its data and is closed before the next starts
 *   --concurrent M  M sessions open at the same time: all are handshaken,
 *                   then data goes over all of them interleaved (one
 *                   record per session in turn), then all are closed
 *                   (with neither option: --sequential 1; with both, the
 *                   sequential sessions run first)
 *   --bytes B       per session, B bytes from client to server, which the
 *                   server echoes back; both sides check every byte.
 *                   Each gnutls_record_send() takes a random size of 1 to
 *                   16384 bytes (default 16384)
 *   --nofile L      sets the soft RLIMIT_NOFILE to L before
 *                   gnutls_global_init() (the AF_ALG module derives its cap
 *                   on descriptors from it).  This program defines
 *                   GNUTLS_SKIP_GLOBAL_INIT, so the library is not
 *                   initialized before main() runs.
 *   --key-update    both sides call gnutls_session_key_update() halfway
 *                   through the data they send, the client with
 *                   GNUTLS_KU_PEER; by the end of the data the server must
 *                   have received one KeyUpdate message and the client two
 *                   (the server's own and its answer; TLS 1.3 only)
 *   --priority P    the priority string (default: TLS 1.3, AES-128-GCM,
 *                   plain PSK key exchange, which is cheap under emulation:
 *                   DEFAULT_PRIORITY below)
 *   --seed S        seed of the data and record sizes (printed)
 *
 * Credentials are a random PSK, so no file is needed.  GnuTLS's own
 * handshake timeout is turned off: nothing here depends on time.
 *
 * Prints the negotiated session once, then one summary line.
 * Exit status: 0 pass, 1 a session failed, 77 skip, 99 error.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

/* The library is initialized in main(), after setrlimit(). */
GNUTLS_SKIP_GLOBAL_INIT

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_SKIP 77
#define EXIT_ERROR 99

#define RECORD_MAX 16384
#define MAX_MESSAGES 10

/* Plain PSK: with DHE-PSK or ECDHE-PSK also allowed, the client computes
 * key shares even when plain PSK is chosen (with DHE-PSK, a finite-field
 * one: 20 times the cost of the whole session on the host). */
#define DEFAULT_PRIORITY \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:-KX-ALL:+PSK"

struct queue {
	unsigned char *data;
	size_t off, len, cap;
};

struct pair;

struct end {
	gnutls_session_t session;
	struct pair *pair;
	struct queue *in, *out;
	size_t sent, received; /* application data */
	unsigned key_updates; /* KeyUpdate messages received */
	int updated; /* gnutls_session_key_update() was called */
	int done; /* handshake or close finished */
};

/* end[0] is the client, end[1] the server; wire[i] is what end[i] sends. */
struct pair {
	unsigned id;
	struct end end[2];
	struct queue wire[2];
	unsigned char *data; /* what the client sends */
	unsigned char *echo; /* what the server received, and sends back */
	unsigned long long moved; /* bytes pushed and pulled */
	int failed, finished;
};

static const char *const side[] = { "client", "server" };

static size_t bytes = RECORD_MAX;
static int key_update;
static gnutls_priority_t priority;
static gnutls_psk_client_credentials_t client_cred;
static gnutls_psk_server_credentials_t server_cred;
static gnutls_datum_t psk;
static uint64_t rng_state;
static unsigned messages;

static void error(const char *fmt, ...)
{
	va_list ap;

	fputs("tls-sessions: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_ERROR);
}

/* splitmix64 */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Marks the pair failed; the first messages are printed. */
static int pair_fail(struct pair *p, const char *fmt, ...)
{
	va_list ap;

	p->failed = 1;
	if (++messages > MAX_MESSAGES)
		return -1;
	printf("tls-sessions: session %u: ", p->id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (messages == MAX_MESSAGES)
		printf("tls-sessions: (further failures are not shown)\n");
	return -1;
}

/* The in-memory transport: a pull from an empty queue is EAGAIN. */
static ssize_t push(gnutls_transport_ptr_t ptr, const void *buf, size_t n)
{
	struct end *e = ptr;
	struct queue *q = e->out;

	if (q->cap - q->len < n) {
		size_t cap = 2 * q->cap + n;
		unsigned char *data = realloc(q->data, cap);

		if (data == NULL) {
			gnutls_transport_set_errno(e->session, ENOMEM);
			return -1;
		}
		q->data = data;
		q->cap = cap;
	}
	memcpy(q->data + q->len, buf, n);
	q->len += n;
	e->pair->moved += n;
	return n;
}

static ssize_t pull(gnutls_transport_ptr_t ptr, void *buf, size_t n)
{
	struct end *e = ptr;
	struct queue *q = e->in;

	if (q->off == q->len) {
		gnutls_transport_set_errno(e->session, EAGAIN);
		return -1;
	}
	if (n > q->len - q->off)
		n = q->len - q->off;
	memcpy(buf, q->data + q->off, n);
	q->off += n;
	if (q->off == q->len)
		q->off = q->len = 0;
	e->pair->moved += n;
	return n;
}

static int pull_timeout(gnutls_transport_ptr_t ptr, unsigned ms)
{
	struct end *e = ptr;

	(void)ms;
	return e->in->off < e->in->len;
}

static int count_key_update(gnutls_session_t session, unsigned htype,
			    unsigned when, unsigned incoming,
			    const gnutls_datum_t *msg)
{
	struct end *e = gnutls_session_get_ptr(session);

	(void)htype;
	(void)when;
	(void)msg;
	if (incoming)
		e->key_updates++;
	return 0;
}

static int psk_lookup(gnutls_session_t session, const char *user,
		      gnutls_datum_t *key)
{
	(void)session;
	if (strcmp(user, "test") != 0)
		return -1;
	key->data = gnutls_malloc(psk.size);
	if (key->data == NULL)
		return -1;
	memcpy(key->data, psk.data, psk.size);
	key->size = psk.size;
	return 0;
}

static void pair_init(struct pair *p, unsigned id)
{
	size_t i;
	int ret;

	memset(p, 0, sizeof(*p));
	p->id = id;
	p->data = malloc(bytes);
	p->echo = malloc(bytes);
	if (p->data == NULL || p->echo == NULL)
		error("out of memory");
	for (i = 0; i < bytes; i++)
		p->data[i] = rnd();

	for (i = 0; i < 2; i++) {
		struct end *e = &p->end[i];
		unsigned flags = i ? GNUTLS_SERVER : GNUTLS_CLIENT;
		void *cred = i ? (void *)server_cred : (void *)client_cred;
		gnutls_session_t s;

		ret = gnutls_init(&e->session, flags | GNUTLS_NONBLOCK);
		if (ret < 0)
			error("gnutls_init: %s", gnutls_strerror(ret));
		s = e->session;
		e->pair = p;
		e->out = &p->wire[i];
		e->in = &p->wire[!i];
		ret = gnutls_priority_set(s, priority);
		if (ret >= 0)
			ret = gnutls_credentials_set(s, GNUTLS_CRD_PSK, cred);
		if (ret < 0)
			error("setting up a session: %s", gnutls_strerror(ret));
		gnutls_session_set_ptr(s, e);
		gnutls_transport_set_ptr(s, e);
		gnutls_transport_set_push_function(s, push);
		gnutls_transport_set_pull_function(s, pull);
		gnutls_transport_set_pull_timeout_function(s, pull_timeout);
		gnutls_handshake_set_timeout(s, GNUTLS_INDEFINITE_TIMEOUT);
		gnutls_handshake_set_hook_function(s,
						   GNUTLS_HANDSHAKE_KEY_UPDATE,
						   GNUTLS_HOOK_POST,
						   count_key_update);
	}
}

static void pair_deinit(struct pair *p)
{
	unsigned i;

	for (i = 0; i < 2; i++) {
		gnutls_deinit(p->end[i].session);
		free(p->wire[i].data);
	}
	free(p->data);
	free(p->echo);
}

/* Calls fn on each side that has not finished yet (handshake, bye). */
static int both(struct pair *p, int (*fn)(gnutls_session_t), const char *what)
{
	unsigned i;
	int ret;

	for (i = 0; i < 2; i++) {
		if (p->end[i].done)
			continue;
		ret = fn(p->end[i].session);
		if (ret == 0)
			p->end[i].done = 1;
		else if (ret != GNUTLS_E_AGAIN && ret != GNUTLS_E_INTERRUPTED)
			return pair_fail(p, "%s %s: %s", side[i], what,
					 gnutls_strerror(ret));
	}
	return p->end[0].done && p->end[1].done;
}

static int handshake(struct pair *p)
{
	return both(p, gnutls_handshake, "handshake");
}

static int bye(gnutls_session_t session)
{
	return gnutls_bye(session, GNUTLS_SHUT_RDWR);
}

static int close_both(struct pair *p)
{
	return both(p, bye, "close");
}

/* Sends one record of random size from buf[e->sent..avail); with
 * --key-update, a key update first once half of the data has gone. */
static int send_some(struct end *e, const unsigned char *buf, size_t avail)
{
	int client = e == &e->pair->end[0];
	size_t n = 1 + rnd() % RECORD_MAX;
	ssize_t ret;

	if (e->sent == avail)
		return 0;
	if (key_update && !e->updated && e->sent < bytes / 2) {
		if (n > bytes / 2 - e->sent)
			n = bytes / 2 - e->sent;
	} else if (key_update && !e->updated) {
		ret = gnutls_session_key_update(e->session,
						client ? GNUTLS_KU_PEER : 0);
		if (ret < 0)
			return pair_fail(e->pair, "%s key update: %s",
					 side[!client], gnutls_strerror(ret));
		e->updated = 1;
	}
	if (n > avail - e->sent)
		n = avail - e->sent;
	/* a push never fails, so neither does a send halfway */
	ret = gnutls_record_send(e->session, buf + e->sent, n);
	if (ret <= 0)
		return pair_fail(e->pair, "%s send: %s", side[!client],
				 gnutls_strerror(ret));
	e->sent += ret;
	return 0;
}

/* Receives all that has arrived, checks it against want[] and keeps it
 * in keep[] if that is not NULL. */
static int receive(struct end *e, const unsigned char *want,
		   unsigned char *keep)
{
	const char *name = side[e != &e->pair->end[0]];
	unsigned char buf[RECORD_MAX];
	ssize_t ret;

	for (;;) {
		ret = gnutls_record_recv(e->session, buf, sizeof(buf));
		if (ret == GNUTLS_E_AGAIN || ret == GNUTLS_E_INTERRUPTED)
			return 0;
		if (ret == 0)
			return pair_fail(
				e->pair,
				"%s: close_notify after %zu of %zu bytes", name,
				e->received, bytes);
		if (ret < 0)
			return pair_fail(e->pair, "%s receive: %s", name,
					 gnutls_strerror(ret));
		if ((size_t)ret > bytes - e->received)
			return pair_fail(e->pair,
					 "%s: %zu bytes received, %zu sent",
					 name, e->received + ret, bytes);
		if (memcmp(buf, want + e->received, ret) != 0)
			return pair_fail(
				e->pair,
				"%s: the data differs in bytes %zu to %zu",
				name, e->received, e->received + ret - 1);
		if (keep)
			memcpy(keep + e->received, buf, ret);
		e->received += ret;
	}
}

/* One round of the data exchange: the client sends a record, the server
 * receives and sends one back, the client receives the echo. */
static int exchange(struct pair *p)
{
	struct end *c = &p->end[0], *s = &p->end[1];

	if (send_some(c, p->data, bytes) < 0 ||
	    receive(s, p->data, p->echo) < 0 ||
	    send_some(s, p->echo, s->received) < 0 ||
	    receive(c, p->data, NULL) < 0)
		return -1;
	if (c->received < bytes)
		return 0;
	if (key_update && (s->key_updates != 1 || c->key_updates != 2))
		return pair_fail(p,
				 "key updates received: client %u, server %u "
				 "(expected 2 and 1)",
				 c->key_updates, s->key_updates);
	return 1;
}

static int stalled(struct pair *p, const char *phase)
{
	struct end *c = &p->end[0], *s = &p->end[1];

	return pair_fail(p,
			 "%s stalled: client sent %zu, received %zu; "
			 "server received %zu, sent %zu",
			 phase, c->sent, c->received, s->received, s->sent);
}

/*
 * Runs one phase on pairs[0..n): step() on each pair in turn until
 * every pair has finished the phase (step() returns 1) or failed (-1).
 * Nothing moves between two calls but what the calls do, so a call that
 * moves no byte while its pair is unfinished means the pair has stalled.
 */
static void drive(struct pair *pairs, unsigned n, int (*step)(struct pair *),
		  const char *phase)
{
	unsigned i, busy;

	for (i = 0; i < n; i++) {
		pairs[i].finished = pairs[i].failed;
		pairs[i].end[0].done = pairs[i].end[1].done = 0;
	}
	do {
		busy = 0;
		for (i = 0; i < n; i++) {
			struct pair *p = &pairs[i];
			unsigned long long moved = p->moved;
			int ret;

			if (p->finished)
				continue;
			ret = step(p);
			if (ret == 0 && p->moved == moved)
				ret = stalled(p, phase);
			if (ret != 0)
				p->finished = 1;
			else
				busy = 1;
		}
	} while (busy);
}

struct totals {
	unsigned sessions, failed;
	unsigned long long bytes;
	int described;
};

/* Handshakes, exchanges data over and closes n sessions, each phase over
 * all of them before the next. */
static void run(unsigned n, struct totals *t)
{
	struct pair *pairs = calloc(n, sizeof(*pairs));
	unsigned i;

	if (pairs == NULL)
		error("out of memory");
	for (i = 0; i < n; i++)
		pair_init(&pairs[i], t->sessions + i);

	drive(pairs, n, handshake, "handshake");
	for (i = 0; i < n && !t->described; i++) {
		gnutls_session_t s = pairs[i].end[0].session;
		char *desc;

		if (pairs[i].failed)
			continue;
		desc = gnutls_session_get_desc(s);
		printf("tls-sessions: negotiated %s\n", desc);
		gnutls_free(desc);
		t->described = 1;
		if (key_update &&
		    gnutls_protocol_get_version(s) != GNUTLS_TLS1_3)
			error("--key-update needs TLS 1.3");
	}
	drive(pairs, n, exchange, "data exchange");
	drive(pairs, n, close_both, "close");

	for (i = 0; i < n; i++) {
		t->failed += pairs[i].failed;
		t->bytes += pairs[i].end[0].received + pairs[i].end[1].received;
		pair_deinit(&pairs[i]);
	}
	t->sessions += n;
	free(pairs);
}

static unsigned long long number(const char *arg, unsigned long long max)
{
	unsigned long long v = 0;
	char *end = NULL;

	errno = 0;
	if (arg[0] >= '0' && arg[0] <= '9')
		v = strtoull(arg, &end, 10);
	if (end == NULL || *end || errno || v > max)
		error("bad number '%s' (at most %llu)", arg, max);
	return v;
}

static void set_nofile(rlim_t limit)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		error("getrlimit: %s", strerror(errno));
	if (rl.rlim_max != RLIM_INFINITY && limit > rl.rlim_max) {
		printf("SKIP: the hard RLIMIT_NOFILE is %llu, below %llu\n",
		       (unsigned long long)rl.rlim_max,
		       (unsigned long long)limit);
		exit(EXIT_SKIP);
	}
	rl.rlim_cur = limit;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		error("setrlimit: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "sequential", required_argument, NULL, 's' },
		{ "concurrent", required_argument, NULL, 'c' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "nofile", required_argument, NULL, 'n' },
		{ "key-update", no_argument, NULL, 'k' },
		{ "priority", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	const char *prio = DEFAULT_PRIORITY, *err = NULL;
	unsigned long long sequential = 0, concurrent = 0, nofile = 0, seed;
	unsigned char key[32];
	struct totals t = { 0 };
	struct timeval tv;
	unsigned long long i;
	int opt, ret;

	gettimeofday(&tv, NULL);
	seed = (unsigned long long)tv.tv_sec * 1000000 + tv.tv_usec;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			sequential = number(optarg, 1U << 30);
			break;
		case 'c':
			concurrent = number(optarg, 1U << 20);
			break;
		case 'b':
			bytes = number(optarg, 1ULL << 32);
			break;
		case 'n':
			nofile = number(optarg, 1U << 30);
			break;
		case 'k':
			key_update = 1;
			break;
		case 'p':
			prio = optarg;
			break;
		case 'r':
			seed = number(optarg, ~0ULL);
			break;
		default:
			error("usage: tls-sessions [--sequential N] "
			      "[--concurrent M] [--bytes B] [--nofile L] "
			      "[--key-update] [--priority P] [--seed S]");
		}
	}
	if (optind < argc)
		error("unexpected argument '%s'", argv[optind]);
	if (bytes == 0)
		error("--bytes must be at least 1");
	if (sequential == 0 && concurrent == 0)
		sequential = 1;
	rng_state = seed;

	if (nofile) {
		set_nofile(nofile);
		printf("tls-sessions: RLIMIT_NOFILE soft limit %llu\n", nofile);
	}
	ret = gnutls_global_init();
	if (ret < 0)
		error("gnutls_global_init: %s", gnutls_strerror(ret));
	ret = gnutls_priority_init(&priority, prio, &err);
	if (ret < 0)
		error("priority '%s' (at '%s'): %s", prio, err ? err : "",
		      gnutls_strerror(ret));
	ret = gnutls_rnd(GNUTLS_RND_KEY, key, sizeof(key));
	if (ret < 0)
		error("gnutls_rnd: %s", gnutls_strerror(ret));
	psk.data = key;
	psk.size = sizeof(key);
	if (gnutls_psk_allocate_client_credentials(&client_cred) < 0 ||
	    gnutls_psk_allocate_server_credentials(&server_cred) < 0 ||
	    gnutls_psk_set_client_credentials(client_cred, "test", &psk,
					      GNUTLS_PSK_KEY_RAW) < 0)
		error("cannot set up the PSK credentials");
	gnutls_psk_set_server_credentials_function(server_cred, psk_lookup);

	for (i = 0; i < sequential; i++)
		run(1, &t);
	if (concurrent)
		run(concurrent, &t);

	gnutls_psk_free_client_credentials(client_cred);
	gnutls_psk_free_server_credentials(server_cred);
	gnutls_priority_deinit(priority);
	gnutls_global_deinit();

	printf("%s: %u sessions (%llu sequential, %llu concurrent), "
	       "%zu bytes each way per session%s, %llu bytes checked, "
	       "%u failed, seed %llu\n",
	       t.failed ? "FAIL" : "PASS", t.sessions, sequential, concurrent,
	       bytes, key_update ? " with key updates" : "", t.bytes, t.failed,
	       seed);
	return t.failed ? EXIT_FAIL : EXIT_PASS;
}
