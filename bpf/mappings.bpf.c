// SPDX-License-Identifier: GPL-2.0
/*
 * Growth per mapping: the thread's batches, its buffer for user space (MP_EV_MAPLOG), the
 * shared mappings hash; growth waiting for its mapping's lookup (deferred), and what a
 * thread that ended left of it (orphans).
 */
#include "helpers.h"




/*
 * Adds bytes to a key's entry in the shared mappings hash (nv: the bytes, the VMA last seen
 * and a process that maps it): one insert that carries them when the key is new, else a
 * lookup and an atomic add. A full table keeps the bytes under the (phase, class)'s unknown
 * entry. The path of batches that find the ring buffer full: a subprogram, verified once.
 */
__noinline int mapping_store(const struct mp_map_key *key_in, struct mp_map_val *nv)
{
	struct mp_map_key key;
	struct mp_map_val *v;
	__u64 bytes;

	if (!key_in || !nv)
		return 0;
	key = *key_in;
	bytes = nv->bytes;
	if (key.kind == MP_MAP_UNKNOWN)
		nv->vm_start = nv->vm_end = 0;
	v = bpf_map_lookup_elem(&mappings, &key);
	if (!v) {
		if (!bpf_map_update_elem(&mappings, &key, nv, BPF_NOEXIST))
			return 0;
		v = bpf_map_lookup_elem(&mappings, &key);
	}
	if (!v) {
		struct mp_drops *d = drops_get();
		__u32 phase = key.phase, cls = key.cls;

		if (d)
			d->mappings_full++;
		/* keep the bytes under the class's unknown entry */
		__builtin_memset(&key, 0, sizeof(key));
		key.phase = phase;
		key.cls = cls;
		nv->vm_start = nv->vm_end = 0;
		if (!bpf_map_update_elem(&mappings, &key, nv, BPF_NOEXIST))
			return 0;
		v = bpf_map_lookup_elem(&mappings, &key);
		if (!v) {
			d = drops_get();
			if (d)
				d->mapping_lost_bytes += bytes;
			return 0;
		}
	}
	__sync_fetch_and_add(&v->bytes, bytes);
	if (key.kind != MP_MAP_UNKNOWN) {
		v->vm_start = nv->vm_start;
		v->vm_end = nv->vm_end;
	}
	return 0;
}

/*
 * Sends the thread's batch of mapping growth (MP_EV_MAPLOG) and empties it; when the ring
 * buffer is full, each entry goes to the shared mappings hash instead (nothing is lost).
 */
__noinline int maplog_send(struct thread_state *ts)
{
	struct mp_maplog_event *lg;
	struct mp_map_key key;
	struct mp_map_val nv;
	struct mp_map_rec *r;
	struct mp_drops *d;
	__u32 n, i;

	if (!ts || !ts->maplog.n)
		return 0;
	ts->maplog_bytes = 0;
	lg = &ts->maplog;
	n = lg->n;
	if (n > MP_MAPLOG_LEN)
		n = MP_MAPLOG_LEN;
	lg->type = MP_EV_MAPLOG;
	if (!bpf_ringbuf_output(&events, lg, __builtin_offsetof(struct mp_maplog_event, r) +
				n * sizeof(struct mp_map_rec), ring_wake(false))) {
		lg->n = 0;
		return 0;
	}
	d = drops_get();
	if (d)
		d->maplog_full++;
	for (i = 0; i < MP_MAPLOG_LEN; i++) {
		if (i >= n)
			break;
		r = &lg->r[i];
		key.phase = r->phase;
		key.cls = r->cls;
		key.kind = r->kind;
		key.pad = 0;
		key.dev = r->dev;
		key.ino = r->ino;
		key.start = r->start;
		nv.bytes = r->bytes;
		nv.vm_start = r->vm_start;
		nv.vm_end = r->vm_start + ((__u64)r->vm_pages << 12);
		nv.tgid = lg->tgid;
		nv.pad = 0;
		mapping_store(&key, &nv);
	}
	lg->n = 0;
	return 0;
}

/* Ends the thread's batch pend[i]: the next entry of its buffer for user space (sent
 * when full). */
__noinline int pend_end(struct thread_state *ts, __u32 i)
{
	struct mp_maplog_event *lg;
	struct mp_map_rec *r;
	__u64 bytes, vm_pages;
	struct pend *p;
	__u32 n;

	if (!ts || i >= MAP_PENDS || !ts->pend[i].bytes)
		return 0;
	p = &ts->pend[i];
	bytes = p->bytes;
	p->bytes = 0;
	lg = &ts->maplog;
	if (lg->n && lg->tgid != p->tgid)
		maplog_send(ts);
	n = lg->n;
	if (n >= MP_MAPLOG_LEN) {
		maplog_send(ts);
		n = 0;
	}
	vm_pages = (p->vm_end - p->vm_start) >> 12;
	r = &lg->r[n];
	r->start = p->key.start;
	r->ino = p->key.ino;
	r->vm_start = p->vm_start;
	r->vm_pages = vm_pages > 0xffffffffULL ? 0xffffffffU : vm_pages;
	r->dev = p->key.dev;
	r->bytes = bytes;
	r->phase = p->key.phase;
	r->cls = p->key.cls;
	r->kind = p->key.kind;
	lg->tgid = p->tgid;
	lg->n = n + 1;
	ts->maplog_bytes += bytes;
	/* full, or holding as much as the thread batches (MAP_FLUSH_BYTES) */
	if (n + 1 >= MP_MAPLOG_LEN || ts->maplog_bytes >= MAP_FLUSH_BYTES)
		maplog_send(ts);
	return 0;
}

/* Ends all the thread's batches (a phase change, the thread's end, memphase's end). */
__noinline int mapping_flush(struct thread_state *ts)
{
	__u32 i;

	if (!ts)
		return 0;
	for (i = 0; i < MAP_PENDS; i++)
		pend_end(ts, i);
	return 0;
}

static __always_inline bool map_key_eq(const struct mp_map_key *a, const struct mp_map_key *b)
{
	return a->phase == b->phase && a->cls == b->cls && a->kind == b->kind &&
	       a->dev == b->dev && a->ino == b->ino && a->start == b->start;
}

/* pend holds (or held: its batch ended, bytes 0) the growth of key in process tgid */
static __always_inline bool pend_is(const struct pend *p, __u32 tgid,
				    const struct mp_map_key *key)
{
	return p->tgid == tgid && map_key_eq(key, &p->key);
}

/*
 * bytes of a known key (phase and cls set), batched in the thread with up to MAP_PENDS - 1
 * other keys' (faults that alternate between a few mappings end no batch): a key not among
 * them takes the entry after the last one a key took, whose batch ends.
 */
static __always_inline void mapping_charge(struct thread_state *ts, __u32 tgid,
					   const struct mp_map_key *key, __u64 bytes)
{
	struct pend *p;
	__u32 i = ts->pend_last, j;

	if (i >= MAP_PENDS)
		i = 0;
	if (!pend_is(&ts->pend[i], tgid, key)) {
		for (j = 0; j < MAP_PENDS; j++)
			if (pend_is(&ts->pend[j], tgid, key))
				break;
		if (j < MAP_PENDS) {
			i = j;
		} else {
			i = ts->pend_next;
			if (i >= MAP_PENDS)
				i = 0;
			ts->pend_next = i + 1;
			pend_end(ts, i);
			ts->pend[i].key = *key;
			ts->pend[i].tgid = tgid;
		}
		ts->pend_last = i;
	}
	p = &ts->pend[i];
	if (key->kind != MP_MAP_UNKNOWN) {
		p->vm_start = ts->vm_start;
		p->vm_end = ts->vm_end;
	}
	p->bytes += bytes;
	if (p->bytes >= MAP_FLUSH_BYTES)
		pend_end(ts, i);
}

/*
 * mapping_charge() as a subprogram for the loops over deferred entries: verified once
 * instead of once per unrolled iteration (the verifier's cost, at start-up, of every
 * program that resolves deferred growth). The fault path keeps the inlined one.
 */
__noinline int mapping_charge_sub(struct thread_state *ts, __u32 tgid,
				  const struct mp_map_key *key, __u64 bytes)
{
	if (!ts || !key)
		return 0;
	mapping_charge(ts, tgid, key, bytes);
	return 0;
}

static __always_inline void count_unresolved(void)
{
	struct mp_drops *d = drops_get();

	if (d)
		d->vma_busy++;
}

/*
 * Keeps growth for a later lookup: joins an entry of the same phase and class whose range
 * is near (faults) or that waits for the same syscall's exit (hi == 0), else takes a free
 * entry. False when all entries are taken.
 */
static __always_inline bool deferred_add_one(struct thread_state *ts, __u64 lo, __u64 hi,
					     __u32 phase, __u32 cls, __u64 bytes)
{
	struct deferred *d;
	int i;

	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (!d->bytes || d->phase != phase || d->cls != cls || !d->hi != !hi)
			continue;
		if (hi && (lo + DEFER_JOIN < d->lo || lo > d->hi + DEFER_JOIN))
			continue;
		if (hi && lo < d->lo)
			d->lo = lo;
		if (hi > d->hi)
			d->hi = hi;
		d->bytes += bytes;
		return true;
	}
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (d->bytes)
			continue;
		d->lo = lo;
		d->hi = hi;
		d->phase = phase;
		d->cls = cls;
		d->bytes = bytes;
		ts->ndeferred++;
		return true;
	}
	return false;
}

/* deferred_add_one() as a subprogram (a rare path: verified once); pc: phase << 32 | cls */
__noinline int deferred_add_sub(struct thread_state *ts, __u64 lo, __u64 hi, __u64 pc,
				__u64 bytes)
{
	if (!ts)
		return 0;
	return deferred_add_one(ts, lo, hi, pc >> 32, (__u32)pc, bytes);
}

static __always_inline bool deferred_add(struct thread_state *ts, __u64 lo, __u64 hi,
					 __u32 phase, __u32 cls, __u64 bytes)
{
	return deferred_add_sub(ts, lo, hi, (__u64)phase << 32 | cls, bytes);
}

/*
 * One lookup for the first deferred range that has one: every entry whose range lies in
 * the mapping found is charged to it; that entry goes to [unknown] if its range is not in
 * one mapping (unmapped since, or a syscall over several mappings). Returns -EBUSY while
 * the address space stays locked, -ENOENT when nothing waits, else 0. A subprogram: it is
 * called from several places.
 */
__noinline int deferred_resolve(struct thread_state *ts, __u32 tgid)
{
	struct mp_map_key key;
	struct deferred *d;
	__u64 lo = 0;
	bool found = false;
	int i;

	if (!ts)
		return -ENOENT;
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (d->bytes && d->hi) {
			lo = d->lo;
			found = true;
			break;
		}
	}
	if (!found)
		return -ENOENT;
	if (vma_lookup(ts, NULL, lo, true) == -EBUSY)
		return -EBUSY;
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (!d->bytes || !d->hi)
			continue;
		if (ts->map.kind != MP_MAP_UNKNOWN && d->lo >= ts->vm_start &&
		    d->hi <= ts->vm_end) {
			key = ts->map;
		} else if (d->lo == lo) {
			__builtin_memset(&key, 0, sizeof(key));
			count_unresolved();
		} else {
			continue;
		}
		key.phase = d->phase;
		key.cls = d->cls;
		key.pad = 0;
		mapping_charge_sub(ts, tgid, &key, d->bytes);
		d->bytes = 0;
		if (ts->ndeferred)
			ts->ndeferred--;
	}
	return 0;
}

/* What still waits when the thread ends goes to [unknown]. */
__noinline int deferred_drop(struct thread_state *ts, __u32 tgid)
{
	struct mp_map_key key = {};
	struct deferred *d;
	int i;

	if (!ts)
		return 0;
	for (i = 0; i < MAX_DEFERRED; i++) {
		d = &ts->deferred[i];
		if (!d->bytes)
			continue;
		key.phase = d->phase;
		key.cls = d->cls;
		count_unresolved();
		mapping_charge_sub(ts, tgid, &key, d->bytes);
		d->bytes = 0;
	}
	ts->ndeferred = 0;
	return 0;
}

/*
 * A thread that ends leaves what it could not look up to its process: false if there is no
 * room (the caller charges it to [unknown]). A subprogram: called in a loop.
 */
__noinline int orphan_leave(struct mp_target *t, __u32 tgid, struct deferred *d)
{
	static const struct orphans zero;
	struct orphans *o;
	int i;

	if (!t || !d)
		return false;
	o = bpf_map_lookup_elem(&orphans, &tgid);
	if (!o) {
		bpf_map_update_elem(&orphans, &tgid, &zero, BPF_NOEXIST);
		o = bpf_map_lookup_elem(&orphans, &tgid);
		if (!o)
			return false;
	}
	for (i = 0; i < MAX_ORPHANS; i++) {
		struct orphan *e = &o->e[i];

		if (__sync_val_compare_and_swap(&e->state, ORPHAN_FREE, ORPHAN_BUSY) !=
		    ORPHAN_FREE)
			continue;
		e->d = *d;
		e->state = ORPHAN_READY;
		__sync_fetch_and_or(&t->flags, MP_T_ORPHANS);
		return true;
	}
	return false;
}

/*
 * Takes one ready orphan of o into d: 1, or 0 when none is left. A subprogram: the
 * adopting loop calls it per free entry (verified once, not per iteration).
 */
__noinline int orphan_take(struct orphans *o, struct deferred *d)
{
	int i;

	if (!o || !d)
		return 0;
	for (i = 0; i < MAX_ORPHANS; i++) {
		struct orphan *e = &o->e[i];

		if (e->state == ORPHAN_READY &&
		    __sync_val_compare_and_swap(&e->state, ORPHAN_READY, ORPHAN_BUSY) ==
		    ORPHAN_READY) {
			*d = e->d;
			e->state = ORPHAN_FREE;
			return 1;
		}
	}
	return 0;
}

/* Takes over the process's orphans into the thread's free deferred entries. */
__noinline int orphans_adopt(struct thread_state *ts, struct mp_target *t, __u32 tgid)
{
	struct orphans *o;
	int j;

	if (!ts || !t)
		return 0;
	__sync_fetch_and_and(&t->flags, ~MP_T_ORPHANS);
	o = bpf_map_lookup_elem(&orphans, &tgid);
	if (!o)
		return 0;
	for (j = 0; j < MAX_DEFERRED; j++) {
		struct deferred *d = &ts->deferred[j];

		if (d->bytes)
			continue;
		if (!orphan_take(o, d))
			return 0;	/* none left */
		ts->ndeferred++;
	}
	/* no room for all: the next one to look takes the rest */
	__sync_fetch_and_or(&t->flags, MP_T_ORPHANS);
	return 0;
}

/*
 * Growth of bytes in class cls during phase: charged to the mapping of the fault that
 * caused it (the stash is consumed, so growth without a fault, such as
 * get_user_pages, is charged to "unknown" rather than to a stale mapping). Growth
 * inside an address-space syscall (MAP_POPULATE, MADV_POPULATE_*, mlock, ...: no fault,
 * the address space is locked) waits for the range the syscall names at its exit; a fault
 * that finds the address space locked by another thread waits for the next lookup.
 * mm: current's; pc: phase << 32 | cls. A subprogram, verified once (inlined, it was
 * verified at every state of rss_stat that reached it).
 */
__noinline int mapping_add(struct thread_state *ts, struct mm_struct *mm __arg_trusted,
			   __u32 tgid, __u64 pc, __u64 bytes)
{
	__u32 phase = pc >> 32, cls = (__u32)pc;
	struct mp_map_key key = {};
	__u64 addr;
	long err;

	if (!ts)
		return 0;
	addr = ts->fault_addr;
	ts->fault_addr = 0;
	ts->grew_unmapped = 1;
	if (!addr && ts->sys_nr) {
		if (!deferred_add(ts, 0, 0, phase, cls, bytes))
			goto unknown;
		return 0;
	}
	if (addr) {
		err = vma_lookup(ts, mm, addr, false);
		if (!err) {
			key = ts->map;
			ts->grew_unmapped = 0;
		} else if (err == -EBUSY) {
			struct mp_drops *d = drops_get();

			if (d)
				d->vma_deferred++;
			/* the heap is known from the mm's brk bounds alone */
			if (addr >= BPF_CORE_READ(mm, start_brk) && addr < BPF_CORE_READ(mm, brk)) {
				key.kind = MP_MAP_HEAP;
			} else {
				addr &= ~4095ULL;
				if (deferred_add(ts, addr, addr + 4096, phase, cls, bytes))
					return 0;
				count_unresolved();
			}
		}
	}
unknown:
	key.phase = phase;
	key.cls = cls;
	key.pad = 0;
	mapping_charge(ts, tgid, &key, bytes);
	/* not inside a syscall of this thread's: the address space may be free now */
	if (ts->ndeferred && !ts->sys_nr)
		deferred_resolve(ts, tgid);
	return 0;
}
