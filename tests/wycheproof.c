/*
 * Shared helpers for the Wycheproof-driven test harnesses.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "wycheproof.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WP_HEX_SHOWN 24

void wp_run_init(struct wp_run *run, const char *prog, const char *alg,
		 const char *source)
{
	memset(run, 0, sizeof(*run));
	run->prog = prog;
	run->alg = alg;
	run->source = source;
}

/* Loads PATH, runs FN over every test of it and prints the summary; the
 * return value is the program's exit status. */
int wp_run_file(const char *prog, const char *alg, const char *path,
		const char *family, wp_test_fn fn, void *priv)
{
	struct wp_run run;
	json_object *root;
	int ret;

	ret = wp_load(path, family, &root);
	if (ret != 0)
		return ret;

	wp_run_init(&run, prog, alg, wp_basename(path));
	ret = wp_for_each_test(&run, root, fn, priv);
	json_object_put(root);
	if (ret < 0)
		return wp_error("%s: malformed test groups", path);
	return wp_finish(&run);
}

int wp_skip_all(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return WP_EXIT_SKIP;
}

int wp_error(const char *fmt, ...)
{
	va_list ap;

	printf("ERROR: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return WP_EXIT_ERROR;
}

const char *wp_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Loads @path into @root and checks that it holds vectors of @family (the
 * file's "algorithm" field). Returns 0, or the exit status to end with.
 */
int wp_load(const char *path, const char *family, json_object **root)
{
	json_object *obj, *alg, *groups;
	const char *name;
	int ret;

	if (access(path, R_OK) != 0)
		return wp_skip_all("cannot read %s: %s", path, strerror(errno));

	obj = json_object_from_file(path);
	if (obj == NULL)
		return wp_error("%s: not a JSON file", path);

	if (!json_object_object_get_ex(obj, "testGroups", &groups) ||
	    !json_object_is_type(groups, json_type_array) ||
	    !json_object_object_get_ex(obj, "algorithm", &alg)) {
		json_object_put(obj);
		return wp_error("%s: not a Wycheproof vector file", path);
	}

	name = json_object_get_string(alg);
	if (family != NULL && strcmp(name, family) != 0) {
		ret = wp_error("%s holds %s vectors, this algorithm needs %s",
			       path, name, family);
		json_object_put(obj);
		return ret;
	}

	*root = obj;
	return 0;
}

static int parse_result(const char *s, enum wp_result *out)
{
	static const struct {
		const char *name;
		enum wp_result result;
	} names[] = {
		{ "valid", WP_VALID },
		{ "invalid", WP_INVALID },
		{ "acceptable", WP_ACCEPTABLE },
	};
	size_t i;

	for (i = 0; i < WP_ARRAY_SIZE(names); i++) {
		if (s != NULL && strcmp(s, names[i].name) == 0) {
			*out = names[i].result;
			return 0;
		}
	}
	return -1;
}

static void run_one_test(struct wp_run *run, json_object *group,
			 json_object *test, wp_test_fn fn, void *priv)
{
	struct wp_test t = { .group = group, .test = test };
	json_object *obj;
	const char *result = NULL;

	if (json_object_object_get_ex(test, "tcId", &obj))
		t.tc_id = json_object_get_int(obj);
	if (json_object_object_get_ex(test, "result", &obj))
		result = json_object_get_string(obj);

	wp_begin(run, t.tc_id);
	if (parse_result(result, &t.result) < 0)
		wp_fail(run, "malformed vector: result \"%s\"",
			result ? result : "(none)");
	else
		fn(run, &t, priv);
	wp_end(run);
}

int wp_for_each_test(struct wp_run *run, json_object *root, wp_test_fn fn,
		     void *priv)
{
	json_object *groups, *group, *tests;
	size_t i, j, n_groups;

	if (!json_object_object_get_ex(root, "testGroups", &groups))
		return -1;

	n_groups = json_object_array_length(groups);
	for (i = 0; i < n_groups; i++) {
		group = json_object_array_get_idx(groups, i);
		if (!json_object_object_get_ex(group, "tests", &tests) ||
		    !json_object_is_type(tests, json_type_array))
			return -1;
		for (j = 0; j < json_object_array_length(tests); j++)
			run_one_test(run, group,
				     json_object_array_get_idx(tests, j), fn,
				     priv);
	}
	return 0;
}

void wp_begin(struct wp_run *run, int id)
{
	run->cur_id = id;
	run->cur_failed = 0;
	run->cur_skipped = 0;
	run->cur_not_applicable = 0;
}

static void count_reason(struct wp_run *run, const char *text)
{
	struct wp_reason *r;
	unsigned i;

	for (i = 0; i < run->n_reasons; i++) {
		if (strcmp(run->reasons[i].text, text) == 0) {
			run->reasons[i].count++;
			return;
		}
	}

	if (run->n_reasons == WP_MAX_REASONS) {
		/* Out of slots: fold the rest into the last one. */
		r = &run->reasons[WP_MAX_REASONS - 1];
		snprintf(r->text, sizeof(r->text), "other reasons");
		r->count++;
		return;
	}

	r = &run->reasons[run->n_reasons++];
	snprintf(r->text, sizeof(r->text), "%s", text);
	r->count = 1;
}

void wp_end(struct wp_run *run)
{
	if (run->cur_failed) {
		run->total++;
		run->failed++;
	} else if (run->cur_skipped) {
		run->total++;
		run->skipped++;
		count_reason(run, run->cur_reason);
	} else if (run->cur_not_applicable) {
		run->not_applicable++;
	} else {
		run->total++;
		run->passed++;
	}
}

void wp_fail(struct wp_run *run, const char *fmt, ...)
{
	va_list ap;

	run->cur_failed = 1;
	printf("FAIL %s %s tcId %d: ", run->prog, run->alg, run->cur_id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void hex_excerpt(char *out, size_t out_size, const unsigned char *p,
			size_t len, size_t from)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = from; i < len && i < from + WP_HEX_SHOWN; i++)
		n += snprintf(out + n, out_size - n, "%02x", p[i]);
	if (i < len)
		snprintf(out + n, out_size - n, "...");
	if (len == 0)
		snprintf(out, out_size, "(empty)");
}

void wp_fail_diff(struct wp_run *run, const char *what, const void *got,
		  size_t got_len, const void *want, size_t want_len)
{
	const unsigned char *g = got, *w = want;
	char got_hex[2 * WP_HEX_SHOWN + 8], want_hex[2 * WP_HEX_SHOWN + 8];
	size_t off = 0;

	while (off < got_len && off < want_len && g[off] == w[off])
		off++;

	hex_excerpt(got_hex, sizeof(got_hex), g, got_len, off);
	hex_excerpt(want_hex, sizeof(want_hex), w, want_len, off);
	if (got_len != want_len)
		wp_fail(run,
			"%s: length %zu, expected %zu (from byte %zu: %s, expected %s)",
			what, got_len, want_len, off, got_hex, want_hex);
	else
		wp_fail(run, "%s: differs at byte %zu: %s, expected %s", what,
			off, got_hex, want_hex);
}

void wp_skip(struct wp_run *run, const char *fmt, ...)
{
	va_list ap;

	if (run->cur_skipped)
		return;
	run->cur_skipped = 1;
	va_start(ap, fmt);
	vsnprintf(run->cur_reason, sizeof(run->cur_reason), fmt, ap);
	va_end(ap);
}

void wp_not_applicable(struct wp_run *run)
{
	run->cur_not_applicable = 1;
}

static void print_reasons(const struct wp_run *run)
{
	unsigned i;

	if (run->n_reasons == 0)
		return;
	printf(" (");
	for (i = 0; i < run->n_reasons; i++)
		printf("%s%u: %s", i ? "; " : "", run->reasons[i].count,
		       run->reasons[i].text);
	printf(")");
}

/* Prints the summary line and returns the exit status of the run. */
int wp_finish(struct wp_run *run)
{
	printf("%s %s %s: %u vectors, %u passed, %u failed, %u skipped",
	       run->prog, run->alg, run->source, run->total, run->passed,
	       run->failed, run->skipped);
	print_reasons(run);
	if (run->not_applicable)
		printf(" [%u vectors for other key sizes not applicable]",
		       run->not_applicable);
	printf("\n");

	if (run->failed)
		return WP_EXIT_FAIL;
	if (run->passed == 0)
		return wp_skip_all("no vector of %s could be tested for %s",
				   run->source, run->alg);
	return WP_EXIT_PASS;
}

int wp_cipher_lookup(const char *name, gnutls_cipher_algorithm_t *id)
{
	const gnutls_cipher_algorithm_t *p;

	*id = gnutls_cipher_get_id(name);
	for (p = gnutls_cipher_list(); *id != GNUTLS_CIPHER_UNKNOWN && *p; p++)
		if (*p == *id)
			return 0;
	return -1;
}

int wp_mac_lookup(const char *name, gnutls_mac_algorithm_t *id)
{
	const gnutls_mac_algorithm_t *p;

	*id = gnutls_mac_get_id(name);
	for (p = gnutls_mac_list(); *id != GNUTLS_MAC_UNKNOWN && *p; p++)
		if (*p == *id)
			return 0;
	return -1;
}

int wp_digest_lookup(const char *name, gnutls_digest_algorithm_t *id)
{
	const gnutls_digest_algorithm_t *p;

	*id = gnutls_digest_get_id(name);
	for (p = gnutls_digest_list(); *id != GNUTLS_DIG_UNKNOWN && *p; p++)
		if (*p == *id)
			return 0;
	return -1;
}

int wp_group_int(const struct wp_test *t, const char *name)
{
	json_object *obj;

	if (!json_object_object_get_ex(t->group, name, &obj))
		return -1;
	return json_object_get_int(obj);
}

int wp_has_flag(const struct wp_test *t, const char *flag)
{
	json_object *flags;
	size_t i;

	if (!json_object_object_get_ex(t->test, "flags", &flags))
		return 0;
	for (i = 0; i < json_object_array_length(flags); i++) {
		json_object *f = json_object_array_get_idx(flags, i);

		if (strcmp(json_object_get_string(f), flag) == 0)
			return 1;
	}
	return 0;
}

/*
 * Decodes the hex @fields of the current test into the gnutls_datum_t
 * members of @vec, which must start zeroed. On error the vector is marked
 * failed; free @vec with wp_free_fields() in any case.
 */
int wp_decode_fields(struct wp_run *run, const struct wp_test *t,
		     const struct wp_field *fields, size_t n, void *vec)
{
	json_object *obj;
	size_t i;

	for (i = 0; i < n; i++) {
		gnutls_datum_t *d =
			(gnutls_datum_t *)((char *)vec + fields[i].offset);

		if (!json_object_object_get_ex(t->test, fields[i].name, &obj)) {
			wp_fail(run, "malformed vector: no field \"%s\"",
				fields[i].name);
			return -1;
		}
		if (wp_hex_decode(json_object_get_string(obj), d) < 0) {
			wp_fail(run, "malformed vector: \"%s\" is not hex",
				fields[i].name);
			return -1;
		}
		wp_maybe_corrupt(run, fields[i].name, d);
	}
	return 0;
}

/*
 * Self-test hook: WP_CORRUPT=ID:FIELD in the environment flips the last
 * byte of FIELD of the vector with id ID, so that a run can show that the
 * harness notices a wrong expected value (the run must then fail).
 */
void wp_maybe_corrupt(const struct wp_run *run, const char *name,
		      gnutls_datum_t *d)
{
	const char *env = getenv("WP_CORRUPT");
	char *field;
	long id;

	if (env == NULL || d->size == 0)
		return;
	id = strtol(env, &field, 10);
	if (id != run->cur_id || *field != ':' || strcmp(field + 1, name) != 0)
		return;
	d->data[d->size - 1] ^= 0x01;
}

void wp_free_fields(const struct wp_field *fields, size_t n, void *vec)
{
	size_t i;

	for (i = 0; i < n; i++)
		wp_datum_free(
			(gnutls_datum_t *)((char *)vec + fields[i].offset));
}

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes @hex into a fresh buffer; data is never NULL, even when empty. */
int wp_hex_decode(const char *hex, gnutls_datum_t *out)
{
	size_t i, len;

	if (hex == NULL || strlen(hex) % 2 != 0)
		return -1;
	len = strlen(hex) / 2;
	if (wp_datum_alloc(out, len) < 0)
		return -1;

	for (i = 0; i < len; i++) {
		int hi = hex_nibble(hex[2 * i]);
		int lo = hex_nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			wp_datum_free(out);
			return -1;
		}
		out->data[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

int wp_datum_alloc(gnutls_datum_t *d, size_t size)
{
	d->data = malloc(size ? size : 1);
	d->size = d->data ? size : 0;
	return d->data ? 0 : -1;
}

void wp_datum_free(gnutls_datum_t *d)
{
	free(d->data);
	d->data = NULL;
	d->size = 0;
}

int wp_mem_eq(const void *a, size_t a_len, const void *b, size_t b_len)
{
	return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

int wp_plan_fits(const struct wp_plan *plan, size_t len)
{
	return plan->max_len == 0 || len <= plan->max_len;
}

/* Calls @update on successive pieces of @data; 0 or its first error. */
int wp_feed(const struct wp_plan *plan, const unsigned char *data, size_t len,
	    wp_update_fn update, void *ctx)
{
	size_t n = 0, off, piece, step = 0;
	int ret;

	while (n < WP_MAX_PIECES && plan->pieces[n] != 0)
		n++;

	for (off = 0; off < len; off += piece) {
		piece = n ? plan->pieces[step++ % n] : len;
		if (piece > len - off)
			piece = len - off;
		ret = update(ctx, data + off, piece);
		if (ret < 0)
			return ret;
	}
	return 0;
}
