# passhost - build, run, test, install.
#
#   make            build build/bin/passhost, build/lib/libpasshost.so, build/plugins/*.so,
#                   build/lib/libpasshost-pipeline.so (the pipeline as a C function,
#                   passhost/pipeline.h; python/passhost is its Python module)
#   make run        optimize the bundled CNN with configs/optimize.ini and print the report
#   make test       build a sanitized tree (ASan + UBSan) in build/san and run every test
#                   (and the plain tree build/, whose library the Python test loads)
#   make test-ort   run original and rewritten bundled models in ONNX Runtime and compare;
#                   convert_opset's adapters on small models (scripts/opset_ort_cases.py)
#   make test-zoo   the real-model table against ONNX Runtime's basic level (bench/zoo.py),
#                   each model converted to opsets 11 and 17 (scripts/opset_zoo_check.sh),
#                   then the fp16 profile on the same models in ONNX Runtime (bench/fp16.py)
#   make test-conformance  the ONNX backend conformance suite (libonnx-testdata): round
#                   trip, evaluator, default stages and shape inference on every model
#                   (tests/conformance/run_conformance.c; prints one table of counts)
#   make install    PREFIX=/usr/local: binary, libraries, headers, plugins, passhost.pc,
#                   the man page passhost(1), the docs (share/doc/passhost) and the
#                   Python module (lib/python3/dist-packages/passhost: found by Debian's
#                   python3 for PREFIX=/usr, else see docs/embedding.md)
#   make bench      print load/pass/save times and peak memory (scripts/bench.sh)
#   make bench-eval the evaluator's time beside ONNX Runtime's (scripts/bench_eval.sh)
#   make bench-off-passes  every off-by-default pass on a model with its pattern: nodes,
#                   rewrites, ONNX Runtime difference (bench/off_passes.py; fails if one
#                   does not fire or an exact/fp one changes the outputs)
#   make fuzz       FUZZ_SECONDS=N: build the libFuzzer targets with clang, run each N s (fuzz/fuzz.mk)
#   make test-rules every rule of every pattern pass on generated graphs (the rule checker,
#                   passhost --check-rules; RULE_INSTANCES a rule, seed RULE_SEED): fails on
#                   a failing rule or a rule without instances; reproducers in build/rulecheck
#   make check-layers  the folders of sdk/src and host/ call and include only downward
#                   (the order: scripts/layers.txt; make test runs it too, tests/layers.sh)
#   make clean
#
# BUILD selects the output tree; SAN=1 adds the sanitizers.

BUILD   ?= build
PREFIX  ?= /usr/local
# The one version of passhost: the program's --version, passhost.pc, the
# man page and the embedding library's ph_pipeline_version all say it.
VERSION := 0.1.0
# The shared libraries follow the plugin ABI (sdk/include/passhost/plugin.h):
# the real file libpasshost.so.MAJOR.MINOR, its soname link libpasshost.so.MAJOR
# and the link for linking, libpasshost.so (the same for libpasshost-pipeline).
ABI_MAJOR := $(shell sed -n 's/^\#define PH_ABI_MAJOR \([0-9]*\).*/\1/p' sdk/include/passhost/plugin.h)
ABI_MINOR := $(shell sed -n 's/^\#define PH_ABI_MINOR \([0-9]*\).*/\1/p' sdk/include/passhost/plugin.h)
SAN     ?= 0
ONNX_PROTO ?= /usr/include/onnx/onnx.proto

CC      ?= cc
OPT     ?= -O2
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra -Wshadow -Wno-unused-parameter -fPIC
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
CFLAGS_ALL := $(CFLAGS_BASE) $(SANFLAGS) $(CFLAGS) -Isdk/include -I$(BUILD)/gen \
              -DPASSHOST_VERSION='"$(VERSION)"'
# The passhost program allocates with tcmalloc (libtcmalloc-minimal4): on a
# million-node model load, passes and save take a quarter less time and
# memory than with glibc's malloc.  The library itself leaves the choice to
# whoever links it; sanitized builds keep the sanitizers' allocator.
ifeq ($(SAN),1)
HOST_MALLOC :=
else
HOST_MALLOC := -l:libtcmalloc_minimal.so.4
endif
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)

# Missing Debian packages are installed before anything is built (also
# under `make -j`): scripts/deps.sh runs while the Makefile is read.
ifeq ($(filter clean,$(MAKECMDGOALS)),)
DEPS_OK := $(shell scripts/deps.sh --check >/dev/null 2>&1 && echo yes)
ifneq ($(DEPS_OK),yes)
$(info passhost: installing missing build dependencies (scripts/deps.sh))
DEPS_STATUS := $(shell scripts/deps.sh >&2 && echo ok)
ifneq ($(DEPS_STATUS),ok)
$(error scripts/deps.sh failed: install the packages it names, then run make again)
endif
endif
endif

SDK_SRC    := $(sort $(wildcard sdk/src/*/*.c))
SDK_OBJ    := $(patsubst sdk/src/%.c,$(BUILD)/obj/sdk/%.o,$(SDK_SRC)) $(BUILD)/obj/gen/onnx.pb-c.o \
              $(BUILD)/obj/gen/op_schema_table.o
HOST_SRC   := $(filter-out host/cli/main.c,$(sort $(wildcard host/*/*.c)))
HOST_OBJ   := $(patsubst host/%.c,$(BUILD)/obj/host/%.o,$(HOST_SRC))
PLUGINS    := $(notdir $(patsubst %/,%,$(sort $(dir $(wildcard plugins/*/*.c)))))
PLUGIN_SO  := $(patsubst %,$(BUILD)/plugins/%.so,$(PLUGINS))
# The default order of each stage, read from beside the passes (host/config/order.h)
PIPELINE_FILE := $(BUILD)/plugins/pipeline.txt
TEST_PLUGIN_SRC := $(sort $(wildcard tests/plugins/*.c))
TEST_PLUGIN_SO  := $(patsubst tests/plugins/%.c,$(BUILD)/test-plugins/%.so,$(TEST_PLUGIN_SRC))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
TEST_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_SUPPORT := $(sort $(wildcard tests/support/*.c))
TEST_TOOL_SO := $(BUILD)/test-tools/faultshim.so
HEADERS    := $(wildcard sdk/include/passhost/*.h)
# The embedding API's header: the host's, not the plugin SDK's
HOST_API_HEADERS := $(wildcard host/embed/include/passhost/*.h)
PYTHON_PKG := $(wildcard python/passhost/*.py)
DOCS       := $(wildcard docs/*.md) docs/report.schema.json

LIB        := $(BUILD)/lib/libpasshost.so
LIB_REAL   := $(LIB).$(ABI_MAJOR).$(ABI_MINOR)
HOSTLIB    := $(BUILD)/lib/libphhost.a
PIPELINE_LIB := $(BUILD)/lib/libpasshost-pipeline.so
PIPELINE_LIB_REAL := $(PIPELINE_LIB).$(ABI_MAJOR).$(ABI_MINOR)
BIN        := $(BUILD)/bin/passhost
GEN_H      := $(BUILD)/gen/onnx/onnx.pb-c.h

.PHONY: all run test test-build test-ort test-zoo test-conformance test-rules install clean bench bench-eval bench-off-passes check-layers
.DEFAULT_GOAL := all

all: $(BIN) $(LIB) $(PIPELINE_LIB) $(PLUGIN_SO) $(PIPELINE_FILE)

# --- generated protobuf-c code from the installed ONNX schema -------------
$(GEN_H): $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -I$(dir $(ONNX_PROTO)).. onnx/$(notdir $(ONNX_PROTO))
$(BUILD)/gen/onnx/onnx.pb-c.c: $(GEN_H)

$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -c $< -o $@

# --- the operator schemas, generated from libonnx ---------------------------
# A host tool (no sanitizers, no fuzzing flags) built and run at build time,
# as protoc-c is: it prints every schema libonnx holds as a C table
# (sdk/src/schema/schema.c serves it as passhost/schema.h).
CXX ?= g++
ONNX_CXXFLAGS := -std=c++17 -O1 -DONNX_NAMESPACE=onnx -DONNX_ML=1
$(BUILD)/gen/gen_schemas: sdk/src/schema/gen_schemas.cc
	@mkdir -p $(dir $@)
	$(CXX) $(ONNX_CXXFLAGS) -o $@ $< -lonnx -lonnx_proto -lprotobuf

$(BUILD)/gen/op_schema_table.c: $(BUILD)/gen/gen_schemas
	$< > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/op_schema_table.o: $(BUILD)/gen/op_schema_table.c sdk/src/schema/table.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isdk/src -fvisibility=hidden -c $< -o $@

# --- the SDK library --------------------------------------------------------
$(BUILD)/obj/sdk/%.o: sdk/src/%.c $(HEADERS) $(wildcard sdk/src/*.h sdk/src/*/*.h) $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isdk/src -fvisibility=hidden -c $< -o $@

$(LIB_REAL): $(SDK_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libpasshost.so.$(ABI_MAJOR) $(LDFLAGS_ALL) -o $@ $^ -lprotobuf-c -ldl -lm

# the usual chain: libpasshost.so -> libpasshost.so.1 -> libpasshost.so.1.1
$(LIB): $(LIB_REAL)
	ln -sf $(notdir $(LIB_REAL)) $(BUILD)/lib/libpasshost.so.$(ABI_MAJOR)
	ln -sf libpasshost.so.$(ABI_MAJOR) $@

# --- the host program ---------------------------------------------------------
$(BUILD)/obj/host/%.o: host/%.c $(HEADERS) $(HOST_API_HEADERS) $(wildcard host/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ihost -Ihost/embed/include -c $< -o $@

$(HOSTLIB): $(HOST_OBJ)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

$(BIN): $(BUILD)/obj/host/cli/main.o $(HOSTLIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(HOSTLIB) -L$(BUILD)/lib -lpasshost -linih -ldl -lm $(HOST_MALLOC) \
	  -Wl,-rpath,'$$ORIGIN/../lib'

# The embedding library: the host's objects (all of the program but main.o)
# as one shared library that exports only passhost/pipeline.h's functions
# (host/embed/pipeline.map), beside libpasshost.so.
$(PIPELINE_LIB_REAL): $(HOST_OBJ) $(LIB) host/embed/pipeline.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libpasshost-pipeline.so.$(ABI_MAJOR) -Wl,--version-script=host/embed/pipeline.map \
	  $(LDFLAGS_ALL) -o $@ $(HOST_OBJ) -L$(BUILD)/lib -lpasshost -linih -ldl -lm -Wl,-rpath,'$$ORIGIN'

$(PIPELINE_LIB): $(PIPELINE_LIB_REAL)
	ln -sf $(notdir $(PIPELINE_LIB_REAL)) $(BUILD)/lib/libpasshost-pipeline.so.$(ABI_MAJOR)
	ln -sf libpasshost-pipeline.so.$(ABI_MAJOR) $@

# --- plugins: one folder, one .so ------------------------------------------------
.SECONDEXPANSION:
$(BUILD)/plugins/%.so: $$(wildcard plugins/%/*.c) $$(wildcard plugins/%/*.h) $(HEADERS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $(filter %.c,$^) -L$(BUILD)/lib -lpasshost -lm \
	  -Wl,-rpath,'$$ORIGIN/../lib:$$ORIGIN/../..'

$(PIPELINE_FILE): plugins/pipeline.txt
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/test-plugins/%.so: tests/plugins/%.c $(HEADERS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isdk/src -shared -o $@ $< -L$(BUILD)/lib -lpasshost -lm -Wl,-rpath,'$$ORIGIN/../lib'

# --- tests (Check) ----------------------------------------------------------------
# The test support code is compiled once and linked into every test.
TEST_CFLAGS = $(CFLAGS_ALL) -Itests/support -Ihost -DPH_SOURCE_DIR='"$(CURDIR)"' \
	  -DPH_BUILD_DIR='"$(abspath $(BUILD))"'
TEST_SUPPORT_OBJ := $(patsubst tests/support/%.c,$(BUILD)/obj/tests/support/%.o,$(TEST_SUPPORT))
$(BUILD)/obj/tests/support/%.o: tests/support/%.c $(wildcard tests/support/*.h) $(HEADERS) $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -c $< -o $@

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT_OBJ) $(wildcard tests/support/*.h) $(HOSTLIB) $(LIB) $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_SUPPORT_OBJ) $(HOSTLIB) \
	  -L$(BUILD)/lib -lpasshost -linih -ldl -lm $(shell pkg-config --libs check) \
	  -Wl,-rpath,'$(abspath $(BUILD))/lib' $(LDFLAGS_ALL)

# The embedding API's test links the shared library itself (not HOSTLIB),
# with the support code that needs no host symbols.
PIPELINE_TEST_SUPPORT := $(BUILD)/obj/tests/support/clirun.o $(BUILD)/obj/tests/support/tmpdir.o
$(BUILD)/tests/test_pipeline_api: tests/test_pipeline_api.c $(PIPELINE_TEST_SUPPORT) \
	  $(wildcard tests/support/*.h) $(HOST_API_HEADERS) $(PIPELINE_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Ihost/embed/include -o $@ $< $(PIPELINE_TEST_SUPPORT) \
	  -L$(BUILD)/lib -lpasshost-pipeline -lpasshost $(shell pkg-config --libs check) \
	  -Wl,-rpath,'$(abspath $(BUILD))/lib' $(LDFLAGS_ALL)

# LD_PRELOAD libraries of the tests (disk faults): no sanitizers of their own
$(BUILD)/test-tools/%.so: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -shared -o $@ $< -ldl

test-build: all $(TEST_PLUGIN_SO) $(TEST_BIN) $(TEST_TOOL_SO)

# `make test` runs the whole suite on a sanitized build in build/san; the
# plain build in build/ is brought up to date too, for tests/python_api.sh
# (ctypes loads the library into python3, which has no sanitizer runtime).
# Both trees build TEST_JOBS files at a time unless the command line chose
# (make -jN test), and the test programs run TEST_JOBS at a time (default:
# the number of processors).
TEST_JOBS ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
test:
	$(MAKE) --no-print-directory $(if $(findstring -j,$(MAKEFLAGS)),,-j$(TEST_JOBS)) BUILD=build/san SAN=1 test-build
	$(MAKE) --no-print-directory $(if $(findstring -j,$(MAKEFLAGS)),,-j$(TEST_JOBS)) BUILD=build all
	TEST_JOBS=$(TEST_JOBS) scripts/run_tests.sh build/san

# The rule checker on every pattern pass (docs/sdk.md, "Checking rules").
RULE_INSTANCES ?= 60
RULE_SEED ?= 1
test-rules: all
	scripts/check_rules.sh $(BUILD) $(RULE_INSTANCES) $(RULE_SEED)

# The layers of sdk/src and host/ (scripts/layers.txt), over the objects of
# $(BUILD) and the sources.
check-layers: all
	scripts/check_layers.py $(BUILD)

# Cross-check with ONNX Runtime (onnxruntime-node from npm): every bundled
# model, original vs rewritten, on the same inputs.
test-ort: all
	scripts/test_ort.sh $(BUILD)
	/usr/bin/python3 scripts/opset_ort_cases.py $(BUILD)

# The real-model table (bench/zoo.py): torchvision CNNs, a ViT and BERT-style
# encoders exported by torch; fails when passhost's default stages leave more
# nodes than ONNX Runtime's basic level, change outputs beyond 1e-4 in ORT,
# or need more than 6 rounds.  Needs python3-torch (skipped without it).
test-zoo: all
	@if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then \
	  /usr/bin/python3 bench/gen_zoo.py $(BUILD)/zoo-models && \
	  /usr/bin/python3 bench/zoo.py $(BUILD) $(BUILD)/zoo-models && \
	  scripts/opset_zoo_check.sh $(BUILD) $(BUILD)/zoo-models && \
	  /usr/bin/python3 bench/fp16.py $(BUILD) $(BUILD)/zoo-models; \
	else echo "test-zoo: skipped (python3-torch / python3-torchvision not installed)"; fi

# The ONNX backend conformance suite (Debian's libonnx-testdata, installed by
# scripts/deps.sh): every model's no-pass round trip, the evaluator against
# the expected outputs, the default stages and the evaluator again, shape
# inference against the expected dims, whether --verify passes with the
# defaults, and the evaluator's float64 reference mode.  One table
# of counts; fails on any failure not listed in tests/conformance/disputed.txt.
CONFORMANCE_DATA ?= /usr/share/libonnx-testdata/data
CONFORMANCE_JOBS ?= 2
CONFORMANCE_BIN  := $(BUILD)/conformance/run_conformance
$(CONFORMANCE_BIN): tests/conformance/run_conformance.c $(BUILD)/obj/gen/onnx.pb-c.o $(PIPELINE_LIB) $(LIB) \
	  $(HEADERS) $(HOST_API_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ihost/embed/include -o $@ $< $(BUILD)/obj/gen/onnx.pb-c.o \
	  -L$(BUILD)/lib -lpasshost-pipeline -lpasshost -lprotobuf-c -lm \
	  -Wl,-rpath,'$(abspath $(BUILD))/lib' $(LDFLAGS_ALL)

test-conformance: all $(CONFORMANCE_BIN)
	$(CONFORMANCE_BIN) -j $(CONFORMANCE_JOBS) --disputed tests/conformance/disputed.txt \
	  --list $(BUILD)/conformance/results.tsv $(CONFORMANCE_DATA)

bench: all
	scripts/bench.sh

# The evaluator against ONNX Runtime on the bundled models and a generated
# ResNet-50 (torchvision when installed, else the same net built in torch;
# needs python3-torch, else the ResNet-50 row is skipped).
bench-eval: all
	scripts/bench_eval.sh

# Every pass that is off by default, switched on alone on top of the defaults,
# on a small model built with its pattern (torch / onnx.helper, random weights);
# models and outputs in $(BUILD)/off_passes.
bench-off-passes: all
	/usr/bin/python3 bench/off_passes.py --build $(BUILD) $(BUILD)/off_passes

run: all
	$(BIN) configs/optimize.ini

# --- install ----------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/passhost/plugins \
	  $(DESTDIR)$(PREFIX)/include/passhost $(DESTDIR)$(PREFIX)/lib/pkgconfig
	for l in libpasshost libpasshost-pipeline; do \
	  install -m 755 $(BUILD)/lib/$$l.so.$(ABI_MAJOR).$(ABI_MINOR) $(DESTDIR)$(PREFIX)/lib/ && \
	  ln -sf $$l.so.$(ABI_MAJOR).$(ABI_MINOR) $(DESTDIR)$(PREFIX)/lib/$$l.so.$(ABI_MAJOR) && \
	  ln -sf $$l.so.$(ABI_MAJOR) $(DESTDIR)$(PREFIX)/lib/$$l.so || exit 1; \
	done
	install -m 644 $(HEADERS) $(HOST_API_HEADERS) $(DESTDIR)$(PREFIX)/include/passhost/
	install -d $(DESTDIR)$(PREFIX)/lib/python3/dist-packages/passhost
	install -m 644 $(PYTHON_PKG) $(DESTDIR)$(PREFIX)/lib/python3/dist-packages/passhost/
	$(if $(PLUGIN_SO),install -m 755 $(PLUGIN_SO) $(DESTDIR)$(PREFIX)/lib/passhost/plugins/)
	install -m 644 $(PIPELINE_FILE) $(DESTDIR)$(PREFIX)/lib/passhost/plugins/pipeline.txt
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/passhost
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' passhost.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/passhost.pc
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/passhost \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	sed -e 's|"passhost [0-9.]*"|"passhost $(VERSION)"|' docs/passhost.1 \
	  > $(DESTDIR)$(PREFIX)/share/man/man1/passhost.1
	install -m 644 completion/passhost.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/passhost
	install -m 644 README.md $(DOCS) $(DESTDIR)$(PREFIX)/share/doc/passhost/

clean:
	rm -rf build

include fuzz/fuzz.mk
