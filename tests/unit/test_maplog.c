// SPDX-License-Identifier: GPL-2.0
/* The threads' batches of growth per mapping (MP_EV_MAPLOG) as user space sums them. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "collect/bpfmaps.h"
#include "collect/mappings.h"

/* one batch of n entries of process tgid: entry i is anon mapping start0 + i, in phase */
static int add_batch(struct maplog *ml, __u32 tgid, __u32 n, __u64 start0,
		     __u32 phase, __u32 pages)
{
	struct mp_maplog_event e;
	__u32 i;

	memset(&e, 0, sizeof(e));
	e.type = MP_EV_MAPLOG;
	e.n = n;
	e.tgid = tgid;
	for (i = 0; i < n; i++) {
		e.r[i].start = e.r[i].vm_start = (start0 + i) << 12;
		e.r[i].vm_pages = 1;
		e.r[i].bytes = (__u64)pages << 12;
		e.r[i].phase = phase;
		e.r[i].cls = MP_ANON;
		e.r[i].kind = MP_MAP_ANON;
	}
	return mappings__maplog_add(ml, &e, offsetof(struct mp_maplog_event, r) +
				   n * sizeof(e.r[0]));
}

static struct mp_map_key anon_key(__u64 page, __u32 phase)
{
	struct mp_map_key k = { .phase = phase, .cls = MP_ANON, .kind = MP_MAP_ANON,
				.start = page << 12 };

	return k;
}

TEST(maplog_rejects_malformed_batches)
{
	struct maplog *ml = mappings__maplog_new();
	struct mp_maplog_event e;
	size_t head = offsetof(struct mp_maplog_event, r);

	if (!ASSERT_OK_PTR(ml, "mappings__maplog_new"))
		return;
	memset(&e, 0, sizeof(e));
	e.type = MP_EV_MAPLOG;
	e.n = 2;
	ASSERT_EQ(mappings__maplog_add(ml, &e, head - 1), -EINVAL, "shorter than its header");
	ASSERT_EQ(mappings__maplog_add(ml, &e, head + sizeof(e.r[0])), -EINVAL,
		  "shorter than its entries");
	e.n = MP_MAPLOG_LEN + 1;
	ASSERT_EQ(mappings__maplog_add(ml, &e, sizeof(e)), -EINVAL, "more entries than fit");
	e.n = 1;
	e.type = MP_EV_STACK;
	ASSERT_EQ(mappings__maplog_add(ml, &e, sizeof(e)), -EINVAL, "another event's type");
	e.type = MP_EV_MAPLOG;
	e.n = 0;
	ASSERT_EQ(mappings__maplog_add(ml, &e, head), 0, "an empty batch");
	mappings__maplog_free(ml);
}

TEST(maplog_sums_per_key)
{
	struct maplog *ml = mappings__maplog_new();
	struct mp_map_key k;
	__u64 full;

	if (!ASSERT_OK_PTR(ml, "mappings__maplog_new"))
		return;
	ASSERT_EQ(add_batch(ml, 10, 3, 100, 1, 2), 0, "first batch");
	ASSERT_EQ(add_batch(ml, 10, 2, 101, 1, 5), 0, "second batch");
	ASSERT_EQ(add_batch(ml, 10, 1, 100, 2, 7), 0, "another phase");
	k = anon_key(100, 1);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 2 * 4096ULL, "page 100, phase 1");
	k = anon_key(101, 1);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 7 * 4096ULL, "page 101: both batches");
	k = anon_key(102, 1);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 7 * 4096ULL, "page 102: both batches");
	k = anon_key(100, 2);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 7 * 4096ULL, "page 100, phase 2");
	k = anon_key(103, 1);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 0ULL, "a key never sent");
	ASSERT_EQ(full, 0ULL, "nothing kept under [unknown]");
	mappings__maplog_free(ml);
}

/* 65536 keys: a new one's growth goes to its class's [unknown], counted; known ones still add */
TEST(maplog_keys_bounded)
{
	struct maplog *ml = mappings__maplog_new();
	struct mp_map_key k, unknown = { .phase = 3, .cls = MP_ANON };
	__u64 full, i;

	if (!ASSERT_OK_PTR(ml, "mappings__maplog_new"))
		return;
	for (i = 0; i < 65536; i += MP_MAPLOG_LEN)
		if (!ASSERT_EQ(add_batch(ml, 10, MP_MAPLOG_LEN, 1000 + i, 3, 1), 0, "fill"))
			goto cleanup;
	ASSERT_EQ(add_batch(ml, 10, 1, 1000000, 3, 4), 0, "a key beyond the bound");
	ASSERT_EQ(add_batch(ml, 10, 1, 1000, 3, 2), 0, "a known key");
	k = anon_key(1000000, 3);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 0ULL, "the new key is not kept");
	ASSERT_EQ(full, 1ULL, "one entry kept under [unknown]");
	ASSERT_EQ(mappings__maplog_bytes(ml, &unknown, &full), 4 * 4096ULL,
		  "its growth under [unknown]");
	k = anon_key(1000, 3);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 3 * 4096ULL, "the known key adds up");
	k = anon_key(1000 + 65535, 3);
	ASSERT_EQ(mappings__maplog_bytes(ml, &k, &full), 4096ULL, "the last key filled");
cleanup:
	mappings__maplog_free(ml);
}
