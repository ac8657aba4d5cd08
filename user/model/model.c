// SPDX-License-Identifier: GPL-2.0
/* The run model: phases, processes, OOM kills. Pure code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

const int mp_class_order[MP_NR_CLASSES] = { MP_ANON, MP_FILE, MP_SHMEM, MP_SWAP };

static void order_note(struct model *m, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < m->norder; i++)
		if (m->order[i] == id)
			return;
	if (m->norder < MP_MAX_PHASES)
		m->order[m->norder++] = id;
}

void model__init(struct model *m, __u32 root_pid, __u64 start_ns)
{
	memset(m, 0, sizeof(*m));
	m->root_pid = root_pid;
	m->start_ns = start_ns;
	m->phase_since_ns = start_ns;
	m->cur_phase = 0;
	strcpy(m->names[0], "startup");
	m->nphases = 1;
	order_note(m, 0);
	profile__init(&m->profile, false);
	if (root_pid)
		model__proc(m, root_pid, true);
}

void model__free(struct model *m)
{
	char **a;

	if (!m)
		return;
	profile__free(&m->profile);
	history__free(&m->history);
	if (!m->argv)
		return;
	for (a = m->argv; *a; a++)
		free(*a);
	free(m->argv);
	m->argv = NULL;
}

int model__set_phase_name(struct model *m, unsigned int id, const char *name)
{
	if (id >= MP_MAX_PHASES || strlen(name) >= PHASE_NAME_MAX)
		return -EINVAL;
	strcpy(m->names[id], name);
	if (id >= m->nphases)
		m->nphases = id + 1;
	return 0;
}

int model__set_argv(struct model *m, char *const argv[])
{
	size_t n = 0, i;

	while (argv[n])
		n++;
	m->argv = calloc(n + 1, sizeof(char *));
	if (!m->argv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->argv[i] = strdup(argv[i]);
		if (!m->argv[i])
			return -ENOMEM;
	}
	return 0;
}

struct model_proc *model__proc(struct model *m, __u32 pid, bool create)
{
	struct model_proc *p;
	unsigned int i;

	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	if (!create)
		return NULL;
	if (m->nprocs == MODEL_MAX_PROCS) {
		/* many short-lived processes: reuse the record of one long gone */
		for (i = 0; i < m->nprocs; i++)
			if (m->procs[i].forgotten && m->procs[i].pid != m->root_pid)
				break;
		if (i == m->nprocs) {
			m->lost_model++;
			return NULL;
		}
		p = &m->procs[i];
		m->procs_recycled++;
	} else {
		p = &m->procs[m->nprocs++];
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exit_code = -1;
	return p;
}

struct model_proc *model__root(struct model *m)
{
	return model__proc(m, m->root_pid, false);
}

struct model_proc *model__main(struct model *m)
{
	struct model_proc *root = model__root(m), *best = root;
	unsigned int i;

	if (m->root_phased)
		return root;
	/* a wrapper: the descendant that held the most */
	for (i = 0; i < m->nprocs; i++)
		if (!best || m->procs[i].peak_total > best->peak_total)
			best = &m->procs[i];
	return best;
}

static void phase_switch(struct model *m, __u32 phase, __u64 ts)
{
	if (phase >= MP_MAX_PHASES)
		return;
	if (ts > m->phase_since_ns)
		m->time_ns[m->cur_phase] += ts - m->phase_since_ns;
	/* the open interval is closed here; model__finish() leaves the last one open (a
	 * snapshot of the model shares the history) */
	history__add_interval(&m->history, m->cur_phase, m->focus_pid ? m->focus_pid : m->root_pid,
			      m->phase_since_ns, ts > m->phase_since_ns ? ts : m->phase_since_ns);
	m->phase_since_ns = ts > m->phase_since_ns ? ts : m->phase_since_ns;
	m->cur_phase = phase;
	order_note(m, phase);
}

void model__on_event(struct model *m, const struct mp_event *e)
{
	char text[HISTORY_TEXT];
	struct model_proc *p, *c;

	switch (e->type) {
	case MP_EV_PHASE:
		/*
		 * Every process's phases count in the table. The timeline (current phase,
		 * time per phase) follows the root, or, while the root has no phases of its
		 * own (a wrapper: sh -c, a launcher script), the child that last had one.
		 */
		if (e->arg < MP_MAX_PHASES)
			order_note(m, e->arg);
		history__add_change(&m->history, e->ts_ns, e->pid, e->tid, e->arg, e->old_phase);
		if (e->pid == m->root_pid)
			m->root_phased = true;
		if (!m->root_phased)
			m->focus_pid = e->pid;
		if ((e->pid == m->root_pid || e->pid == m->focus_pid) && !m->finished)
			phase_switch(m, e->arg, e->ts_ns);
		break;
	case MP_EV_FORK:
		c = model__proc(m, e->arg, true);
		if (c) {
			c->parent = e->pid;
			memcpy(c->comm, e->comm, MP_COMM_LEN);
		}
		break;
	case MP_EV_EXEC:
		p = model__proc(m, e->pid, true);
		if (p)
			memcpy(p->comm, e->comm, MP_COMM_LEN);
		snprintf(text, sizeof(text), "%.*s", MP_COMM_LEN, e->comm);
		history__add_mark(&m->history, e->ts_ns, HISTORY_EXEC, e->pid, text);
		break;
	case MP_EV_GUARD:
		snprintf(text, sizeof(text), "%.*s stopped: over --max-rss", MP_COMM_LEN, e->comm);
		history__add_mark(&m->history, e->ts_ns, HISTORY_GUARD, e->pid, text);
		break;
	case MP_EV_EXIT:
		/* under a wrapper, the time after the phased child ends is the wrapper's */
		if (!m->root_phased && e->pid == m->focus_pid && e->pid != m->root_pid &&
		    !m->finished) {
			phase_switch(m, 0, e->ts_ns);
			m->focus_pid = m->root_pid;
		}
		p = model__proc(m, e->pid, true);
		if (!p)
			break;
		p->exited = true;
		p->exit_ns = e->ts_ns;
		if (!p->comm[0])
			memcpy(p->comm, e->comm, MP_COMM_LEN);
		/* wait(2) status layout */
		if (e->arg & 0x7f) {
			p->exit_signal = e->arg & 0x7f;
			p->exit_code = -1;
		} else {
			p->exit_code = (e->arg >> 8) & 0xff;
		}
		break;
	case MP_EV_OOM:
		snprintf(text, sizeof(text), "%.*s OOM-killed", MP_COMM_LEN, e->comm);
		history__add_mark(&m->history, e->ts_ns, HISTORY_OOM, e->pid, text);
		p = model__proc(m, e->pid, true);
		if (p) {
			p->oom_killed = true;
			if (!p->comm[0])
				memcpy(p->comm, e->comm, MP_COMM_LEN);
		}
		if (m->nooms < MODEL_MAX_OOMS) {
			struct model_oom *o = &m->ooms[m->nooms++];

			memset(o, 0, sizeof(*o));
			o->cgroup_oom = -1;
			o->pid = e->pid;
			o->phase = e->old_phase;
			o->ts_ns = e->ts_ns;
			memcpy(o->comm, e->comm, MP_COMM_LEN);
			memcpy(o->rss, e->rss, sizeof(o->rss));
		} else {
			m->lost_model++;
		}
		break;
	default:
		break;
	}
}

void model__set_stats(struct model *m, unsigned int id, const struct mp_phase_stats *s)
{
	if (id >= MP_MAX_PHASES)
		return;
	m->stats[id] = *s;
	if (s->entries || s->calls)
		order_note(m, id);
}

void model__set_rss(struct model *m, __u32 pid, const __s64 rss[MP_NR_CLASSES],
		    const __s64 peak[MP_NR_CLASSES], __s64 peak_total)
{
	struct model_proc *p = model__proc(m, pid, true);
	int c;

	if (!p)
		return;
	for (c = 0; c < MP_NR_CLASSES; c++) {
		p->rss[c] = rss[c];
		if (peak[c] > p->peak[c])
			p->peak[c] = peak[c];
	}
	if (peak_total > p->peak_total)
		p->peak_total = peak_total;
}

void model__raise_peaks(struct model *m, __u32 pid, const __s64 peak[MP_NR_CLASSES],
			__s64 peak_total)
{
	struct model_proc *p = model__proc(m, pid, false);
	int c;

	if (!p)
		return;
	for (c = 0; c < MP_NR_CLASSES; c++)
		if (peak[c] > p->peak[c])
			p->peak[c] = peak[c];
	if (peak_total > p->peak_total)
		p->peak_total = peak_total;
}

void model__finish(struct model *m, __u64 now_ns)
{
	if (m->finished)
		return;
	if (now_ns > m->phase_since_ns)
		m->time_ns[m->cur_phase] += now_ns - m->phase_since_ns;
	m->phase_since_ns = now_ns;
	m->end_ns = now_ns;
	m->finished = true;
}

__u64 model__phase_time(const struct model *m, unsigned int id, __u64 now_ns)
{
	__u64 t;

	if (id >= MP_MAX_PHASES)
		return 0;
	t = m->time_ns[id];
	if (!m->finished && id == m->cur_phase && now_ns > m->phase_since_ns)
		t += now_ns - m->phase_since_ns;
	return t;
}

__u64 model__growth_total(const struct mp_phase_stats *s, bool with_swap)
{
	return s->growth[MP_ANON] + s->growth[MP_FILE] + s->growth[MP_SHMEM] +
	       (with_swap ? s->growth[MP_SWAP] : 0);
}

void model__add_mark(struct model *m, __u64 ts_ns, __u32 kind, __u32 pid, const char *text)
{
	history__add_mark(&m->history, ts_ns, kind, pid, text);
}

void model__add_mem(struct model *m, const struct history_mem *s)
{
	history__add_mem(&m->history, s);
}

void model__clear_mappings(struct model *m)
{
	memset(m->ntop, 0, sizeof(m->ntop));
	memset(m->nmappings, 0, sizeof(m->nmappings));
	memset(m->mapping_bytes, 0, sizeof(m->mapping_bytes));
}

void model__offer_mapping(struct model *m, unsigned int id, const struct model_mapping *mm)
{
	struct model_mapping *top;
	unsigned int n, i;

	if (id >= MP_MAX_PHASES || !mm->bytes)
		return;
	m->nmappings[id]++;
	m->mapping_bytes[id] += mm->bytes;
	top = m->top[id];
	n = m->ntop[id];
	if (n == MODEL_TOP_MAPPINGS && top[n - 1].bytes >= mm->bytes)
		return;
	if (n < MODEL_TOP_MAPPINGS)
		n++;
	/* insertion into the sorted list, dropping the smallest when full */
	for (i = n - 1; i > 0 && top[i - 1].bytes < mm->bytes; i--)
		top[i] = top[i - 1];
	top[i] = *mm;
	m->ntop[id] = n;
}

const char *model__kind_name(__u32 kind)
{
	static const char *const n[MP_NR_MAP_KINDS] = {
		[MP_MAP_UNKNOWN] = "unknown", [MP_MAP_HEAP] = "heap",
		[MP_MAP_STACK] = "stack", [MP_MAP_THREAD_STACK] = "thread_stack",
		[MP_MAP_ANON] = "anon", [MP_MAP_FILE] = "file",
		[MP_MAP_SHMEM] = "shmem", [MP_MAP_DEVICE] = "device",
	};

	return kind < MP_NR_MAP_KINDS ? n[kind] : "?";
}

void model__add_unmatched(struct model *m, const char *phase, const char *binary,
			  const char *symbol, const char *reason)
{
	struct model_unmatched *u;

	if (m->nunmatched >= MODEL_MAX_UNMATCHED) {
		m->lost_model++;
		return;
	}
	u = &m->unmatched[m->nunmatched++];
	snprintf(u->phase, sizeof(u->phase), "%s", phase);
	snprintf(u->binary, sizeof(u->binary), "%s", binary);
	snprintf(u->symbol, sizeof(u->symbol), "%s", symbol);
	snprintf(u->reason, sizeof(u->reason), "%s", reason);
}

__u32 model__largest_live(const struct model *m)
{
	__u32 best = m->root_pid;
	__s64 most = -1;
	unsigned int i;

	for (i = 0; i < m->nprocs; i++) {
		const struct model_proc *p = &m->procs[i];
		__s64 rss = p->rss[MP_ANON] + p->rss[MP_FILE] + p->rss[MP_SHMEM];

		if (!p->exited && rss > most) {
			most = rss;
			best = p->pid;
		}
	}
	return best;
}
