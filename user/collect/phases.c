// SPDX-License-Identifier: GPL-2.0
/* A preset's phases, markers and rules, and user phase markers. Pure code. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "collect/phases.h"

static int phase_add(struct phases *p, const char *name)
{
	int id = phases__find(p, name);

	if (id >= 0)
		return id;
	if (p->nphases >= MP_MAX_PHASES)
		return -E2BIG;
	if (strlen(name) >= PHASE_NAME_MAX)
		return -EINVAL;
	strcpy(p->names[p->nphases], name);
	return p->nphases++;
}

static int marker_add(struct phases *p, const char *symbol, const char *binary, __u32 phase,
		      __u32 rule, bool user)
{
	struct marker *mk;

	if (p->nmarkers >= PHASES_MAX_MARKERS)
		return -E2BIG;
	if (strlen(symbol) >= PHASE_SYM_MAX || strlen(binary) >= PHASE_BIN_MAX)
		return -EINVAL;
	mk = &p->markers[p->nmarkers++];
	strcpy(mk->symbol, symbol);
	strcpy(mk->binary, binary);
	mk->phase = phase;
	mk->rule = rule;
	mk->user = user;
	mk->ret_phase = -1;
	mk->request = false;
	return 0;
}

/* A preset rule as BPF reads it: phase names become ids; no else phase: the marker's. */
static int rule_add(struct phases *p, const struct preset_rule *r, __u32 marker_phase)
{
	int then_id = phases__find(p, r->then_phase ? r->then_phase : "");
	int else_id = r->else_phase ? phases__find(p, r->else_phase) : (int)marker_phase;
	struct mp_rule *br;

	if (then_id < 0 || else_id < 0)
		return -EINVAL;
	if (!p->nrules)
		p->nrules = 1;		/* index 0 is "no rule" */
	if (p->nrules >= MP_MAX_RULES)
		return -E2BIG;
	br = &p->rules[p->nrules];
	br->src = r->src;
	br->at = r->at;
	br->width = r->width;
	br->is_signed = r->is_signed;
	br->op = r->op;
	br->value = r->value;
	br->then_phase = then_id;
	br->else_phase = else_id;
	br->record = r->record;
	br->rec_arg = r->rec_arg;
	br->pos_at = r->pos_at;
	br->seq_at = r->seq_at;
	if (r->arr_at) {
		int all = phases__find(p, r->all_phase ? r->all_phase : "");
		int none = phases__find(p, r->none_phase ? r->none_phase : "");
		int mixed = phases__find(p, r->mixed_phase ? r->mixed_phase : "");

		if (all < 0 || none < 0 || mixed < 0)
			return -EINVAL;
		br->arr_at = r->arr_at;
		br->arr_trim = r->arr_trim;
		br->all_phase = all;
		br->none_phase = none;
		br->mixed_phase = mixed;
	}
	if (r->guard_unseen) {
		int g = phases__find(p, r->guard_phase ? r->guard_phase : "");

		if (g < 0)
			return -EINVAL;
		br->guard_phase = g;
		br->guard_max = r->guard_max;
		br->guard_mask = phases__mask(p, r->guard_unseen);
		if (!br->guard_mask)
			return -EINVAL;
	}
	return p->nrules++;
}

__u32 phases__mask(const struct phases *p, const char *const *names)
{
	__u32 mask = 0;
	int id;

	for (; names && *names; names++) {
		id = phases__find(p, *names);
		if (id >= 0)
			mask |= 1U << id;
	}
	return mask;
}

int phases__init(struct phases *p, const struct preset *preset)
{
	const struct preset_marker *pm;
	unsigned int i;
	int id, rule, err;

	/* all but the markers: clearing those would fault in 70 pages at every start */
	memset(p, 0, offsetof(struct phases, markers));
	p->request_phase = -1;
	phase_add(p, "startup");
	if (!preset)
		return 0;
	p->preset = preset;
	for (i = 0; preset->phases[i]; i++) {
		id = phase_add(p, preset->phases[i]);
		if (id < 0)
			return id;
	}
	for (pm = preset->markers; pm->symbol; pm++) {
		if (pm->request) {
			err = marker_add(p, pm->symbol, pm->binary ? pm->binary : "", 0, 0, false);
			if (err)
				return err;
			p->markers[p->nmarkers - 1].request = true;
			continue;
		}
		id = phases__find(p, pm->phase);
		if (id < 0)
			return -EINVAL;
		rule = pm->rule ? rule_add(p, pm->rule, id) : 0;
		if (rule < 0)
			return rule;
		err = marker_add(p, pm->symbol, pm->binary ? pm->binary : "", id, rule, false);
		if (err)
			return err;
		if (pm->ret_phase) {
			id = phases__find(p, pm->ret_phase);
			if (id < 0)
				return -EINVAL;
			p->markers[p->nmarkers - 1].ret_phase = id;
		}
	}
	p->sticky_mask = phases__mask(p, preset->sticky);
	p->idle_mask = phases__mask(p, preset->idle);
	p->end_mask = phases__mask(p, preset->request_end);
	p->lead_mask = phases__mask(p, preset->request_lead);
	if (preset->request_phase)
		p->request_phase = phases__find(p, preset->request_phase);
	return 0;
}

bool phases__has_return(const struct phases *p)
{
	unsigned int i;

	for (i = 0; i < p->nmarkers; i++) {
		if (p->markers[i].ret_phase >= 0)
			return true;
	}
	return false;
}

void phases__fill_cfg(const struct phases *p, struct mp_config *cfg)
{
	memcpy(cfg->rules, p->rules, sizeof(cfg->rules));
	cfg->nrules = p->nrules;
	cfg->sticky_mask = p->sticky_mask;
}

int phases__add_spec(struct phases *p, const struct phase_spec *s)
{
	int id = phase_add(p, s->name);

	if (id < 0)
		return id;
	return marker_add(p, s->symbol, s->binary, id, 0, true);
}

int phases__add_request(struct phases *p, const struct phase_spec *s)
{
	unsigned int i, n = 0;
	int err;

	/* the user's request replaces the preset's engine entries */
	for (i = 0; i < p->nmarkers; i++)
		if (!p->markers[i].request || p->markers[i].user)
			p->markers[n++] = p->markers[i];
	p->nmarkers = n;
	err = marker_add(p, s->symbol, s->binary, 0, 0, true);
	if (err)
		return err;
	p->markers[p->nmarkers - 1].request = true;
	p->request_marker = true;
	return 0;
}

int phases__find(const struct phases *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nphases; i++)
		if (!strcmp(p->names[i], name))
			return i;
	return -ENOENT;
}

__u64 phases__cookie(const struct marker *mk)
{
	return MP_COOKIE(mk->phase, mk->rule) | (mk->request ? MP_COOKIE_REQ : 0);
}

__u64 phases__ret_cookie(const struct marker *mk)
{
	return MP_COOKIE_RET | MP_COOKIE(mk->ret_phase < 0 ? 0 : mk->ret_phase, 0);
}

const char *phases__marker_str(const struct phases *p, const struct marker *mk, char *buf,
			       size_t len)
{
	__u32 ids[6], n = 0, i, j;
	const struct mp_rule *r;
	size_t o = 0;

	if (mk->request) {
		snprintf(buf, len, "(request)");
		return buf;
	}
	if (!mk->rule || mk->rule >= p->nrules) {
		snprintf(buf, len, "%s", p->names[mk->phase]);
		return buf;
	}
	r = &p->rules[mk->rule];
	/* every phase the rule can pick, once each, in the rule's order */
	ids[n++] = r->then_phase;
	ids[n++] = r->else_phase;
	if (r->arr_at) {
		ids[n++] = r->all_phase;
		ids[n++] = r->none_phase;
		ids[n++] = r->mixed_phase;
	}
	if (r->guard_mask)
		ids[n++] = r->guard_phase;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && ids[j] != ids[i]; j++)
			;
		if (j < i || ids[i] >= p->nphases || o >= len)
			continue;
		o += snprintf(buf + o, len - o, "%s%s", o ? "/" : "", p->names[ids[i]]);
	}
	return buf;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool phases__marker_matches(const struct marker *mk, const char *path)
{
	const char *want, *have;
	size_t n;

	if (!mk->binary[0] || !strcmp(mk->binary, path))
		return true;
	want = base_name(mk->binary);
	have = base_name(path);
	n = strlen(want);
	if (strncmp(want, have, n))
		return false;
	return have[n] == '\0' || (mk->binary[0] != '/' && have[n] == '.');
}

int phases__setup(struct phases *p, const struct preset *preset, const struct phase_spec *specs,
		  unsigned int nspecs, const struct phase_spec *request)
{
	unsigned int i;
	int err;

	err = phases__init(p, preset);
	if (err) {
		fprintf(stderr, "memphase: preset '%s' does not fit: %s\n",
			preset ? preset->name : "none", strerror(-err));
		return err;
	}
	for (i = 0; !err && i < nspecs; i++)
		err = phases__add_spec(p, &specs[i]);
	if (!err && request)
		err = phases__add_request(p, request);
	if (err)
		fprintf(stderr, "memphase: too many phases or markers (max %d phases, %d markers)\n",
			MP_MAX_PHASES, PHASES_MAX_MARKERS);
	return err;
}
