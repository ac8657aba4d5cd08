# SPDX-License-Identifier: GPL-2.0
# Integration-test workloads: a fake libllama.so with the real llama.cpp API names, its driver,
# a program without llama symbols, one that grows under odd names (oddnames), and one that
# starts many short-lived processes (spawner), many processes alive at once (swarm), growth inside populating syscalls
# (populate), a range mapped anon then file (remap), a file mapped for microseconds (brief), threads that malloc while others hold the mmap lock (threads), threads that
# fault at once in one mapping (slices), faults that hop between mappings (hops), one that
# goes out of its user's reach after growing (reach), and llama-explain
# (C++: llama.cpp's class and method names, a request per worker thread, for origins, labels
# and causes). Included by
# the top-level Makefile; also works alone:
#   make -f tests/workload/workload.mk OUTPUT=/tmp/wl workload
#
# $(OUTPUT)/workload/{libllama.so,llama-driver,llama-serve,nollama,oddnames,spawner}  -fno-omit-frame-pointer
# $(OUTPUT)/workload/nofp/{libllama.so,llama-driver}     -fomit-frame-pointer (DWARF unwinding)
# $(OUTPUT)/workload/gpu/{libcuda.so.1,libcudart.so,libnvidia-ml.so.1}: GPU stand-ins with the
#   real CUDA driver/runtime and NVML names and signatures (llama-driver --cudart)

OUTPUT ?= build
# CC has a built-in default ("cc"), so CC ?= gcc would never apply.
ifeq ($(origin CC),default)
CC := gcc
endif

ifeq ($(origin Q),undefined)
ifeq ($(V),1)
Q =
else
Q = @
endif
endif
ifeq ($(origin msg),undefined)
ifeq ($(V),1)
msg =
else
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif
endif

WL_SRC := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
WL_OUT := $(OUTPUT)/workload
WL_NOFP := $(WL_OUT)/nofp
WL_GPU := $(WL_OUT)/gpu

# Sibling calls off so every llama_* frame stays on the stack under touch_pages.
WL_CFLAGS := -g -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-fno-optimize-sibling-calls -I$(WL_SRC)
WL_FP := -fno-omit-frame-pointer
WL_NOFP_FLAGS := -fomit-frame-pointer
WL_LIB_FLAGS := -fPIC -shared -fvisibility=hidden -Wl,-soname,libllama.so
# $ORIGIN: the driver finds the libllama.so next to it.
WL_DRV_LDFLAGS := -Wl,-rpath,'$$ORIGIN' -lllama

WL_TARGETS := $(WL_OUT)/libllama.so $(WL_OUT)/llama-driver $(WL_OUT)/nollama $(WL_OUT)/oddnames \
	$(WL_OUT)/spawner $(WL_OUT)/swarm $(WL_OUT)/populate $(WL_OUT)/remap $(WL_OUT)/brief $(WL_OUT)/threads $(WL_OUT)/slices $(WL_OUT)/hops $(WL_OUT)/reach $(WL_OUT)/llama-explain \
	$(WL_OUT)/llama-serve $(WL_NOFP)/libllama.so $(WL_NOFP)/llama-driver \
	$(WL_GPU)/libcuda.so.1 $(WL_GPU)/libcudart.so $(WL_GPU)/libnvidia-ml.so.1

.PHONY: workload
.DELETE_ON_ERROR:

workload: $(WL_TARGETS)

# mkdir -p of nofp/ creates workload/ too; the top-level Makefile owns the workload/ rule.
$(WL_NOFP):
	$(Q)mkdir -p $@

$(WL_GPU):
	$(Q)mkdir -p $@

WL_GPU_FLAGS := -fPIC -shared -fvisibility=hidden $(WL_FP)

$(WL_GPU)/libcuda.so.1: $(WL_SRC)/cuda_standin.c $(WL_SRC)/gpu_standin.h | $(WL_GPU)
	$(call msg,CC-SO,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_GPU_FLAGS) -Wl,-soname,libcuda.so.1 $< -o $@

# The runtime calls the driver, as the real one does; $ORIGIN finds the stand-in driver.
$(WL_GPU)/libcudart.so: $(WL_SRC)/cudart_standin.c $(WL_GPU)/libcuda.so.1 | $(WL_GPU)
	$(call msg,CC-SO,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_GPU_FLAGS) -Wl,-soname,libcudart.so.12 $< -o $@ \
		$(WL_GPU)/libcuda.so.1 -Wl,-rpath,'$$ORIGIN'

$(WL_GPU)/libnvidia-ml.so.1: $(WL_SRC)/nvml_standin.c $(WL_SRC)/gpu_standin.h | $(WL_GPU)
	$(call msg,CC-SO,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_GPU_FLAGS) -Wl,-soname,libnvidia-ml.so.1 $< -o $@

$(WL_OUT)/libllama.so: $(WL_SRC)/fake_llama.c $(WL_SRC)/llama.h | $(WL_NOFP)
	$(call msg,CC-SO,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $(WL_LIB_FLAGS) $< -o $@

$(WL_NOFP)/libllama.so: $(WL_SRC)/fake_llama.c $(WL_SRC)/llama.h | $(WL_NOFP)
	$(call msg,CC-SO,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP_FLAGS) $(WL_LIB_FLAGS) $< -o $@

$(WL_OUT)/llama-driver: $(WL_SRC)/driver.c $(WL_SRC)/llama.h $(WL_OUT)/libllama.so | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@ -L$(WL_OUT) $(WL_DRV_LDFLAGS)

$(WL_NOFP)/llama-driver: $(WL_SRC)/driver.c $(WL_SRC)/llama.h $(WL_NOFP)/libllama.so | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_NOFP_FLAGS) $< -o $@ -L$(WL_NOFP) $(WL_DRV_LDFLAGS)

$(WL_OUT)/nollama: $(WL_SRC)/nollama.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/oddnames: $(WL_SRC)/oddnames.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/spawner: $(WL_SRC)/spawner.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/swarm: $(WL_SRC)/swarm.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/reach: $(WL_SRC)/reach.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/populate: $(WL_SRC)/populate.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -fno-stack-clash-protection $< -o $@

$(WL_OUT)/remap: $(WL_SRC)/remap.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/brief: $(WL_SRC)/brief.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@

$(WL_OUT)/threads: $(WL_SRC)/threads.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@ -lpthread

$(WL_OUT)/slices: $(WL_SRC)/slices.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@ -lpthread

$(WL_OUT)/hops: $(WL_SRC)/hops.c | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@ -lpthread

# C++: the class and method names of llama.cpp as the stacks show them
$(WL_OUT)/llama-explain: $(WL_SRC)/explain.cpp $(WL_SRC)/llama.h | $(WL_NOFP)
	$(call msg,CXX,$@)
	$(Q)g++ -g -O2 -Wall -Wextra -Werror -fno-optimize-sibling-calls $(WL_FP) $< -o $@ -lpthread

$(WL_OUT)/llama-serve: $(WL_SRC)/serve.c $(WL_SRC)/llama.h $(WL_OUT)/libllama.so | $(WL_NOFP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) $< -o $@ -L$(WL_OUT) $(WL_DRV_LDFLAGS)
