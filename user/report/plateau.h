/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where it stops: each cause's ceiling (what bounds it: its mappings, an engine setting),
 * where host RAM levels off once every bounded cause is full, and whether that fits the room
 * before an OOM kill, or after how many requests it runs out and what setting would make it
 * fit (model/ceilings.h). The summary's section and the JSON's "ceilings".
 */
#ifndef __MP_REPORT_PLATEAU_H
#define __MP_REPORT_PLATEAU_H

#include <stdio.h>
#include "lib/json.h"
#include "model/model.h"

void plateau__print(FILE *f, const struct model *m);
void plateau__json(struct jsonw *w, const struct model *m);

#endif
