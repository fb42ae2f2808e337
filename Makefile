# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace build. `make test` and `make demo` install what they need (scripts/deps.sh).
#
#   make            build every program into build/bin
#   make test       deps, the layering check, build, unit tests, the same again under
#                   ASan+UBSan, the integration tests (namespaces, QEMU guests; root only,
#                   skipped otherwise) and again on the sanitizer build, the docs checks,
#                   make test-install and test-deb (below), and a bounded run of every
#                   fuzz target
#   make check-tsan the shm rings' two-thread test under ThreadSanitizer (in make test)
#   make layers     check the layering and print the include graph between layers
#   make check-spdx every source file names its license (LICENSE; in make test)
#   make man        the manual pages from the programs' option tables (build/man/)
#   make docs-check no dead links in README.md and docs/, parameter tables as in the code,
#                   the manual pages as --help has them, one CLI grammar
#   make bench-cc   nanoseconds per event for each congestion-control algorithm
#   make bench-micro bench-cc, the ICRC, the pacing gate and the agent (bench/micro.sh)
#   make figures    docs/figures.md's table from saved bench output (FIGURES=FILE...)
#   make bench-vt   the virtual-time engine's speed against the issue's targets, one core
#                   (the 128-host row: about 10 minutes; VT_SPEED_SCALE=0 skips it), and
#                   two lanes against one to 4 ms
#   make bench-vt-long  bench-vt with the fabrics of 1,024 and 8,192 hosts (the 1,024-host
#                   WebSearch row takes 30-70 minutes of one core here)
#   make bench-rt   soft hosts in real time: write_bw through qpace-switch, both sides;
#                   the 16 -> 1 incast at 1 Gb/s in both clocks (bench/rt_incast.sh)
#   make bench-htsim HTSIM_SRC=DIR  virtual time against htsim on htsim's own experiment
#                   files, both sides and the ratio (builds htsim from DIR with cmake into
#                   BUILD/htsim; without HTSIM_SRC, one line and nothing run;
#                   bench/htsim_compare.sh)
#   make bench-ns3  virtual time against ns-3 on the same incasts (installs Debian's
#                   libns3-dev first; bench/ns3/compare.sh); make check-ns3 checks the
#                   ns-3 program's counts
#   make demo       one incast per algorithm in virtual time (with and without PFC) and a
#                   short real-time one on loopback (results/demo/)
#   make demo-table rewrite README.md's demo table from virtual time (scripts/demo-table.sh)
#   make reproduce  the seeds' source experiments at full size in virtual time
#                   (results/reproduce/, docs/reproductions.md's tables; bench/reproduce.sh)
#   make fuzz       every libFuzzer target in tests/fuzz (clang), FUZZ_SECONDS each
#                   (default 20; `make test` runs them for 10 s each), seeded from
#                   tests/fuzz/corpus/; make fuzz-long: 10M executions each (not in CI)
#   make integration-san  the integration tests on the clang ASan+UBSan build (root)
#   make test-rxe   the Soft-RoCE scenarios: kernel rxe in QEMU guests (tests/vm/)
#   make test-rxe-matrix  unmodified perftest programs without and with qpaced, every case
#   make clean
#   make LTO=1 ...  the same with link-time optimisation (gcc -flto): ~1.10x less CPU in
#                   virtual time (e.g. make LTO=1 BUILD=build/lto bench-vt)
#   make V=1 ...    every command in full (the default: one short line a step, as Linux's
#                   kbuild prints, `  CC      lib/frame.o`; make -s: nothing)
#
# The layers, lowest first (scripts/layers.sh states which may include which and checks
# it). Each is one archive of the non-program sources in its folders; a program names the
# layers it links, and gets only their system libraries.

# `make` alone builds every program, whatever rule comes first below
.DEFAULT_GOAL := all

# kbuild's idiom: a rule runs $(call cmd,NAME), which prints quiet_cmd_NAME, one short line
# (V=1: the command cmd_NAME itself; make -s: nothing), then runs cmd_NAME. $(Q) prefixes
# the other commands of a recipe, shown with V=1 only.
V ?= 0
ifeq ($(V),1)
quiet :=
Q :=
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
quiet := silent_
Q := @
else
quiet := quiet_
Q := @
endif
escsq = $(subst ','\'',$(1))
cmd = @$(if $($(quiet)cmd_$(1)),echo '$(if $(quiet),  )$(call escsq,$($(quiet)cmd_$(1)))' &&) \
	$(cmd_$(1))
MAKEFLAGS += --no-print-directory
# the path a step line shows: the object without $(BUILD)/obj/ (or build/fuzz/obj/)
src_of = $(patsubst build/fuzz/obj/%,%,$(patsubst $(BUILD)/obj/%,%,$(1)))
# $(call build_quiet,DIR,MAKE-ARGS): what make test, demo and reproduce build, without the
# step lines (V=1: with every command), then one line: the objects compiled, the outputs.
build_quiet = mkdir -p $(1) && touch $(1)/.build-start && \
	$(MAKE) $(if $(filter 1,$(V)),,-s) -j2 $(2) && \
	echo "  BUILT   $$(find $(1) -name '*.o' -newer $(1)/.build-start | wc -l) objects; $(3)"

BUILD ?= build
SAN ?=
CC ?= cc

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-missing-field-initializers
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 $(WARN) -D_GNU_SOURCE -Iinclude -MMD -MP
# SAN=1: clang with ASan and UBSan, float->integer overflow included (float-cast-overflow;
# gcc's UBSan does not check that class), every report fatal.
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
ifeq ($(SAN),1)
CC := clang
CFLAGS += $(SAN_FLAGS) -fno-omit-frame-pointer
LDFLAGS += $(SAN_FLAGS)
endif
# SAN=thread: clang with ThreadSanitizer, for the code with threads (check-tsan).
ifeq ($(SAN),thread)
CC := clang
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif
LDFLAGS += -Wl,--as-needed
# LTO=1: link-time optimisation across the layers (gcc -flto; not with SAN=1). The same
# code, compiled as one: virtual-time runs take ~1.10x less CPU (the 8-host leaf-spine of
# docs/bench.md, byte-identical outputs); `make all` takes ~1.7x the CPU, and every test
# binary's link would redo the optimisation, so it is not the default.
ifeq ($(LTO),1)
ifeq ($(SAN),1)
$(error LTO=1 and SAN=1 together are not supported)
endif
CFLAGS += -flto=auto
LDFLAGS += -flto=auto $(filter -O%,$(CFLAGS))
endif

# layer: its folders, and the system libraries its code calls
LAYERS := lib cc verbs switch agent bpf host sim bench
lib.dirs    := lib
lib.libs    := -lisal -lm
cc.dirs     := agent/cc agent/credit
cc.libs     := -lm
verbs.dirs  := verbs
verbs.libs  := -libverbs -lrdmacm
switch.dirs := switchsim
switch.libs := -lev -lpcap
agent.dirs  := agent
agent.libs  := -lev
bpf.dirs    := agent/bpf
bpf.libs    := -lbpf
host.dirs   := host
host.libs   := -lz
sim.dirs    := sim
sim.libs    := -lm -lpthread
bench.dirs  := bench
bench.libs  := -lm -lpthread

layer_srcs = $(filter-out %_main.c %.bpf.c,$(foreach d,$($(1).dirs),$(wildcard $(d)/*.c)))
layer_lib = $(BUILD)/lib/libqpace-$(1).a
$(foreach l,$(LAYERS),$(eval $(l).objs := $(patsubst %.c,$(BUILD)/obj/%.o,$(call layer_srcs,$(l)))))
ALL_LAYER_SRCS := $(foreach l,$(LAYERS),$(call layer_srcs,$(l)))
# sim/ drives the switch fabric as switchsim/loop.c does, through switchsim's own headers
# (scripts/layers.sh: FRIENDS).
$(sim.objs): CFLAGS += -Iswitchsim

# The tc egress BPF program (agent/bpf/tc_egress.bpf.c): clang's BPF target, then bpftool's
# skeleton that the loader (agent/bpf/tc_egress.c) includes. The object is the same for
# every build (SAN=1 or not), so it lives in build/bpf/ whatever BUILD is.
BPF_OUT := build/bpf
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -Wall -Wextra -Werror \
	-I/usr/include/$(shell gcc -print-multiarch 2>/dev/null)
quiet_cmd_bpf = BPF     $@
      cmd_bpf = clang $(BPF_CFLAGS) -c $< -o $@
quiet_cmd_skel = GEN     $@
      cmd_skel = bpftool gen skeleton $< name $(SKEL_NAME) > $@.tmp && mv $@.tmp $@
$(BPF_OUT)/tc_egress.bpf.o: agent/bpf/tc_egress.bpf.c agent/bpf/tc_abi.h agent/bpf/roce_parse.bpf.h
	@mkdir -p $(dir $@)
	$(call cmd,bpf)
$(BPF_OUT)/tc_egress.skel.h: SKEL_NAME := qp_tc_egress
$(BPF_OUT)/tc_egress.skel.h: $(BPF_OUT)/tc_egress.bpf.o
	$(call cmd,skel)
$(bpf.objs) build/fuzz/obj/agent/bpf/tc_egress.o: $(BPF_OUT)/tc_egress.skel.h
# The tc ingress program (agent/bpf/tc_ingress.bpf.c, CE and CNP reports), the same way.
$(BPF_OUT)/tc_ingress.bpf.o: agent/bpf/tc_ingress.bpf.c agent/bpf/roce_parse.bpf.h \
		agent/bpf/tc_ingress_abi.h agent/bpf/tc_abi.h
	@mkdir -p $(dir $@)
	$(call cmd,bpf)
$(BPF_OUT)/tc_ingress.skel.h: SKEL_NAME := qp_tc_ingress
$(BPF_OUT)/tc_ingress.skel.h: $(BPF_OUT)/tc_ingress.bpf.o
	$(call cmd,skel)
$(bpf.objs) build/fuzz/obj/agent/bpf/tc_ingress.o: $(BPF_OUT)/tc_ingress.skel.h
$(bpf.objs): CFLAGS += -I$(BPF_OUT)

# The release (`PROG --version`, the manual pages): the VERSION file, given to
# lib/version.c alone so that a new version rebuilds one object.
QPACE_VERSION ?= $(shell cat VERSION)
$(BUILD)/obj/lib/version.o $(BUILD)/pic/lib/version.o: CFLAGS += -DQPACE_VERSION='"$(QPACE_VERSION)"'
$(BUILD)/obj/lib/version.o $(BUILD)/pic/lib/version.o build/fuzz/obj/lib/version.o: VERSION

# program: its main file, other sources of its own, the layers it links (highest first)
# and any system library of its own (.libs). Product programs, then micro-benchmarks, then programs only the tests use.
PROGRAMS := qpace-switch qpaced qpacectl qpace-bench \
	bench-cc bench-gate bench-icrc bench-gaps qpaced-bench switch-bench qpace-soft-bw \
	qp-check qp-agent-check qpace-probe qpace-swtest
qpace-switch.main   := switchsim/qpace_switch_main.c
qpace-switch.uses   := switch lib
qpaced.main         := agent/qpaced_main.c
qpaced.uses         := agent bpf cc lib
qpacectl.main       := agent/qpacectl_main.c
qpacectl.uses       := agent cc lib
qpace-bench.main    := bench/qpace_bench_main.c
qpace-bench.uses    := bench sim host agent cc verbs switch lib
bench-cc.main       := bench/micro/bench_cc_main.c
bench-cc.uses       := cc lib
bench-gate.main     := bench/micro/bench_gate_main.c
bench-gate.uses     := verbs lib
bench-icrc.main     := bench/micro/bench_icrc_main.c
bench-icrc.uses     := lib
bench-icrc.libs     := -lz
bench-gaps.main     := bench/micro/bench_gaps_main.c
bench-gaps.uses     := lib
bench-gaps.libs     := -lpthread
qpaced-bench.main   := bench/micro/qpaced_bench_main.c
qpaced-bench.uses   := agent cc lib
switch-bench.main   := bench/micro/switch_bench_main.c
switch-bench.srcs   := bench/micro/udp_forwarder.c
switch-bench.uses   := lib
qpace-soft-bw.main  := bench/micro/qpace_soft_bw_main.c
qpace-soft-bw.uses  := host verbs lib
qp-check.main       := tests/programs/qp_check_main.c
qp-check.uses       := verbs lib
qp-agent-check.main := tests/programs/qp_agent_check_main.c
qp-agent-check.uses := verbs lib
qpace-probe.main    := tests/programs/qpace_probe_main.c
qpace-probe.srcs    := tests/support/pcap_frames.c
qpace-probe.uses    := verbs lib
qpace-probe.libs    := -lpcap
qpace-swtest.main   := tests/programs/qpace_swtest_main.c
qpace-swtest.srcs   := tests/programs/swtest.c tests/programs/swtest_hops.c \
	tests/programs/swtest_int.c
qpace-swtest.uses   := lib

PROG_BINS := $(PROGRAMS:%=$(BUILD)/bin/%)
PROG_SRCS := $(foreach p,$(PROGRAMS),$($(p).main) $($(p).srcs))

# Tests see private headers of every folder and their own support code.
TEST_CFLAGS := -Itests/support -Iagent -Iagent/cc -Iverbs -Iswitchsim -Ihost -Isim -Ibench \
	-Ibench/micro -Itests/programs
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
SUPPORT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/support/*.c))
ALL_LAYER_LIBS := $(foreach l,$(LAYERS),$($(l).libs))
TEST_ARCHIVES := $(foreach l,bench sim host agent bpf cc verbs switch lib,$(call layer_lib,$(l)))

.PHONY: all man deps test unit check-spdx check-unit check-tsan integration integration-san layers docs-check bench-cc \
	bench-vt bench-vt-long bench-rt bench-micro figures demo demo-table reproduce clean fuzz fuzz-long fuzz-seeds test-rxe bench-ns3 \
	test-rxe-matrix check-ns3 bench-htsim
all: $(PROG_BINS)

deps:
	@sh scripts/deps.sh

quiet_cmd_cc = CC      $(call src_of,$@)
      cmd_cc = $(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c $< -o $@
quiet_cmd_ar = AR      $@
      cmd_ar = rm -f $@ && ar rcs $@ $^
quiet_cmd_ld = LD      $@
      cmd_ld = $(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/obj/tests/%.o: EXTRA_CFLAGS = $(TEST_CFLAGS)
$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(call cmd,cc)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call cmd,cc)

define layer_rule
$(call layer_lib,$(1)): $($(1).objs)
	@mkdir -p $$(dir $$@)
	$$(call cmd,ar)
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rule,$(l))))

# A program: its objects, its layers' archives, its layers' system libraries.
define prog_rule
$(BUILD)/bin/$(1): LDLIBS = $(sort $(foreach l,$($(1).uses),$($(l).libs)) $($(1).libs))
$(BUILD)/bin/$(1): $(patsubst %.c,$(BUILD)/obj/%.o,$($(1).main) $($(1).srcs)) \
		$(foreach l,$($(1).uses),$(call layer_lib,$(l)))
	@mkdir -p $$(dir $$@)
	$$(call cmd,ld)
endef
$(foreach p,$(PROGRAMS),$(eval $(call prog_rule,$(p))))

$(BUILD)/tests/%: LDLIBS = -lcmocka $(sort $(ALL_LAYER_LIBS)) -lpthread
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(SUPPORT_OBJS) $(TEST_ARCHIVES)
	@mkdir -p $(dir $@)
	$(call cmd,ld)

unit: $(TEST_BINS) $(PROG_BINS)

# Run every unit test binary; the summary line counts binaries.
check-unit: unit
	@sh tests/run-unit.sh $(TEST_BINS)

# The code with two threads under ThreadSanitizer (clang; TSan cannot share a build with
# ASan): the shm rings' test, built alone, and virtual time's two lanes (test_netrun_lanes,
# with the layers it needs in a build of their own, build/tsan). In `make test`.
quiet_cmd_tsan_ld = CCLD    $(BUILD)/tsan/test_shm_ring
      cmd_tsan_ld = clang -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=thread -Iinclude \
	-Itests/support tests/unit/test_shm_ring.c lib/shm_ring.c lib/errmsg.c -lcmocka \
	-lpthread -o $(BUILD)/tsan/test_shm_ring
check-tsan:
	@mkdir -p $(BUILD)/tsan
	$(call cmd,tsan_ld)
	$(Q)TSAN_OPTIONS=halt_on_error=1 $(BUILD)/tsan/test_shm_ring
	$(Q)$(MAKE) -j2 BUILD=build/tsan SAN=thread build/tsan/tests/test_netrun_lanes
	$(Q)TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_netrun_lanes

# The manual pages, each written by its program from the option table that gives --help
# (--help-man; qpaced --help-man-conf for its file): build/man/*.1 and *.5, which
# `make install` installs. tests/docs/man_check.sh checks them against --help.
MAN_PAGES := $(addprefix $(BUILD)/man/,qpace-switch.1 qpaced.1 qpacectl.1 qpace-bench.1 \
	qpaced.conf.5)
quiet_cmd_man = MAN     $@
      cmd_man = $(BUILD)/bin/$(MAN_PROG) $(MAN_FLAG) > $@.tmp && mv $@.tmp $@
$(BUILD)/man/%.1: MAN_PROG = $*
$(BUILD)/man/%.1: MAN_FLAG = --help-man
$(BUILD)/man/%.1: $(BUILD)/bin/%
	@mkdir -p $(dir $@)
	$(call cmd,man)
$(BUILD)/man/qpaced.conf.5: MAN_PROG = qpaced
$(BUILD)/man/qpaced.conf.5: MAN_FLAG = --help-man-conf
$(BUILD)/man/qpaced.conf.5: $(BUILD)/bin/qpaced
	@mkdir -p $(dir $@)
	$(call cmd,man)
man: $(MAN_PAGES)

# README.md and docs/: no dead links, parameter tables as the code has them, the manual
# pages as --help has them, one CLI grammar.
docs-check: all
	@BUILD=$(BUILD) sh tests/docs/run.sh

check-spdx:
	@sh scripts/spdx-check.sh

layers:
	@sh tests/layers/selftest.sh
	@sh scripts/layers.sh check
	@sh scripts/layers.sh graph
	@sh scripts/layers.sh deep

test: deps
	@sh scripts/spdx-check.sh
	$(Q)$(MAKE) layers
	$(Q)$(call build_quiet,$(BUILD),all unit,$(BUILD)/bin and $(words $(TEST_BINS)) unit tests)
	$(Q)$(MAKE) -j2 check-unit
	$(Q)$(MAKE) -j2 test-install
	$(Q)$(MAKE) docs-check
	$(Q)$(call build_quiet,build/san,BUILD=build/san SAN=1 all unit,build/san (ASan+UBSan))
	$(Q)$(MAKE) -j2 BUILD=build/san SAN=1 check-unit
	$(Q)$(MAKE) check-tsan
	$(Q)$(MAKE) integration
	$(Q)$(MAKE) integration-san
	$(Q)$(MAKE) test-deb
	$(Q)$(call build_quiet,build/fuzz,$(FUZZ_BINS),$(words $(FUZZ_BINS)) fuzz targets)
	$(Q)$(MAKE) -j2 fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) FUZZ_JOBS=2

integration: all
	@sh tests/run-integration.sh $(BUILD)

# The same scripts on the sanitizer build: every program they start is instrumented, and a
# sanitizer report ends it non-zero (tests/run-integration.sh sets the options).
integration-san:
	$(Q)$(MAKE) -j2 BUILD=build/san SAN=1 all
	@sh tests/run-integration.sh build/san

test-rxe: all
	@sh tests/vm/test-rxe.sh

# The do-no-harm matrix: every case of tests/vm/matrix-rxe.sh (its short set runs in
# make test-rxe), docs/enforce-qemu.md's table.
test-rxe-matrix: all
	@sh tests/vm/matrix-rxe.sh

bench-cc: $(BUILD)/bin/bench-cc
	@sh bench/micro.sh $(BUILD) cc

# The micro-benchmarks (bench/micro.sh): cc, the ICRC, the pacing gate, the agent; the two
# that time real things alone under the machine's lock.
bench-micro: all
	@flock /tmp/qpace-heavy.lock sh bench/micro.sh $(BUILD)

bench-vt: $(BUILD)/bin/qpace-bench
	@sh bench/vt_speed.sh $(BUILD)

bench-vt-long: $(BUILD)/bin/qpace-bench
	@VT_SPEED_LONG=on sh bench/vt_speed.sh $(BUILD)

bench-htsim: $(BUILD)/bin/qpace-bench
	@HTSIM_SRC="$(HTSIM_SRC)" sh bench/htsim_compare.sh $(BUILD)

bench-rt: all
	@BUILD=$(BUILD) sh bench/rt_speed.sh
	@BUILD=$(BUILD) sh bench/rt_incast.sh

# ns-3, for the speed comparison only (docs/performance.md, "Virtual time vs ns-3"): the
# one C++ program, built against Debian's packaged ns-3 3.37 and qpace's lib layer, never
# by `make all`. Libraries: pkg-config's -l flags only, because the packaged .pc files
# also name libgsl.so (of libgsl-dev, which libns3-dev does not pull in) and a broken
# "-I/usr;"; the headers are in /usr/include/ns3, on the compiler's default path.
NS3_MODULES := core network internet point-to-point applications traffic-control
NS3_LIBS = $(shell pkg-config --libs-only-l $(NS3_MODULES:%=ns3-%))
NS3_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -Iinclude -MMD -MP
ifeq ($(SAN),1)
NS3_CXXFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
quiet_cmd_cxx = CXX     $(call src_of,$@)
      cmd_cxx = $(CXX) $(NS3_CXXFLAGS) -c $< -o $@
quiet_cmd_ldxx = LD      $@
      cmd_ldxx = $(CXX) $(LDFLAGS) $^ $(lib.libs) $(NS3_LIBS) -o $@
$(BUILD)/obj/bench/ns3/incast.o: bench/ns3/incast.cc
	@mkdir -p $(dir $@)
	$(call cmd,cxx)
$(BUILD)/bin/ns3-incast: $(BUILD)/obj/bench/ns3/incast.o $(BUILD)/obj/bench/ns3/ns3_opts.o \
		$(call layer_lib,lib)
	@mkdir -p $(dir $@)
	$(call cmd,ldxx)

bench-ns3:
	@sh bench/ns3/deps.sh
	$(Q)$(MAKE) -j2 all $(BUILD)/bin/ns3-incast
	@sh bench/ns3/compare.sh $(BUILD)

check-ns3:
	@sh bench/ns3/deps.sh
	$(Q)$(MAKE) -j2 $(BUILD)/bin/ns3-incast
	@sh bench/ns3/check.sh $(BUILD)

# The README's main command: packages (gnuplot-nox for the plots), build, one incast per
# algorithm in virtual time and a short one in real time; results in results/demo/
# (bench/demo.sh). demo-table: README.md's table regenerated after an algorithm change.
demo:
	@sh scripts/deps.sh gnuplot-nox
	$(Q)$(call build_quiet,$(BUILD),all,$(words $(PROGRAMS)) programs in $(BUILD)/bin)
	@sh bench/demo.sh $(BUILD)

demo-table: all
	@BUILD=$(BUILD) sh scripts/demo-table.sh update

# docs/figures.md's table from the FIGURE lines of saved benchmark output, e.g.
#   make bench-vt | tee vt.out; make figures FIGURES=vt.out
figures:
	@sh scripts/figures.sh update $(FIGURES)

# The reproductions (docs/reproductions.md): gnuplot-nox for the figures, build, every
# experiment at full size with a progress line each, then the docs' tables re-pasted.
reproduce:
	@sh scripts/deps.sh gnuplot-nox
	$(Q)$(call build_quiet,$(BUILD),all,$(words $(PROGRAMS)) programs in $(BUILD)/bin)
	@sh bench/reproduce.sh $(BUILD)

# Each tests/fuzz/fuzz_NAME.c is a libFuzzer target, linked with every layer built by
# clang with coverage, ASan and UBSan (build/fuzz/libqpace-fuzz.a). `make test` runs each
# for FUZZ_SECONDS; tests/fuzz/NAME.dict is used when present.
FUZZ_SECONDS ?= 20
TEST_FUZZ_SECONDS ?= 10
FUZZ_JOBS ?= 1
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Wall -Wextra -Werror \
	-fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow \
	-fno-sanitize-recover=undefined,float-cast-overflow
FUZZ_OBJS := $(ALL_LAYER_SRCS:%.c=build/fuzz/obj/%.o)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
$(sim.objs:$(BUILD)/obj/%=build/fuzz/obj/%): FUZZ_CFLAGS += -Iswitchsim
$(bpf.objs:$(BUILD)/obj/%=build/fuzz/obj/%): FUZZ_CFLAGS += -I$(BPF_OUT)
build/fuzz/obj/lib/version.o: FUZZ_CFLAGS += -DQPACE_VERSION='"$(QPACE_VERSION)"'
quiet_cmd_fuzz_cc = CC      fuzz: $(call src_of,$@)
      cmd_fuzz_cc = clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
quiet_cmd_fuzz_ld = LD      $@
      cmd_fuzz_ld = clang $(FUZZ_CFLAGS) $(TEST_CFLAGS) -fsanitize=fuzzer $(filter %.c,$^) \
	build/fuzz/libqpace-fuzz.a $(sort $(ALL_LAYER_LIBS)) -o $@
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call cmd,fuzz_cc)
build/fuzz/libqpace-fuzz.a: $(FUZZ_OBJS)
	$(call cmd,ar)
# a target may name test helpers (tests/support/*.c) it is built with
build/fuzz/fuzz_switch: tests/support/frame6.c
build/fuzz/%: tests/fuzz/%.c build/fuzz/libqpace-fuzz.a
	$(call cmd,fuzz_ld)
fuzz: deps $(FUZZ_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# Not in CI: each target until FUZZ_LONG_RUNS executions (10M), or FUZZ_LONG_SECONDS (30
# min) for the slow ones; prints executions and executions per second for each.
FUZZ_LONG_RUNS ?= 10000000
FUZZ_LONG_SECONDS ?= 1800
fuzz-long: deps $(FUZZ_BINS)
	@FUZZ_RUNS=$(FUZZ_LONG_RUNS) sh tests/fuzz/run.sh $(FUZZ_LONG_SECONDS) $(FUZZ_BINS)

# The binary seeds the codecs make (tests/fuzz/mkseeds.c), into tests/fuzz/corpus/.
$(BUILD)/tests/mkseeds: LDLIBS = -lcmocka $(sort $(ALL_LAYER_LIBS)) -lpthread
$(BUILD)/tests/mkseeds: $(BUILD)/obj/tests/fuzz/mkseeds.o $(SUPPORT_OBJS) $(TEST_ARCHIVES)
	@mkdir -p $(dir $@)
	$(call cmd,ld)
fuzz-seeds: $(BUILD)/tests/mkseeds
	$(Q)$(BUILD)/tests/mkseeds tests/fuzz/corpus

# ---- install, the shared library, Debian packages (docs/install.md) ----
#   make install      the programs, libqpace.so, its headers and qpace.pc, the data, the man
#                     pages built in $(BUILD)/man, the systemd unit and an example config,
#                     under DESTDIR + PREFIX (default /usr/local); GNU directory variables
#   make uninstall    removes exactly what install placed (the same variables)
#   make lib          libqpace.so (the QP API, qpace/qp.h) and qpace.pc in $(BUILD)/lib
#   make test-install install into a temporary DESTDIR: the list docs/install.md gives, a
#                     program built against it with pkg-config alone, the exported symbols,
#                     the unit (systemd-analyze verify), uninstall (tests/install/run.sh)
#   make deb          the Debian packages, built from a copy of the tree (build/deb/)
#   make test-deb     build, install, run, purge them (root; tests/install/deb.sh; in
#                     make test)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATAROOTDIR ?= $(PREFIX)/share
DATADIR ?= $(DATAROOTDIR)
MANDIR ?= $(DATAROOTDIR)/man
SYSCONFDIR ?= $(PREFIX)/etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL ?= install

# The release, and libqpace's own version: SONAME libqpace.so.MAJOR; MAJOR goes up with
# any change that breaks a program built before (docs/install.md#versioning).
LIBQPACE_MAJOR := 0
LIBQPACE_VERSION := $(LIBQPACE_MAJOR).1.0
LIBQPACE_SONAME := libqpace.so.$(LIBQPACE_MAJOR)
LIBQPACE_SO := $(BUILD)/lib/libqpace.so.$(LIBQPACE_VERSION)

# What install places: the product programs (not the micro-benchmarks or test programs);
# the public headers of the QP API, qpace/qp.h and what it includes; qpace-bench's CDFs;
# qpace-switch's example topologies.
INSTALL_PROGRAMS := qpace-switch qpaced qpacectl qpace-bench
INSTALL_HEADERS := gate.h qp.h qp_wire.h rate.h ratetable.h time.h
INSTALL_CDFS := $(notdir $(wildcard sim/cdf/*.cdf))
INSTALL_EXAMPLES := $(notdir $(wildcard switchsim/examples/*.topo))

# Directories built into files: the unit and qpace.pc (dirs.stamp), qpace-bench's CDF
# directory (datadir.stamp). A stamp changes, and what depends on it is made again, only
# when what it holds does.
$(BUILD)/dirs.stamp: STAMP = $(BINDIR) $(LIBDIR) $(INCLUDEDIR) $(SYSCONFDIR) $(QPACE_VERSION)
$(BUILD)/datadir.stamp: STAMP = $(DATADIR)
$(BUILD)/dirs.stamp $(BUILD)/datadir.stamp: FORCE
	@mkdir -p $(dir $@)
	$(Q)echo '$(STAMP)' | cmp -s - $@ || echo '$(STAMP)' > $@
FORCE:
$(BUILD)/obj/bench/netrun_cmd.o $(BUILD)/obj/bench/repro_mix.o: $(BUILD)/datadir.stamp
$(BUILD)/obj/bench/netrun_cmd.o $(BUILD)/obj/bench/repro_mix.o: \
	CFLAGS += -DQPACE_CDF_DIR='"$(DATADIR)/qpace/cdf"'

SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	-e 's|@VERSION@|$(QPACE_VERSION)|g'
quiet_cmd_subst = GEN     $@
      cmd_subst = $(SUBST) $< > $@.tmp && mv $@.tmp $@
$(BUILD)/dist/%: dist/%.in $(BUILD)/dirs.stamp
	@mkdir -p $(dir $@)
	$(call cmd,subst)

# libqpace.so: the verbs layer and the lib objects it needs, compiled again with -fPIC
# (the archives are not), linked with a version script that exports the API the installed
# headers declare and hides the rest.
PIC_VERBS_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(call layer_srcs,verbs))
PIC_LIB_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(call layer_srcs,lib))
$(BUILD)/pic/%.o: EXTRA_CFLAGS = -fPIC
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(call cmd,cc)
$(BUILD)/pic/libqpace-lib.a: $(PIC_LIB_OBJS)
	$(call cmd,ar)
LIBQPACE_LDFLAGS := -shared -Wl,-soname,$(LIBQPACE_SONAME) \
	-Wl,--version-script=dist/libqpace.map $(if $(SAN),,-Wl,--no-undefined)
quiet_cmd_so = LD      $@
      cmd_so = $(CC) $(LDFLAGS) $(LIBQPACE_LDFLAGS) $(PIC_VERBS_OBJS) \
	$(BUILD)/pic/libqpace-lib.a $(sort $(verbs.libs) $(lib.libs)) -o $@
$(LIBQPACE_SO): $(PIC_VERBS_OBJS) $(BUILD)/pic/libqpace-lib.a dist/libqpace.map
	@mkdir -p $(dir $@)
	$(call cmd,so)
$(BUILD)/lib/$(LIBQPACE_SONAME) $(BUILD)/lib/libqpace.so: $(LIBQPACE_SO)
	$(Q)ln -sf $(notdir $<) $@
lib: $(BUILD)/lib/$(LIBQPACE_SONAME) $(BUILD)/lib/libqpace.so $(BUILD)/dist/qpace.pc

# Install. The example config is placed only where none is (an edited one stays), and
# uninstall removes it only while it is still the example.
install: install-build
	$(INSTALL) -d $(addprefix $(DESTDIR),$(BINDIR) $(LIBDIR) $(PKGCONFIGDIR) \
		$(INCLUDEDIR)/qpace $(DATADIR)/qpace/cdf $(DATADIR)/qpace/examples \
		$(SYSTEMDUNITDIR) $(SYSCONFDIR)/qpace)
	$(INSTALL) -m 755 $(INSTALL_PROGRAMS:%=$(BUILD)/bin/%) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 644 $(LIBQPACE_SO) $(DESTDIR)$(LIBDIR)
	ln -sf $(notdir $(LIBQPACE_SO)) $(DESTDIR)$(LIBDIR)/$(LIBQPACE_SONAME)
	ln -sf $(LIBQPACE_SONAME) $(DESTDIR)$(LIBDIR)/libqpace.so
	$(INSTALL) -m 644 $(BUILD)/dist/qpace.pc $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 $(INSTALL_HEADERS:%=include/qpace/%) $(DESTDIR)$(INCLUDEDIR)/qpace
	$(INSTALL) -m 644 $(INSTALL_CDFS:%=sim/cdf/%) $(DESTDIR)$(DATADIR)/qpace/cdf
	$(INSTALL) -m 644 $(INSTALL_EXAMPLES:%=switchsim/examples/%) \
		$(DESTDIR)$(DATADIR)/qpace/examples
	$(INSTALL) -m 644 $(BUILD)/dist/qpaced.service $(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -D -m 644 -t $(DESTDIR)$(MANDIR)/man1 $(filter %.1,$(MAN_PAGES))
	$(INSTALL) -D -m 644 -t $(DESTDIR)$(MANDIR)/man5 $(filter %.5,$(MAN_PAGES))
	@c=$(DESTDIR)$(SYSCONFDIR)/qpace/qpaced.conf; \
	if [ -e "$$c" ] && ! cmp -s dist/qpaced.conf "$$c"; then \
		echo "install: $$c is there and differs from dist/qpaced.conf: left as it is"; \
	else echo "$(INSTALL) -m 644 dist/qpaced.conf $$c"; \
		$(INSTALL) -m 644 dist/qpaced.conf "$$c"; fi
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then \
		echo ldconfig; ldconfig; fi

uninstall:
	rm -f $(INSTALL_PROGRAMS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(DESTDIR)$(LIBDIR)/libqpace.so $(DESTDIR)$(LIBDIR)/$(LIBQPACE_SONAME) \
		$(DESTDIR)$(LIBDIR)/$(notdir $(LIBQPACE_SO)) $(DESTDIR)$(PKGCONFIGDIR)/qpace.pc
	rm -f $(INSTALL_HEADERS:%=$(DESTDIR)$(INCLUDEDIR)/qpace/%)
	rm -f $(INSTALL_CDFS:%=$(DESTDIR)$(DATADIR)/qpace/cdf/%)
	rm -f $(INSTALL_EXAMPLES:%=$(DESTDIR)$(DATADIR)/qpace/examples/%)
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/qpaced.service
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(filter %.5,$(MAN_PAGES))))
	@c=$(DESTDIR)$(SYSCONFDIR)/qpace/qpaced.conf; \
	if [ -e "$$c" ] && ! cmp -s dist/qpaced.conf "$$c"; then \
		echo "uninstall: $$c differs from dist/qpaced.conf (edited): left as it is"; \
	else rm -f "$$c"; fi
	@for d in $(INCLUDEDIR)/qpace $(DATADIR)/qpace/cdf $(DATADIR)/qpace/examples \
		$(DATADIR)/qpace $(SYSCONFDIR)/qpace; do \
		rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then \
		echo ldconfig; ldconfig; fi

# What install places, built (the Debian build's step)
install-build: $(INSTALL_PROGRAMS:%=$(BUILD)/bin/%) lib man $(BUILD)/dist/qpaced.service

test-install: install-build
	@BUILD=$(BUILD) BINDIR='$(BINDIR)' LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' \
		DATADIR='$(DATADIR)' MANDIR='$(MANDIR)' SYSCONFDIR='$(SYSCONFDIR)' \
		SYSTEMDUNITDIR='$(SYSTEMDUNITDIR)' PKGCONFIGDIR='$(PKGCONFIGDIR)' \
		QPACE_VERSION=$(QPACE_VERSION) LIBQPACE_SONAME=$(LIBQPACE_SONAME) \
		sh tests/install/run.sh

deb:
	@sh scripts/deb.sh

test-deb: deb
	@sh tests/install/deb.sh build/deb

.PHONY: install install-build uninstall lib test-install deb test-deb FORCE
-include $(PIC_VERBS_OBJS:.o=.d) $(PIC_LIB_OBJS:.o=.d)

clean:
	$(Q)rm -rf build

-include $(foreach l,$(LAYERS),$($(l).objs:.o=.d)) $(SUPPORT_OBJS:.o=.d) \
	$(BUILD)/obj/bench/ns3/incast.d $(BUILD)/obj/bench/ns3/ns3_opts.d \
	$(PROG_SRCS:%.c=$(BUILD)/obj/%.d) $(FUZZ_OBJS:.o=.d) \
	$(TEST_BINS:$(BUILD)/tests/%=$(BUILD)/obj/tests/unit/%.d)

# Keep objects of tests between runs (they are not intermediate files to delete).
.SECONDARY:
