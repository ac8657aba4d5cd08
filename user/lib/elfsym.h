/* SPDX-License-Identifier: GPL-2.0 */
/* Function symbols of an ELF file (executable or shared object), for uprobes. */
#ifndef __MP_ELFSYM_H
#define __MP_ELFSYM_H

#include <linux/types.h>

struct elfsym;

/* Opens and indexes .symtab and .dynsym. NULL + errno (ENOENT, ENOEXEC for non-ELF). */
struct elfsym *elfsym__open(const char *path);
void elfsym__close(struct elfsym *e);	/* NULL-safe */

/*
 * Looks up a defined function (STT_FUNC or STT_GNU_IFUNC) by name; "name@VER" and
 * "name@@VER" versioned entries match "name". *file_off is the symbol's offset in the
 * file (st_value translated through the PT_LOAD that holds it), what uprobes want.
 * Returns 0, or -ENOENT.
 */
int elfsym__lookup(struct elfsym *e, const char *name, __u64 *file_off);
/* 1 if the file is ELF with e_type ET_DYN or ET_EXEC, 0 otherwise (no error). */
int elfsym__is_elf(const char *path);

#endif
