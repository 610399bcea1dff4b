// SPDX-License-Identifier: GPL-2.0
/*
 * flamegraph.cpp - see flamegraph.h. The tree of frames is laid out in
 * counts (a frame starts where its left sibling ends, its children start
 * where it starts); pixels are count * (width - 2 * pad) / total.
 */
#include "flamegraph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace smr::report {

namespace {

constexpr int kPad = 10;		/* left and right margins */
constexpr int kFrameH = 16;		/* one level */
constexpr int kTop = 40;		/* title and controls */
constexpr int kBottom = 24;		/* the details line */
constexpr double kCharW = 7.2;		/* monospace 12px */

struct Node {
	std::string name;
	uint64_t count = 0;
	uint64_t x = 0;		/* start, in counts */
	int depth = 0;
	std::map<std::string, size_t> kids;	/* by name: a stable order */
};

uint32_t fnv1a(const std::string &s)
{
	uint32_t h = 2166136261u;
	for (unsigned char c : s) {
		h ^= c;
		h *= 16777619u;
	}
	return h;
}

std::string hsl_hex(double h, double s, double l)
{
	auto f = [&](double n) {
		double k = std::fmod(n + h / 30.0, 12.0);
		double a = s * std::min(l, 1 - l);
		double v = l - a * std::max(-1.0, std::min({k - 3, 9 - k, 1.0}));
		return int(std::lround(v * 255));
	};
	char b[8];
	snprintf(b, sizeof(b), "#%02x%02x%02x", f(0), f(8), f(4));
	return b;
}

/* XML text: the five entities; control characters and bytes that are not
 * UTF-8 (a comm is any bytes) become '?' so the document stays well-formed */
std::string xml(const std::string &s)
{
	std::string o;
	o.reserve(s.size());
	for (size_t i = 0; i < s.size();) {
		unsigned char c = static_cast<unsigned char>(s[i]);
		int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		bool ok = n > 0 && i + size_t(n) <= s.size();
		for (int k = 1; ok && k < n; k++)
			ok = (static_cast<unsigned char>(s[i + size_t(k)]) >> 6) == 2;
		if (!ok) {
			o += '?';
			i++;
			continue;
		}
		if (n > 1) {
			o.append(s, i, size_t(n));
			i += size_t(n);
			continue;
		}
		switch (c) {
		case '&': o += "&amp;"; break;
		case '<': o += "&lt;"; break;
		case '>': o += "&gt;"; break;
		case '"': o += "&quot;"; break;
		case '\'': o += "&apos;"; break;
		default: o += (c < 0x20 && c != '\t') ? '?' : char(c); break;
		}
		i++;
	}
	return o;
}

std::string num(double v)
{
	char b[32];
	snprintf(b, sizeof(b), "%.2f", v);
	return b;
}

/* the label that fits w pixels ("" when not even 3 characters do) */
std::string fit(const std::string &name, double w)
{
	size_t max = w > 6 ? size_t((w - 6) / kCharW) : 0;
	if (max < 3)
		return "";
	if (name.size() <= max)
		return name;
	return name.substr(0, max - 2) + "..";
}

/* The script: our own, ES5, no library. Hover, zoom, search; see the
 * help line in the SVG. */
const char *const kScript = R"JS(
(function () {
'use strict';
var svg = document.documentElement;
var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');
var TOTAL = +svg.getAttribute('data-total'), CW = 7.2;
var details = document.getElementById('details');
var matched = document.getElementById('matched');
var unzoomBtn = document.getElementById('unzoom');
var frames = Array.prototype.map.call(document.querySelectorAll('g.f'), function (g) {
	var r = g.querySelector('rect');
	return { g: g, r: r, t: g.querySelector('text'), n: g.getAttribute('data-n'),
		 c: +g.getAttribute('data-c'), x: +g.getAttribute('data-x'),
		 d: +g.getAttribute('data-d'), fill: r.getAttribute('fill') };
});
var searchRe = null;
function share(c) { return TOTAL ? (100 * c / TOTAL).toFixed(2) : '0.00'; }
function label(f, w) {
	var max = w > 6 ? Math.floor((w - 6) / CW) : 0;
	f.t.textContent = max < 3 ? '' : f.n.length <= max ? f.n : f.n.slice(0, max - 2) + '..';
}
function place(f, x, w) {
	f.r.setAttribute('x', x.toFixed(2));
	f.r.setAttribute('width', w.toFixed(2));
	f.t.setAttribute('x', (x + 3).toFixed(2));
	label(f, w);
}
/* show the frames within [x0, x0 + c0) of the counts, at full width; d0:
 * the depth of the zoomed frame, whose ancestors stay (faded) */
function layout(x0, c0, d0) {
	var scale = (W - 2 * PAD) / c0;
	frames.forEach(function (f) {
		var show, x, w;
		if (f.d < d0) {
			show = f.x <= x0 && f.x + f.c >= x0 + c0;
			x = PAD; w = W - 2 * PAD;
		} else {
			show = f.x >= x0 && f.x + f.c <= x0 + c0;
			x = PAD + (f.x - x0) * scale; w = f.c * scale;
		}
		f.g.style.display = show ? '' : 'none';
		f.g.classList.toggle('anc', show && f.d < d0);
		if (show)
			place(f, x, w);
	});
	unzoomBtn.style.opacity = d0 > 0 ? 1 : 0.3;
}
function zoom(f) { layout(f.x, f.c, f.d); }
function unzoom() { layout(0, TOTAL, 0); }
/* highlight the frames whose name matches term (a regular expression; a
 * plain string when it is not one); the matched share counts nested
 * matches once. Returns {count, share}; '' clears. */
function search(term) {
	if (!term) {
		searchRe = null;
		frames.forEach(function (f) { f.r.setAttribute('fill', f.fill); });
		matched.textContent = '';
		svg.removeAttribute('data-matched');
		return { count: 0, share: '0.00' };
	}
	try {
		searchRe = new RegExp(term);
	} catch (e) {
		searchRe = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
	}
	var hits = [];
	frames.forEach(function (f) {
		var m = searchRe.test(f.n);
		f.r.setAttribute('fill', m ? '#e040e0' : f.fill);
		if (m)
			hits.push(f);
	});
	hits.sort(function (a, b) { return a.x - b.x || b.c - a.c; });
	var count = 0, end = -1;
	hits.forEach(function (f) {
		if (f.x >= end) {
			count += f.c;
			end = f.x + f.c;
		} else if (f.x + f.c > end) {
			count += f.x + f.c - end;
			end = f.x + f.c;
		}
	});
	var s = share(count);
	matched.textContent = 'Matched: ' + s + '% (' + count + ' of ' + TOTAL + ')';
	svg.setAttribute('data-matched', count);
	return { count: count, share: s };
}
function ask() {
	var t = window.prompt('Search frames (regular expression):', searchRe ? searchRe.source : '');
	if (t !== null)
		search(t);
}
frames.forEach(function (f) {
	f.g.addEventListener('mouseover', function () {
		details.textContent = f.n + ' (' + f.c + ' records, ' + share(f.c) + '%)';
	});
	f.g.addEventListener('mouseout', function () { details.textContent = ' '; });
	f.g.addEventListener('click', function () { f.d ? zoom(f) : unzoom(); });
});
unzoomBtn.addEventListener('click', unzoom);
document.getElementById('search').addEventListener('click', ask);
window.addEventListener('keydown', function (e) {
	if ((e.key === 'f' && (e.ctrlKey || e.metaKey)) || e.key === '/') {
		e.preventDefault();
		ask();
	} else if (e.key === 'Escape') {
		search('');
		unzoom();
	}
});
window.smrSearch = search;
window.smrZoom = function (i) { zoom(frames[i]); };
window.smrUnzoom = unzoom;
/* file.svg#search=REGEX&zoom=NAME: search, zoom into the first frame
 * NAME, on load */
window.location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
	var i = kv.indexOf('='), k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
	if (k === 'search')
		search(v);
	else if (k === 'zoom')
		frames.some(function (f) { return f.n === v && (zoom(f), true); });
});
})();
)JS";

const char *const kStyle = R"CSS(
text { font-family: monospace; font-size: 12px; fill: #000; }
.f text { pointer-events: none; }
.f:hover rect { stroke: #000; stroke-width: 0.5; }
.f { cursor: pointer; }
.anc { opacity: 0.55; }
#title { font-size: 16px; text-anchor: middle; }
#unzoom, #search { cursor: pointer; fill: #0645ad; }
#search, #matched { text-anchor: end; }
)CSS";

} /* namespace */

Palette frame_palette(const std::string &name, int depth, int task_levels)
{
	if (depth == 0)
		return Palette::ROOT;
	if (depth <= task_levels)
		return Palette::TASK;
	const std::string k = "_[k]";
	if (name.size() >= k.size() && name.compare(name.size() - k.size(), k.size(), k) == 0)
		return Palette::KERNEL;
	return Palette::USER;
}

std::string frame_color(const std::string &name, Palette p)
{
	double v = double(fnv1a(name) % 1000) / 1000.0;	/* 0..1 */
	double v2 = double((fnv1a(name) / 1000) % 1000) / 1000.0;
	switch (p) {
	case Palette::ROOT: return hsl_hex(0, 0, 0.75);
	case Palette::TASK: return hsl_hex(200 + 35 * v, 0.6, 0.62 + 0.1 * v2);
	case Palette::USER: return hsl_hex(85 + 60 * v, 0.55, 0.45 + 0.12 * v2);
	case Palette::KERNEL: default: return hsl_hex(40 * v, 0.8, 0.55 + 0.1 * v2);
	}
}

std::string flamegraph_svg(const std::map<std::string, uint64_t> &folded,
			   const FlameOptions &o)
{
	std::vector<Node> t(1);
	t[0].name = "all";
	int maxdepth = 0;
	for (const auto &[stack, n] : folded) {
		if (!n)
			continue;
		size_t cur = 0;
		t[0].count += n;
		int d = 0;
		for (size_t b = 0; b <= stack.size();) {
			size_t e = stack.find(';', b);
			if (e == std::string::npos)
				e = stack.size();
			std::string f = stack.substr(b, e - b);
			b = e + 1;
			d++;
			auto it = t[cur].kids.find(f);
			size_t k;
			if (it == t[cur].kids.end()) {
				k = t.size();
				t[cur].kids.emplace(f, k);
				t.emplace_back();
				t[k].name = f;
				t[k].depth = d;
			} else {
				k = it->second;
			}
			t[k].count += n;
			cur = k;
		}
		maxdepth = std::max(maxdepth, d);
	}
	/* starts, pre-order */
	std::vector<size_t> order, stack{0};
	while (!stack.empty()) {
		size_t i = stack.back();
		stack.pop_back();
		order.push_back(i);
		uint64_t x = t[i].x;
		std::vector<size_t> kids;
		for (const auto &[name, k] : t[i].kids) {
			t[k].x = x;
			x += t[k].count;
			kids.push_back(k);
		}
		for (auto it = kids.rbegin(); it != kids.rend(); ++it)
			stack.push_back(*it);
	}

	const uint64_t total = t[0].count;
	const int W = o.width;
	const int H = kTop + (maxdepth + 1) * kFrameH + kBottom;
	const double scale = total ? double(W - 2 * kPad) / double(total) : 0;
	auto ypos = [&](int d) {
		return o.reverse ? kTop + d * kFrameH : H - kBottom - (d + 1) * kFrameH;
	};

	std::string s;
	s += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
	s += "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
	     std::to_string(W) + "\" height=\"" + std::to_string(H) + "\" viewBox=\"0 0 " +
	     std::to_string(W) + " " + std::to_string(H) + "\" data-width=\"" +
	     std::to_string(W) + "\" data-pad=\"" + std::to_string(kPad) +
	     "\" data-total=\"" + std::to_string(total) + "\" data-reverse=\"" +
	     (o.reverse ? "1" : "0") + "\">\n";
	s += "<!-- stackmap-report flamegraph: frames are <g class=\"f\"> with data-n "
	     "(name), data-c (count), data-d (depth), data-x (start) -->\n";
	s += "<style type=\"text/css\"><![CDATA[";
	s += kStyle;
	s += "]]></style>\n";
	s += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(W) + "\" height=\"" +
	     std::to_string(H) + "\" fill=\"#f8f8f8\"/>\n";
	s += "<text id=\"title\" x=\"" + std::to_string(W / 2) + "\" y=\"20\">" + xml(o.title) +
	     "</text>\n";
	s += "<text id=\"unzoom\" x=\"" + std::to_string(kPad) +
	     "\" y=\"34\" style=\"opacity:0.3\">Reset Zoom</text>\n";
	s += "<text id=\"search\" x=\"" + std::to_string(W - kPad) +
	     "\" y=\"34\">Search (/ or Ctrl-F)</text>\n";
	s += "<text id=\"details\" x=\"" + std::to_string(kPad) + "\" y=\"" +
	     std::to_string(H - 8) + "\"> </text>\n";
	s += "<text id=\"matched\" x=\"" + std::to_string(W - kPad) + "\" y=\"" +
	     std::to_string(H - 8) + "\"></text>\n";
	s += "<g id=\"frames\">\n";
	for (size_t i : order) {
		const Node &n = t[i];
		if (!total)
			break;
		double w = double(n.count) * scale;
		if (w < o.minwidth && i != 0)
			continue;	/* its descendants are narrower still */
		double x = kPad + double(n.x) * scale;
		int y = ypos(n.depth);
		char pct[32];
		snprintf(pct, sizeof(pct), "%.2f", 100.0 * double(n.count) / double(total));
		const std::string name = xml(n.name);
		s += "<g class=\"f\" data-n=\"" + name + "\" data-c=\"" + std::to_string(n.count) +
		     "\" data-d=\"" + std::to_string(n.depth) + "\" data-x=\"" +
		     std::to_string(n.x) + "\"><title>" + name + " (" +
		     std::to_string(n.count) + " records, " + pct + "%)</title><rect x=\"" +
		     num(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + num(w) +
		     "\" height=\"" + std::to_string(kFrameH - 1) + "\" rx=\"2\" fill=\"" +
		     frame_color(n.name, frame_palette(n.name, n.depth, o.task_levels)) +
		     "\"/><text x=\"" + num(x + 3) + "\" y=\"" + std::to_string(y + kFrameH - 4) +
		     "\">" + xml(fit(n.name, w)) + "</text></g>\n";
	}
	s += "</g>\n";
	if (!total)
		s += "<text x=\"" + std::to_string(W / 2) + "\" y=\"" + std::to_string(kTop + 12) +
		     "\" style=\"text-anchor:middle\">no records</text>\n";
	s += "<script type=\"text/ecmascript\"><![CDATA[";
	s += kScript;
	s += "]]></script>\n</svg>\n";
	return s;
}

} /* namespace smr::report */
