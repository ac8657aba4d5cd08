// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes as a recording, read back through replay__file() the way
 * `memphase report` reads it. It must return (a model, or NULL with one line of why) and
 * never crash, hang or leak. Built by scripts/fuzz-record.sh with clang-14
 * -fsanitize=fuzzer,address.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "collect/collector.h"
#include "collect/replay.h"
#include "lib/recfile.h"

/*
 * Inputs that start with "RECS" are records, not a file: they are wrapped in a valid
 * header and chunk (checksums right), so the fuzzer reaches the record decoders instead
 * of stopping at the crc32 of every mutated chunk.
 */
static unsigned char *wrap(const uint8_t *data, size_t size, size_t *out)
{
	struct recfile_writer *w;
	unsigned char *buf = NULL;
	FILE *mem;
	size_t len = 0;
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		return NULL;
	w = recfile_writer__new(fd);
	if (w) {
		/* the records as they are: the writer adds no framing of its own to them */
		struct recbuf b = {};

		recbuf__put(&b, data, size);
		if (!b.failed && size)
			recfile_writer__add_raw(w, b.data, b.len);
		recbuf__free(&b);
		recfile_writer__free(w);
	}
	mem = open_memstream((char **)&buf, &len);
	if (mem) {
		char tmp[4096];
		ssize_t n;

		lseek(fd, 0, SEEK_SET);
		while ((n = read(fd, tmp, sizeof(tmp))) > 0)
			fwrite(tmp, 1, n, mem);
		fclose(mem);
	}
	close(fd);
	*out = len;
	return buf;
}

static const struct replay_opts opts[2] = {
	{ .keep_raw = true, .from_s = -1, .to_s = -1 },
	{ .keep_raw = true, .from_s = 0.01, .to_s = 0.3, .phase = "generate" },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct replay_result res;
	struct collector *c;
	unsigned char *wrapped = NULL;
	char why[256];
	FILE *f;

	if (size >= 4 && !memcmp(data, "RECS", 4)) {
		wrapped = wrap(data + 4, size - 4, &size);
		if (!wrapped)
			return 0;
		data = wrapped;
	}
	f = fmemopen((void *)data, size ? size : 1, "rb");
	if (!f) {
		free(wrapped);
		return 0;
	}
	if (!size)
		fgetc(f);	/* fmemopen() wants a size: an empty file is at its end */
	/* odd sizes also as a window of one phase (report --from --to --phase) */
	c = replay__file(f, &m, &opts[size & 1], &res, why, sizeof(why));
	if (c) {
		collector__free(c);
		model__free(&m);
	}
	fclose(f);
	free(wrapped);
	return 0;
}
