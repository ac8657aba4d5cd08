/* SPDX-License-Identifier: GPL-2.0 */
/* The JSON summary (schema 1; README.md explains every key). */
#ifndef __MP_REPORT_JSON_H
#define __MP_REPORT_JSON_H

#include <stdio.h>
#include "model/model.h"
#include "report/format.h"

#define REPORT_JSON_SCHEMA 1

/* Writes the whole document; 0 or -EIO. */
int report_json__write(FILE *f, const struct model *m);

extern const struct output_format report_json_format;

#endif
