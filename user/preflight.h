/* SPDX-License-Identifier: GPL-2.0 */
/* What must hold before memphase loads anything: privileges, BTF, tracefs, options. */
#ifndef __MP_PREFLIGHT_H
#define __MP_PREFLIGHT_H

#include "env.h"

/*
 * CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE, kernel BTF, tracefs (mounted if needed), a
 * --min-available that is not crossed already. 0, or -errno after one line on stderr.
 */
int preflight__check(const struct env *e);
/* The kernel BTF memphase uses: MEMPHASE_VMLINUX_BTF if set, else the running kernel's. */
const char *preflight__btf_path(void);
/* Whether MEMPHASE_VMLINUX_BTF overrides the running kernel's BTF. */
int preflight__btf_overridden(void);

#endif
