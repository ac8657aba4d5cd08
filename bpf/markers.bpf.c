// SPDX-License-Identifier: GPL-2.0
/*
 * Phase markers: the uprobes of the preset and --phase markers, their argument rules, and
 * the phase change they make.
 */
#include "mm.h"

/* Non-zero bytes of a word: fold each byte's bits into its low bit, then add the bytes. */
static __always_inline __u32 word_nonzero(__u64 x)
{
	x |= x >> 4;
	x |= x >> 2;
	x |= x >> 1;
	x &= 0x0101010101010101ULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* What a marker call's rule found: the phase it enters, the value and the array's count. */
struct rule_out {
	__u32 phase;
	__u32 record;
	__u64 value;
	__u64 nonzero;
	__u64 pos;		/* seq << 32 | position + 1 of the last token, 0: unknown */
};

/*
 * The last token's position and sequence (see mp_rule.pos_at) of a call with n tokens: seq
 * << 32 | position + 1, or 0 when it cannot be read (no arrays: llama_batch_get_one).
 */
__noinline __u64 rule_last_pos(struct pt_regs *ctx, __u32 idx, __s64 n)
{
	const volatile struct mp_rule *r;
	__u64 ptr = 0, sptr = 0;
	__s32 pos = -1, seq = 0;

	if (!ctx || idx >= MP_MAX_RULES || n <= 0 || n > (1 << 20))
		return 0;
	r = &cfg.rules[idx];
	if (!r->pos_at ||
	    bpf_probe_read_user(&ptr, 8, (void *)(PT_REGS_SP(ctx) + r->pos_at)) || !ptr ||
	    bpf_probe_read_user(&pos, 4, (void *)(ptr + 4 * (n - 1))) || pos < 0)
		return 0;
	if (r->seq_at &&
	    !bpf_probe_read_user(&ptr, 8, (void *)(PT_REGS_SP(ctx) + r->seq_at)) && ptr &&
	    !bpf_probe_read_user(&sptr, 8, (void *)(ptr + 8 * (n - 1))) && sptr)
		bpf_probe_read_user(&seq, 4, (void *)sptr);
	return (__u64)(__u32)seq << 32 | ((__u64)pos + 1);
}

/*
 * Counts the non-zero bytes among the first n of the array whose pointer is at sp + r->arr_at
 * (r: rule idx); -1 when there is no array (NULL pointer, n <= 0, unreadable). A subprogram:
 * its loop is verified once, not on every path of the rule's evaluation.
 */
__noinline long rule_array_count(struct pt_regs *ctx, __u32 idx, __s64 n)
{
	const volatile struct mp_rule *r;
	struct rule_buf *buf;
	__u32 zero = 0, i, len;
	__u64 ptr = 0;
	long cnt = 0;

	if (!ctx || idx >= MP_MAX_RULES)
		return -1;
	r = &cfg.rules[idx];
	if (bpf_probe_read_user(&ptr, 8, (void *)(PT_REGS_SP(ctx) + r->arr_at)) || !ptr)
		return -1;
	if (n <= 0)
		return -1;
	/* trimmed only where entries are left: a one-entry array counts its one */
	if (n > r->arr_trim)
		n -= r->arr_trim;
	if (n > MP_RULE_MAX_ARRAY)
		n = MP_RULE_MAX_ARRAY;
	buf = bpf_map_lookup_elem(&rule_bufs, &zero);
	if (!buf)
		return -1;
	len = (__u32)n;
	/* bounded for the verifier: 1..MP_RULE_MAX_ARRAY */
	if (len < 1 || len > MP_RULE_MAX_ARRAY)
		return -1;
	if (bpf_probe_read_user(buf->w, len, (void *)ptr))
		return -1;
	/* a word at a time (the verifier walks 32 steps, not 256); the last one masked */
	for (i = 0; i < MP_RULE_MAX_ARRAY / 8; i++) {
		__u64 w;

		if (i * 8 >= len)
			break;
		w = buf->w[i];
		if (len - i * 8 < 8)
			w &= (1ULL << ((len - i * 8) * 8)) - 1;
		cnt += word_nonzero(w);
	}
	return cnt;
}

/*
 * The phase a marker call enters by its argument rule (see struct mp_rule): read the value,
 * compare (mp_rule__hit), pick then or else; or by the array's count; a guard on the phases
 * the target has entered so far overrides both. A value that cannot be read (stack memory
 * not present) compares as 0.
 */
static __always_inline void rule_phase(struct pt_regs *ctx, __u32 idx, __u32 seen,
				       struct rule_out *o)
{
	/* volatile: the values are set by user space after compilation */
	const volatile struct mp_rule *r;
	__u64 v = 0;
	long cnt;
	int hit;

	/* the index comes from the cookie: bound it for the verifier */
	if (idx >= MP_MAX_RULES)
		return;
	r = &cfg.rules[idx];
	if (r->src == MP_SRC_STACK) {
		void *at = (void *)(PT_REGS_SP(ctx) + r->at);

		if (r->width == 8)
			bpf_probe_read_user(&v, 8, at);
		else
			bpf_probe_read_user(&v, 4, at);
	} else {
		v = rule_arg(ctx, r->at);
	}
	if (r->width != 8)
		v = r->is_signed ? (__u64)(__s64)(__s32)v : (__u64)(__u32)v;
	o->value = r->rec_arg ? rule_arg(ctx, r->rec_arg) : v;
	o->record = r->record;
	hit = mp_rule__hit(r->op, r->width, r->is_signed, v, r->value);
	o->phase = hit ? r->then_phase : r->else_phase;
	if (r->arr_at) {
		cnt = rule_array_count(ctx, idx, (__s64)v);
		if (cnt >= 0) {
			__s64 n = (__s64)v > r->arr_trim ? (__s64)v - r->arr_trim : (__s64)v;

			if (n > MP_RULE_MAX_ARRAY)
				n = MP_RULE_MAX_ARRAY;
			if (n < 0)
				n = 0;
			o->phase = cnt == n ? r->all_phase : cnt ? r->mixed_phase : r->none_phase;
			/* all: every entry (the uncounted ones too) */
			o->nonzero = cnt == n ? v : cnt;
		}
	}
	if (r->pos_at)
		o->pos = rule_last_pos(ctx, idx, (__s64)v);
	if (r->guard_mask && !(seen & r->guard_mask) &&
	    (!r->guard_max || mp_rule__hit(MP_OP_LE, r->width, r->is_signed, v, r->guard_max)))
		o->phase = r->guard_phase;
}

/* Switches a target's phase: counts the entry, sends MP_EV_PHASE (also for a recorded value
 * without a change, so that each call's value arrives). */
static __always_inline void phase_enter(struct mp_target *t, __u32 tgid, __u32 phase,
					const struct rule_out *o)
{
	__u64 g[MP_NR_CLASSES] = {}, sh[MP_NR_CLASSES] = {}, mp[MP_NR_IVL_MAP] = {}, faults = 0;
	struct mp_phase_stats *s;
	struct mp_event *e;
	__u32 old = t->phase, c;

	phase &= MP_MAX_PHASES - 1;
	if (phase == old && (!o || !o->record))
		return;
	if (phase != old) {
		t->phase = phase;
		t->seen |= 1U << phase;
		s = stats_get(phase);
		if (s)
			s->entries++;
		/* the old phase's interval ends: take what it counted (lost if the event is) */
		rss_sync(t, tgid);
		ivl_take(t, &faults, g, sh, mp);
	}
	e = event_new(MP_EV_PHASE, tgid, old);
	if (!e)
		return;
	for (c = 0; c < MP_NR_CLASSES; c++) {
		e->ivl_growth[c] = g[c];
		e->ivl_shrink[c] = sh[c];
	}
	for (c = 0; c < MP_NR_IVL_MAP; c++)
		e->ivl_map[c] = mp[c];
	e->ivl_faults = faults;
	e->arg = phase;
	if (o) {
		e->record = o->record;
		e->addr = o->value;
		e->ino = o->nonzero;
		e->dev = o->pos;
	}
	event_rss(e, t, tgid);
	event_submit(e, false);
}

/*
 * One program for every marker uprobe: the attach cookie holds the marker's phase and the
 * index of its argument rule in cfg.rules (0: none), which may pick another phase.
 */
SEC("uprobe")
int handle_marker(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 rule = MP_COOKIE_RULE(cookie);
	struct rule_out o = { .phase = MP_COOKIE_PHASE(cookie) };
	struct thread_state *ts;
	struct mp_phase_stats *s;
	struct mp_target *t;
	__u32 tgid;

	t = target_of_current(&tgid);
	if (!t)
		return 0;
	if (cookie & MP_COOKIE_REQ) {
		/* --request: a new request begins; the phase stays */
		o.record = MP_REC_REQUEST;
		phase_enter(t, tgid, t->phase, &o);
		return 0;
	}
	/*
	 * A sticky phase (e.g. warmup) its own marker entered ignores the markers of other
	 * phases. Entered otherwise (a guard's pick of another marker) it is not sticky.
	 */
	if ((t->flags & MP_T_STICKY) && o.phase != t->phase) {
		o.phase = t->phase;
	} else {
		if (rule && rule < cfg.nrules)
			rule_phase(ctx, rule, t->seen, &o);
		o.phase &= MP_MAX_PHASES - 1;
		if ((cfg.sticky_mask & (1U << o.phase)) && o.phase == MP_COOKIE_PHASE(cookie))
			__sync_fetch_and_or(&t->flags, MP_T_STICKY);
		else if (t->flags & MP_T_STICKY)
			__sync_fetch_and_and(&t->flags, ~MP_T_STICKY);
	}
	o.phase &= MP_MAX_PHASES - 1;
	call_flush(t);
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	if (ts) {
		mapping_flush(ts);
		maplog_send(ts);
	}
	s = stats_get(o.phase);
	if (s)
		s->calls++;
	phase_enter(t, tgid, o.phase, &o);
	return 0;
}

/*
 * A marker's return probe: its call is over; the cookie's phase (e.g. "host": the program
 * between engine calls) is current until the next marker. The call's growth ends here.
 */
SEC("uretprobe")
int handle_marker_ret(struct pt_regs *ctx)
{
	__u32 phase = MP_COOKIE_PHASE(bpf_get_attach_cookie(ctx)), tgid;
	struct thread_state *ts;
	struct mp_target *t;

	t = target_of_current(&tgid);
	if (!t || t->phase == phase)
		return 0;
	if (t->flags & MP_T_STICKY)
		return 0;
	call_flush(t);
	ts = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL, 0);
	if (ts) {
		mapping_flush(ts);
		maplog_send(ts);
	}
	phase_enter(t, tgid, phase, NULL);
	return 0;
}
