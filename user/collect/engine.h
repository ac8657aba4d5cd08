/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's settings and its build's flags, read from the observed process: its
 * command line (/proc/PID/cmdline), its environment (/proc/PID/environ, opened as the
 * invoking user; only the preset's variables are kept), and the strings of its program
 * and of the preset's build files (the argument parser's library) among what it maps,
 * each read only if the user may read it. The preset (presets.h) says which settings,
 * flags, variables and defaults there are.
 */
#ifndef __MP_ENGINE_H
#define __MP_ENGINE_H

#include <stddef.h>
#include <sys/types.h>
#include "collect/presets.h"
#include "model/engine.h"

struct userfs;

/*
 * e's settings from argv (argv[0] first, NULL-terminated) and envp ("NAME=value",
 * NULL-terminated; may be NULL) as the engine's parser reads them, for program (its base
 * name). Unknown flags are listed. 0, or -EINVAL (no settings in the preset).
 */
int engine__parse(struct model_engine *e, const struct preset *p, const char *program,
		  char *const *argv, char *const *envp);
/*
 * The flags a file of the build names (its strings: "-x", "--xx-yy"), and those it says
 * are deprecated ("DEPRECATED: --a and --b are deprecated. use --c ..."), from the
 * file's bytes. 0 or -ENOMEM.
 */
int engine__scan_strings(struct model_engine *e, const char *data, size_t len);
/* The same of a whole file's bytes: of an ELF file, only its .rodata sections (where its
 * string literals are); of another, or an ELF file without section headers, all of it. */
int engine__scan_file(struct model_engine *e, const char *data, size_t len);
/*
 * Reads pid's settings (its cmdline, its environ as fs's user) and its build's flags (its
 * program and the preset's build files it maps, read if the user may). 0 or -errno (the
 * process is gone, not the user's to read; -ENOENT: not a program of the engine's, whose
 * strings name fewer than two of the settings' flags).
 */
int engine__read(struct model_engine *e, const struct preset *p, pid_t pid, struct userfs *fs);

#endif
