// SPDX-License-Identifier: GPL-2.0
/* Words wrapped at 80 columns: where lines break, their indent, characters not bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/textwrap.h"

/* What fn printed, malloc'd. */
#define CAPTURE(out, call)						\
	do {								\
		size_t _len = 0;					\
		FILE *f = open_memstream(&(out), &_len);		\
									\
		if (!f)							\
			break;						\
		call;							\
		fclose(f);						\
	} while (0)

/* Every line at most TEXTWRAP_COLS characters. */
static int widest(const char *s)
{
	int w = 0, n;
	const char *nl;

	for (; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			nl = s + strlen(s) - 1;
		n = textwrap__width(s, (size_t)(nl - s));
		if (n > w)
			w = n;
	}
	return w;
}

TEST(textwrap_breaks_between_words_with_the_indent)
{
	char *out = NULL;
	const char *text = "The server keeps finished prompts' state, checkpoints included, in "
			   "RAM: an entry each time another prompt takes a slot.";

	CAPTURE(out, (fprintf(f, "    "), textwrap__print(f, 4, 4, text)));
	if (!ASSERT_OK_PTR(out, "output"))
		return;
	ASSERT_STREQ(out, "    The server keeps finished prompts' state, checkpoints included, "
		     "in RAM: an\n    entry each time another prompt takes a slot.\n", "two lines");
	free(out);
}

TEST(textwrap_goes_on_from_the_callers_column)
{
	char *out = NULL;

	/* a first word that does not fit where the caller left off starts the next line */
	CAPTURE(out, (fprintf(f, "%75s", "x"), textwrap__print(f, 75, 2, "longword fits")));
	if (!ASSERT_OK_PTR(out, "output"))
		return;
	ASSERT_TRUE(strstr(out, "x\n  longword fits\n") != NULL, out);
	free(out);
	out = NULL;
	CAPTURE(out, (fprintf(f, "ab"), textwrap__print(f, 2, 2, ": c d")));
	if (!ASSERT_OK_PTR(out, "output"))
		return;
	ASSERT_STREQ(out, "ab: c d\n", "on the same line");
	free(out);
}

TEST(textwrap_counts_characters_and_keeps_long_words_whole)
{
	char word[120], *out = NULL, text[400];
	int i;

	memset(word, 'w', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	/* 30 three-byte characters and a word longer than a line */
	text[0] = '\0';
	for (i = 0; i < 30; i++)
		strcat(text, "\xe2\x82\xac ");
	strcat(text, word);
	strcat(text, " end");
	CAPTURE(out, textwrap__print(f, 0, 0, text));
	if (!ASSERT_OK_PTR(out, "output"))
		return;
	/* the 30 euro signs and their spaces are 59 columns: one line, then the word alone */
	ASSERT_TRUE(strncmp(strchr(out, '\n') + 1, word, strlen(word)) == 0, out);
	ASSERT_TRUE(strstr(out, "\nend\n") != NULL, out);
	free(out);
}

TEST(textwrap_lines_keep_each_lines_indent)
{
	char *out = NULL;
	char text[600];

	snprintf(text, sizeof(text), "head line\n  %s\n%s\n", "at 4,096 tokens in a slot this "
		 "run would hold about 89.2 MiB more host RAM (by cause: context checkpoints)",
		 "short");
	CAPTURE(out, textwrap__lines(f, text));
	if (!ASSERT_OK_PTR(out, "output"))
		return;
	ASSERT_STREQ(out, "head line\n  at 4,096 tokens in a slot this run would hold about "
		     "89.2 MiB more host RAM\n    (by cause: context checkpoints)\nshort\n",
		     "indented two more");
	ASSERT_TRUE(widest(out) <= TEXTWRAP_COLS, out);
	free(out);
}
