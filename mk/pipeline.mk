# pipeline.mk - the shipped kernel scripts' hashes, and the incident replayed on the real kernel tree.
#
#   make check-incident   take one rejected at verify; take two merged, built,
#                         booted with KUnit green and approved, in $(PULLGATE_HOME)
#
# The gate marks a run simulated when a script it runs is not the one this
# binary was built with: the hashes of those files are compiled in.

SHIPPED := scripts/kernel/build.sh scripts/kernel/boot.sh scripts/kernel/lib.sh \
	scripts/kernel/lava.sh \
	qemu-images/kernel.config qemu-images/mkinitramfs.sh qemu-images/init.c \
	qemu-images/initramfs.list

$(O)/gen/shipped.c: $(SHIPPED) scripts/kernel/gen-shipped.sh
	@mkdir -p $(@D)
	./scripts/kernel/gen-shipped.sh $@ $(SHIPPED)

$(O)/gen/shipped.o: $(O)/gen/shipped.c pipeline/provenance.h
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

GEN_OBJ += $(O)/gen/shipped.o

.PHONY: check-incident

check-incident: $(O)/pullgate
	PULLGATE=$(CURDIR)/$(O)/pullgate prove -v tests/kernel/incident.t

CHECKS += check-incident
