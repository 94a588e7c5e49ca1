# fuzz/fuzz.mk - the libFuzzer targets (included by the Makefile).
#
#   make fuzz FUZZ_SECONDS=N   build the fuzzers, run each for N seconds (60),
#                              fail on the first crash, leak or hang
#   make fuzz FUZZ_RUNS=N FUZZ_SEED=S
#                              repeatable: exactly N inputs each from seed S,
#                              from the repository's seeds only (CI)
#   make fuzz-build            build them only: build/fuzz/bin/fuzz_NAME
#
# One fuzzer per fuzz/NAME.c (load, config, pipeline, plugin_faults),
# seeded from fuzz/corpus/NAME (and fuzz/NAME.dict when there is one;
# fuzz/NAME.runs caps a repeatable run's inputs for a fuzzer whose inputs
# are whole runs of the program).  The SDK, the host
# objects and every pass plugin are built with clang in build/fuzz with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# instrumentation, so the fuzzers see coverage in the plugins too.  clang and
# libFuzzer (Debian: clang, libclang-rt-14-dev) are installed by
# `scripts/deps.sh --fuzz`.  fuzz/run.sh says how to run one by hand, and
# docs/reliability.md what the fuzzers check.

FUZZ_BUILD   ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?=
FUZZ_SEED    ?=
FUZZ_CC      ?= clang
FUZZ_NAMES   := $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/*.c)))
FUZZ_SUPPORT := $(sort $(wildcard fuzz/support/*.c))
FUZZ_BINS    := $(patsubst %,$(BUILD)/bin/fuzz_%,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-build fuzz-bins

fuzz-build:
	scripts/deps.sh --fuzz
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) SAN=1 \
	  CFLAGS=-fsanitize=fuzzer-no-link fuzz-bins

fuzz: fuzz-build
	FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SEED=$(FUZZ_SEED) fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Inside the build/fuzz tree (BUILD, CC and the flags set by fuzz-build).
# fuzz_plugin_faults runs the program itself, with the test passes it
# makes misbehave.
FUZZ_TEST_PLUGINS := $(BUILD)/test-plugins/tp_fault.so $(BUILD)/test-plugins/tp_fault_victim.so
fuzz-bins: $(LIB) $(PLUGIN_SO) $(BIN) $(FUZZ_TEST_PLUGINS) $(FUZZ_BINS)

$(BUILD)/bin/fuzz_%: fuzz/%.c $(FUZZ_SUPPORT) $(wildcard fuzz/support/*.h) $(HOSTLIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -Isdk/include -Ihost -o $@ $< \
	  $(FUZZ_SUPPORT) $(HOSTLIB) -L$(BUILD)/lib -lpasshost -linih -ldl -lm \
	  -Wl,-rpath,'$$ORIGIN/../lib'

# tests/test_fuzz_corpus.c compiles the fuzzers in: rebuild it when they change.
$(BUILD)/tests/test_fuzz_corpus: $(patsubst %,fuzz/%.c,$(FUZZ_NAMES)) $(FUZZ_SUPPORT) \
  $(wildcard fuzz/support/*.h)
