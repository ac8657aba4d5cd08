/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's settings as memphase read them (model/engine.h): the summary's lines and the
 * JSON's "engine" (the HTML's page reads that too). Where each came from: a flag, the
 * environment, or the build's default.
 */
#ifndef __MP_REPORT_SETTINGS_H
#define __MP_REPORT_SETTINGS_H

#include <stdio.h>
#include "lib/json.h"
#include "model/model.h"

void settings__print(FILE *f, const struct model *m);
void settings__json(struct jsonw *w, const struct model *m);

#endif
