// SPDX-License-Identifier: GPL-2.0
/*
 * SVG flame graphs: the folded stacks are merged into a tree (children found through one
 * hash table keyed by parent and name, then sorted by name in one qsort), laid out like
 * flamegraph.pl and written with an inline script for zoom and search.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/flamegraph.h"
#include "lib/util.h"
#include "lib/utf8.h"

#define FG_DEF_WIDTH	1200
#define FG_MIN_WIDTH	200
#define FG_XPAD		10
#define FG_FRAME_H	16	/* px per level */
#define FG_FRAME_PAD	1	/* px between levels */
#define FG_FONT_SIZE	12
#define FG_CHAR_W	(FG_FONT_SIZE * 0.59)	/* flamegraph.pl's average glyph width */
#define FG_TOP		(FG_FONT_SIZE * 3)	/* title row */
#define FG_ROW		(FG_FONT_SIZE * 2)	/* subtitle and phase link rows */
#define FG_BOTTOM	(FG_FONT_SIZE * 2 + 10)	/* details row */
#define FG_MIN_PX	0.1	/* narrower frames are not drawn */
#define FG_LINK_CHARS	20	/* longest phase link name */
#define FG_NONE		UINT32_MAX
#define FG_MAX_NODES	(1U << 30)

struct fg_node {
	const char *name;	/* points into the caller's frames; not terminated */
	__u64 total;		/* weight of the stacks through this frame */
	__u32 len;
	__u32 parent;
	__u32 kids;		/* first child in fg_tree.kids */
	__u32 nkids;
};

struct fg_tree {
	struct fg_node *nodes;	/* [0] is the root, "all" */
	__u32 nr;
	size_t cap;
	__u32 *slots;		/* hash of (parent, name) -> node index + 1; 0 is free */
	__u32 nslots;		/* power of 2, at least twice nr */
	__u32 *kids;		/* children of each node, contiguous, by name */
};

struct fg_ent {
	const char *name;
	__u32 len, parent, id;
	__u32 rank;		/* first level: place in fg_opts.first_order */
};

struct fg_walk {
	__u64 start;		/* weight left of the frame */
	__u32 id, depth;
};

struct fg_conf {
	const char *title, *subtitle, *unit;
	bool bytes;
	int width, height;
	int top;		/* y of the first row below the header */
	double wpt;		/* px per unit of weight */
	__u64 total;
	__u32 depth;		/* deepest level drawn */
	__u32 nphases;		/* first-level frames drawn */
	__u32 phase;		/* next first-level frame's index while writing */
};

enum fg_ch { FG_CH_TEXT, FG_CH_DROP, FG_CH_BAD };

/* the character at s[0..n), n > 0: text, dropped (a control), or not UTF-8; *len its bytes */
static enum fg_ch fg_char(const unsigned char *s, size_t n, size_t *len)
{
	uint32_t cp;

	switch (utf8__next((const char *)s, n, len, &cp)) {
	case UTF8_CONTROL:
		return FG_CH_DROP;
	case UTF8_INVALID:
		return FG_CH_BAD;
	default:
		/* the two non-characters XML 1.0 forbids */
		return cp == 0xfffe || cp == 0xffff ? FG_CH_DROP : FG_CH_TEXT;
	}
}

static const char *fg_entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	}
	return NULL;
}

/*
 * Writes at most max characters of str[0..n) XML-escaped to f (nothing when f is NULL).
 * Returns how many characters str has once cleaned (an entity counts as one).
 */
static size_t fg_put_text(FILE *f, const char *str, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, start = 0, chars = 0, len;
	bool out = f && max;
	const char *ent;
	enum fg_ch k;

	while (i < n) {
		k = fg_char(s + i, n - i, &len);
		if (k == FG_CH_DROP)
			ent = "";
		else if (k == FG_CH_BAD)
			ent = "\xef\xbf\xbd";	/* U+FFFD */
		else
			ent = len == 1 ? fg_entity(s[i]) : NULL;
		if (k != FG_CH_DROP) {
			if (out && chars == max) {
				fwrite(s + start, 1, i - start, f);
				out = false;
			}
			chars++;
		}
		if (ent) {
			if (out) {
				fwrite(s + start, 1, i - start, f);
				fputs(ent, f);
			}
			start = i + len;
		}
		i += len;
	}
	if (out)
		fwrite(s + start, 1, n - start, f);
	return chars;
}

/* v >= 0 with dec (1 or 2) decimals, whatever LC_NUMERIC says */
static const char *fg_fixed(char *buf, size_t sz, double v, int dec)
{
	unsigned long long scale = dec == 2 ? 100 : 10, q;

	q = (unsigned long long)((v > 0 ? v : 0) * scale + 0.5);
	snprintf(buf, sz, "%llu.%0*llu", q / scale, dec, q % scale);
	return buf;
}

static const char *fg_size(char *buf, size_t sz, __u64 v, const struct fg_conf *c)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	char num[32];
	double d = v;
	int u = -1;

	if (!c->bytes) {
		snprintf(buf, sz, "%llu %s", (unsigned long long)v, c->unit);
		return buf;
	}
	if (v < 1024) {
		snprintf(buf, sz, "%llu B", (unsigned long long)v);
		return buf;
	}
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	snprintf(buf, sz, "%s %s", fg_fixed(num, sizeof(num), d, 2), units[u]);
	return buf;
}

static const char *fg_pct(char *buf, size_t sz, __u64 v, __u64 total)
{
	double p = 100.0 * v / total;

	/* two decimals for the small ones, so that they do not all read 0.0% */
	return fg_fixed(buf, sz, p, p > 0 && p < 0.1 ? 2 : 1);
}

/* flamegraph.pl's namehash(): 0..1 from the first 3 bytes, from the end if rev */
static double fg_namehash(const char *s, size_t n, bool rev)
{
	double vector = 0, weight = 1, max = 1;
	unsigned int mod = 10;
	unsigned char c;
	size_t i;

	for (i = 0; i < n && mod <= 12; i++, mod++) {
		c = rev ? s[n - 1 - i] : s[i];
		vector += (double)(c % mod) / (mod - 1) * weight;
		max += weight;
		weight *= 0.70;
	}
	return 1 - vector / max;
}

static __u64 fg_hash(__u32 parent, const char *s, size_t n)
{
	__u64 h = 0xcbf29ce484222325ULL ^ (parent * 0x9e3779b97f4a7c15ULL);
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 32);
}

static int fg_tree__rehash(struct fg_tree *t, __u32 nslots)
{
	__u32 *slots, mask = nslots - 1, h, i;
	const struct fg_node *nd;

	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 1; i < t->nr; i++) {
		nd = &t->nodes[i];
		h = fg_hash(nd->parent, nd->name, nd->len) & mask;
		while (slots[h])
			h = (h + 1) & mask;
		slots[h] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* *id: the child of parent named name[0..len), created if new */
static int fg_tree__child(struct fg_tree *t, __u32 parent, const char *name, size_t len,
			  __u32 *id)
{
	__u32 mask, h, s;
	int err;

	if (len > UINT32_MAX)
		return -E2BIG;
	if ((__u64)(t->nr + 1) * 2 > t->nslots) {
		if (t->nr >= FG_MAX_NODES)
			return -E2BIG;
		err = fg_tree__rehash(t, t->nslots * 2);
		if (err)
			return err;
	}
	mask = t->nslots - 1;
	for (h = fg_hash(parent, name, len) & mask; (s = t->slots[h]); h = (h + 1) & mask) {
		const struct fg_node *nd = &t->nodes[s - 1];

		if (nd->parent == parent && nd->len == len && !memcmp(nd->name, name, len)) {
			*id = s - 1;
			return 0;
		}
	}
	if (util__grow((void **)&t->nodes, &t->cap, t->nr, sizeof(*t->nodes)))
		return -ENOMEM;
	t->nodes[t->nr] = (struct fg_node){ .name = name, .len = len, .parent = parent };
	t->slots[h] = t->nr + 1;
	*id = t->nr++;
	return 0;
}

static int fg_tree__build(struct fg_tree *t, const struct fg_stack *stacks, size_t n)
{
	const char *p, *e;
	__u32 cur;
	size_t i, k;
	__u64 w;
	int err;

	t->cap = 1024;
	t->nodes = malloc(t->cap * sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->nodes[0] = (struct fg_node){ .name = "all", .len = 3, .parent = FG_NONE };
	t->nr = 1;
	err = fg_tree__rehash(t, 2048);
	if (err)
		return err;

	for (i = 0; i < n; i++) {
		w = stacks[i].weight;
		if (!w)
			continue;
		if (t->nodes[0].total + w < w)
			return -EOVERFLOW;
		t->nodes[0].total += w;
		cur = 0;
		for (k = 0; k < stacks[i].nframes; k++) {
			p = stacks[i].framev[k];
			if (!p || !*p)
				continue;
			err = fg_tree__child(t, cur, p, strlen(p), &cur);
			if (err)
				return err;
			t->nodes[cur].total += w;
		}
		for (p = stacks[i].framev ? NULL : stacks[i].frames; p && *p; p = *e ? e + 1 : e) {
			e = strchrnul(p, ';');
			if (e == p)
				continue;	/* "a;;b" */
			err = fg_tree__child(t, cur, p, e - p, &cur);
			if (err)
				return err;
			/* cannot overflow: no frame weighs more than the root */
			t->nodes[cur].total += w;
		}
	}
	return 0;
}

static int fg_ent__cmp(const void *a, const void *b)
{
	const struct fg_ent *x = a, *y = b;
	int c;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* place of a first-level frame in the requested order, or past it */
static __u32 fg_rank(const struct fg_opts *o, const char *name, __u32 len)
{
	size_t i;

	for (i = 0; o && i < o->nfirst; i++)
		if (strlen(o->first_order[i]) == len && !memcmp(o->first_order[i], name, len))
			return i;
	return UINT32_MAX;
}

/* fills kids/nkids: each node's children, sorted by name (first level: o's order) */
static int fg_tree__sort(struct fg_tree *t, const struct fg_opts *o)
{
	struct fg_ent *ents;
	struct fg_node *nd;
	__u32 i, k;

	ents = malloc(((size_t)t->nr) * sizeof(*ents));
	t->kids = malloc(((size_t)t->nr) * sizeof(*t->kids));
	if (!ents || !t->kids) {
		free(ents);
		return -ENOMEM;
	}
	for (i = 1; i < t->nr; i++) {
		nd = &t->nodes[i];
		ents[i - 1] = (struct fg_ent){ nd->name, nd->len, nd->parent, i,
					       nd->parent ? 0 : fg_rank(o, nd->name, nd->len) };
	}
	qsort(ents, t->nr - 1, sizeof(*ents), fg_ent__cmp);
	for (k = 0; k + 1 < t->nr; k++) {
		t->kids[k] = ents[k].id;
		nd = &t->nodes[ents[k].parent];
		if (!nd->nkids)
			nd->kids = k;
		nd->nkids++;
	}
	free(ents);
	return 0;
}

static void fg_tree__free(struct fg_tree *t)
{
	free(t->nodes);
	free(t->slots);
	free(t->kids);
}

static bool fg_drawn(const struct fg_conf *c, __u64 weight)
{
	return weight * c->wpt >= FG_MIN_PX;
}

static void fg_put_frame(FILE *f, const struct fg_tree *t, struct fg_conf *c,
			 const struct fg_walk *w)
{
	const struct fg_node *nd = &t->nodes[w->id];
	double x = FG_XPAD + w->start * c->wpt, wd = nd->total * c->wpt;
	int y = c->height - FG_BOTTOM - (w->depth + 1) * FG_FRAME_H + FG_FRAME_PAD;
	char size[64], pct[32], xs[32], ws[32], ts[32];
	size_t fit, nch;

	if (w->depth == 1)
		fprintf(f, "<g id=\"p%u\">", c->phase++);
	else
		fputs("<g>", f);
	fputs("<title>", f);
	fg_put_text(f, nd->name, nd->len, SIZE_MAX);
	fputs(" (", f);
	fg_size(size, sizeof(size), nd->total, c);
	fg_put_text(f, size, strlen(size), SIZE_MAX);	/* the unit is the caller's */
	fprintf(f, ", %s%%)</title>", fg_pct(pct, sizeof(pct), nd->total, c->total));
	fprintf(f, "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"rgb(0,%d,%d)\" "
		"rx=\"2\" ry=\"2\"/>", fg_fixed(xs, sizeof(xs), x, 2), y,
		fg_fixed(ws, sizeof(ws), wd, 2), FG_FRAME_H - FG_FRAME_PAD,
		190 + (int)(50 * fg_namehash(nd->name, nd->len, true)),
		(int)(210 * fg_namehash(nd->name, nd->len, false)));

	/* flamegraph.pl's rule: a label needs room for 3 characters; ".." marks a cut */
	fit = (size_t)(wd / FG_CHAR_W);
	nch = fit >= 3 ? fg_put_text(NULL, nd->name, nd->len, 0) : 0;
	if (nch) {
		fprintf(f, "<text x=\"%s\" y=\"%s\">", fg_fixed(xs, sizeof(xs), x + 3, 2),
			fg_fixed(ts, sizeof(ts), y + (FG_FRAME_H - FG_FRAME_PAD) / 2.0 + 3, 1));
		if (nch <= fit) {
			fg_put_text(f, nd->name, nd->len, SIZE_MAX);
		} else {
			fg_put_text(f, nd->name, nd->len, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

/* Depth-first, left to right, over the frames wide enough to draw: writes them if f is
 * not NULL, else finds the deepest level. Iterative: stacks can be deep.
 */
static int fg_walk(FILE *f, const struct fg_tree *t, struct fg_conf *c)
{
	const struct fg_node *nd, *kid;
	struct fg_walk *stk, w;
	size_t sp = 0;
	__u64 off;
	__u32 k;

	stk = malloc((size_t)t->nr * sizeof(*stk));
	if (!stk)
		return -ENOMEM;
	stk[sp++] = (struct fg_walk){ .start = 0, .id = 0, .depth = 0 };
	while (sp) {
		w = stk[--sp];
		nd = &t->nodes[w.id];
		if (f)
			fg_put_frame(f, t, c, &w);
		else if (w.depth > c->depth)
			c->depth = w.depth;

		/* children pushed right to left, to come out left to right */
		off = w.start;
		for (k = 0; k < nd->nkids; k++)
			off += t->nodes[t->kids[nd->kids + k]].total;
		for (k = nd->nkids; k-- > 0;) {
			kid = &t->nodes[t->kids[nd->kids + k]];
			off -= kid->total;
			if (!fg_drawn(c, kid->total))
				continue;
			stk[sp++] = (struct fg_walk){ off, t->kids[nd->kids + k], w.depth + 1 };
		}
	}
	free(stk);
	return 0;
}

static void fg_put_head(FILE *f, const struct fg_conf *c)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n",
		c->width, c->height, c->width, c->height);
	fputs("<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#e0e0ff\" "
	      "offset=\"95%\"/></linearGradient></defs>\n"
	      "<style type=\"text/css\"><![CDATA[\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	      "#title { text-anchor: middle; font-size: 17px; }\n"
	      "#subtitle { text-anchor: middle; fill: #707070; }\n"
	      "#search, #matched { text-anchor: end; }\n"
	      ".btn, .link { cursor: pointer; fill: #1a4f9c; }\n"
	      ".btn:hover, .link:hover { text-decoration: underline; }\n"
	      ".note { text-anchor: middle; font-size: 15px; fill: #707070; }\n"
	      "#frames g { cursor: pointer; }\n"
	      "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      "#frames text { pointer-events: none; }\n"
	      "]]></style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		c->width, c->height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"%d\">", c->width / 2, FG_FONT_SIZE * 2);
	fg_put_text(f, c->title, strlen(c->title), SIZE_MAX);
	fputs("</text>\n", f);
	if (c->subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", c->width / 2,
			FG_TOP + FG_FONT_SIZE);
		fg_put_text(f, c->subtitle, strlen(c->subtitle), SIZE_MAX);
		fputs("</text>\n", f);
	}
}

/* one row of links that zoom into the first-level frames (the phases), as many as fit */
static void fg_put_links(FILE *f, const struct fg_tree *t, const struct fg_conf *c)
{
	const struct fg_node *root = &t->nodes[0], *nd;
	double x = FG_XPAD, need;
	char pct[32];
	size_t nch;
	__u32 k, i = 0;
	int y = c->top - FG_ROW + FG_FONT_SIZE + 2;

	for (k = 0; k < root->nkids; k++) {
		nd = &t->nodes[t->kids[root->kids + k]];
		if (!fg_drawn(c, nd->total))
			continue;
		nch = fg_put_text(NULL, nd->name, nd->len, 0);
		fg_pct(pct, sizeof(pct), nd->total, c->total);
		need = ((nch > FG_LINK_CHARS ? FG_LINK_CHARS : nch) + strlen(pct) + 2) * FG_CHAR_W;
		if (x + need > c->width - FG_XPAD)
			break;
		fprintf(f, "<text class=\"link\" data-p=\"p%u\" x=\"%d\" y=\"%d\">", i++,
			(int)(x + 0.5), y);
		if (nch > FG_LINK_CHARS) {
			fg_put_text(f, nd->name, nd->len, FG_LINK_CHARS - 2);
			fputs("..", f);
		} else {
			fg_put_text(f, nd->name, nd->len, SIZE_MAX);
		}
		fprintf(f, " %s%%</text>\n", pct);
		x += need + 2 * FG_CHAR_W;
	}
}

static const char fg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"'use strict';\n"
	"var svg = document.documentElement, NS = svg.namespaceURI;\n"
	"var W = +svg.getAttribute('width'), XPAD = 10, FH = 16, CW = 12 * 0.59;\n"
	"function byId(id) { return document.getElementById(id); }\n"
	"var details = byId('details'), matched = byId('matched');\n"
	"var unzoomBtn = byId('unzoom'), searchBtn = byId('search'), box = byId('frames');\n"
	"var TOTAL = +matched.getAttribute('data-total');\n"
	"var UNIT = matched.getAttribute('data-unit');\n"
	"var gs = box.getElementsByTagName('g'), fr = [], open = [], term = null, i;\n"
	"\n"
	"/* frames come depth first; the tree is rebuilt from their levels */\n"
	"for (i = 0; i < gs.length; i++) {\n"
	"  var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
	"  var title = g.getElementsByTagName('title')[0].textContent;\n"
	"  var f = { i: i, g: g, r: r, t: g.getElementsByTagName('text')[0] || null,\n"
	"    title: title, name: title.replace(/ \\([^()]*\\)$/, ''),\n"
	"    x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),\n"
	"    fill: r.getAttribute('fill'), end: gs.length, parent: null };\n"
	"  var depth = i ? Math.round((fr[0].y - f.y) / FH) : 0;\n"
	"  while (open.length > depth)\n"
	"    open.pop().end = i;\n"
	"  f.parent = open.length ? open[open.length - 1] : null;\n"
	"  open.push(f);\n"
	"  g.fg = f;\n"
	"  fr.push(f);\n"
	"}\n"
	"\n"
	"function fmt(v) {\n"
	"  var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], k = -1;\n"
	"  if (UNIT !== 'bytes')\n"
	"    return Math.round(v) + ' ' + UNIT;\n"
	"  if (v < 1024)\n"
	"    return Math.round(v) + ' B';\n"
	"  while (v >= 1024 && k < 5) { v /= 1024; k++; }\n"
	"  return v.toFixed(2) + ' ' + u[k];\n"
	"}\n"
	"\n"
	"function label(f, w) {\n"
	"  var n = Math.floor(w / CW);\n"
	"  if (n < 3)\n"
	"    return '';\n"
	"  return f.name.length <= n ? f.name : f.name.substring(0, n - 2) + '..';\n"
	"}\n"
	"\n"
	"function place(f, x, w) {\n"
	"  var s = label(f, w);\n"
	"  f.r.setAttribute('x', x.toFixed(2));\n"
	"  f.r.setAttribute('width', w.toFixed(2));\n"
	"  if (!f.t) {\n"
	"    if (!s)\n"
	"      return;\n"
	"    f.t = document.createElementNS(NS, 'text');\n"
	"    f.t.setAttribute('y', (f.y + 10.5).toFixed(1));\n"
	"    f.g.appendChild(f.t);\n"
	"  }\n"
	"  f.t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  f.t.textContent = s;\n"
	"}\n"
	"\n"
	"function show(f, on, dim) {\n"
	"  f.g.style.display = on ? '' : 'none';\n"
	"  f.g.style.opacity = dim ? '0.5' : '';\n"
	"}\n"
	"\n"
	"function zoom(z) {\n"
	"  var ratio = (W - 2 * XPAD) / z.w, a, j, f;\n"
	"  for (j = 0; j < fr.length; j++)\n"
	"    show(fr[j], false);\n"
	"  for (a = z.parent; a; a = a.parent) {\n"
	"    show(a, true, true);\n"
	"    place(a, XPAD, W - 2 * XPAD);\n"
	"  }\n"
	"  for (j = z.i; j < z.end; j++) {\n"
	"    f = fr[j];\n"
	"    show(f, true, false);\n"
	"    place(f, XPAD + (f.x - z.x) * ratio, f.w * ratio);\n"
	"  }\n"
	"  unzoomBtn.style.display = '';\n"
	"}\n"
	"\n"
	"function unzoom() {\n"
	"  for (var j = 0; j < fr.length; j++) {\n"
	"    show(fr[j], true, false);\n"
	"    place(fr[j], fr[j].x, fr[j].w);\n"
	"  }\n"
	"  unzoomBtn.style.display = 'none';\n"
	"}\n"
	"\n"
	"function resetSearch() {\n"
	"  for (var j = 0; j < fr.length; j++)\n"
	"    fr[j].r.setAttribute('fill', fr[j].fill);\n"
	"  term = null;\n"
	"  matched.textContent = ' ';\n"
	"  searchBtn.textContent = 'Search';\n"
	"}\n"
	"\n"
	"/* highlights matching frames; nested matches count once in the share */\n"
	"function search(s) {\n"
	"  var re, j, f, sum = 0, until = 0;\n"
	"  try {\n"
	"    re = new RegExp(s);\n"
	"  } catch (e) {\n"
	"    re = new RegExp(s.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&'));\n"
	"  }\n"
	"  for (j = 1; j < fr.length; j++) {\n"
	"    f = fr[j];\n"
	"    if (!re.test(f.name)) {\n"
	"      f.r.setAttribute('fill', f.fill);\n"
	"      continue;\n"
	"    }\n"
	"    f.r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"    if (j >= until) {\n"
	"      sum += f.w;\n"
	"      until = f.end;\n"
	"    }\n"
	"  }\n"
	"  term = s;\n"
	"  sum = fr.length ? sum / fr[0].w : 0;\n"
	"  matched.textContent = 'Matched: ' + (100 * sum).toFixed(1) + '% (' +\n"
	"    fmt(sum * TOTAL) + ')';\n"
	"  searchBtn.textContent = 'Reset Search';\n"
	"}\n"
	"\n"
	"function ask() {\n"
	"  var s = window.prompt('Search frames (regular expression)', term || '');\n"
	"  if (s === null)\n"
	"    return;\n"
	"  if (s === '')\n"
	"    resetSearch();\n"
	"  else\n"
	"    search(s);\n"
	"}\n"
	"\n"
	"function frameOf(e) {\n"
	"  for (var n = e.target; n && n !== svg; n = n.parentNode)\n"
	"    if (n.fg)\n"
	"      return n.fg;\n"
	"  return null;\n"
	"}\n"
	"\n"
	"box.addEventListener('click', function (e) {\n"
	"  var f = frameOf(e);\n"
	"  if (f && f.i)\n"
	"    zoom(f);\n"
	"  else if (f)\n"
	"    unzoom();\n"
	"});\n"
	"box.addEventListener('mouseover', function (e) {\n"
	"  var f = frameOf(e);\n"
	"  if (f)\n"
	"    details.textContent = 'Frame: ' + f.title;\n"
	"});\n"
	"box.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"unzoomBtn.addEventListener('click', unzoom);\n"
	"searchBtn.addEventListener('click', function () {\n"
	"  if (term === null)\n"
	"    ask();\n"
	"  else\n"
	"    resetSearch();\n"
	"});\n"
	"var links = document.getElementsByClassName('link');\n"
	"for (i = 0; i < links.length; i++) {\n"
	"  links[i].addEventListener('click', function () {\n"
	"    var g = byId(this.getAttribute('data-p'));\n"
	"    if (g && g.fg)\n"
	"      zoom(g.fg);\n"
	"  });\n"
	"}\n"
	"window.addEventListener('keydown', function (e) {\n"
	"  if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
	"    e.preventDefault();\n"
	"    ask();\n"
	"  } else if (e.keyCode === 27) {\n"
	"    unzoom();\n"
	"    resetSearch();\n"
	"  }\n"
	"});\n"
	"})();\n"
	"]]></script>\n";

static int fg_write_empty(FILE *f, struct fg_conf *c)
{
	c->height = c->top + 3 * FG_ROW;
	fg_put_head(f, c);
	fprintf(f, "<text class=\"note\" x=\"%d\" y=\"%d\">no samples</text>\n</svg>\n",
		c->width / 2, c->top + FG_ROW + FG_FONT_SIZE / 2);
	return 0;
}

static int fg_write_graph(FILE *f, const struct fg_tree *t, struct fg_conf *c)
{
	const struct fg_node *root = &t->nodes[0];
	__u32 k;
	int err;

	c->total = root->total;
	c->wpt = (double)(c->width - 2 * FG_XPAD) / c->total;
	for (k = 0; k < root->nkids; k++)
		c->nphases += fg_drawn(c, t->nodes[t->kids[root->kids + k]].total);
	if (c->nphases >= 2)
		c->top += FG_ROW;
	err = fg_walk(NULL, t, c);
	if (err)
		return err;
	c->height = c->top + (c->depth + 1) * FG_FRAME_H + FG_BOTTOM;

	fg_put_head(f, c);
	if (c->nphases >= 2)
		fg_put_links(f, t, c);
	fprintf(f, "<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"%d\" style=\"display:none\">"
		"Reset Zoom</text>\n", FG_XPAD, FG_FONT_SIZE * 2);
	fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"%d\">Search</text>\n",
		c->width - FG_XPAD, FG_FONT_SIZE * 2);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", FG_XPAD,
		c->height - FG_BOTTOM / 2);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" data-total=\"%llu\" data-unit=\"",
		c->width - FG_XPAD, c->height - FG_BOTTOM / 2, (unsigned long long)c->total);
	fg_put_text(f, c->unit, strlen(c->unit), SIZE_MAX);
	fputs("\"> </text>\n<g id=\"frames\">\n", f);
	err = fg_walk(f, t, c);
	if (err)
		return err;
	fputs("</g>\n", f);
	fputs(fg_script, f);
	fputs("</svg>\n", f);
	return 0;
}

int flamegraph__write(FILE *f, const struct fg_stack *stacks, size_t n,
		      const struct fg_opts *o)
{
	struct fg_conf c = {
		.title = "Flame Graph",
		.unit = "bytes",
		.width = FG_DEF_WIDTH,
		.top = FG_TOP,
	};
	struct fg_tree t = {};
	int err;

	if (!f || (!stacks && n))
		return -EINVAL;
	if (o && o->title)
		c.title = o->title;
	if (o && o->subtitle && *o->subtitle) {
		c.subtitle = o->subtitle;
		c.top += FG_ROW;
	}
	if (o && o->unit && *o->unit)
		c.unit = o->unit;
	c.bytes = !strcmp(c.unit, "bytes");
	if (o && o->width > 0)
		c.width = o->width < FG_MIN_WIDTH ? FG_MIN_WIDTH : o->width;

	err = fg_tree__build(&t, stacks, n);
	if (err)
		goto cleanup;
	if (!t.nodes[0].total) {
		err = fg_write_empty(f, &c);
	} else {
		err = fg_tree__sort(&t, o);
		if (!err)
			err = fg_write_graph(f, &t, &c);
	}
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
cleanup:
	fg_tree__free(&t);
	return err;
}
