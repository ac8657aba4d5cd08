// SPDX-License-Identifier: GPL-2.0
/* A phase as JSON (see phase_json.h). */
#include "report/phase_json.h"

void phase_json__classes(struct jsonw *w, const char *name, const __u64 v[MP_NR_CLASSES])
{
	int c;

	jsonw__name(w, name);
	jsonw__start_object(w);
	for (c = 0; c < MP_NR_CLASSES; c++)
		jsonw__u64_field(w, mp_class_name(mp_class_order[c]), v[mp_class_order[c]]);
	jsonw__end_object(w);
}

static void interval(struct jsonw *w, const struct model *m, __u64 start_ns, __u64 end_ns)
{
	jsonw__start_object(w);
	jsonw__double_field(w, "start_s", model__rel_s(m, start_ns));
	jsonw__double_field(w, "end_s", model__rel_s(m, end_ns));
	jsonw__end_object(w);
}

static void intervals(struct jsonw *w, const struct model *m, unsigned int id)
{
	const struct history *h = &m->history;
	__u64 since = history__open_since(h, m->start_ns);
	size_t i;

	jsonw__name(w, "intervals");
	jsonw__start_array(w);
	for (i = 0; i < h->niv; i++)
		if (h->iv[i].phase == id)
			interval(w, m, h->iv[i].start_ns, h->iv[i].end_ns);
	/* the intervals follow each other: the open one starts where the last ended */
	if (m->cur_phase == id && since)
		interval(w, m, since, m->end_ns > since ? m->end_ns : since);
	jsonw__end_array(w);
}

void phase_json__fields(struct jsonw *w, const struct model *m, unsigned int id)
{
	const struct mp_phase_stats *s = &m->stats[id];

	jsonw__string_field(w, "name", m->names[id]);
	jsonw__u64_field(w, "entries", s->entries + (id == 0));
	jsonw__u64_field(w, "calls", s->calls);
	jsonw__double_field(w, "time_s", model__phase_time(m, id, m->end_ns) / 1e9);
	jsonw__u64_field(w, "faults", s->faults);
	phase_json__classes(w, "rss_growth_bytes", s->growth);
	phase_json__classes(w, "rss_shrink_bytes", s->shrink);
	intervals(w, m, id);
}
