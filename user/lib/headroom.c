// SPDX-License-Identifier: GPL-2.0
/* The room left before an OOM kill, against the system or the binding memory cgroup. */
#include <errno.h>
#include "lib/headroom.h"

int sysmem__headroom(const struct sysmem *sm, enum sysmem_bound b, __s64 *bytes)
{
	switch (b) {
	case SYSMEM_SYSTEM:
		if (!sm->have_meminfo)
			return -ENODATA;
		*bytes = (__s64)sm->mem_available + (__s64)sm->swap_free;
		return 0;
	case SYSMEM_CGROUP:
		if (!sm->cg_version || !sm->cg_limited)
			return -ENODATA;
		*bytes = (__s64)sm->cg_limit - (__s64)sm->cg_limit_usage +
			 (__s64)sm->cg_reclaimable;
		return 0;
	}
	return -EINVAL;
}
