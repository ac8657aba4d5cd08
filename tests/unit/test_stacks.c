// SPDX-License-Identifier: GPL-2.0
/* Folded stacks: every line has the documented shape, clean text, phases in entered order. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model/model.h"
#include "collect/stacks.h"
#include "report/folded.h"
#include "lib/utf8.h"

#define MS 1000000ULL

/* one fp sample of weight bytes by thread pid with comm, in phase */
static int add_sample(struct stacks *st, struct model *m, __u32 pid, __u32 phase,
		      const char *comm, __u64 weight)
{
	struct {
		struct mp_stack_event h;
		__u64 ips[2];
	} ev = {};

	ev.h.type = MP_EV_STACK;
	ev.h.pid = ev.h.tid = pid;
	ev.h.phase = phase;
	ev.h.ts_ns = 1500 * MS;
	ev.h.weight = weight;
	ev.h.mode = MP_STACKS_FP;
	ev.h.nframes = 2;
	memcpy(ev.h.comm, comm, strnlen(comm, MP_COMM_LEN - 1));
	ev.ips[0] = 0x401000;
	ev.ips[1] = 0x402000;
	return stacks__add(st, m, &ev, sizeof(ev));
}

static void event(struct model *m, __u32 type, __u32 pid, __u32 arg, const char *comm)
{
	struct mp_event e = { .type = type, .pid = pid, .arg = arg, .ts_ns = 1100 * MS };

	memcpy(e.comm, comm, strnlen(comm, MP_COMM_LEN - 1));
	model__on_event(m, &e);
}

static void growth(struct model *m, unsigned int id, __u64 anon)
{
	struct mp_phase_stats s = {};

	s.growth[MP_ANON] = anon;
	model__set_stats(m, id, &s);
}

/* a strict folded reader: 0 if line is "f1;f2;f3[;...] WEIGHT" with clean fields */
static int check_line(const char *line, char *phase, char *comm, size_t sz)
{
	const char *sp = strrchr(line, ' '), *p, *end;
	size_t n = strlen(line), i, len, nf = 0;
	uint32_t cp;
	char *num_end;

	if (!sp || sp == line)
		return -1;
	strtoull(sp + 1, &num_end, 10);
	if (num_end == sp + 1 || *num_end)
		return -2;
	for (i = 0; i < n; i += len)
		if (utf8__next(line + i, n - i, &len, &cp) != UTF8_TEXT)
			return -3;
	for (p = line; p < sp; p = end + 1) {
		end = memchr(p, ';', sp - p);
		if (!end)
			end = sp;
		if (end == p)
			return -4;	/* an empty frame */
		if (nf == 0 && (size_t)(end - p) < sz)
			snprintf(phase, sz, "%.*s", (int)(end - p), p);
		if (nf == 1 && (size_t)(end - p) < sz)
			snprintf(comm, sz, "%.*s", (int)(end - p), p);
		nf++;
		if (end == sp)
			break;
	}
	return nf >= 3 ? 0 : -5;
}

TEST(stacks_folded_lines_are_clean_and_in_phase_order)
{
	static const char *const want_phase[] = { "load", "load", "load", "generate", "generate" };
	struct model *m = calloc(1, sizeof(*m));
	struct stacks *st = stacks__new(NULL, false);
	struct output_ctx ctx = {};
	char *buf = NULL, *line, *save = NULL, phase[64], comm[64];
	size_t len = 0, nl = 0;
	FILE *f = NULL;
	int err;

	if (!ASSERT_OK_PTR(m, "model") || !ASSERT_OK_PTR(st, "stacks"))
		goto cleanup;
	model__init(m, 100, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	model__set_phase_name(m, 2, "generate");
	/* entered load first: byte order would put generate first */
	event(m, MP_EV_EXEC, 100, 0, "llama\x1b]0;PWNED");
	event(m, MP_EV_PHASE, 100, 1, "");
	event(m, MP_EV_PHASE, 100, 2, "");
	/* comms with control bytes, invalid UTF-8, a ';', and none at all */
	ASSERT_OK(add_sample(st, m, 100, 2, "gen\x07;\xff", 4096), "generate sample");
	ASSERT_OK(add_sample(st, m, 100, 1, "ld\n\x7f", 8192), "load sample");
	ASSERT_OK(add_sample(st, m, 100, 1, "", 4096), "load sample, empty comm");
	growth(m, 1, 65536);
	growth(m, 2, 65536);

	f = open_memstream(&buf, &len);
	if (!ASSERT_OK_PTR(f, "memstream"))
		goto cleanup;
	ctx.m = m;
	err = folded_format.write(f, &ctx);
	fclose(f);
	if (!ASSERT_OK(err, "write_folded"))
		goto cleanup;
	/* the not-sampled line closes its phase */
	ASSERT_TRUE(strstr(buf, "load;llama\xef\xbf\xbd]0:PWNED;[not sampled] 53248\ngenerate;") !=
		    NULL, "load rest");
	ASSERT_TRUE(strstr(buf, "generate;gen\xef\xbf\xbd:\xef\xbf\xbd;") != NULL,
		    "generate comm");
	ASSERT_TRUE(strstr(buf, "load;[unknown];") != NULL, "empty comm");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		phase[0] = comm[0] = '\0';
		if (!ASSERT_OK(check_line(line, phase, comm, sizeof(phase)), line))
			goto cleanup;
		if (!ASSERT_LT(nl, 5U, "lines"))
			goto cleanup;
		ASSERT_STREQ(phase, want_phase[nl], "phase order");
		if (strstr(line, "[not sampled]"))
			ASSERT_STREQ(comm, "llama\xef\xbf\xbd]0:PWNED", "[not sampled] comm");
		nl++;
	}
	ASSERT_EQ(nl, 5U, "2 + 1 stacks, 2 [not sampled]");
cleanup:
	free(buf);
	stacks__free(st);
	if (m)
		model__free(m);
	free(m);
}
