// SPDX-License-Identifier: GPL-2.0
/* The live view's list of histograms. */
#include <stddef.h>
#include "model/model.h"
#include "report/live/hists.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* One line per histogram the model keeps per phase. */
static const struct live_hist model_hists[] = {
	{ "RSS growth per marker call", "bytes", hists__model_slots, MP_HIST_CALL_GROWTH },
	{ "mmap request sizes", "bytes", hists__model_slots, MP_HIST_MMAP_SIZE },
};

_Static_assert(ARRAY_SIZE(model_hists) == MP_NR_HISTS, "a model histogram has no title");

const __u64 *hists__model_slots(const struct model *m, unsigned int phase, unsigned int arg)
{
	if (arg >= MP_NR_HISTS)
		return NULL;
	return m->stats[phase < MP_MAX_PHASES ? phase : 0].hist[arg];
}

void hists__init(struct hists *h, const struct live_hist *list, unsigned int n)
{
	h->list = list;
	h->n = list ? n : 0;
	h->cur = 0;
}

void hists__init_model(struct hists *h)
{
	hists__init(h, model_hists, ARRAY_SIZE(model_hists));
}

const struct live_hist *hists__cur(const struct hists *h)
{
	return h->n ? &h->list[h->cur % h->n] : NULL;
}

const struct live_hist *hists__peek(const struct hists *h)
{
	return h->n ? &h->list[(h->cur + 1) % h->n] : NULL;
}

void hists__next(struct hists *h)
{
	if (h->n)
		h->cur = (h->cur + 1) % h->n;
}

const __u64 *hists__slots(const struct hists *h, const struct model *m, unsigned int phase)
{
	const struct live_hist *e = hists__cur(h);

	return e ? e->slots(m, phase, e->arg) : NULL;
}
