// SPDX-License-Identifier: GPL-2.0
/* A string -> u64 hash map with linear probing (FNV-1a). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/strmap.h"

static __u64 hash(const char *s)
{
	__u64 h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

void strmap__init(struct strmap *m, strmap_value_free_fn value_free)
{
	memset(m, 0, sizeof(*m));
	m->value_free = value_free;
}

void strmap__free(struct strmap *m)
{
	strmap_value_free_fn value_free = m->value_free;
	size_t i;

	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		if (value_free)
			value_free(m->slots[i].value);
		free(m->slots[i].key);
	}
	free(m->slots);
	strmap__init(m, value_free);
}

void strmap__free_ptr(__u64 value)
{
	free((void *)(uintptr_t)value);
}

static struct strmap_entry *probe(struct strmap_entry *slots, size_t cap, const char *key)
{
	size_t i = hash(key) & (cap - 1);

	while (slots[i].key && strcmp(slots[i].key, key))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct strmap_entry *slots = calloc(cap, sizeof(*slots)), *e;

	if (!slots)
		return -1;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		e = probe(slots, cap, m->slots[i].key);
		*e = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

struct strmap_entry *strmap__find(const struct strmap *m, const char *key)
{
	struct strmap_entry *e;

	if (!m->cap)
		return NULL;
	e = probe(m->slots, m->cap, key);
	return e->key ? e : NULL;
}

struct strmap_entry *strmap__get(struct strmap *m, const char *key)
{
	struct strmap_entry *e;

	if ((m->len + 1) * 2 > m->cap && grow(m))
		return NULL;
	e = probe(m->slots, m->cap, key);
	if (!e->key) {
		e->key = strdup(key);
		if (!e->key)
			return NULL;
		e->value = 0;
		m->len++;
	}
	return e;
}

/*
 * Empties slot i and moves later entries of its probe run back (backward-shift deletion:
 * no tombstones), so that every remaining key is still found from its home slot.
 */
static void remove_slot(struct strmap *m, size_t i)
{
	size_t mask = m->cap - 1, j = i, home;

	if (m->value_free)
		m->value_free(m->slots[i].value);
	free(m->slots[i].key);
	m->slots[i].key = NULL;
	m->len--;
	for (;;) {
		j = (j + 1) & mask;
		if (!m->slots[j].key)
			return;
		home = hash(m->slots[j].key) & mask;
		/* j may move to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].key = NULL;
		i = j;
	}
}

size_t strmap__remove_prefix(struct strmap *m, const char *prefix)
{
	size_t i, n = 0, len = strlen(prefix);

	for (i = 0; i < m->cap; i++) {
		/* an entry shifted into slot i is looked at again */
		while (m->slots[i].key && !strncmp(m->slots[i].key, prefix, len)) {
			remove_slot(m, i);
			n++;
		}
	}
	return n;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct strmap_entry *x = *(struct strmap_entry *const *)a;
	const struct strmap_entry *y = *(struct strmap_entry *const *)b;

	return strcmp(x->key, y->key);
}

struct strmap_entry **strmap__sorted(const struct strmap *m)
{
	struct strmap_entry **v = malloc((m->len + 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			v[n++] = &m->slots[i];
	qsort(v, n, sizeof(*v), cmp_entry);
	v[n] = NULL;
	return v;
}
