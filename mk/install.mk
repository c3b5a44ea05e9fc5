# install.mk - make install / uninstall, and the tests of an installed tree and of the Debian package.
#
#   make install PREFIX=/usr/local DESTDIR=...   the binary, its data directory, man pages,
#                                                bash completion, the systemd unit
#   make uninstall                               remove what install put there
#   make check-install   install into a temporary DESTDIR and test the installed tree
#                        with the checkout out of sight (tests/install/install.t)
#   make check-deb       build the .deb out of tree, lintian, dpkg -i, run it, dpkg -r
#
# The data directory ($(DATADIR), default $(PREFIX)/share/pullgate) holds what
# the gate runs: scripts/kernel/, qemu-images/, patches/ (the seed series),
# and the shipped policies/.  The installed binary finds it from its own path
# (cli_datadir), so a moved PREFIX still works.

SYSCONFDIR ?= $(PREFIX)/etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL ?= install

# executable in the checkout: run; the others (lib.sh is sourced) are data
DATA_EXEC := $(shell find scripts/kernel qemu-images -type f -perm -u+x 2>/dev/null | LC_ALL=C sort)
DATA_FILES := $(filter-out $(DATA_EXEC),$(wildcard scripts/kernel/* qemu-images/*)) \
	$(shell find patches -type f 2>/dev/null | LC_ALL=C sort) \
	$(wildcard policies/*.yaml) policies/README.md

.PHONY: install uninstall check-install check-deb

install: $(O)/pullgate man $(O)/pullgate.service
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(SYSCONFDIR)/pullgate
	$(INSTALL) -m 755 $(O)/pullgate $(DESTDIR)$(BINDIR)/pullgate
	@set -e; for f in $(DATA_EXEC); do \
		$(INSTALL) -D -m 755 $$f $(DESTDIR)$(DATADIR)/$$f; done
	@set -e; for f in $(DATA_FILES); do \
		$(INSTALL) -D -m 644 $$f $(DESTDIR)$(DATADIR)/$$f; done
	$(INSTALL) -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(filter %.5,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 644 packaging/pullgate.bash $(DESTDIR)$(COMPLETIONDIR)/pullgate
	$(INSTALL) -m 644 $(O)/pullgate.service $(DESTDIR)$(UNITDIR)/pullgate.service
	$(INSTALL) -m 644 packaging/pullgate.sysusers $(DESTDIR)$(SYSUSERSDIR)/pullgate.conf
	@# a configuration of the maintainer's own is never overwritten
	test -e $(DESTDIR)$(SYSCONFDIR)/pullgate/serve.yaml || \
		$(INSTALL) -m 644 packaging/serve.yaml $(DESTDIR)$(SYSCONFDIR)/pullgate/serve.yaml

$(O)/pullgate.service: packaging/pullgate.service.in
	@mkdir -p $(@D)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< >$@.tmp
	mv $@.tmp $@

# serve.yaml is the maintainer's: uninstall leaves it.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pullgate $(DESTDIR)$(COMPLETIONDIR)/pullgate \
		$(DESTDIR)$(UNITDIR)/pullgate.service $(DESTDIR)$(SYSUSERSDIR)/pullgate.conf \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(filter %.5,$(MAN_PAGES))))
	rm -rf $(DESTDIR)$(DATADIR)

check-install: $(O)/pullgate
	@! grep -q PULLGATE_TEST_ $(O)/pullgate || \
		{ echo "check-install: $(O)/pullgate has the test points of a build for tests" >&2; exit 1; }
	./tests/install/check-install.sh

check-deb:
	./tests/install/check-deb.sh

CHECKS += check-install check-deb
