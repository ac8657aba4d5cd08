/* SPDX-License-Identifier: GPL-2.0 */
/* The JSON summary (schema 1): docs/json.md explains every key, docs/memphase.schema.json
 * is its JSON Schema. */
#ifndef __MP_REPORT_JSON_H
#define __MP_REPORT_JSON_H

#include <stdio.h>
#include "model/model.h"
#include "model/timeline.h"
#include "report/format.h"

#define REPORT_JSON_SCHEMA 1

#define REPORT_JSON_TIMELINE 500	/* timeline samples in the document, at most */

/* Writes the whole document (tl: the RSS history, or NULL); 0 or -EIO. */
int report_json__write(FILE *f, const struct model *m);
int report_json__write_tl(FILE *f, const struct model *m, const struct timeline *tl);

extern const struct output_format report_json_format;

#endif
