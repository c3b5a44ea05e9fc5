# man.mk - the manual pages, from docs/man/*.scd (scdoc), and the help text embedded from them.
#
#   make man         build/<config>/man/pullgate*.1 and *.5
#
# `pullgate help CMD` and `pullgate CMD --help` print the plain-text
# rendering of the same page (scripts/man-text.sh), embedded in the binary
# like the dashboard's assets.  tests/integration/90-help.t renders every
# page with groff -ww and man --warnings and fails on a warning.

MAN_SRC := $(sort $(wildcard docs/man/*.scd))
MAN_PAGES := $(MAN_SRC:docs/man/%.scd=$(O)/man/%)
HELP_TXT := $(MAN_PAGES:$(O)/man/%=$(O)/help/%.txt)

$(O)/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	scdoc <$< >$@.tmp && mv $@.tmp $@ || { rm -f $@.tmp; exit 1; }

$(O)/help/%.txt: $(O)/man/% scripts/man-text.sh
	@mkdir -p $(@D)
	./scripts/man-text.sh $< >$@.tmp && mv $@.tmp $@ || { rm -f $@.tmp; exit 1; }

$(O)/gen/help.c: $(HELP_TXT) scripts/gen-assets.sh
	@mkdir -p $(@D)
	./scripts/gen-assets.sh -t cli_help_pages:cli_help_npages -i cli/help.h $@ $(HELP_TXT)

$(O)/gen/help.o: $(O)/gen/help.c cli/help.h
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

CLI_GEN_OBJ += $(O)/gen/help.o

.PHONY: man
man: $(MAN_PAGES)
