// SPDX-License-Identifier: GPL-2.0
/*
 * The built-in cause rules: data/causes.rules, the repository's data file, built into the
 * binary as it is (the assembler includes it; the path is relative to the top directory,
 * where make runs the compiler). Edit the data file, not this.
 */
#include "collect/presets.h"

__asm__(".section .rodata\n"
	".balign 8\n"
	"causes_rules_text:\n"
	".incbin \"data/causes.rules\"\n"
	".byte 0\n"
	".previous\n");

extern const char causes_rules_text[];

const char *presets__causes(void)
{
	return causes_rules_text;
}
