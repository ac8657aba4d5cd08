/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The architecture's numbers the BPF units use: x86-64 only (the syscall numbers, and the
 * registers and stack slots the marker rules read: struct llama_batch at sp + 8).
 */
#ifndef __MP_ARCH_H
#define __MP_ARCH_H

#ifndef __TARGET_ARCH_x86
#error "memphase's BPF side is x86-64 only (syscall numbers, argument registers)"
#endif

/* x86-64 syscall numbers */
#define __NR_mmap	9
#define __NR_munmap	11
#define __NR_brk	12
#define __NR_mremap	25
#define __NR_mprotect	10
#define __NR_madvise	28
#define __NR_mlock	149
#define __NR_mlockall	151
#define __NR_mlock2	325
#define __NR_prctl	157

/* libbpf 1.1 names five arguments; the x86-64 ABI passes the sixth in r9 (libbpf 1.2 has it) */
#ifndef PT_REGS_PARM6_CORE
#define PT_REGS_PARM6_CORE(x) BPF_CORE_READ((struct pt_regs *)(x), r9)
#endif

#endif
