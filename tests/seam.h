/*
 * The kernel calls of the AF_ALG backend, made to fail by the test that
 * links seam.c: it interposes the C library's socket(), bind(),
 * accept4(), setsockopt(), sendmsg() and recvmsg() (the program is linked
 * with -rdynamic, so that libgnutls's calls reach these first), and acts
 * on AF_ALG sockets only.  libgnutls has no test hook of its own.
 *
 * seam_fault("CALL:ERRNO[:SKIP[:COUNT]]") makes the SKIP+1st call to CALL
 * (socket, bind, accept, setkey, setopt, send, recv) fail with ERRNO, and
 * the COUNT-1 calls after it (COUNT 0: all); ERRNO "SHORT" makes a read
 * or write short by a byte, "PASS" only counts the calls, and "SWAP"
 * (socket, accept) lets the call succeed and then puts an application's
 * connection under the number it returns, as a thread that closed the
 * new descriptor and connected at once would: the connection's peer has
 * bytes waiting.  NULL or "" ends it; "?" only returns the count.  Returns the number of faults
 * injected (calls counted) since the last call, or -1 for a bad
 * specification.  Not for a fault under threads: its state is plain.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef AFALG_TESTS_SEAM_H
#define AFALG_TESTS_SEAM_H

int seam_fault(const char *spec);

/* The connections "SWAP" put in place are as they were: not closed, no
 * byte sent to their peers, none of theirs read.  0, or -1 with why. */
int seam_swapped_intact(char *why, unsigned size);

/* The names the program's AF_ALG sockets were bound to, in order (the
 * first 256), and their count; and how many sendmsg() calls on them
 * asked for MSG_SPLICE_PAGES. */
const char *seam_bound_name(unsigned i);
unsigned seam_bound_count(void);
unsigned seam_splice_pages(void);

#endif
