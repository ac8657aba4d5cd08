/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by onetp.bpf.c and onetp.c (no #includes; __u32/__u64/__s64 only). */
#ifndef __ONETP_H
#define __ONETP_H

#define OT_MMS		16	/* address spaces followed at once (slot: mm id & 15) */
#define OT_MAX_CPUS	64
/* the kernel's MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES */
#define OT_NCLS		4
#define OT_BUCKETS	(1 << 19)

enum {
	OT_MODE_CPU = 0,	/* this CPU's part, charged to this CPU's last fault */
	OT_MODE_SUM = 1,	/* the whole sum, charged to this thread's last fault */
};

enum {
	OT_WHO_ONETP = 0,	/* what the one-tracepoint design charged */
	OT_WHO_REF = 1,		/* what the reference (rss_stat, memphase's way) charged */
};

/* one address space (array "mms", slot mm id & (OT_MMS - 1)) */
struct ot_mm {
	__u64 id;		/* mm->context.ctx_id (0: free) */
	__u64 mm;		/* the kernel's struct mm_struct */
	__u64 counters;		/* rss_stat[0].counters: the 4 counters' parts, s32 each */
	__u64 last_addr;	/* sum mode: the latest fault of any thread (for the sync) */
	__u32 tgid;
	__u32 ready;
	__u32 busy;		/* a CPU is attributing folds */
	__u32 pad;
	__s64 base[OT_NCLS];	/* pages at the first reading (not growth) */
	__s64 g[OT_NCLS];	/* each counter's count when its folds were last attributed */
	__s64 last[OT_NCLS];	/* sum mode: the sum last read */
	__s64 held[OT_NCLS];	/* reference: base + every change it charged */
};

/* one CPU's view of one address space (per-CPU array "cpus", same slot) */
struct ot_cpu {
	__u64 id;		/* the mm id it belongs to */
	__u64 addr;		/* this CPU's latest fault of the mm (0: none yet) */
	__s64 lastv[OT_NCLS];	/* part + folds at this CPU's last reading (pages) */
	__s64 fold[OT_NCLS];	/* the folds attributed to this CPU (pages); others add to it */
	__s32 snap[OT_NCLS];	/* the part in the latest snapshot (scratch, under busy) */
	__u64 vstart, vend;	/* by_vma: the VMA the batch's bucket is (its start) */
	__u64 bkey;		/* the batch: bucket + 1 (0: empty) and what it holds (pages) */
	__s64 bgrow[OT_NCLS];
	__s64 bshrink[OT_NCLS];
	/* the reference's view */
	__s32 rlocal[OT_NCLS];
	__s64 rcnt[OT_NCLS];
	__u32 rseen;
	__u32 pad;
};

struct ot_bkey {
	__u64 bucket;		/* (address >> shift) + 1; 0: no fault before the change */
	__u32 tgid;
	__u16 who;		/* OT_WHO_* */
	__u16 slot;		/* the address space's (one before the tgid's exec, one after) */
};

struct ot_bval {
	__s64 grow[OT_NCLS];	/* pages */
	__s64 shrink[OT_NCLS];
};

/* per CPU, every target address space */
struct ot_diag {
	__u64 faults;		/* target faults seen (user and kernel mode) */
	__u64 fast;		/* read from this CPU's part alone */
	__u64 slow;		/* a count moved: every part read, the folds attributed */
	__u64 deferred;		/* another CPU attributed too long: this reading put off */
	__u64 fold_one;		/* folds attributed to the one CPU whose part went to 0 */
	__u64 fold_guess;	/* ... to the CPU that made the pendings smallest (no part at 0) */
	__u64 fold_multi;	/* ... split between several CPUs whose parts went to 0 */
	__u64 inits;		/* address spaces first read */
	__u64 bad;		/* unreadable counter, unexpected layout, full bucket map */
	__u64 sync_pages;	/* pages charged only at the sync (pending since the last fault) */
	__u64 ref_events;	/* the reference's rss_stat events of targets */
	__u64 ref_sums;		/* ... that summed the counter */
	__u64 vma_lookups;	/* by_vma: bpf_find_vma calls (a charge outside the cached VMA) */
	__u64 vma_busy;		/* ... that failed (the address space locked, or its irq_work
				 * still pending): charged by address instead */
};

#endif
