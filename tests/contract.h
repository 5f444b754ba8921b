/*
 * The contract tests: cases are data (the files in tests/contract/), each a
 * sequence of steps through the public GnuTLS API, kernel faults and
 * process events, and every result is compared with the Nettle
 * reference (reference.h).  contract.c reads the cases and runs the
 * steps every family shares; contract-cipher.c, contract-aead.c and
 * contract-hash.c run the steps of one family each.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef AFALG_TESTS_CONTRACT_H
#define AFALG_TESTS_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "reference.h"

#define MAX_ARGS 8
#define MAX_HANDLES 2 /* a hash context and its copy */

/* One step: "verb arg... [-> ERROR]"; an argument is a number or
 * name[=value]. */
struct step {
	char verb[24];
	unsigned nargs;
	struct {
		char name[24];
		char value[64];
		long num; /* the number, or the value as a number; -1: none */
	} args[MAX_ARGS];
	int expect; /* 0, a GNUTLS_E_* code, or EXPECT_ANY_ERROR */
	bool any_error;
	unsigned line;
};

struct lockstep; /* contract.c's turns of parent and child after fork */

/* What a family harness keeps between steps (its own part in fam). */
struct run {
	const char *name; /* the case */
	const struct ref_alg *alg;
	struct rng rng;
	bool kernel; /* the module is active: AF_ALG and GNUTLS_AFALG=kernel */
	const char *skip; /* the case cannot be checked here: why */
	const char *who; /* "", or "child: " after fork */
	bool known; /* a failure is stock GnuTLS's known fault (a skip) */
	struct lockstep *ls;
	void *fam;
};

/* A verb and its step function; one function may serve verbs that tell
 * themselves apart by s->verb ("kernel" and "nokernel", say). */
struct verb {
	const char *name;
	int (*fn)(struct run *r, const struct step *s);
};

struct harness {
	const char *name;
	bool (*covers)(const struct ref_alg *a);
	void *(*start)(struct run *r);
	void (*finish)(struct run *r);
	const struct verb *verbs; /* the family's steps */
	size_t n_verbs;
};

#define N_VERBS(verbs) (sizeof(verbs) / sizeof((verbs)[0]))

extern const struct harness cipher_family;
extern const struct harness aead_family;
extern const struct harness hash_family;

/* For the family harnesses */
int fail(struct run *r, const struct step *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int check_ret(struct run *r, const struct step *s, int ret);
int compare(struct run *r, const struct step *s, const char *what,
	    const void *got, const void *want, size_t len);
long arg_num(const struct step *s, unsigned i, long def);
bool has_flag(const struct step *s, const char *name);
long flag_num(const struct step *s, const char *name, long def);
void *xmalloc(size_t size);
bool library_in_error_state(void);

#endif /* AFALG_TESTS_CONTRACT_H */
