/*
 * Shared helpers for the Wycheproof-driven test harnesses: loading a
 * vector file with json-c, walking its groups and tests, hex decoding,
 * and counting outcomes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef WYCHEPROOF_H
#define WYCHEPROOF_H

#include <stddef.h>
#include <json-c/json.h>
#include <gnutls/gnutls.h>

/* Exit statuses, as understood by meson and automake test runners. */
#define WP_EXIT_PASS 0
#define WP_EXIT_FAIL 1
#define WP_EXIT_SKIP 77
#define WP_EXIT_ERROR 99

#define WP_MAX_REASONS 16
#define WP_REASON_LEN 128

enum wp_result {
	WP_VALID,
	WP_INVALID,
	WP_ACCEPTABLE
};

struct wp_reason {
	char text[WP_REASON_LEN];
	unsigned count;
};

/* Counters of one harness run, plus the state of the vector under test. */
struct wp_run {
	const char *prog;
	const char *alg;
	const char *source;
	unsigned total;
	unsigned passed;
	unsigned failed;
	unsigned skipped;
	unsigned not_applicable;
	unsigned n_reasons;
	struct wp_reason reasons[WP_MAX_REASONS];

	int cur_id;
	int cur_failed;
	int cur_skipped;
	int cur_not_applicable;
	char cur_reason[WP_REASON_LEN];
};

/* One test of a Wycheproof file together with the group holding it. */
struct wp_test {
	json_object *group;
	json_object *test;
	int tc_id;
	enum wp_result result;
};

/* A hex field of a test, decoded into a gnutls_datum_t inside a struct. */
struct wp_field {
	const char *name;
	size_t offset;
};

/* clang-format off */
#define WP_FIELD(type, member) { #member, offsetof(type, member) }
/* clang-format on */
#define WP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

typedef void (*wp_test_fn)(struct wp_run *run, const struct wp_test *t,
			   void *priv);

void wp_run_init(struct wp_run *run, const char *prog, const char *alg,
		 const char *source);
int wp_skip_all(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int wp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Loading and walking a vector file. */
int wp_load(const char *path, const char *family, json_object **root);
int wp_for_each_test(struct wp_run *run, json_object *root, wp_test_fn fn,
		     void *priv);
int wp_run_file(const char *prog, const char *alg, const char *path,
		const char *family, wp_test_fn fn, void *priv);

/* Outcome of the current vector; a vector with neither is a pass. */
void wp_begin(struct wp_run *run, int id);
void wp_end(struct wp_run *run);
void wp_fail(struct wp_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void wp_fail_diff(struct wp_run *run, const char *what, const void *got,
		  size_t got_len, const void *want, size_t want_len);
void wp_skip(struct wp_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void wp_not_applicable(struct wp_run *run);
int wp_finish(struct wp_run *run);

/* Algorithm look-up: 0 and the id if this GnuTLS offers it, else -1. */
int wp_cipher_lookup(const char *name, gnutls_cipher_algorithm_t *id);
int wp_mac_lookup(const char *name, gnutls_mac_algorithm_t *id);
int wp_digest_lookup(const char *name, gnutls_digest_algorithm_t *id);

/* Field access. */
int wp_group_int(const struct wp_test *t, const char *name);
int wp_has_flag(const struct wp_test *t, const char *flag);
int wp_decode_fields(struct wp_run *run, const struct wp_test *t,
		     const struct wp_field *fields, size_t n, void *vec);
void wp_free_fields(const struct wp_field *fields, size_t n, void *vec);
void wp_maybe_corrupt(const struct wp_run *run, const char *name,
		      gnutls_datum_t *d);

/*
 * Feeding a message to an incremental API in pieces: the sizes in @pieces
 * are used in turn, over and over, up to the first 0; a plan with no sizes
 * feeds the whole message at once. @max_len, if not 0, limits the plan to
 * messages of at most that many bytes (see wp_plan_fits()).
 */
#define WP_MAX_PIECES 9

struct wp_plan {
	const char *name;
	size_t max_len;
	size_t pieces[WP_MAX_PIECES];
};

typedef int (*wp_update_fn)(void *ctx, const unsigned char *data, size_t len);

int wp_plan_fits(const struct wp_plan *plan, size_t len);
int wp_feed(const struct wp_plan *plan, const unsigned char *data, size_t len,
	    wp_update_fn update, void *ctx);

/* Hex and buffer helpers. */
int wp_hex_decode(const char *hex, gnutls_datum_t *out);
int wp_datum_alloc(gnutls_datum_t *d, size_t size);
void wp_datum_free(gnutls_datum_t *d);
int wp_mem_eq(const void *a, size_t a_len, const void *b, size_t b_len);
const char *wp_basename(const char *path);

#endif /* WYCHEPROOF_H */
