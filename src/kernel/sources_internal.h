/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sources_internal.h - what the three files of the source events share:
 * sources.c (the chosen set of an instance: resolution, choosing, the
 * patterns that follow, the module notifier), src_syntax.c (tokens and
 * standing patterns, plain text) and src_attach.c (a source's life: its
 * module reference until entered, the backend ops, attach, detach, free).
 * Private to those files.
 */
#ifndef FSM_SOURCES_INTERNAL_H
#define FSM_SOURCES_INTERNAL_H

#include <linux/list.h>
#include <linux/printk.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct fsm_src;
struct fsm_src_ops;
struct module;

/* One-line messages, @who names the interface (node or parameter). */
#define fsm_warn(who, fmt, ...) \
	pr_warn_ratelimited("%s: " fmt, who, ##__VA_ARGS__)

/* Standing patterns: at most this many tokens an instance (fsm_pat_join()) */
#define FSM_PAT_MAX_TOKENS	256

/* One token: a pattern, and what it resolved to (positive tokens). */
struct fsm_tok {
	bool neg;
	const char *sys;	/* NULL: any system */
	const char *ev;		/* NULL: any event */
	const char *any;	/* no colon: system or event with this name */
	const char *text;	/* the token as written, for messages */
	struct list_head srcs;	/* resolved struct fsm_src, chosen ones flagged */
};

/* src_syntax.c */
bool fsm_tok_match(const struct fsm_tok *t, const char *sys, const char *ev);
int fsm_tok_parse(char *s, struct fsm_tok *t);
bool fsm_src_match(const struct fsm_tok *t, const struct fsm_src *src);
bool fsm_pat_choose(const struct fsm_tok *toks, unsigned int nr,
		    const char *sys, const char *ev);
char *fsm_pat_join(const char *old, const struct fsm_tok *toks,
		   unsigned int nr, const char *who);

/* src_attach.c */
extern const struct fsm_src_ops *fsm_src_backend;
extern struct list_head fsm_src_pending;
bool fsm_src_modref_get(struct fsm_src *src, struct module *mod, bool noref);
void fsm_src_unpend(struct fsm_src *src);
void fsm_src_ops_free(struct fsm_src *src);
void fsm_src_attach_exit(void);

#endif /* FSM_SOURCES_INTERNAL_H */
