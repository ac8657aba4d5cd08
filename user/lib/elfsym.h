/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of ELF function symbols: which symbols are functions, how versioned
 * names ("name@VER", "name@@VER") read, which of several names is preferred. Two indexes
 * of them: by name, for uprobes (elfsym__open/lookup), and by address, for symbolizing
 * stacks (struct elfsym_table, fed symbol by symbol by whoever found the symbol table:
 * the unwinder gets it from libdwfl, which also finds separate debug files).
 */
#ifndef __MP_ELFSYM_H
#define __MP_ELFSYM_H

#include <stdbool.h>
#include <gelf.h>
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
/*
 * Whether elfsym__lookup() may find one of names[n] in the ELF file at path: false only
 * when the file has no .symtab and its .gnu.hash (as the dynamic linker looks a name up)
 * holds none of them (indexing libc to learn that takes ~1 ms), true otherwise (C++ names
 * with "::" too).
 */
bool elfsym__may_define(const char *path, const char *const *names, unsigned int n);

/*
 * Is sym a function: STT_FUNC or STT_GNU_IFUNC, defined, named; with labels, also an
 * untyped symbol in an executable section of elf (assembly labels; elf may be NULL).
 */
bool elfsym__is_function(Elf *elf, const char *name, const GElf_Sym *sym, GElf_Word shndx,
			 bool labels);

/* Function symbols by address, for symbolization. */
struct elfsym_table;

struct elfsym_table *elfsym_table__new(void);
void elfsym_table__free(struct elfsym_table *t);	/* NULL-safe */
/*
 * Offers one symbol: kept if elfsym__is_function(labels), at addr (in the file's own
 * address space), without its "@VERSION". 0 or -ENOMEM.
 */
int elfsym_table__add(struct elfsym_table *t, Elf *elf, const char *name, const GElf_Sym *sym,
		      GElf_Word shndx, __u64 addr);
/*
 * After the last add: one symbol per address, the preferred one (sized before sizeless,
 * global or weak before local, fewer leading underscores: malloc before __libc_malloc,
 * shorter); a sizeless symbol extends to the next one. Returns the number kept.
 */
size_t elfsym_table__finish(struct elfsym_table *t);
/*
 * The function holding addr: its name (C++ demangled, valid until the table is freed) and
 * *off the offset in it; NULL if none does.
 */
const char *elfsym_table__find(struct elfsym_table *t, __u64 addr, __u64 *off);

#endif
