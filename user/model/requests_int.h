/* SPDX-License-Identifier: GPL-2.0 */
/* The requests' steps the model's event handling calls (model.c, requests.c). Not for others. */
#ifndef __MP_MODEL_REQUESTS_INT_H
#define __MP_MODEL_REQUESTS_INT_H

#include "model/model.h"

/* The resident total of a reading: file + anon + shmem (swap is not resident). */
static inline __s64 model_rss_total(const __s64 rss[MP_NR_CLASSES])
{
	return rss[MP_FILE] + rss[MP_ANON] + rss[MP_SHMEM];
}

struct model_request *model_requests__open(struct model *m);
void model_requests__close(struct model *m, struct model_request *r, __u64 ts);
void model_requests__event(struct model *m, const struct mp_event *e);
void model_requests__exit(struct model *m, const struct mp_event *e);

#endif
