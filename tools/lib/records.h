/* SPDX-License-Identifier: GPL-2.0 */
/*
 * records.h - the fields of the stackmap records (Documentation/tracing.rst
 * "The stack records", Documentation/ustack.rst "Records"), read through
 * libtraceevent from one tep_record. No libtracecmd: the trace-cmd plugin
 * (plugin/plugin_stackmap.cpp) decodes with it inside trace-cmd's process,
 * stackmap-report through trace.cpp.
 */
#ifndef STACKMAP_REPORT_RECORDS_H
#define STACKMAP_REPORT_RECORDS_H

#include "trace.h"

namespace smr {

/* "stack_id", "stack_def", ... for a kind other than OTHER, else nullptr */
const char *kind_name(Kind k);
/* the kind of an event of the stackmap system by its name; OTHER if not ours */
Kind kind_of(const tep_event *ev);
/*
 * Decode the fields of x.kind from r into x (x.event must be r's event).
 * Every field is checked to lie inside the record; one that does not
 * sets x.bad and x.bad_why. Nothing is done for Kind::OTHER.
 */
void decode_stackmap(Rec &x, tep_record *r);

} /* namespace smr */

#endif
