# validate/validate.mk — builds the MPI harness validate/mpibench.
# Included from the top-level Makefile, whose BUILD, CFLAGS, LDFLAGS and
# PKG_LIBS it uses: `make validate-build` (or BUILD=build-x for another
# core build). mpibench links the core library $(BUILD)/libarsim.a (the
# schedule generators and training plan the simulator runs) and GLib;
# mpicc comes from openmpi-bin/libopenmpi-dev (`make deps`); without it
# validate-build says it skips and succeeds, and the suites that need
# mpibench (tests/cli/mpibench.sh, tests/bad/mpibench.txt) print skipped.
# MPICC=mpicc.mpich for MPICH. MPIBENCH=PATH writes the program elsewhere
# (a private build beside a validate/mpibench that others may be running).
MPICC        ?= mpicc
MPIBENCH     ?= validate/mpibench
VALIDATE_SRC := $(wildcard validate/*.c)
VALIDATE_OBJ := $(VALIDATE_SRC:%.c=$(BUILD)/%.o)
# MPICH's mpi.h declares status arrays with an access size that GCC 12 holds
# against MPI_STATUSES_IGNORE ((MPI_Status *)1): a false stringop-overflow.
VALIDATE_CFLAGS := $(if $(findstring mpich,$(MPICC)),-Wno-stringop-overflow)

.PHONY: validate-build
ifeq ($(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes),yes)
validate-build: $(MPIBENCH)
else
validate-build:
	@echo "validate-build: skipped: $(MPICC) not found, so validate/mpibench is not built and its suites are skipped (make deps installs openmpi-bin and libopenmpi-dev)"
endif

$(MPIBENCH): $(VALIDATE_OBJ) $(BUILD)/libarsim.a
	$(MPICC) $(LDFLAGS) -o $@ $(VALIDATE_OBJ) $(BUILD)/libarsim.a $(PKG_LIBS)

$(BUILD)/validate/%.o: validate/%.c $(BUILD)/.flags
	@command -v $(MPICC) >/dev/null || { echo "validate: $(MPICC) not found; run make deps (openmpi-bin, libopenmpi-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $(VALIDATE_CFLAGS) -Ivalidate -c $< -o $@

-include $(VALIDATE_OBJ:.o=.d)
