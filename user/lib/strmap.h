/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A string -> u64 hash map (open addressing), for folded stacks and symbol caches. The map
 * owns its keys, and its values too when it is given a value destructor.
 */
#ifndef __MP_STRMAP_H
#define __MP_STRMAP_H

#include <stddef.h>
#include <linux/types.h>

struct strmap_entry {
	char *key;	/* owned */
	__u64 value;
};

/* frees what a value owns (a value that is a pointer cast to __u64) */
typedef void (*strmap_value_free_fn)(__u64 value);

struct strmap {
	struct strmap_entry *slots;
	size_t cap;	/* power of 2 */
	size_t len;
	strmap_value_free_fn value_free;	/* NULL: values own nothing */
};

/*
 * An empty map. value_free is called on every value by strmap__free(): NULL for plain
 * numbers, strmap__free_ptr when each value is a malloc'd pointer.
 */
void strmap__init(struct strmap *m, strmap_value_free_fn value_free);
/* Frees the keys, the values (value_free) and the table; the map is empty again. */
void strmap__free(struct strmap *m);
/* A value destructor: free((void *)value). */
void strmap__free_ptr(__u64 value);
/* The entry for key, created with value 0 when absent; NULL on ENOMEM. */
struct strmap_entry *strmap__get(struct strmap *m, const char *key);
/* The entry for key or NULL. */
struct strmap_entry *strmap__find(const struct strmap *m, const char *key);
/* Removes every entry whose key starts with prefix (values through value_free): how many. */
size_t strmap__remove_prefix(struct strmap *m, const char *prefix);
/* Entries sorted by key (malloc'd array of pointers into the map; free() it). */
struct strmap_entry **strmap__sorted(const struct strmap *m);

#endif
