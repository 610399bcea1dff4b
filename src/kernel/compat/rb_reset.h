/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rb_reset.h - ring buffer resets, seen where they happen.
 *
 * The flight recorder (events.c, fsm_rb_position()) must know when a CPU
 * buffer of an instance lost every record it held: a reset (echo > trace,
 * trace-cmd's reset, a trace_clock change, an event module going away), a
 * snapshot swap, a new sub-buffer size. The ring buffer's counters say so
 * only until other events refill the buffer past the module's last look,
 * and reading the buffer (its oldest page) takes the CPU buffer's
 * reader_lock, which a source event may already hold on this CPU
 * (selftests/guest/stackmap_rb_reader.sh). So the functions that do it
 * are hooked instead (kretprobes, by name: which ones a kernel has is a
 * kernel difference, hence compat/), and count, per bucket of buffers
 * (a hash of the struct trace_buffer pointer), the calls that started and
 * the calls that returned. The record path only reads the two counts:
 * no lock, no loop, any context (NMI included).
 */
#ifndef FSM_COMPAT_RB_RESET_H
#define FSM_COMPAT_RB_RESET_H

#include <linux/types.h>

struct trace_buffer;

/**
 * fsm_rb_reset_seq - the resets of @buffer's bucket so far.
 * @buffer: a ring buffer
 * @busy:   set if one of them (or of another buffer of the bucket) has
 *          not returned yet
 *
 * Context: any, NMI included. Return: the count of resets that started
 * (modulo 2^32). With *@busy false, every reset counted had returned when
 * the count was read; any reset that starts later makes it change. See
 * rb_reset.c for the ordering.
 */
u32 fsm_rb_reset_seq(const struct trace_buffer *buffer, bool *busy);

/* Context: task (module init, exit). */
void fsm_rb_reset_init(void);
void fsm_rb_reset_exit(void);

#endif /* FSM_COMPAT_RB_RESET_H */
