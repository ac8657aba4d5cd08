// SPDX-License-Identifier: GPL-2.0
/* The tiny protobuf writer: encodings checked byte by byte, and its gzip read back by zlib. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "lib/pbwriter.h"

TEST(pbwriter_encodes_varints_strings_and_nested_messages)
{
	/* field 1 = 150 (the protobuf docs' example: 08 96 01), field 2 = "hi",
	 * field 3 { field 1 = 300 (ac 02), field 4 packed [1, 200] }, field 5 = 2^64 - 1 */
	static const unsigned char want[] = {
		0x08, 0x96, 0x01,
		0x12, 0x02, 'h', 'i',
		0x1a, 0x08, 0x08, 0xac, 0x02, 0x22, 0x03, 0x01, 0xc8, 0x01,
		0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
	};
	struct pbw b;
	size_t m, p;

	pbw__init(&b);
	pbw__uint(&b, 1, 150);
	pbw__string(&b, 2, "hi");
	m = pbw__begin(&b, 3);
	pbw__uint(&b, 1, 300);
	p = pbw__begin(&b, 4);
	pbw__varint(&b, 1);
	pbw__varint(&b, 200);
	pbw__end(&b, p);
	pbw__end(&b, m);
	pbw__uint(&b, 5, ~0ULL);
	ASSERT_OK(pbw__err(&b), "no error");
	ASSERT_EQ(b.len, sizeof(want), "length");
	ASSERT_TRUE(b.len == sizeof(want) && !memcmp(b.buf, want, sizeof(want)), "bytes");
	pbw__free(&b);
}

TEST(pbwriter_long_nested_message_gets_a_two_byte_length)
{
	char s[200];
	struct pbw b;
	size_t m;

	memset(s, 'x', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	pbw__init(&b);
	m = pbw__begin(&b, 1);
	pbw__string(&b, 2, s);		/* 12 c7 01 + 199 bytes = 202 */
	pbw__end(&b, m);
	ASSERT_EQ(b.len, 1 + 2 + 202UL, "tag, 2-byte length, body");
	ASSERT_TRUE(b.buf[0] == 0x0a && b.buf[1] == 0xca && b.buf[2] == 0x01, "length 202");
	ASSERT_TRUE(b.buf[3] == 0x12 && b.buf[4] == 0xc7 && b.buf[5] == 0x01, "inner string");
	pbw__free(&b);
}

TEST(pbwriter_gzip_reads_back)
{
	unsigned char out[4096];
	char *gz = NULL;
	size_t gzlen = 0;
	z_stream z = {};
	struct pbw b;
	unsigned int i;
	FILE *f;

	pbw__init(&b);
	for (i = 0; i < 1000; i++)
		pbw__uint(&b, 1, i);
	f = open_memstream(&gz, &gzlen);
	if (!ASSERT_OK_PTR(f, "memstream"))
		return;
	ASSERT_OK(pbw__write_gzip(&b, f), "gzip");
	fclose(f);
	ASSERT_TRUE(gzlen > 10 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
		    "gzip magic");
	/* 15 + 32: zlib detects the gzip header */
	ASSERT_EQ(inflateInit2(&z, 15 + 32), Z_OK, "inflate init");
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = out;
	z.avail_out = sizeof(out);
	ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END, "whole stream");
	ASSERT_EQ(z.total_out, (unsigned long)b.len, "length back");
	ASSERT_TRUE(!memcmp(out, b.buf, b.len), "bytes back");
	inflateEnd(&z);
	free(gz);
	pbw__free(&b);
}
