// SPDX-License-Identifier: GPL-2.0
/*
 * memphase report FILE: the recording read back as the user, through the collector, into
 * the same summary and files the live run could write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "collect/collector.h"
#include "collect/replay.h"
#include "collect/target.h"
#include "lib/creds.h"
#include "lib/userfs.h"
#include "lib/utf8.h"
#include "model/model.h"
#include "report/outputs.h"
#include "report/summary.h"
#include "users.h"
#include "report_command.h"

int report_command__run(const struct env *e, int *status)
{
	struct replay_opts ro = { .from_s = e->report_from, .to_s = e->report_to,
				  .phase = e->report_phase };
	struct output_ctx oc = {};
	struct replay_result res;
	struct outputs out = {};
	struct collector *c = NULL;
	struct userfs *fs = NULL;
	struct creds user;
	struct model *m;
	char why[256], p[256];
	struct stat st;
	FILE *f;
	int err;

	*status = TARGET_EXIT_FAILED;
	/* a report needs no privilege: all of it runs as the invoking user, who must be
	 * able to read the recording and write the files */
	err = users__invoking(&user);
	if (err)
		return err;
	err = creds__drop(&user);
	if (err) {
		fprintf(stderr, "memphase: cannot become uid %u: %s\n", (unsigned int)user.uid,
			strerror(-err));
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	utf8__esc_term(p, sizeof(p), e->report_file);
	f = fopen(e->report_file, "rbe");
	if (!f) {
		err = -errno;
		fprintf(stderr, "memphase: cannot open %s: %s\n", p, strerror(-err));
		free(m);
		return err;
	}
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		fprintf(stderr, "memphase: %s: %s\n", p, strerror(EISDIR));
		goto out;
	}
	fs = userfs__new(&user);
	if (!fs) {
		err = -errno;
		fprintf(stderr, "memphase: cannot act as uid %u for the output files: %s\n",
			(unsigned int)user.uid, strerror(-err));
		goto out;
	}
	err = outputs__open(&out, e->out_paths, NULL, fs, false);
	if (err)
		goto out;
	ro.keep_raw = outputs__needs(&out) & OUTPUT_NEEDS_RAW;
	c = replay__file(f, m, &ro, &res, why, sizeof(why));
	if (!c) {
		err = -errno;
		fprintf(stderr, "memphase: %s: %s\n", p, why);
		goto out;
	}
	if (res.truncated)
		fprintf(stderr, "memphase: %s is truncated: read up to the last whole chunk "
				"(%u chunks, %llu bytes cut off): the run was not finished by "
				"memphase\n",
			p, res.chunks, (unsigned long long)res.tail_bytes);
	else if (!res.finished)
		fprintf(stderr, "memphase: %s ends without the end of the run (%u whole chunks): "
				"the run was not finished by memphase\n", p, res.chunks);
	if (res.unknown)
		fprintf(stderr, "memphase: %s: %llu records of kinds this memphase does not know "
				"were skipped (a newer memphase wrote it)\n", p,
			(unsigned long long)res.unknown);
	/* a recording cut short ends where its last record does */
	if (!m->finished)
		model__finish(m, m->phase_since_ns > m->end_ns ? m->phase_since_ns : m->end_ns);
	oc.m = m;
	oc.tl = collector__timeline(c);
	summary__print(out.to_stdout ? stderr : stdout, m, e->hists);
	err = outputs__write(&out, &oc, true);
	if (!err)
		*status = 0;
out:
	outputs__close(&out);
	userfs__free(fs);
	collector__free(c);
	if (c)
		model__free(m);
	free(m);
	fclose(f);
	return err;
}
