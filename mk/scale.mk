# scale.mk - building on distcc hosts and on an icecream farm, on the real kernel tree.
#
#   make check-distcc   build.sh on two distccd daemons on loopback ports: both
#                       compile, the objects equal a local build's, a host down
#                       is survived (after check-kernel, in $(PULLGATE_HOME))
#   make check-icecc    build.sh on an icecream scheduler and iceccd (two that
#                       compile) in a network namespace of their own: the
#                       gate's config with its GCC plugins compiled remotely,
#                       the objects equal a local build's; without the
#                       scheduler or the daemon, compiled here (after
#                       check-kernel; needs root: it says so and skips without)

.PHONY: check-distcc check-icecc

check-distcc: $(O)/pullgate
	PULLGATE=$(CURDIR)/$(O)/pullgate prove -v tests/kernel/distcc.t

CHECKS += check-distcc

check-icecc: $(O)/pullgate
	PULLGATE=$(CURDIR)/$(O)/pullgate prove -v tests/kernel/icecc.t

CHECKS += check-icecc
