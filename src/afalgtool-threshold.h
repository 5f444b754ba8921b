/*
 * Copyright (C) 2026 gnutls-afalg contributors
 *
 * This file is part of GnuTLS.
 *
 * GnuTLS is free software: you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation, either version 3 of the License, or
 * (at your option) any later version.
 *
 * GnuTLS is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

#ifndef GNUTLS_SRC_AFALGTOOL_THRESHOLD_H
#define GNUTLS_SRC_AFALGTOOL_THRESHOLD_H

/* The kernel must take under this share of software's time: within it
 * software is kept, since it costs no system call. */
#define AFALG_MARGIN 0.95

/* Where the kernel starts, from the kernel/software time ratio measured
 * at n increasing sizes: the index k of the first size that goes to the
 * kernel (n: none), the one that minimises the sum of (ratio - margin)
 * over the sizes from k on.  The kernel's lead grows with the size, so
 * the answer is a single step; a lone noisy size among winners (or
 * losers) moves the sum a little, not the step.  A tie keeps software. */
static inline unsigned afalg_threshold_index(const double *ratio, unsigned n,
					     double margin)
{
	double sum = 0, best = 0;
	unsigned k, best_k = n;

	for (k = n; k-- > 0;) {
		sum += ratio[k] - margin;
		if (sum < best) {
			best = sum;
			best_k = k;
		}
	}
	return best_k;
}

#endif /* GNUTLS_SRC_AFALGTOOL_THRESHOLD_H */
