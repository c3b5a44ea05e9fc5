# server.mk - pullgate serve: the embedded dashboard assets, the browser test and its setup.
#
#   make check-browser   the dashboard in headless Chromium (tests/browser/, playwright-core)
#   make bench-serve     bench/serve.sh against this build (wrk on loopback); part of `make bench`
#
# The HTTP tests are ordinary integration tests (tests/integration/7x-*.t).

ASSETS := $(sort $(wildcard server/assets/*))

$(O)/gen/assets.c: $(ASSETS) scripts/gen-assets.sh
	@mkdir -p $(@D)
	./scripts/gen-assets.sh $@ $(ASSETS)

$(O)/gen/assets.o: $(O)/gen/assets.c server/assets.h
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

GEN_OBJ += $(O)/gen/assets.o

.PHONY: check-browser
check-browser: $(O)/pullgate
	rm -rf $(O)/fixtures-browser
	fixtures/incident.sh $(O)/fixtures-browser/incident >/dev/null
	PULLGATE=$(CURDIR)/$(O)/pullgate PULLGATE_FIXTURES=$(CURDIR)/$(O)/fixtures-browser \
		node tests/browser/dashboard.test.mjs

CHECKS += check-browser

# A benchmark, never part of make check: it prints ratios against its goals.
.PHONY: bench bench-serve
bench: bench-serve
bench-serve: $(O)/pullgate
	bench/serve.sh $(CURDIR)/$(O)/pullgate

# The soak (bench/soak-serve.sh): the service's RSS over pulls fetched by git:// URL, hook
# deliveries and dashboard page views.  make check runs a short form: 150 of each, the
# growth over the last 100 at most 2 MiB (the URL-fetch leak of libgit2 1.5.1 grew it
# about 17 MiB); make bench-soak the full one, 1000 of each within 5 MiB of after 100.
.PHONY: check-soak bench-soak
check-soak: $(O)/pullgate
	SOAK_N=150 SOAK_FIRST=50 SOAK_BOUND_KB=2048 bench/soak-serve.sh $(CURDIR)/$(O)/pullgate

CHECKS += check-soak

bench: bench-soak
bench-soak: $(O)/pullgate
	bench/soak-serve.sh $(CURDIR)/$(O)/pullgate
