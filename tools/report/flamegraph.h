/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flamegraph.h - a self-contained interactive SVG flame graph of folded
 * stacks ("frame;frame;... count", outermost first), written by our own
 * code: frames as <g class="f"> with a <rect> whose width is the frame's
 * share of the total, and an embedded script (hover: name, count, share;
 * click: zoom; search: highlight and matched share) and style sheet.
 *
 * Each frame's <g> carries its data for the script and for tests:
 * data-n (name), data-c (count), data-d (depth, 0 = the root "all"),
 * data-x (the count of the frames left of it at its depth: its start).
 * Children are ordered by name, so a given input gives the same SVG.
 */
#ifndef STACKMAP_REPORT_FLAMEGRAPH_H
#define STACKMAP_REPORT_FLAMEGRAPH_H

#include <cstdint>
#include <map>
#include <string>

namespace smr::report {

struct FlameOptions {
	std::string title = "Flame Graph";
	int width = 1200;		/* pixels */
	bool reverse = false;		/* icicle: the root on top */
	double minwidth = 0.1;		/* pixels: narrower frames are left out */
	int task_levels = 1;		/* frames at depth 1..N: the task palette
					 * (comm; host and comm with --by-host) */
};

/* Frame palettes: which one a frame is drawn in. */
enum class Palette { ROOT, TASK, USER, KERNEL };

/* the palette of a frame at depth d (root = 0) named name */
Palette frame_palette(const std::string &name, int depth, int task_levels);
/* its fill, "#rrggbb": the palette's hue range, the name's hash within it */
std::string frame_color(const std::string &name, Palette p);

/* the SVG document of folded stacks (key: the frames joined by ';') */
std::string flamegraph_svg(const std::map<std::string, uint64_t> &folded,
			   const FlameOptions &o);

} /* namespace smr::report */

#endif
