/* SPDX-License-Identifier: GPL-2.0 */
/* A string -> u64 hash map (open addressing), for folded stacks and symbol caches. */
#ifndef __MP_STRMAP_H
#define __MP_STRMAP_H

#include <stddef.h>
#include <linux/types.h>

struct strmap_entry {
	char *key;	/* owned */
	__u64 value;
};

struct strmap {
	struct strmap_entry *slots;
	size_t cap;	/* power of 2 */
	size_t len;
};

void strmap__init(struct strmap *m);
void strmap__free(struct strmap *m);
/* The entry for key, created with value 0 when absent; NULL on ENOMEM. */
struct strmap_entry *strmap__get(struct strmap *m, const char *key);
/* The entry for key or NULL. */
struct strmap_entry *strmap__find(const struct strmap *m, const char *key);
/* Entries sorted by key (malloc'd array of pointers into the map; free() it). */
struct strmap_entry **strmap__sorted(const struct strmap *m);

#endif
