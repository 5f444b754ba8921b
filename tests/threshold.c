/*
 * The rule afalgtool --calibrate applies to what it measured
 * (src/afalgtool-threshold.h), over the cases of threshold.cases: blocks
 * of "case: NAME", "ratio: R..." (one per size measured) and "expect:
 * SIZE|never".
 *
 * Usage: threshold CASEFILE
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afalgtool-threshold.h"

static const unsigned long sizes[] = { 64, 256, 1024, 4096, 8192, 16384, 60000 };
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

int main(int argc, char **argv)
{
	char line[1024], name[256] = "", want[32] = "", got[32];
	double ratio[N_SIZES];
	unsigned n = 0, passed = 0, failed = 0, k;
	FILE *fp;

	if (argc != 2 || (fp = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "usage: threshold CASEFILE\n");
		return 99;
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "case: ", 6) == 0) {
			snprintf(name, sizeof(name), "%s", line + 6);
			n = 0;
		} else if (strncmp(line, "ratio: ", 7) == 0) {
			char *p = line + 7, *end;

			for (n = 0; n < N_SIZES; n++, p = end) {
				ratio[n] = strtod(p, &end);
				if (end == p)
					break;
			}
		} else if (strncmp(line, "expect: ", 8) == 0) {
			snprintf(want, sizeof(want), "%s", line + 8);
			if (n != N_SIZES) {
				printf("FAIL %s: %u ratios, expected %zu\n",
				       name, n, N_SIZES);
				failed++;
				continue;
			}
			k = afalg_threshold_index(ratio, N_SIZES, AFALG_MARGIN);
			if (k < N_SIZES)
				snprintf(got, sizeof(got), "%lu", sizes[k]);
			else
				snprintf(got, sizeof(got), "never");
			if (strcmp(got, want) == 0) {
				printf("PASS %s: %s\n", name, got);
				passed++;
			} else {
				printf("FAIL %s: %s, expected %s\n", name, got,
				       want);
				failed++;
			}
		}
	}
	fclose(fp);
	printf("threshold: %u passed, %u failed\n", passed, failed);
	return failed > 0 || passed == 0;
}
