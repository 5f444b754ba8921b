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
 * or write short by a byte, "PASS" only counts the calls.  NULL or ""
 * ends it; "?" only returns the count.  Returns the number of faults
 * injected (calls counted) since the last call, or -1 for a bad
 * specification.  Not for a fault under threads: its state is plain.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef AFALG_TESTS_SEAM_H
#define AFALG_TESTS_SEAM_H

int seam_fault(const char *spec);

#endif
