# Makefile - builds the pullgate binary and runs every check (see README.md).
#
#   make            build build/release/pullgate
#   make demo       install missing Debian packages, build, replay the incident
#   make check      install missing Debian packages, run every test (also
#                   under ASan+UBSan, and the kernel checks); at the end, each
#                   target's wall time and every skip with its reason
#   make check-flaky check-integration 11 times on a machine made slow
#   make BUILD=asan the same build with address and undefined sanitizers
#                   (BUILD=tsan: thread; make check-threads runs it)
#   make install    install under $(DESTDIR)$(PREFIX) (see mk/install.mk)
#   make bench      the benchmarks in bench/ (HISTORY=1000000 for the real figures)

BUILD ?= release
VERSION := 0.1.0
O := build/$(BUILD)
CC ?= cc

# Where `make install` puts things.  The binary finds its data directory
# from its own path (cli_datadir); DATADIR is only the last resort.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/pullgate
MANDIR ?= $(PREFIX)/share/man

PKGS := libgit2 gpgme yaml-0.1 libmicrohttpd libcurl sqlite3 jansson libcrypto zlib
# Recursive on purpose: pkg-config runs when a recipe needs it, which is
# after scripts/deps.sh has had its chance to install the -dev packages.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
# libmicrohttpd and libcurl are opened by server/http.c and server/http_client.c when a
# server starts (and sends), not linked
PKG_LIBS = $(shell pkg-config --libs $(filter-out libmicrohttpd libcurl,$(PKGS)))

WARN := -std=c11 -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wwrite-strings -Werror
OPT_release := -O2 -g -D_FORTIFY_SOURCE=2 -fstack-protector-strong
# The tests run a build of their own: the release's code generation with
# the test points of common/testpoint.h, which the release never has.
OPT_test := $(OPT_release) -DPG_TEST_POINTS
OPT_asan := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -DPG_TEST_POINTS
LDOPT_asan := -fsanitize=address,undefined
OPT_tsan := -O1 -g -fsanitize=thread -DPG_TEST_POINTS
LDOPT_tsan := -fsanitize=thread
CFLAGS_ALL = $(WARN) $(OPT_$(BUILD)) -I. $(PKG_CFLAGS) -DPG_VERSION='"$(VERSION)"' \
	-DPG_DATADIR='"$(DATADIR)"' \
	-MMD -MP $(CPPFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(LDOPT_$(BUILD)) $(LDFLAGS)

LIB_SRC := $(sort $(wildcard common/*.c repo/*.c policies/*.c report/*.c verifier/*.c pipeline/*.c server/*.c))
CLI_SRC := $(sort $(wildcard cli/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

LIB_OBJ := $(LIB_SRC:%.c=$(O)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/obj/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)

# The fragments come before the rules below, so `all` is named the default.
.DEFAULT_GOAL := all

# Fragments add kernel, server and browser targets and append to CHECKS;
# GEN_OBJ takes the objects of generated sources (embedded assets), CLI_GEN_OBJ
# those linked only into the binary (the help pages).
CHECKS :=
GEN_OBJ :=
CLI_GEN_OBJ :=
-include $(sort $(wildcard mk/*.mk))

.PHONY: all deps demo check check-unit check-integration check-sanitized \
	check-threads check-code clean bench
all: $(O)/pullgate

$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(O)/libpullgate.a: $(LIB_OBJ) $(GEN_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(O)/pullgate: $(CLI_OBJ) $(CLI_GEN_OBJ) $(O)/libpullgate.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(CLI_GEN_OBJ) $(O)/libpullgate.a $(PKG_LIBS)

$(O)/tests/%: tests/unit/%.c $(O)/libpullgate.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(O)/libpullgate.a \
		$(PKG_LIBS) $(shell pkg-config --libs cmocka)

$(O)/bench/identity-index-bench: bench/identity_index_bench.c $(O)/libpullgate.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(O)/libpullgate.a $(PKG_LIBS)

# Ratios against git and against issue 14's goals, measured in one run.
bench: $(O)/pullgate $(O)/bench/identity-index-bench
	bench/verify.sh $(CURDIR)/$(O)/pullgate $(HISTORY)
	@if [ -x bench/serve.sh ]; then bench/serve.sh $(CURDIR)/$(O)/pullgate; fi

deps:
	./scripts/deps.sh

ifeq ($(BUILD),release)
# Asked of the release build, the suites run the build made for tests.
check-unit check-integration:
	$(MAKE) BUILD=test $@
else
check-unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "# $$t"; $$t; done

# The incident fixtures are built once and shared, read-only, by the tests.
check-integration: $(O)/pullgate
	rm -rf $(O)/fixtures
	fixtures/incident.sh $(O)/fixtures/incident >/dev/null
	PULLGATE=$(CURDIR)/$(O)/pullgate PULLGATE_FIXTURES=$(CURDIR)/$(O)/fixtures \
		prove -j2 tests/integration/
endif

# The same suite under ASan+UBSan.  A request larger than the machine is
# refused (NULL), as the real allocator refuses it, instead of aborting:
# libgit2 callocs the size a damaged pack entry claims, and test_pack's
# damaged packs assert that such a read fails and gives nothing else.
check-sanitized:
	ASAN_OPTIONS=allocator_may_return_null=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0 \
		$(MAKE) BUILD=asan check-unit check-integration

# The unit tests of code that runs threads of its own, under ThreadSanitizer:
# the commits inflated ahead (repo/read_ahead.c), through the repository and
# through the identity index.  A race is an error, never a warning.
TSAN_UNITS := test_pack test_identity_index
check-threads:
	$(MAKE) BUILD=tsan $(TSAN_UNITS:%=build/tsan/tests/%)
	@set -e; for t in $(TSAN_UNITS); do echo "# build/tsan/tests/$$t"; \
		TSAN_OPTIONS=halt_on_error=1:exitcode=66 build/tsan/tests/$$t; done

# Not in make check: check-integration 10 times beside a CPU hog, then once
# on one CPU; every run must pass (scripts/check-flaky.sh).
.PHONY: check-flaky
check-flaky:
	./scripts/check-flaky.sh "$(MAKE)"

# Static checks on our own sources.
check-code:
	./scripts/check-code.sh

# Every target in turn; at the end each one's wall time and every skip with its reason.
check: deps
	@./scripts/check-all.sh "$(MAKE)" check-code check-unit check-integration check-sanitized \
		check-threads $(CHECKS)

demo: deps
	$(MAKE) all
	./scripts/demo.sh $(O)/pullgate

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
