# SPDX-License-Identifier: GPL-2.0
# memphase: `make` builds build/memphase; `sudo make test` runs every test;
# `sudo make demo` runs memphase on the bundled workload.
OUTPUT ?= build
CLANG ?= clang-14
BPFTOOL ?= bpftool
CC ?= gcc
PREFIX ?= /usr/local
DESTDIR ?=
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
# x86-64 only (bpf/arch.h: syscall numbers, argument registers)
ARCH := x86
VERSION := 0.1.0

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Host include dirs for BPF (asm/ headers live in the multiarch dir).
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-I$(OUTPUT) -Ibpf $(CLANG_BPF_SYS_INCLUDES)
CFLAGS ?= -g -O2
# override: `make CFLAGS=...` replaces the optimisation flags, never what the build needs
override CFLAGS += -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-DMEMPHASE_VERSION='"$(VERSION)"' -I$(OUTPUT) -Ibpf -Iuser -MMD -MP
LIBBPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
# libbpf with libelf and libz as shared libraries; libdw (stacks), ncurses (the live view)
# and libstdc++ (the demangler) linked in: each shared library costs every start its
# mapping and relocation (these seven: ~3 ms of memphase's start-up here)
LIBS := $(LIBBPF_LIBS) -lelf -lz -lm -pthread -Wl,-Bstatic -ldw -lbz2 -llzma \
	$(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo) -lstdc++ \
	-Wl,-Bdynamic -lelf -lz

USER_SRCS := $(wildcard user/*.c user/*/*.c user/*/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
LIB_OBJS := $(filter-out $(OUTPUT)/user/main.o,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%.o,$(UNIT_SRCS))

.PHONY: all clean test unit-test demo install deps workload bench asan
.DELETE_ON_ERROR:
.SECONDARY:

all: $(OUTPUT)/memphase workload

$(OUTPUT) $(OUTPUT)/tests/unit $(OUTPUT)/workload:
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

# memphase's BPF side is several units (bpf/*.bpf.c but watch's) linked into one object:
# they share maps and globals (bpf/shared.h) and call each other's global subprograms.
# maps.bpf.c, which defines what the others use extern, is linked first
BPF_UNITS := maps $(filter-out maps watch,$(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c)))

$(OUTPUT)/bpf/%.tmp.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/memphase.bpf.o: $(patsubst %,$(OUTPUT)/bpf/%.tmp.bpf.o,$(BPF_UNITS))
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/watch.bpf.o: $(OUTPUT)/bpf/watch.tmp.bpf.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# The kernel BTF the object needs, for kernels whose BTF is VMLINUX_BTF (user/kbtf.h): the
# minimal BTF of its CO-RE relocations (none if this bpftool cannot make it) and the ids of
# its tp_btf targets, as a header.
$(OUTPUT)/memphase.min.btf: $(OUTPUT)/memphase.bpf.o
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) gen min_core_btf $(VMLINUX_BTF) $@ $< >/dev/null 2>&1 || : > $@

$(OUTPUT)/kbtf-gen: scripts/kbtf-gen.c user/kbtf.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -Wno-unused-parameter -Iuser $< -o $@ $(LIBBPF_LIBS)

$(OUTPUT)/kbtf_data.h: $(OUTPUT)/kbtf-gen $(OUTPUT)/memphase.min.btf $(OUTPUT)/memphase.bpf.o \
		$(VMLINUX_BTF)
	$(call msg,GEN,$@)
	$(Q)$(OUTPUT)/kbtf-gen $(VMLINUX_BTF) $(OUTPUT)/memphase.min.btf \
		$(OUTPUT)/memphase.bpf.o > $@
$(OUTPUT)/user/kbtf.o: $(OUTPUT)/kbtf_data.h

# The skeletons are prerequisites of the sources that include them only (a BPF change
# rebuilds those; the compiler's .d files track every other header).
SKEL_SRCS := $(shell grep -l '"memphase.skel.h"' $(USER_SRCS))
WATCH_SKEL_SRCS := $(shell grep -l '"watch.skel.h"' $(USER_SRCS))
$(patsubst user/%.c,$(OUTPUT)/user/%.o,$(SKEL_SRCS)): $(OUTPUT)/memphase.skel.h
$(patsubst user/%.c,$(OUTPUT)/user/%.o,$(WATCH_SKEL_SRCS)): $(OUTPUT)/watch.skel.h
# memphase.h (the BPF/user structs) is a plain header: the .d files see it
$(OUTPUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The HTML report's page, as C strings (report/html.c includes it).
$(OUTPUT)/report/html_assets.h: user/report/html.js user/report/html.css | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D); for f in js css; do \
		echo "static const char html_$$f[] ="; \
		sed 's/\\/\\\\/g; s/"/\\"/g; s/^/\t"/; s/$$/\\n"/' user/report/html.$$f; \
		echo ";"; \
	done > $@
$(OUTPUT)/user/report/html.o: $(OUTPUT)/report/html_assets.h
# the built-in cause rules are assembled into this object (.incbin)
$(OUTPUT)/user/collect/causes_data.o: data/causes.rules

$(OUTPUT)/memphase: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS)

$(OUTPUT)/tests/unit/%.o: tests/unit/%.c | $(OUTPUT)/tests/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-missing-field-initializers -Itests -c $< -o $@

$(OUTPUT)/unit-tests: $(UNIT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS)

# `make asan`: the unit tests (the recording fuzz corpus and crashers included) built with
# AddressSanitizer and UndefinedBehaviorSanitizer, -O1, every finding fatal; `make test` runs
# them too. Objects in build/asan/, beside the normal ones.
ASAN_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
ASAN_LIB_OBJS := $(patsubst $(OUTPUT)/user/%.o,$(OUTPUT)/asan/user/%.o,$(LIB_OBJS))
ASAN_UNIT_OBJS := $(patsubst $(OUTPUT)/tests/unit/%.o,$(OUTPUT)/asan/tests/unit/%.o,$(UNIT_OBJS))

$(patsubst user/%.c,$(OUTPUT)/asan/user/%.o,$(SKEL_SRCS)): $(OUTPUT)/memphase.skel.h
$(patsubst user/%.c,$(OUTPUT)/asan/user/%.o,$(WATCH_SKEL_SRCS)): $(OUTPUT)/watch.skel.h
$(OUTPUT)/asan/user/%.o: user/%.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_CFLAGS) -c $< -o $@
$(OUTPUT)/asan/user/report/html.o: $(OUTPUT)/report/html_assets.h
$(OUTPUT)/asan/user/kbtf.o: $(OUTPUT)/kbtf_data.h
$(OUTPUT)/asan/user/collect/causes_data.o: data/causes.rules

$(OUTPUT)/asan/tests/unit/%.o: tests/unit/%.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_CFLAGS) -Wno-missing-field-initializers -Itests -c $< -o $@

$(OUTPUT)/asan/unit-tests: $(ASAN_UNIT_OBJS) $(ASAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(ASAN_CFLAGS) $^ -o $@ $(LIBS)

asan: deps
	$(Q)$(MAKE) --no-print-directory $(OUTPUT)/asan/unit-tests && \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(OUTPUT)/asan/unit-tests; \
		rc=$$?; scripts/own-build.sh $(OUTPUT); exit $$rc

-include tests/workload/workload.mk

deps:
	$(Q)scripts/install-deps.sh

unit-test: $(OUTPUT)/unit-tests
	$(Q)$(OUTPUT)/unit-tests

# The real llama.cpp the engine tests run (tests/integration/test_engine.py): a folder with
# llama-server, llama-cli and their libraries, models in ../models beside it. Empty: they skip.
LLAMA_BIN ?= $(wildcard $(abspath ../shared/llama/bin))

# under sudo, build/ goes back to the user who ran it afterwards (scripts/own-build.sh)
test: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/unit-tests $(OUTPUT)/asan/unit-tests && \
		scripts/node-deps.sh $(OUTPUT) && LLAMA_BIN="$(LLAMA_BIN)" tests/run-all.sh; \
		rc=$$?; scripts/own-build.sh $(OUTPUT); exit $$rc

demo: deps
	$(Q)$(MAKE) --no-print-directory all && scripts/demo.sh; \
		rc=$$?; scripts/own-build.sh $(OUTPUT); exit $$rc

bench:
	$(Q)scripts/install-deps.sh bench
	$(Q)$(MAKE) --no-print-directory all && scripts/bench.sh; \
		rc=$$?; scripts/own-build.sh $(OUTPUT); exit $$rc

# the binary, its man page, the docs the man page and the systemd unit point to; the unit's
# paths (ExecStart=, Documentation=) are PREFIX's
install: $(OUTPUT)/memphase
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/doc/memphase/docs
	install -m 0755 $(OUTPUT)/memphase $(DESTDIR)$(PREFIX)/bin/memphase
	install -m 0644 docs/memphase.1 $(DESTDIR)$(PREFIX)/share/man/man1/memphase.1
	install -m 0644 README.md ARCHITECTURE.md $(DESTDIR)$(PREFIX)/share/doc/memphase/
	install -m 0644 docs/*.md docs/memphase.schema.json \
		$(DESTDIR)$(PREFIX)/share/doc/memphase/docs/
	sed 's|/usr/local/|$(PREFIX)/|g' scripts/memphase-watch.service \
		>$(DESTDIR)$(PREFIX)/share/doc/memphase/memphase-watch.service
	chmod 0644 $(DESTDIR)$(PREFIX)/share/doc/memphase/memphase-watch.service

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/user/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/user/*/*/*.d \
	$(OUTPUT)/tests/unit/*.d $(OUTPUT)/asan/user/*.d $(OUTPUT)/asan/user/*/*.d \
	$(OUTPUT)/asan/user/*/*/*.d $(OUTPUT)/asan/tests/unit/*.d)
