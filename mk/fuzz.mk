# fuzz.mk - libFuzzer targets for the parsers that read hostile input (tests/fuzz/).
#
#   make fuzz [FUZZ_SECONDS=600] [FUZZ_TARGETS="object mail"]
#                      replay each target's regressions, then fuzz it FUZZ_SECONDS
#   make check-fuzz    the same for FUZZ_CHECK_SECONDS (30) each; part of make check
#
# The targets and the library they call are built by clang 14 with
# -fsanitize=fuzzer,address,undefined in their own build, build/fuzz
# (BUILD=fuzz).  A crash, a leak, undefined behaviour, a timeout or running
# out of memory fails the run; the input that did it is kept in
# build/fuzz/artifacts/TARGET/.  The corpus grows in build/fuzz/corpus/TARGET/
# from the seeds in tests/fuzz/TARGET/, which are never written to.
#
# tests/fuzz/TARGET/regressions/ is replayed first, every file of it, and
# must not be empty: inputs that reach code the seeds do not (picked from a
# fuzzing run's corpus, greedily by the coverage each adds, with libFuzzer's
# -merge_control_file), and every input that ever failed, named by its
# SHA-1 as libFuzzer names them.

FUZZ_TARGETS ?= object mail yaml ktap hook graph pack identity_index
FUZZ_SECONDS ?= 600
FUZZ_CHECK_SECONDS ?= 30

ifeq ($(BUILD),fuzz)
CC := clang
endif
# fuzzer-no-link: the coverage instrumentation without libFuzzer's main.  clang,
# unlike gcc, counts a va_list function's format argument as non-literal.
OPT_fuzz := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all -Wno-format-nonliteral
LDOPT_fuzz := -fsanitize=fuzzer,address,undefined

FUZZ_BIN = $(FUZZ_TARGETS:%=$(O)/fuzz/fuzz_%)

$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/files.h $(O)/libpullgate.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(O)/libpullgate.a $(PKG_LIBS)

.PHONY: fuzz check-fuzz fuzz-build fuzz-seed-identity
fuzz-build: $(FUZZ_BIN)

# The identity index's seeds are real files: what a verify of a small upstream writes.
fuzz-seed-identity: $(O)/pullgate
	tests/fuzz/make-identity-seed.sh $(CURDIR)/$(O)/pullgate tests/fuzz/identity_index

fuzz check-fuzz:
	$(MAKE) BUILD=fuzz fuzz-build FUZZ_TARGETS="$(FUZZ_TARGETS)"
	tests/fuzz/run.sh build/fuzz \
		$(if $(filter check-fuzz,$@),$(FUZZ_CHECK_SECONDS),$(FUZZ_SECONDS)) $(FUZZ_TARGETS)

CHECKS += check-fuzz
