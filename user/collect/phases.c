// SPDX-License-Identifier: GPL-2.0
/* The llama preset and user phase markers. Pure code. */
#include <errno.h>
#include <string.h>
#include "collect/phases.h"

struct preset_marker {
	const char *phase;
	const char *symbol;
	__u32 kind;
	__u32 arg;	/* MP_MARK_STATE_EXT: which argument holds the flags */
};

/*
 * From llama.cpp's include/llama.h (current and legacy names). llama_decode is split
 * by its batch: more than one token is prompt eval, one token is generation. The state
 * phase begins at the size call: the destination buffer is allocated and zero-filled
 * between the size and data calls. The _ext forms with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
 * save a context checkpoint (the SWA or recurrent part only), the others a whole
 * sequence (the server's prompt cache): "checkpoint" and "state".
 */
static const struct preset_marker llama_preset[] = {
	{ "load", "llama_model_load_from_file", MP_MARK_PHASE, 0 },
	{ "load", "llama_model_load_from_splits", MP_MARK_PHASE, 0 },
	{ "load", "llama_load_model_from_file", MP_MARK_PHASE, 0 },
	{ "context", "llama_init_from_model", MP_MARK_PHASE, 0 },
	{ "context", "llama_new_context_with_model", MP_MARK_PHASE, 0 },
	{ "prompt", "llama_decode", MP_MARK_DECODE, 0 },
	{ "state", "llama_state_get_size", MP_MARK_PHASE, 0 },
	{ "state", "llama_state_get_data", MP_MARK_PHASE, 0 },
	{ "state", "llama_state_save_file", MP_MARK_PHASE, 0 },
	{ "state", "llama_state_seq_get_size", MP_MARK_PHASE, 0 },
	{ "state", "llama_state_seq_get_data", MP_MARK_PHASE, 0 },
	{ "state", "llama_state_seq_get_size_ext", MP_MARK_STATE_EXT, 3 },
	{ "state", "llama_state_seq_get_data_ext", MP_MARK_STATE_EXT, 5 },
	{ "state", "llama_state_seq_save_file", MP_MARK_PHASE, 0 },
	{ "teardown", "llama_free", MP_MARK_PHASE, 0 },
	{ "teardown", "llama_model_free", MP_MARK_PHASE, 0 },
	{ "teardown", "llama_free_model", MP_MARK_PHASE, 0 },
};

static const char *const llama_phases[] = { "load", "context", "prompt", "generate", "state",
					    "checkpoint", "teardown" };

static int phase_add(struct phases *p, const char *name)
{
	int id = phases__find(p, name);

	if (id >= 0)
		return id;
	if (p->nphases >= MP_MAX_PHASES)
		return -E2BIG;
	if (strlen(name) >= PHASE_NAME_MAX)
		return -EINVAL;
	strcpy(p->names[p->nphases], name);
	return p->nphases++;
}

static int marker_add(struct phases *p, const char *symbol, const char *binary, __u32 phase,
		      __u32 kind, __u32 arg, bool user)
{
	struct marker *mk;

	if (p->nmarkers >= PHASES_MAX_MARKERS)
		return -E2BIG;
	if (strlen(symbol) >= PHASE_SYM_MAX || strlen(binary) >= PHASE_BIN_MAX)
		return -EINVAL;
	mk = &p->markers[p->nmarkers++];
	strcpy(mk->symbol, symbol);
	strcpy(mk->binary, binary);
	mk->phase = phase;
	mk->kind = kind;
	mk->arg = arg;
	mk->user = user;
	return 0;
}

int phases__init(struct phases *p, bool llama_preset_on)
{
	unsigned int i;
	int id, err;

	memset(p, 0, sizeof(*p));
	phase_add(p, "startup");
	if (!llama_preset_on)
		return 0;
	p->preset = true;
	for (i = 0; i < sizeof(llama_phases) / sizeof(llama_phases[0]); i++)
		phase_add(p, llama_phases[i]);
	p->prompt = phases__find(p, "prompt");
	p->generate = phases__find(p, "generate");
	p->checkpoint = phases__find(p, "checkpoint");
	for (i = 0; i < sizeof(llama_preset) / sizeof(llama_preset[0]); i++) {
		id = phases__find(p, llama_preset[i].phase);
		err = marker_add(p, llama_preset[i].symbol, "", id, llama_preset[i].kind,
				 llama_preset[i].arg, false);
		if (err)
			return err;
	}
	return 0;
}

int phases__add_spec(struct phases *p, const struct phase_spec *s)
{
	int id = phase_add(p, s->name);

	if (id < 0)
		return id;
	return marker_add(p, s->symbol, s->binary, id, MP_MARK_PHASE, 0, true);
}

int phases__find(const struct phases *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nphases; i++)
		if (!strcmp(p->names[i], name))
			return i;
	return -ENOENT;
}

__u64 phases__cookie(const struct marker *mk)
{
	return MP_COOKIE(mk->kind, mk->phase, mk->arg);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool phases__marker_matches(const struct marker *mk, const char *path)
{
	const char *want, *have;
	size_t n;

	if (!mk->binary[0] || !strcmp(mk->binary, path))
		return true;
	want = base_name(mk->binary);
	have = base_name(path);
	n = strlen(want);
	if (strncmp(want, have, n))
		return false;
	return have[n] == '\0' || (mk->binary[0] != '/' && have[n] == '.');
}
