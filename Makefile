# nats-lens: a collectd read-plugin that finds JetStream delivery mistakes.
#   make            build plugin/nats_lens.so
#   make test       unit and integration tests (ends with "N passed, N failed")
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
LIBS := -lnats -ljson-c -lm -lpthread

ifeq ($(SANITIZE),1)
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
endif

BUILD := build
CORE_SRC := $(filter-out plugin/nats_lens.c,$(wildcard plugin/nl_*.c))
CORE_OBJ := $(patsubst plugin/%.c,$(BUILD)/%.o,$(CORE_SRC))
CORE_LIB := $(BUILD)/libnlcore.a
PLUGIN := plugin/nats_lens.so
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(BUILD)/unit_tests
INJECT := tests/tools/nl-inject

.PHONY: all test unit integration demo clean format check-format

all: $(PLUGIN)

$(BUILD):
	mkdir -p $(BUILD)

$(BUILD)/%.o: plugin/%.c plugin/*.h VERSION | $(BUILD)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/nats_lens.o: plugin/nats_lens.c plugin/*.h | $(BUILD)
	$(CC) $(BASE_CFLAGS) $(PLUGIN_CFLAGS) $(CFLAGS) -c -o $@ $<

$(PLUGIN): $(BUILD)/nats_lens.o $(CORE_LIB)
	$(CC) -shared $(LDSAN) -o $@ $(BUILD)/nats_lens.o $(CORE_LIB) $(LIBS)

$(UNIT_BIN): $(UNIT_SRC) tests/unit/*.h $(CORE_LIB)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Iplugin -o $@ $(UNIT_SRC) $(CORE_LIB) \
		$(LIBS) $(LDSAN)

$(INJECT): tests/tools/nl_inject.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra -o $@ $< -lnats -ljson-c -lpthread

unit: $(UNIT_BIN)
	$(UNIT_BIN) tests/fixtures

test: $(PLUGIN) $(UNIT_BIN) $(INJECT)
	tests/run_all.sh

demo: $(PLUGIN) $(INJECT)
	tests/demo.sh

format:
	clang-format -i plugin/*.c plugin/*.h tests/unit/*.c tests/unit/*.h \
		tests/tools/*.c

check-format:
	clang-format --dry-run --Werror plugin/*.c plugin/*.h

clean:
	rm -rf $(BUILD) $(PLUGIN) $(INJECT)
