// SPDX-License-Identifier: GPL-2.0
/*
 * src_syntax.c - the text of source events: one token of the set_event
 * syntax ("sys:ev", "sys:*", "ev", "!..."), matching it, and the standing
 * patterns an instance keeps to follow events that appear later (sources.c,
 * "Patterns that follow"). Plain text: no lock, no event looked up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "tracing.h"
#include "sources_internal.h"

/* Does token @t name sys:ev? Context: any. */
bool fsm_tok_match(const struct fsm_tok *t, const char *sys,
		   const char *ev)
{
	if (t->any)
		return !strcmp(t->any, sys) || !strcmp(t->any, ev);
	return (!t->sys || !strcmp(t->sys, sys)) &&
	       (!t->ev || !strcmp(t->ev, ev));
}

/*
 * Parse one token in place (@s is cut at the colon). Context: any.
 * Return: 0, or -EINVAL for a malformed token.
 */
int fsm_tok_parse(char *s, struct fsm_tok *t)
{
	char *colon;

	t->text = s;
	if (*s == '!') {
		t->neg = true;
		s++;
	}
	if (!*s)
		return -EINVAL;
	colon = strchr(s, ':');
	if (!colon) {
		if (strcmp(s, "*"))
			t->any = s;	/* "*" alone: everything */
		return 0;
	}
	if (strchr(colon + 1, ':'))
		return -EINVAL;
	*colon = '\0';
	t->sys = s;
	t->ev = colon + 1;
	if (!*t->sys || !strcmp(t->sys, "*"))
		t->sys = NULL;
	if (!*t->ev || !strcmp(t->ev, "*"))
		t->ev = NULL;
	return 0;
}

/* Does token @t name source @src ("sys:event")? Context: any. */
bool fsm_src_match(const struct fsm_tok *t, const struct fsm_src *src)
{
	const char *colon = strchr(src->name, ':');
	char sys[64];
	size_t len = colon - src->name;

	if (len >= sizeof(sys))
		return false;
	memcpy(sys, src->name, len);
	sys[len] = '\0';
	return fsm_tok_match(t, sys, colon + 1);
}

/*
 * What the standing patterns decide for sys:ev: the last token that
 * matches it (a '!' token: not chosen); none: not chosen.
 */
bool fsm_pat_choose(const struct fsm_tok *toks, unsigned int nr,
		    const char *sys, const char *ev)
{
	unsigned int i = nr;

	while (i--)
		if (fsm_tok_match(&toks[i], sys, ev))
			return !toks[i].neg;
	return false;
}

/* The standing form of a token (see "Patterns that follow"), or NULL. */
static char *fsm_tok_standing(const struct fsm_tok *t)
{
	if (!t->neg && t->sys && t->ev)
		return NULL;	/* a named event: chosen once */
	if (t->any)
		return kasprintf(GFP_KERNEL, "%s%s", t->neg ? "!" : "", t->any);
	return kasprintf(GFP_KERNEL, "%s%s:%s", t->neg ? "!" : "",
			 t->sys ?: "*", t->ev ?: "*");
}

/* Could one sys:ev match both @a and @b? */
static bool fsm_tok_overlap(const struct fsm_tok *a, const struct fsm_tok *b)
{
	struct fsm_tok x = {};

	if (a->any) {
		/* "name": the system "name", or events "name" anywhere */
		x.sys = a->any;
		if (fsm_tok_overlap(&x, b))
			return true;
		x.sys = NULL;
		x.ev = a->any;
		return fsm_tok_overlap(&x, b);
	}
	if (b->any)
		return fsm_tok_overlap(b, a);
	return (!a->sys || !b->sys || !strcmp(a->sys, b->sys)) &&
	       (!a->ev || !b->ev || !strcmp(a->ev, b->ev));
}

/* One standing token: its text, and that text parsed (a copy). */
struct fsm_pat_tok {
	char *text;
	char *parsed_buf;
	struct fsm_tok tok;
};

static void fsm_pat_tok_free(struct fsm_pat_tok *p)
{
	kfree(p->text);
	kfree(p->parsed_buf);
	p->text = NULL;
	p->parsed_buf = NULL;
}

/* @p takes @text (kmalloc'd, may be NULL: -ENOMEM) and parses a copy. */
static int fsm_pat_tok_set(struct fsm_pat_tok *p, char *text)
{
	p->text = text;
	if (!text)
		return -ENOMEM;
	p->parsed_buf = kstrdup(text, GFP_KERNEL);
	if (!p->parsed_buf)
		return -ENOMEM;
	memset(&p->tok, 0, sizeof(p->tok));
	return fsm_tok_parse(p->parsed_buf, &p->tok) ? -EINVAL : 0;
}

/*
 * The standing patterns after a write of @toks: @old (NULL for a '>'
 * write) followed by the standing tokens of @toks, compacted without
 * changing what they choose for any event (the last matching token
 * decides, fsm_pat_choose()):
 * - of identical tokens only the last one is kept;
 * - a '!' token that no positive token before it overlaps is dropped (it
 *   excludes from nothing);
 * - a named event written later (">> sys:ev") takes back an earlier
 *   "!sys:ev": the latest word on an event wins.
 * So toggling an event with '>>' never grows them.
 * Return: a new string, NULL when there is none, or an ERR_PTR (-EINVAL:
 * more than FSM_PAT_MAX_TOKENS tokens or FSM_SRC_TEXT_MAX bytes, with one
 * dmesg line; -ENOMEM).
 */
char *fsm_pat_join(const char *old, const struct fsm_tok *toks,
		   unsigned int nr, const char *who)
{
	unsigned int n = 0, max = nr + FSM_PAT_MAX_TOKENS, i, j, kept = 0;
	char *copy = NULL, *p, *tok, *pat = NULL;
	struct fsm_pat_tok *tv;
	size_t len = 0;

	tv = kcalloc(max, sizeof(*tv), GFP_KERNEL);
	if (!tv)
		return ERR_PTR(-ENOMEM);
	if (old) {
		copy = kstrdup(old, GFP_KERNEL);
		if (!copy)
			goto nomem;
		p = copy;
		while ((tok = strsep(&p, " ")) && n < FSM_PAT_MAX_TOKENS)
			if (*tok && fsm_pat_tok_set(&tv[n++],
						    kstrdup(tok, GFP_KERNEL)))
				goto nomem;
	}
	for (i = 0; i < nr; i++) {
		const struct fsm_tok *t = &toks[i];

		if (!t->neg && t->sys && t->ev) {
			/* a named event takes back an earlier "!sys:ev" */
			for (j = 0; j < n; j++) {
				struct fsm_tok *o = &tv[j].tok;

				if (!tv[j].text)
					continue;
				if (o->neg && o->sys && o->ev &&
				    !strcmp(o->sys, t->sys) &&
				    !strcmp(o->ev, t->ev))
					fsm_pat_tok_free(&tv[j]);
			}
			continue;
		}
		if (fsm_pat_tok_set(&tv[n++], fsm_tok_standing(t)))
			goto nomem;
	}
	/* from the end: drop a token identical to a later kept one */
	for (i = n; i--; ) {
		if (!tv[i].text)
			continue;
		for (j = i + 1; j < n; j++)
			if (tv[j].text && !strcmp(tv[i].text, tv[j].text))
				break;
		if (j < n)
			fsm_pat_tok_free(&tv[i]);
	}
	/* from the start: a '!' that no positive token before it overlaps */
	for (i = 0; i < n; i++) {
		if (!tv[i].text)
			continue;
		if (tv[i].tok.neg) {
			for (j = 0; j < i; j++)
				if (tv[j].text && !tv[j].tok.neg &&
				    fsm_tok_overlap(&tv[j].tok, &tv[i].tok))
					break;
			if (j == i) {
				fsm_pat_tok_free(&tv[i]);
				continue;
			}
		}
		kept++;
		len += strlen(tv[i].text) + 1;
	}
	if (kept > FSM_PAT_MAX_TOKENS || len > FSM_SRC_TEXT_MAX) {
		fsm_warn(who, "more than %d standing wildcard or '!' tokens (or %d bytes)%s\n",
			 FSM_PAT_MAX_TOKENS, FSM_SRC_TEXT_MAX,
			 old ? ": write the set anew with '>'" : "");
		pat = ERR_PTR(-EINVAL);
		goto out;
	}
	if (!kept)
		goto out;
	pat = kmalloc(len, GFP_KERNEL);
	if (!pat)
		goto nomem;
	len = 0;
	for (i = 0; i < n; i++) {
		if (!tv[i].text)
			continue;
		if (len)
			pat[len++] = ' ';
		strcpy(pat + len, tv[i].text);
		len += strlen(tv[i].text);
	}
	goto out;
nomem:
	pat = ERR_PTR(-ENOMEM);
out:
	for (i = 0; i < n; i++)
		fsm_pat_tok_free(&tv[i]);
	kfree(tv);
	kfree(copy);
	return pat;
}
