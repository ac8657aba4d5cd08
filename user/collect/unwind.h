/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stack unwinding and symbolization with elfutils (libdwfl), for processes that may
 * have exited by the time their samples are processed.
 *
 * unwinder__snapshot() records a process' executable mappings (procmaps.h: exact names)
 * and opens their files (by path, or through /proc/PID/map_files when the file is deleted
 * or the path names another file in our mount namespace). An opened file stays mapped in
 * memory (libelf ELF_C_READ_MMAP, no file descriptor kept) until no snapshot uses it any
 * more, so unwinding and symbolizing work after the process exited or the file was
 * deleted. Files are shared between processes (keyed by device and inode), and so are
 * their symbol tables.
 *
 * Per process, a Dwfl is built lazily from the snapshot (dwfl_report_module per loaded
 * ELF image + a find_elf callback handing out the shared Elf) and cached; it unwinds with
 * .eh_frame / .debug_frame CFI over a copied stack (dwfl_attach_state with our own
 * memory_read). Separate debug files are found by dwfl_standard_find_debuginfo: build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), then .gnu_debuglink next to the file, in
 * .debug/ and under /usr/lib/debug. If DEBUGINFOD_URLS is set, elfutils also asks those
 * servers for missing debug info, which may block; if not, libdebuginfod (and the network
 * libraries it brings) is not loaded at all (unwind.c's dlopen).
 *
 * Single-threaded: one unwinder must not be used from two threads at once.
 */
#ifndef __MP_UNWIND_H
#define __MP_UNWIND_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memphase.h"

struct unwinder;
struct userfs;

/*
 * An empty unwinder. fs answers whether the invoking user may read a mapped file or a
 * debug file (userfs__may_read): a file they may not read gives no symbols and no
 * unwinding tables (NULL: every file is read). NULL + errno (ENOMEM).
 */
struct unwinder *unwinder__new(struct userfs *fs);
/* Frees everything, closes every snapshot. NULL-safe. */
void unwinder__free(struct unwinder *u);

/*
 * Snapshots (or refreshes) what is needed to unwind and symbolize pid later, even after it
 * exits: its executable mappings from /proc/PID/maps and their files. Call it when a
 * process is first seen and when it maps a new executable file. A refresh adds the new
 * mappings and keeps the old ones that no new mapping overlaps (samples taken before a
 * dlclose() or an exec still resolve) until unwinder__forget(). Only regular files are
 * opened. [vdso] is copied from
 * the process' memory. Returns 0, -ESRCH if the process is gone (an existing snapshot is
 * kept), or another -errno.
 */
int unwinder__snapshot(struct unwinder *u, pid_t pid);

/*
 * pid exec'd: its new image's libraries are mapped after the exec, often with no new-code
 * event (another process mapped them before), so its next miss re-reads its maps at once,
 * not at most every 100 ms as a miss otherwise does. Unknown pids are ignored.
 */
void unwinder__exec(struct unwinder *u, pid_t pid);

/*
 * Forgets a process (after it exited and its samples were processed: stacks__forget_process
 * at reap). Unknown pids are ignored.
 */
void unwinder__forget(struct unwinder *u, pid_t pid);

/*
 * DWARF CFI unwinding (.eh_frame, else .debug_frame) of a copied user stack of pid.
 * regs: MP_NR_REGS registers in struct pt_regs order (enum mp_reg); stack: stack_len bytes
 * copied from regs[MP_RSP] upward. ips[0] = regs[MP_RIP]; ips[i > 0] are return addresses
 * as found on the stack: the caller symbolizes them with is_return = true (look up ip - 1).
 * A frame interrupted by a signal (its pc is exact, not a return address) is stored as
 * pc + 1 so that the same rule applies to every frame after the first.
 * Snapshots pid first if it was never snapshotted. If an address is in no known mapping
 * (a library mapped after the snapshot), re-snapshots once and unwinds again (at most every
 * 100 ms per process). Returns the number of frames written (>= 1: at least rip, even when
 * nothing is known about the process), or -EINVAL (bad arguments).
 */
int unwinder__unwind(struct unwinder *u, pid_t pid, const __u64 *regs, const void *stack,
		     __u32 stack_len, __u64 *ips, int max_frames);

struct unwind_sym {
	char name[512];		/* demangled function name, or "module+0xOFF", never empty */
	char module[256];	/* basename of the module, "[unknown]" if no module */
	__u64 offset;		/* address - function start; OFF or ADDR when unknown */
};

/*
 * Symbolizes one address of pid. is_return: ip is a return address, look up ip - 1 (the
 * call instruction). Functions come from .symtab (of the file or of its separate debug
 * file) and .dynsym, without "@VERSION"; C++ names are demangled. Without a function, name
 * is "module+0xOFF" where OFF is the looked-up address in the ELF file's own (link-time)
 * address space, what addr2line -e takes (a file offset for a mapped file that is not ELF);
 * with no module at all (anonymous or unknown memory) it is "[unknown]+0xADDR" and module
 * "[unknown]". Snapshots pid first if it was never snapshotted, and re-snapshots once (at
 * most every 100 ms) when the address is in no known mapping. Returns 0 (out is always
 * filled; unknown is not an error), or -EINVAL.
 */
int unwinder__symbolize(struct unwinder *u, pid_t pid, __u64 ip, bool is_return,
			struct unwind_sym *out);

/*
 * Called per executable mapping of a snapshot, by address. path is the file's exact name
 * (procmaps.h) followed by " (deleted)" if it was deleted, as the kernel names files in
 * perf's own MMAP records ("[vdso]"; empty for anonymous memory); build_id is the
 * file's GNU build ID (NULL and 0 if unknown). A non-zero return stops the walk.
 */
typedef int (*unwinder_map_cb)(void *ctx, pid_t pid, __u64 start, __u64 end, __u64 pgoff,
			       const char *path, const unsigned char *build_id, int build_id_len);

/*
 * Calls cb for each executable mapping of pid's snapshot (for perf.data MMAP records).
 * Returns 0, the callback's non-zero value, or -ESRCH if pid has no snapshot.
 */
int unwinder__for_each_map(struct unwinder *u, pid_t pid, unwinder_map_cb cb, void *ctx);

#endif
