/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracecmd_write.h - the trace.dat writer of libtracecmd, as stackmap-ctl
 * extract uses it.
 *
 * libtracecmd exports these functions (they are in libtracecmd.so's
 * dynamic symbol table, trace-cmd's own `extract` and `record` use them)
 * but its installed header, trace-cmd.h, declares only the reader. The
 * prototypes below are those of trace-cmd-private.h of trace-cmd 3.1.6
 * (libtracecmd 1.3.1, Debian 12), unchanged in later releases;
 * tools/ctl/CMakeLists.txt links a program that calls each one before it
 * builds stackmap-ctl, so a library without them fails the build, not a
 * run. Only extract.cpp includes this header.
 */
#ifndef STACKMAP_CTL_TRACECMD_WRITE_H
#define STACKMAP_CTL_TRACECMD_WRITE_H

#include <stdbool.h>

struct tracefs_instance;
struct tracecmd_output;
struct tracecmd_recorder;
struct tracecmd_event_list;

#ifdef __cplusplus
extern "C" {
#endif

/* A reader of per_cpu/cpu@cpu/trace_pipe_raw of @instance (NULL: the top
 * level) into @file; @flags 0: splice, as trace-cmd extract. */
struct tracecmd_recorder *tracecmd_create_buffer_recorder(const char *file, int cpu,
							  unsigned flags,
							  struct tracefs_instance *instance);
/* Read what the buffer holds now; @finish: the last, partial page too. */
long tracecmd_flush_recording(struct tracecmd_recorder *recorder, bool finish);
void tracecmd_free_recorder(struct tracecmd_recorder *recorder);

struct tracecmd_output *tracecmd_output_create(const char *output_file);
/* Headers, every event's format (@list NULL: all), kallsyms, printk formats. */
int tracecmd_output_write_headers(struct tracecmd_output *handle,
				  struct tracecmd_event_list *list);
/* An instance buffer; @cpus 0: as many as the top level. */
int tracecmd_add_buffer_info(struct tracecmd_output *handle, const char *name, int cpus);
int tracecmd_write_cmdlines(struct tracecmd_output *handle);
/* The top level's per-CPU data files, then each instance's. */
int tracecmd_append_cpu_data(struct tracecmd_output *handle, int cpus,
			     char *const *cpu_data_files);
int tracecmd_append_buffer_cpu_data(struct tracecmd_output *handle, const char *name,
				    int cpus, char *const *cpu_data_files);
void tracecmd_output_close(struct tracecmd_output *handle);

#ifdef __cplusplus
}
#endif

#endif
