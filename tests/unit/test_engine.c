// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's settings as llama.cpp's parser reads them (the last flag wins, "--x=v",
 * on/off flags, the environment under the flags, the build's default and its per-program
 * auto), unknown flags listed; and the build's flags and deprecations from its strings.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "harness.h"
#include "collect/engine.h"
#include "collect/presets.h"

static const char *value(const struct model_engine *e, const char *name, __u32 *src,
			 const char **from)
{
	const struct engine_setting *s = model_engine__get(e, name);

	if (!s)
		return "(none)";
	if (src)
		*src = s->src;
	if (from)
		*from = s->from;
	return s->value;
}

TEST(engine_settings_from_flags_env_and_defaults)
{
	char *argv[] = { "llama-server", "-m", "m.gguf", "-c", "4096", "--ctx-size=102400",
			 "-fa", "-ngl", "999", "--no-mmap", "--cache-type-k", "q8_0",
			 "--port", "8080", "-np", "-1", "--frobnicate", NULL };
	char *envp[] = { "HOME=/root", "LLAMA_ARG_CACHE_RAM=2048", "LLAMA_ARG_CTX_SIZE=1",
			 "SECRET_TOKEN=abc", NULL };
	const struct preset *llama = presets__find("llama");
	struct model_engine e = {};
	const char *from = NULL;
	__u32 src = ~0U;

	if (!ASSERT_OK_PTR(llama, "llama") ||
	    !ASSERT_OK(engine__parse(&e, llama, "llama-server", argv, envp), "parse"))
		return;
	/* the last of its flags, written as --flag=value */
	ASSERT_STREQ(value(&e, "ctx_size", &src, &from), "102400", "ctx_size");
	ASSERT_EQ(src, ENGINE_SRC_FLAG, "from a flag, not the environment");
	ASSERT_STREQ(from, "--ctx-size", "which flag");
	ASSERT_EQ(model_engine__int(&e, "ctx_size", 0), 102400, "as a number");
	/* an optional value not given: on, and the next flag is not eaten */
	ASSERT_STREQ(value(&e, "flash_attn", NULL, NULL), "on", "-fa alone");
	ASSERT_STREQ(value(&e, "n_gpu_layers", NULL, NULL), "999", "-ngl after -fa");
	ASSERT_STREQ(value(&e, "mmap", NULL, NULL), "false", "an off flag");
	ASSERT_STREQ(value(&e, "cache_type_k", NULL, NULL), "q8_0", "a value flag");
	/* the environment where no flag is */
	ASSERT_STREQ(value(&e, "cache_ram", &src, &from), "2048", "cache_ram");
	ASSERT_EQ(src, ENGINE_SRC_ENV, "from the environment");
	ASSERT_STREQ(from, "LLAMA_ARG_CACHE_RAM", "which variable");
	/* defaults, and the program's auto (-1 given explicitly is auto too) */
	ASSERT_STREQ(value(&e, "ctx_checkpoints", &src, NULL), "32", "default");
	ASSERT_EQ(src, ENGINE_SRC_DEFAULT, "a default");
	ASSERT_STREQ(value(&e, "parallel", &src, NULL), "4", "the server's auto: 4 slots");
	ASSERT_EQ(src, ENGINE_SRC_FLAG, "-np -1 was given");
	/* and with them one KV buffer for all (as its log says: "kv_unified = true") */
	ASSERT_STREQ(value(&e, "kv_unified", &src, &from), "true", "implied by the auto");
	ASSERT_STREQ(from, "auto", "resolved");
	ASSERT_EQ(model_engine__slot_ctx(&e, 102400), 102400ULL, "a slot may use it all");
	/* what no setting names: listed, never fatal */
	ASSERT_EQ(e.nunknown, 2, "unknown flags");
	ASSERT_STREQ(e.unknown[0], "--port", "first unknown");
	ASSERT_STREQ(e.unknown[1], "--frobnicate", "second unknown");
	model_engine__free(&e);

	/* llama-cli decides one slot */
	char *cli[] = { "llama-cli", "-m", "m.gguf", NULL };

	ASSERT_OK(engine__parse(&e, llama, "llama-cli", cli, NULL), "parse cli");
	ASSERT_STREQ(value(&e, "parallel", &src, &from), "1", "llama-cli: one slot");
	ASSERT_EQ(src, ENGINE_SRC_DEFAULT, "its default");
	ASSERT_STREQ(from, "auto", "resolved");
	ASSERT_STREQ(value(&e, "kv_unified", NULL, NULL), "false", "llama-cli: not unified");
	model_engine__free(&e);

	/* two slots asked for: each its half of the context */
	char *two[] = { "llama-server", "-c", "8192", "-np", "2", NULL };

	ASSERT_OK(engine__parse(&e, llama, "llama-server", two, NULL), "parse -np 2");
	ASSERT_STREQ(value(&e, "kv_unified", &src, NULL), "false", "-np 2: not unified");
	ASSERT_EQ(src, ENGINE_SRC_DEFAULT, "the default");
	ASSERT_EQ(model_engine__slot_ctx(&e, 8192), 4096ULL, "a slot's share");
	model_engine__free(&e);
}

TEST(engine_build_flags_from_strings)
{
	static const char data[] =
		"\0--ctx-size\0-c\0--load-mode\0--mlock\0--no-mmap\0--mmap\0not-a-flag\0-\0"
		"--spec-draft-ngl\0"
		"--Bad\0--trailing-\0"
		"DEPRECATED: --mmap and --no-mmap are deprecated. use --load-mode mmap instead\n\0"
		"DEPRECATED: --mlock is deprecated. use --load-mode mlock instead\n\0"
		"DEPRECATED: --defrag-thold is deprecated and no longer necessary to specify\n\0"
		"DEPRECATED: `--load-mode` and `--mlock` should not be combined\0"
		"DEPRECATED: argument '%s' specified multiple times, use comma-separated values\0";
	struct model_engine e = {};
	char r[ENGINE_FLAG_MAX];

	ASSERT_TRUE(model_engine__accepts(&e, "--anything"), "flags not known: nothing to go by");
	ASSERT_OK(engine__scan_strings(&e, data, sizeof(data)), "scan");
	/* seven, and their tails from a dash on (-size, -mode, -mmap, -draft-ngl, -ngl): the
	 * linker stores a short flag as the end of a longer one ("-ngl" of
	 * "--spec-draft-ngl"); a tail that is no flag is one no remedy names */
	ASSERT_EQ(e.nflags, 12, "the flags and their tails");
	ASSERT_TRUE(model_engine__has(&e, "-ngl"), "a flag kept as another's tail");
	ASSERT_TRUE(model_engine__has(&e, "-c") && model_engine__has(&e, "--ctx-size"), "has");
	ASSERT_FALSE(model_engine__has(&e, "--Bad") || model_engine__has(&e, "--trailing-") ||
		     model_engine__has(&e, "not-a-flag"), "not flags");
	ASSERT_TRUE(model_engine__accepts(&e, "--load-mode"), "current");
	ASSERT_FALSE(model_engine__accepts(&e, "--no-mmap"), "deprecated");
	ASSERT_FALSE(model_engine__accepts(&e, "--mlock"), "deprecated too");
	ASSERT_FALSE(model_engine__accepts(&e, "--swa-full"), "not in this build");
	ASSERT_STREQ(model_engine__replacement(&e, "--no-mmap", r, sizeof(r)), "--load-mode",
		     "its replacement");
	ASSERT_STREQ(model_engine__replacement(&e, "--defrag-thold", r, sizeof(r)), "",
		     "deprecated for nothing");
	ASSERT_NULL(model_engine__replacement(&e, "--load-mode", r, sizeof(r)),
		    "a 'should not be combined' message deprecates nothing");
	model_engine__free(&e);
}

/* A flag-like string in .rodata, and one in .data that the ELF scan does not read. */
static const char in_rodata[] = "\0--in-rodata-only\0";
static char in_data[] = "\0--in-data-only\0";

/* An ELF file's flags come from its .rodata; a file that is not ELF is read whole. */
TEST(engine_build_flags_from_an_elf_files_rodata)
{
	struct model_engine e = {};
	struct stat st;
	void *m = MAP_FAILED;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (!ASSERT_GE(fd, 0, "open the test binary") || !ASSERT_OK(fstat(fd, &st), "fstat"))
		goto cleanup;
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!ASSERT_TRUE(m != MAP_FAILED, "mmap"))
		goto cleanup;
	ASSERT_OK(engine__scan_file(&e, m, st.st_size), "scan the ELF file");
	ASSERT_TRUE(model_engine__has(&e, in_rodata + 1), "a string of .rodata");
	ASSERT_FALSE(model_engine__has(&e, in_data + 1), "a string of .data is not read");
	model_engine__free(&e);
	memset(&e, 0, sizeof(e));
	ASSERT_OK(engine__scan_file(&e, in_data, sizeof(in_data)), "scan bytes that are no ELF");
	ASSERT_TRUE(model_engine__has(&e, in_data + 1), "read whole");
cleanup:
	model_engine__free(&e);
	if (m != MAP_FAILED)
		munmap(m, st.st_size);
	if (fd >= 0)
		close(fd);
}
