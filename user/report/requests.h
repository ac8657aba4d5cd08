/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Requests and the context, as text (the summary's section and the OOM report's lines) and
 * as JSON (requests[], request_fit, context): read from the model only.
 */
#ifndef __MP_REPORT_REQUESTS_H
#define __MP_REPORT_REQUESTS_H

#include <stdio.h>
#include "lib/json.h"
#include "model/model.h"

/* "4 requests: +30.9, ... MiB; steady ...", the table, the projection and the context. */
void requests__print(FILE *f, const struct model *m);
/* After an OOM report: the request it died in and what each request had added. */
void requests__print_oom(FILE *f, const struct model *m, const struct model_oom *o);
/* "requests": [...], "request_fit": {...}, "context": {...} */
void requests__json(struct jsonw *w, const struct model *m);

#endif
