/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsm_buildid.h - C ABI of the GNU build-id reader (C++: buildid.cpp).
 *
 * Like fsm_core.h this header includes nothing and uses only compiler
 * types: the kernel glue (src/kernel/fileid.c), the C++ core and the
 * user-space tests (selftests/core/buildid) see the same thing.
 *
 * Overview
 * --------
 * fsm_buildid_parse() finds the NT_GNU_BUILD_ID note of an ELF file (32 or
 * 64 bit, little-endian) through the program headers: ELF header, at most
 * FSM_BUILDID_MAX_PHDRS program headers, and in each PT_NOTE segment at most
 * FSM_BUILDID_MAX_NOTE_BYTES bytes of notes. It never sees the file: every
 * byte comes from a read function of the caller, which reads exactly @len
 * bytes at a file offset or says why not (past the end of the file, or
 * "not now": the kernel glue reads only pages already in the page cache).
 *
 * Every size read from the file is bounded before any arithmetic uses it
 * (all offsets are computed in 64 bits from values below 2^32 + bounds), so
 * nothing wraps; a note is used only when it lies entirely inside the part
 * of its segment that is scanned; the build-id is copied to the caller only
 * from bytes that were read for it. The number of reads is bounded:
 * 2 + FSM_BUILDID_MAX_PHDRS * (1 + FSM_BUILDID_MAX_NOTE_BYTES / 12 * 2).
 *
 * Context: any context the read function allows; the parser itself takes
 * no lock, allocates nothing and uses about 100 bytes of stack.
 */
#ifndef FSM_BUILDID_H
#define FSM_BUILDID_H

#ifdef __cplusplus
extern "C" {
#endif

/* Longest build-id accepted (SHA-1); a longer descriptor is not a build-id. */
#define FSM_BUILDID_MAX			20
/* Program headers looked at (from the first). */
#define FSM_BUILDID_MAX_PHDRS		64
/* Bytes of one PT_NOTE segment scanned (from its start). */
#define FSM_BUILDID_MAX_NOTE_BYTES	4096

/* What a read function returns. */
enum fsm_bid_read {
	FSM_BID_READ_OK = 0,	/* all @len bytes were copied */
	FSM_BID_READ_EOF,	/* [off, off + len) is not inside the file */
	FSM_BID_READ_AGAIN,	/* not available now (e.g. not cached) */
};

/* Reads exactly @len bytes at file offset @off into @dst (or nothing). */
typedef int (*fsm_bid_read_fn)(void *ctx, unsigned long long off, void *dst,
			       unsigned int len);

/* What fsm_buildid_parse() found. */
enum fsm_bid_result {
	FSM_BID_FOUND = 0,	/* @bid holds *@bid_len (1..20) bytes */
	FSM_BID_NONE,		/* definitive: no usable build-id note */
	FSM_BID_UNAVAILABLE,	/* a read said "not now": ask again later */
};

/*
 * fsm_buildid_parse - the GNU build-id of the ELF file behind @rd.
 * @rd, @ctx: the read function and its argument
 * @bid:      FSM_BUILDID_MAX bytes; written only when FSM_BID_FOUND
 * @bid_len:  the build-id's length; written only when FSM_BID_FOUND
 *
 * Return: enum fsm_bid_result. FSM_BID_UNAVAILABLE when no build-id was
 * found and at least one read said FSM_BID_READ_AGAIN.
 */
int fsm_buildid_parse(fsm_bid_read_fn rd, void *ctx, unsigned char *bid,
		      unsigned int *bid_len);

#ifdef __cplusplus
}
#endif

#endif /* FSM_BUILDID_H */
