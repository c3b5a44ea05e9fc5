# scale.mk - building on distcc hosts, on the real kernel tree.
#
#   make check-distcc   build.sh on two distccd daemons on loopback ports: both
#                       compile, the objects equal a local build's, a host down
#                       is survived (after check-kernel, in $(PULLGATE_HOME))

.PHONY: check-distcc

check-distcc: $(O)/pullgate
	PULLGATE=$(CURDIR)/$(O)/pullgate prove -v tests/kernel/distcc.t

CHECKS += check-distcc
