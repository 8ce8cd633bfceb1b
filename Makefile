# nats-lens: a collectd read-plugin that finds JetStream delivery mistakes.
#   make            build plugin/nats_lens.so
#   make test       unit and integration tests (ends with "N passed, N failed")
#   make mutate     the mutation check: every rule it breaks fails a unit test
#   make deb        the Debian package (packaging/build/*.deb)
#   make eval       the evaluation: coverage and latency per class and
#                   client language, written to results/eval.md
#   make demo       a local nats-server with misconfigured consumers, and
#                   collectd in the foreground showing the findings
VERSION := $(shell cat VERSION)
CC ?= cc
COLLECTD_INC ?= /usr/include/collectd
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation
BASE_CFLAGS := -std=gnu11 -fPIC $(WARN) -DNL_VERSION='"$(VERSION)"'
PLUGIN_CFLAGS := -DHAVE_CONFIG_H -I$(COLLECTD_INC) -I$(COLLECTD_INC)/core \
	-I$(COLLECTD_INC)/core/daemon
LIBS := -lnats -ljson-c -lcrypto -lcrypt -lpthread -lm

BUILD := build
PLUGIN := plugin/nats_lens.so

# SANITIZE=1 builds everything under AddressSanitizer and
# UndefinedBehaviorSanitizer into build/san (so sanitized and plain objects
# never mix), and the tests load that plugin into collectd with libasan
# preloaded (tests/lib.sh); any sanitizer report fails the test.
ifeq ($(SANITIZE),1)
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
BUILD := build/san
PLUGIN := build/san/nats_lens.so
TEST_ENV := NL_BUILD=$(BUILD) NL_PLUGIN=$(abspath $(PLUGIN)) NL_SANITIZE=1 \
	NL_ASAN_LIB=$(shell $(CC) -print-file-name=libasan.so)
endif
# SANITIZE=thread builds the plugin under ThreadSanitizer into build/tsan,
# and the tests load it into collectd with libtsan preloaded; a data race
# or lock-order report fails the test (`make SANITIZE=thread test`, or one
# test: `make SANITIZE=thread NL_ONLY=test_advisory_burst test`).
ifeq ($(SANITIZE),thread)
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
LDSAN := -fsanitize=thread
BUILD := build/tsan
PLUGIN := build/tsan/nats_lens.so
TEST_ENV := NL_BUILD=$(BUILD) NL_PLUGIN=$(abspath $(PLUGIN)) \
	NL_SANITIZE=thread NL_TSAN_LIB=$(shell $(CC) -print-file-name=libtsan.so)
endif

# HARDEN=1 builds with Debian's hardening flags (dpkg-buildflags with
# hardening=+all: stack protector, _FORTIFY_SOURCE, -z relro -z now) into
# build/deb; make deb packages that build.
ifeq ($(HARDEN),1)
DEB_FLAGS := DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
CFLAGS := $(shell $(DEB_FLAGS) CFLAGS) $(shell $(DEB_FLAGS) CPPFLAGS)
LDSAN := $(shell $(DEB_FLAGS) LDFLAGS)
BUILD := build/deb
PLUGIN := build/deb/nats_lens.so
endif

# The plugin's layers, one folder each under plugin/, each depending only on
# the ones below it (docs/architecture.md; `make check-layers` enforces it):
#   plugin/core/   json-c and libc only (libnlcore.a): model/ (JSON to
#                  snapshots, history, clocks, trends), detect/ (the class
#                  registry and its detectors, the audit rules), the engine
#                  at its root, and report/ (events, health, REST views)
#   plugin/jsapi/  the JetStream API: cnats transport, NKey signing, polling
#                  and paging, advisory subscription, queue and thread
#                  (libnljsapi.a)
#   plugin/http/   the REST API and dashboard (linked into the plugin only)
#   plugin/glue/   the collectd glue (nats_lens.c: callbacks and threads,
#                  nl_config.c: configuration, nl_apply.c: values and
#                  notifications)
# Sources include a header of their own folder by its name and one of
# another by its folder ("core/nl_engine.h", "core/model/nl_history.h"),
# with -Iplugin only, so a file cannot reach a layer above its own by
# accident. Nothing links
# libmicrohttpd: nl_http.c opens libmicrohttpd.so.12 with dlopen when an
# instance sets Listen, so a collectd without Listen never maps it or GnuTLS
# (<microhttpd.h> is still needed to build).
CORE_SRC := $(wildcard plugin/core/nl_*.c plugin/core/*/nl_*.c)
CORE_OBJ := $(patsubst plugin/%.c,$(BUILD)/%.o,$(CORE_SRC))
CORE_LIB := $(BUILD)/libnlcore.a
JSAPI_SRC := $(wildcard plugin/jsapi/nl_*.c)
JSAPI_OBJ := $(patsubst plugin/%.c,$(BUILD)/%.o,$(JSAPI_SRC))
JSAPI_LIB := $(BUILD)/libnljsapi.a
HTTP_SRC := $(wildcard plugin/http/nl_*.c)
HTTP_OBJ := $(patsubst plugin/%.c,$(BUILD)/%.o,$(HTTP_SRC))
GLUE_SRC := $(wildcard plugin/glue/*.c)
GLUE_OBJ := $(patsubst plugin/%.c,$(BUILD)/%.o,$(GLUE_SRC))
HEADERS := $(wildcard plugin/*/*.h plugin/core/*/*.h)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRC))
UNIT_LIB_SRC := $(wildcard tests/unit/nl_*.c)
UNIT_LIB_OBJ := $(patsubst tests/unit/%.c,$(BUILD)/unit/%.o,$(UNIT_LIB_SRC))
UNIT_LIB := $(BUILD)/unit/libnltest.a
UNIT_SO := $(BUILD)/unit/libnlunit.so
HARNESS_CHECK := $(BUILD)/unit/check_harness
INJECT := tests/tools/nl-inject

.PHONY: bench all check test test-run unit unit-build integration demo clean format \
	check-format check-layers fuzz fuzz-build mutate

# nats-lens-check, the one-shot audit command (cli/), linked with the same
# core as the plugin. With SANITIZE=1 it is built into build/san and the
# tests find it through NL_CHECK.
CHECK := cli/nats-lens-check
ifeq ($(SANITIZE),1)
CHECK := $(BUILD)/nats-lens-check
TEST_ENV += NL_CHECK=$(abspath $(CHECK))
endif
ifeq ($(HARDEN),1)
CHECK := $(BUILD)/nats-lens-check
endif

all: $(PLUGIN) $(CHECK) $(INJECT)

$(CHECK): $(wildcard cli/*.c) cli/*.h $(HEADERS) $(JSAPI_LIB) $(CORE_LIB)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -Icli -o $@ $(wildcard cli/*.c) \
		$(JSAPI_LIB) $(CORE_LIB) $(LIBS) $(LDSAN)

$(BUILD)/core $(BUILD)/jsapi $(BUILD)/http $(BUILD)/glue:
	mkdir -p $@

$(BUILD)/core/%.o: plugin/core/%.c $(HEADERS) VERSION | $(BUILD)/core
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -c -o $@ $<

$(BUILD)/jsapi/%.o: plugin/jsapi/%.c $(HEADERS) VERSION | $(BUILD)/jsapi
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -c -o $@ $<

$(BUILD)/http/%.o: plugin/http/%.c $(HEADERS) $(BUILD)/nl_dashboard_html.h \
		VERSION | $(BUILD)/http
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -I$(BUILD) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(JSAPI_LIB): $(JSAPI_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/glue/%.o: plugin/glue/%.c $(HEADERS) | $(BUILD)/glue
	$(CC) $(BASE_CFLAGS) $(PLUGIN_CFLAGS) $(CFLAGS) -Iplugin -c -o $@ $<

# The dashboard page, embedded in nl_http.o as a byte array (xxd).
$(BUILD)/nl_dashboard_html.h: plugin/http/nl_dashboard.html | $(BUILD)/http
	xxd -i -n nl_dashboard_html $< | sed 's/^unsigned/static const unsigned/' >$@

$(PLUGIN): $(GLUE_OBJ) $(HTTP_OBJ) $(JSAPI_LIB) $(CORE_LIB)
	$(CC) -shared $(LDSAN) -o $@ $(GLUE_OBJ) $(HTTP_OBJ) \
		$(JSAPI_LIB) $(CORE_LIB) $(LIBS)

# The unit tests cover the core, the request-function parts of jsapi
# (polling, paging, the advisory queue and fetch), the REST routes and the
# listener's basic authentication. Each
# tests/unit/test_*.c is a binary of its own (build/unit/test_*), linked
# with the harness library (tests/unit/nl_*.c: the runner, the fixtures and
# the simulated world); tests/unit/run.sh runs them all.
$(BUILD)/unit:
	mkdir -p $@

$(BUILD)/unit/%.o: tests/unit/%.c tests/unit/*.h $(HEADERS) | $(BUILD)/unit
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -c -o $@ $<

$(UNIT_LIB): $(UNIT_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

# What the tests cover, as one shared library the test binaries load from
# their own folder. A change to a source of the core (as each mutation of
# `make mutate` is) rebuilds that object and this library alone: the
# binaries need no relinking (the library is an order-only prerequisite),
# and a change to a header compiles the tests again.
$(UNIT_SO): $(BUILD)/http/nl_route.o $(BUILD)/http/nl_auth.o $(JSAPI_LIB) \
		$(CORE_LIB) | $(BUILD)/unit
	$(CC) -shared $(LDSAN) -Wl,-soname,$(notdir $@) -o $@ \
		$(BUILD)/http/nl_route.o $(BUILD)/http/nl_auth.o -Wl,--whole-archive \
		$(JSAPI_LIB) $(CORE_LIB) -Wl,--no-whole-archive $(LIBS)

# The harness's own check (tests/integration/test_unit_harness.sh) is a
# test file with tests that crash and hang, built like the others.
$(UNIT_BINS) $(HARNESS_CHECK): $(BUILD)/unit/%: $(BUILD)/unit/%.o $(UNIT_LIB) \
		| $(UNIT_SO)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< $(UNIT_LIB) -L$(BUILD)/unit \
		-lnlunit -Wl,-rpath,'$$ORIGIN' $(LIBS) $(LDSAN)

# The unit test binaries, built and not run (tests/mutate.py runs them).
unit-build: $(UNIT_BINS)

$(INJECT): tests/tools/nl_inject.c plugin/jsapi/nl_nkey.c plugin/jsapi/nl_nkey.h
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Iplugin -o $@.tmp $< \
		plugin/jsapi/nl_nkey.c -lnats -ljson-c -lcrypto -lpthread -lm
	mv $@.tmp $@

BENCH_BIN := $(BUILD)/nl-bench

$(BENCH_BIN): tests/bench/nl_bench.c $(JSAPI_LIB) $(CORE_LIB)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -o $@ $< $(JSAPI_LIB) $(CORE_LIB) \
		$(LIBS) $(LDSAN)

# Measures the poll path at several sizes; writes results/bench.md.
bench: $(PLUGIN) $(BENCH_BIN) $(INJECT)
	bash tests/bench/run_bench.sh

# Every unit test binary, with "unit: N passed, N failed" at the end.
unit: $(UNIT_BINS)
	NL_BUILD=$(BUILD) tests/unit/run.sh tests/fixtures

# The whole suite. On a fresh Debian machine, as root, it first installs
# every package it needs (tests/deps.sh, as make demo does).
test:
	bash tests/deps.sh test
	$(MAKE) test-run

test-run: $(PLUGIN) $(CHECK) $(UNIT_BINS) $(INJECT)
	$(TEST_ENV) tests/run_all.sh

# The quick proof (about 4 minutes): the unit tests and the class tests,
# each class made to happen on a real nats-server and found by real
# collectd (single node and a 3-node cluster).
check: $(PLUGIN) $(CHECK) $(UNIT_BINS) $(INJECT)
	$(TEST_ENV) NL_ONLY=classes tests/run_all.sh

# The mutation check: breaks rules of the core one at a time (a consumer
# skipped, a comparison turned round, a clearing dropped) and fails unless
# a unit test fails for each (tests/mutate.py; make test runs it too).
mutate:
	python3 tests/mutate.py

# Fails when a file includes a header of a layer above its own (inside
# core, a folder above its own), or a library its layer must not use, or
# when modules of core or glue include each other (tests/check_layers.sh
# says which).
check-layers:
	tests/check_layers.sh

demo:
	bash tests/demo.sh

# Fuzz targets (libFuzzer, clang): one per parser of server replies, built
# from the core sources with ASan and UBSan. `make fuzz FUZZ_SECONDS=60` runs
# each for that long on a copy of its seed corpus (tests/fuzz/corpus/NAME).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR := build/fuzz
FUZZ_FLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/,$(FUZZ_TARGETS))

$(FUZZ_DIR)/%: tests/fuzz/%.c $(CORE_SRC) $(HEADERS)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Iplugin -DNL_VERSION='"$(VERSION)"' -o $@ $< \
		$(CORE_SRC) $(LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	NL_FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run_fuzz.sh $(FUZZ_TARGETS)

# The Debian package packaging/build/nats-lens_<VERSION>_<arch>.deb, built
# by packaging/build-deb.sh with dpkg-deb (dpkg-dev; no network, no root).
# It holds the plain (not sanitized) plugin and check command.
.PHONY: deb
deb:
ifneq ($(filter 1 thread,$(SANITIZE)),)
	$(error make deb packages the hardened build: run it without SANITIZE)
endif
	$(MAKE) HARDEN=1 build/deb/nats_lens.so build/deb/nats-lens-check
	NL_DEB_PLUGIN=build/deb/nats_lens.so NL_DEB_CLI=build/deb/nats-lens-check \
		packaging/build-deb.sh

# The evaluation harness (tests/eval/eval.sh): each delivery-violation class
# injected by consumers in C, Go, JavaScript and Python, detection and
# recovery latency, boundary cases, a healthy soak and the server-level
# baseline, then the classes beyond the five (EXT=0 skips them, EXT_ROUNDS
# and EXT_LANGS set their rounds and languages, CLASSES limits the rounds
# to some of the five classes); writes results/eval.md,
# results/eval.json and results/eval-latency.png. `make eval ROUNDS=30
# INTERVAL=3 LANGS="c go js py" TOPOLOGY=single|cluster|both SOAK=300`; a
# 24 h soak alone:
# `make eval ROUNDS=0 BOUNDARY=0 BASELINE=0 SOAK=86400 NAME=soak`.
ROUNDS ?= 30
INTERVAL ?= 3
LANGS ?= c go js py
TOPOLOGY ?= single
SOAK ?= 300
# `make eval VERSIONS="nats-server-2.9.10-path /opt/nats/nats-server-2.12.0"`
# runs instead a short evaluation on each binary (VROUNDS rounds of each
# class, single node and cluster, polls every VINTERVAL s) and writes the
# per-version table into results/eval.md (tests/eval/versions.sh).
VERSIONS ?=
VROUNDS ?= 2
VEXT_ROUNDS ?= 1
VINTERVAL ?= 1
.PHONY: eval
eval: $(PLUGIN) $(INJECT)
ifeq ($(strip $(VERSIONS)),)
	ROUNDS=$(ROUNDS) INTERVAL=$(INTERVAL) LANGS="$(LANGS)" \
		TOPOLOGY=$(TOPOLOGY) SOAK=$(SOAK) $(TEST_ENV) tests/eval/eval.sh
else
	VERSIONS="$(VERSIONS)" VROUNDS=$(VROUNDS) VEXT_ROUNDS=$(VEXT_ROUNDS) \
		INTERVAL=$(VINTERVAL) $(TEST_ENV) tests/eval/versions.sh
endif

# The lead time of RETENTION_RISK's forecast on a real server: steady
# trends toward each kind of limit at once, raised and first loss, written
# into results/eval.md (tests/eval/forecast.sh; about 10 minutes).
.PHONY: eval-ledger
eval-ledger: $(PLUGIN) $(INJECT)
	$(TEST_ENV) tests/eval/ledger.sh

.PHONY: eval-forecast
eval-forecast: $(PLUGIN) $(INJECT)
	INTERVAL=$(INTERVAL) $(TEST_ENV) tests/eval/forecast.sh

format:
	clang-format -i plugin/*/*.c plugin/core/*/*.c $(HEADERS) cli/*.c cli/*.h \
		tests/unit/*.c tests/unit/*.h tests/tools/*.c

check-format:
	clang-format --dry-run --Werror plugin/*/*.c plugin/core/*/*.c $(HEADERS) \
		cli/*.c cli/*.h

clean:
	rm -rf $(BUILD) $(PLUGIN) $(CHECK) $(INJECT) packaging/build
