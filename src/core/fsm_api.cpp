// SPDX-License-Identifier: GPL-2.0
/*
 * fsm_api.cpp - the extern "C" functions of fsm_core.h.
 *
 * struct fsm_map stays an incomplete type: a struct fsm_map * is a
 * fsm::StackMap * under another name, converted only here. Contexts and
 * return values are documented in fsm_core.h and stackmap.h.
 */
#include "stackmap.h"

namespace {

fsm::StackMap *to_map(struct fsm_map *m) { return reinterpret_cast<fsm::StackMap *>(m); }
const fsm::StackMap *to_map(const struct fsm_map *m)
{
	return reinterpret_cast<const fsm::StackMap *>(m);
}

/* Names of enum fsm_drop_reason, for stat files. Constant-initialised. */
const char *const drop_reason_names[] = {
	"none",
	"map_full",
	"arena_full",
	"probe_limit",
	"busy",
	"resetting",
	"invalid",
};
static_assert(sizeof(drop_reason_names) / sizeof(drop_reason_names[0]) ==
	      FSM_DROP_NR_REASONS, "one name per enum fsm_drop_reason");

} /* namespace */

extern "C" {

struct fsm_map *fsm_map_create(const struct fsm_map_params *params, int *err)
{
	int dummy;

	if (!err)
		err = &dummy;
	if (!params) {
		*err = -22;
		return nullptr;
	}
	*err = 0;
	return reinterpret_cast<struct fsm_map *>(fsm::StackMap::create(*params, err));
}

void fsm_map_destroy(struct fsm_map *map)
{
	if (map)
		to_map(map)->destroy();
}

int fsm_map_insert(struct fsm_map *map, const unsigned long long *ips,
		   unsigned int nr, unsigned int epoch,
		   struct fsm_insert_result *res)
{
	if (unlikely(!map))
		return -FSM_DROP_INVALID;
	return to_map(map)->insert(ips, nr, epoch, res);
}

unsigned int fsm_map_reset(struct fsm_map *map)
{
	return to_map(map)->reset();
}

unsigned int fsm_map_nr_ids(const struct fsm_map *map)
{
	return to_map(map)->nr_ids();
}

int fsm_map_lookup_id(const struct fsm_map *map, unsigned int id,
		      const unsigned long long **ips, unsigned int *nr,
		      unsigned long long *hits)
{
	if (!map)
		return -22;
	return to_map(map)->lookup_id(id, ips, nr, hits);
}

void fsm_map_stats(const struct fsm_map *map, struct fsm_map_stats *st)
{
	to_map(map)->stats(st);
}

int fsm_map_def_claim(struct fsm_map *map, unsigned int id, unsigned int gen,
		      unsigned int now, unsigned int horizon)
{
	if (unlikely(!map))
		return 0;
	return to_map(map)->def_claim(id, gen, now, horizon);
}

unsigned int fsm_map_def_sweep(struct fsm_map *map, unsigned int now,
			       unsigned int horizon, fsm_def_fn fn, void *ctx)
{
	if (unlikely(!map || !fn))
		return 0;
	return to_map(map)->def_sweep(now, horizon, fn, ctx);
}

unsigned int fsm_map_def_sweep_lag(const struct fsm_map *map, unsigned int now,
				   unsigned int horizon)
{
	if (unlikely(!map))
		return 0;
	return to_map(map)->def_sweep_lag(now, horizon);
}

void fsm_map_def_unclaim(struct fsm_map *map, unsigned int id,
			 unsigned int gen, unsigned int now)
{
	if (map)
		to_map(map)->def_unclaim(id, gen, now);
}

unsigned int fsm_core_cpu(void)
{
	return fsm::plat_cpu();
}

unsigned long long fsm_map_memory_bytes(const struct fsm_map_params *params)
{
	if (!params)
		return 0;
	return fsm::StackMap::memory_bytes(*params, fsm_plat_nr_cpus());
}

const char *fsm_drop_reason_name(unsigned int reason)
{
	if (reason >= FSM_DROP_NR_REASONS)
		return "unknown";
	return drop_reason_names[reason];
}

} /* extern "C" */
