# kernel.mk - the kernel checks: the seed series on linux-source-6.12, arm64 build, QEMU KUnit boot, clang test.
#
#   make check-kernel        tree + series + report, --explain-tests on the tree
#                            (tests/kernel/select.t), gcc arm64 build, boot, KTAP verdict
#   make check-kernel-clang  LLVM=1 build of iwlwifi mvm with FORTIFY_SOURCE
#
# State lives in $(PULLGATE_HOME) (default ~/.cache/pullgate); see docs/kernel.md.

.PHONY: check-kernel check-kernel-clang

check-kernel: $(O)/pullgate
	./scripts/kernel/check.sh $(O)/pullgate

check-kernel-clang:
	./scripts/kernel/clang-check.sh

CHECKS += check-kernel check-kernel-clang
