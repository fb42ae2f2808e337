# qpace build. `make test` and `make demo` install what they need (scripts/deps.sh).
#
#   make            build programs into build/bin
#   make test       deps, build, unit tests, the same again under ASan+UBSan, the
#                   integration tests (namespaces; root only, skipped otherwise), and a
#                   bounded run of every fuzz target
#   make bench-cc   nanoseconds per event for each congestion-control algorithm
#   make demo       one incast per algorithm on the embedded switch (results/demo/)
#   make fuzz       every libFuzzer target in tests/fuzz (clang), FUZZ_SECONDS each
#                   (default 20; `make test` runs them for 10 s each)
#   make test-rxe   the Soft-RoCE scenarios: kernel rxe in QEMU guests (tests/vm/)
#   make clean
#
# Layout convention: a file named *_main.c is a program (foo_bar_main.c -> bin/foo-bar);
# every other .c under lib/ agent/ switchsim/ verbs/ bench/ goes into libqpace.a, so a
# new source file needs no Makefile edit. tests/unit/test_*.c are cmocka binaries, each
# linked with tests/support/*.c.

BUILD ?= build
SAN ?=
CC ?= cc

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-missing-field-initializers
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 $(WARN) -D_GNU_SOURCE -Iinclude -Itests/support -MMD -MP
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
LDLIBS := -lev -libverbs -lrdmacm -lpcap -lz -lm -lpthread

SRC_DIRS := lib agent agent/cc agent/credit switchsim verbs bench
ALL_SRCS := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c))
MAIN_SRCS := $(filter %_main.c,$(ALL_SRCS))
LIB_SRCS := $(filter-out %_main.c,$(ALL_SRCS))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
PROGS := $(foreach m,$(MAIN_SRCS),$(BUILD)/bin/$(subst _,-,$(notdir $(m:_main.c=))))

TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
SUPPORT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/support/*.c))

LIB := $(BUILD)/libqpace.a

.PHONY: all deps test unit check-unit integration bench-cc demo clean fuzz test-rxe
all: $(PROGS)

deps:
	@sh scripts/deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Program name from its main file: switchsim/qpace_switch_main.c -> qpace-switch.
define prog_rule
$(BUILD)/bin/$(subst _,-,$(notdir $(1:_main.c=))): $(BUILD)/obj/$(1:.c=.o) $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@
endef
$(foreach m,$(MAIN_SRCS),$(eval $(call prog_rule,$(m))))

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(SUPPORT_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lcmocka $(LDLIBS) -o $@

unit: $(TEST_BINS) $(PROGS)

# Run every unit test binary; the summary line counts binaries.
check-unit: unit
	@sh tests/run-unit.sh $(TEST_BINS)

test: deps
	$(MAKE) -j2 check-unit
	$(MAKE) -j2 BUILD=build/san SAN=1 check-unit
	$(MAKE) integration
	$(MAKE) -j2 fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

integration: all
	@sh tests/run-integration.sh $(BUILD)

test-rxe: all
	@sh tests/vm/test-rxe.sh

bench-cc: $(BUILD)/bin/bench-cc
	$(BUILD)/bin/bench-cc

# The README's main command: packages (gnuplot-nox for the plots), build, one incast per
# algorithm on the embedded switch; results in results/demo/ (bench/demo.sh).
demo:
	@sh scripts/deps.sh gnuplot-nox
	$(MAKE) -j2 all
	@sh bench/demo.sh $(BUILD)

# Each tests/fuzz/fuzz_NAME.c is a libFuzzer target, linked with the whole library built
# by clang with coverage, ASan and UBSan (build/fuzz/libqpace-fuzz.a). `make test` runs
# each for FUZZ_SECONDS; tests/fuzz/NAME.dict is used when present.
FUZZ_SECONDS ?= 20
TEST_FUZZ_SECONDS ?= 10
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Wall -Wextra -Werror \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJS := $(LIB_SRCS:%.c=build/fuzz/obj/%.o)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build/fuzz/libqpace-fuzz.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^
build/fuzz/%: tests/fuzz/%.c build/fuzz/libqpace-fuzz.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< build/fuzz/libqpace-fuzz.a $(LDLIBS) -o $@
fuzz: deps $(FUZZ_BINS)
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(SUPPORT_OBJS:.o=.d) $(MAIN_SRCS:%.c=$(BUILD)/obj/%.d) $(FUZZ_OBJS:.o=.d) $(TEST_BINS:$(BUILD)/tests/%=$(BUILD)/obj/tests/unit/%.d)

# Keep objects of tests between runs (they are not intermediate files to delete).
.SECONDARY:
