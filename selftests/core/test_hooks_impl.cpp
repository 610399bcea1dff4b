// SPDX-License-Identifier: GPL-2.0
/*
 * test_hooks_impl.cpp - fsm_test_hook() for the test build of the core, and
 * HookPause, which uses it.
 */
#include "test_util.h"

#include <chrono>
#include <thread>

namespace {
thread_local HookPause *t_pause = nullptr;
thread_local std::function<void(unsigned)> t_hook_fn;
} // namespace

void HookPause::arm() { t_pause = this; }

void set_thread_hook(std::function<void(unsigned point)> fn) { t_hook_fn = std::move(fn); }

void HookPause::on_hook(unsigned point)
{
	if (fired_ || point != point_)
		return;
	fired_ = true;
	reached_.store(true);
	while (!released_.load())
		std::this_thread::sleep_for(std::chrono::microseconds(100));
	t_pause = nullptr;
}

bool HookPause::wait_reached(int timeout_ms)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (!reached_.load()) {
		if (std::chrono::steady_clock::now() > end)
			return false;
		std::this_thread::sleep_for(std::chrono::microseconds(100));
	}
	return true;
}

extern "C" void fsm_test_hook(const struct fsm_map *, unsigned int point)
{
	if (t_pause)
		t_pause->on_hook(point);
	if (t_hook_fn)
		t_hook_fn(point);
}
