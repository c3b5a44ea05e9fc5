# pipeline.mk - the incident replayed on the real kernel tree (after check-kernel, which it needs).
#
#   make check-incident   take one rejected at verify; take two merged, built,
#                         booted with KUnit green and approved, in $(PULLGATE_HOME)

.PHONY: check-incident

check-incident: $(O)/pullgate
	PULLGATE=$(CURDIR)/$(O)/pullgate prove -v tests/kernel/incident.t

CHECKS += check-incident
