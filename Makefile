# arsim — plain Makefile.
#   make            build ./arsim (core in build/libarsim.a)
#   make run        install missing packages, build, run configs/default.yaml
#   make check      install, build, run every suite and the short validation loop (no error bound),
#                   then the suites again under ASan+UBSan, then make fuzz-smoke
#   make test       the suites without sanitizers: unit (Check), command-line, bad-input corpus
#   make check-tools the maintainer tools' checks in Python (tests/tools; not in make check, which
#                   needs no Python; .ci/run runs it after make check)
#   make bench      speed and memory figures against their targets (tests/bench)
#   make asan       the suites under AddressSanitizer and UBSan only
#   make validate   measure real MPI collectives on an emulated cluster, calibrate, report the error
#                   against its targets (root; docs/dev/testing.md)
#   make validate-torch  train for real with PyTorch + gloo on an emulated cluster, against arsim (root)
#   make deps-torch install Debian's python3-torch and python3-torchvision (root), for validate-torch only
#   make deps       install the Debian packages that are missing (root) or print the command
#   make install    install into PREFIX (default /usr/local; DESTDIR= for packagers): bin/arsim,
#                   share/arsim/ (models, topologies, configs, plots), share/man/man1/arsim.1, man5/arsim-scenario.5,
#                   share/bash-completion/completions/arsim; the data directory is compiled in
#   make uninstall  remove exactly what make install put there (its manifest, share/arsim/.installed)
#   make fuzz       libFuzzer campaign over every reader (clang; build-fuzz/; docs/dev/running-tests.md "Fuzzing"):
#                   FUZZ_RUNS executions per harness (default 1000000, FUZZ_RUNS_SCENARIO 10000000),
#                   FUZZ_TIME seconds per harness at most (0: no limit), one harness at a time
#   make fuzz-smoke each harness FUZZ_SMOKE_TIME (3) seconds over its corpus; part of make check
# Without mpicc (Open MPI) the MPI parts are skipped, each with a line saying so,
# instead of failing: validate-build (validate/mpibench), tests/cli/mpibench.sh,
# the mpibench bad-input cases and sweep --mpi (arsim's sweep --mpi is then a stub).

PKGS     := glib-2.0 yaml-0.1 libcjson check
DEB_PKGS := libglib2.0-dev libyaml-dev libcjson-dev check gnuplot-nox pkg-config \
            openmpi-bin libopenmpi-dev iproute2 make gcc
CC       ?= cc
# The fuzzing build (build-fuzz/, `make fuzz`) is clang's, without MPI.
FUZZ_CC  ?= clang
ifeq ($(BUILD),build-fuzz)
  CC     := $(FUZZ_CC)
  MPICC  := no-mpicc-in-the-fuzz-build
endif
# Open MPI (a required package) builds sim/sweep/sweepmpi.c for `arsim sweep --mpi`;
# without mpicc that file compiles to a stub that says so.
MPICC    ?= mpicc
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes)
LINK_CC  := $(if $(HAVE_MPI),$(MPICC),$(CC))
OPT      ?= -O2 -g
CFLAGS_COMMON = -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP -Isim
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs glib-2.0 yaml-0.1 libcjson 2>/dev/null) -lm -lpthread
TEST_LIBS  = $(shell pkg-config --libs check 2>/dev/null)

# Where make install puts arsim. io/datapath.c has DATADIR compiled in: the
# last place arsim looks for its data (docs/howto/install.md: "Where arsim finds files").
PREFIX   ?= /usr/local
DESTDIR  ?=
DATADIR   = $(PREFIX)/share/arsim
# The files installed under DATADIR, as paths in the checkout.
DATA_FILES := $(wildcard models/*.yaml topologies/*.yaml topologies/nodes/*.yaml configs/*.yaml plots/*.gp) models/gen/profile_model.py

# BUILD selects the flavour: build/ (normal) or build-asan/ (sanitized).
BUILD    ?= build
ifeq ($(BUILD),build-asan)
  OPT    := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
  LDSAN  := -fsanitize=address,undefined
endif
ifeq ($(BUILD),build-fuzz)
  # clang (unlike gcc) counts the sentinel {NULL} of an option table as a missing initializer
  OPT    := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
            -Wno-missing-field-initializers
  LDSAN  := -fsanitize=fuzzer,address,undefined
endif
CFLAGS   = $(CFLAGS_COMMON) $(OPT) $(PKG_CFLAGS)
LDFLAGS  += $(LDSAN)

CORE_SRC := $(filter-out sim/cli/main.c,$(wildcard sim/*/*.c))
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BIN      := $(BUILD)/arsim
FUZZ_HARNESSES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

.SECONDARY:
.PHONY: all run check check-tools test asan fuzz fuzz-build fuzz-bins fuzz-smoke bench deps deps-torch clean validate validate-short validate-torch install uninstall FORCE
all: arsim

arsim: $(BUILD)/arsim
	@if [ "$(BUILD)" = build ]; then cp -f $(BUILD)/arsim arsim; fi

# Every object depends on the flags it was built with: $(BUILD)/.flags
# holds them and is rewritten only when they change, so `make OPT=-O0` or a
# new compiler rebuilds what it must (no `make clean` needed).
FLAGS_NOW := $(CC) $(MPICC) $(CFLAGS) $(LDFLAGS)
$(BUILD)/.flags: FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' '$(FLAGS_NOW)' | cmp -s - $@ || printf '%s\n' '$(FLAGS_NOW)' > $@
FORCE:

$(BUILD)/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# datapath.o alone has DATADIR compiled in; $(BUILD)/.datadir holds it and
# changes with PREFIX, so a new PREFIX rebuilds that one object.
$(BUILD)/.datadir: FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' '$(DATADIR)' | cmp -s - $@ || printf '%s\n' '$(DATADIR)' > $@

$(BUILD)/sim/io/datapath.o: sim/io/datapath.c $(BUILD)/.flags $(BUILD)/.datadir
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -DARSIM_DATADIR='"$(DATADIR)"' -c $< -o $@

ifeq ($(HAVE_MPI),yes)
$(BUILD)/sim/sweep/sweepmpi.o: sim/sweep/sweepmpi.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	@echo "  MPICC $<"
	@$(MPICC) $(CFLAGS) -DARSIM_MPI -c $< -o $@
endif

$(BUILD)/libarsim.a: $(CORE_OBJ)
	@rm -f $@
	@echo "  AR  $@"
	@ar rcs $@ $^

$(BUILD)/arsim: $(BUILD)/sim/cli/main.o $(BUILD)/libarsim.a
	$(LINK_CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libarsim.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS) $(PKG_LIBS)

# libFuzzer harnesses (BUILD=build-fuzz only): build-fuzz/fuzz/<harness>.
$(BUILD)/tests/fuzz/fuzzlib.o: CFLAGS += -DFUZZ_ROOT='"$(CURDIR)"'
$(BUILD)/fuzz/%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/fuzzlib.o $(BUILD)/libarsim.a
	@mkdir -p $(dir $@)
	@echo "  LD  $@"
	@$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

fuzz-bins: $(FUZZ_HARNESSES:%=$(BUILD)/fuzz/%)
	@:

# The man page and the bash completion, written by arsim from its option tables.
$(BUILD)/arsim.1: $(BUILD)/arsim
	@$(BUILD)/arsim --man > $@.tmp && mv $@.tmp $@
$(BUILD)/arsim-scenario.5: $(BUILD)/arsim
	@$(BUILD)/arsim --man-scenario > $@.tmp && mv $@.tmp $@
$(BUILD)/arsim.bash: $(BUILD)/arsim
	@$(BUILD)/arsim --bash-completion > $@.tmp && mv $@.tmp $@

install: $(BUILD)/arsim $(BUILD)/arsim.1 $(BUILD)/arsim-scenario.5 $(BUILD)/arsim.bash
	@./.ci/install.sh install "$(DESTDIR)" "$(PREFIX)" $(BUILD) $(DATA_FILES)

uninstall:
	@./.ci/install.sh uninstall "$(DESTDIR)" "$(PREFIX)"

deps:
	@./.ci/deps.sh $(DEB_PKGS)

# PyTorch for validate/torch/ only: nothing in the build or the tests needs it.
deps-torch:
	@./.ci/deps.sh python3-torch python3-torchvision

run: deps
	@$(MAKE) --no-print-directory arsim
	./arsim run configs/default.yaml

# Every suite: unit (Check), command-line and bad-input corpus, the short
# validation loop, then the same unit and CLI suites built with
# AddressSanitizer + UBSan. Nothing here judges a measured error or retries.
check: deps
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory validate-short
	@$(MAKE) --no-print-directory asan
	@$(MAKE) --no-print-directory fuzz-smoke

# Fuzzing (docs/dev/running-tests.md "Fuzzing"; tests/fuzz/run.sh): the campaign, and its few
# seconds per harness that make check runs (skipped, saying so, without clang).
FUZZ_RUNS          ?= 1000000
FUZZ_RUNS_SCENARIO ?= 10000000
FUZZ_TIME          ?= 0
FUZZ_SMOKE_TIME    ?= 3
FUZZ_NICE          ?= 10
FUZZ_ENV = FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_RUNS_SCENARIO=$(FUZZ_RUNS_SCENARIO) FUZZ_TIME=$(FUZZ_TIME) \
           FUZZ_SMOKE_TIME=$(FUZZ_SMOKE_TIME) FUZZ_NICE=$(FUZZ_NICE)
fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { echo "fuzz: $(FUZZ_CC) not found; expected clang (Debian package clang)"; exit 1; }
	@$(MAKE) --no-print-directory BUILD=build-fuzz fuzz-bins

fuzz: fuzz-build
	@$(FUZZ_ENV) ./tests/fuzz/run.sh campaign $(FUZZ_HARNESSES)

fuzz-smoke:
	@if ! command -v $(FUZZ_CC) >/dev/null 2>&1; then \
	  echo "fuzz-smoke: SKIPPED: $(FUZZ_CC) not found (install clang to run the fuzz harnesses)"; \
	else $(MAKE) --no-print-directory fuzz-build && $(FUZZ_ENV) ./tests/fuzz/run.sh smoke $(FUZZ_HARNESSES); fi

# The validation loop on an emulated cluster (root: network namespaces).
validate: deps
	@$(MAKE) --no-print-directory arsim validate-build
	./validate/validate.sh

# The real-PyTorch loop (validate/torch/run.sh; TORCH_ARGS=--short: about 2 minutes).
validate-torch: deps deps-torch
	@$(MAKE) --no-print-directory arsim
	./validate/torch/run.sh $(TORCH_ARGS)

# Its short form, part of make check: the loop end to end (cluster up,
# measure, calibrate, compare, tear down) with its outputs checked for form
# and consistency; no error bound, so one run decides (docs/dev/testing.md).
# Skipped (with a line saying so) when not root or without network namespaces.
validate-short:
	@$(MAKE) --no-print-directory arsim validate-build
	./validate/validate.sh --short

test: arsim validate-build $(TEST_BIN)
	@./tests/layers.sh
	@./tests/run_unit.sh $(BUILD)
	@MPICC=$(MPICC) ./tests/run_cli.sh ./arsim

# The maintainer tools' own checks (tests/tools/: the generators, validation
# tables and the PyTorch loop's pure parts, in Python): not part of make
# check, which needs no Python; .ci/run runs them after it.
check-tools: arsim
	@./tests/run_cli.sh ./arsim tools

asan:
	@$(MAKE) --no-print-directory validate-build
	@$(MAKE) --no-print-directory BUILD=build-asan build-asan/arsim $(TEST_SRC:tests/unit/%.c=build-asan/tests/%)
	@ASAN_OPTIONS=detect_leaks=1 ./tests/run_unit.sh build-asan
	@ASAN_OPTIONS=detect_leaks=1 MPICC=$(MPICC) ./tests/run_cli.sh ./build-asan/arsim

bench: deps arsim
	@./tests/bench/run.sh ./arsim

clean:
	rm -rf build build-asan build-fuzz arsim

include validate/validate.mk

-include $(CORE_OBJ:.o=.d) $(BUILD)/sim/cli/main.d $(wildcard $(BUILD)/tests/fuzz/*.d) $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%.d)
