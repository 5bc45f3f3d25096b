# socialpipe: `make` builds the release tools, `make test` runs every test,
# `make demo` runs the tour against the local sandbox, `make bench` measures,
# `make fuzz` runs the fuzz targets, `make sanitize` the tests under ASan and TSan.

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(DESTDIR)$(PREFIX)/bin
MANDIR   = $(DESTDIR)$(PREFIX)/share/man
COMPDIR  = $(DESTDIR)$(PREFIX)/share

TOOLS    = oauth-sign tw-post tw-friends fb-feed fb-perm-check tw-auth fb-auth
# Functions the completions of several tools share, one file each, which zsh
# (compinit, #autoload) and fish (fish_function_path) load when first called.
ZSH_HELPERS    = _socialpipe_profiles
FISH_FUNCTIONS = __socialpipe_profiles __socialpipe_command
SWIFT   ?= swift
RELEASE  = .build/release
BUILD_FLAGS = -c release --static-swift-stdlib
VENV     = .venv
PYTHON   = $(VENV)/bin/python

# Debian packages the build needs (Swift itself comes from swift.org), and
# those the tests, the demo and the benchmarks need besides: `make` and
# `make install` ask for the first set only.
BUILD_DEBS = pkg-config libcurl4-openssl-dev libssl-dev libjansson-dev
TEST_DEBS  = curl jq valgrind mandoc shellcheck bash-completion zsh fish \
             liboauth-dev hyperfine time strace parallel
BUILT    = $(TOOLS:%=$(RELEASE)/%)

.PHONY: all build deps test-deps venv test demo bench fuzz sanitize sanitize-address sanitize-thread \
        install uninstall clean

all: build

build: deps
	$(SWIFT) build $(BUILD_FLAGS)

# $(call debs,TARGET,PACKAGES): installs the missing PACKAGES when run as
# root; otherwise names the command to run.
define debs
	@missing=""; for p in $(2); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "$(1): installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "$(1): missing Debian packages; run as root:" >&2; \
	    echo "  apt-get install$$missing" >&2; exit 1; \
	  fi; \
	fi
endef

deps:
	@command -v $(SWIFT) >/dev/null 2>&1 || { \
	  echo "deps: no '$(SWIFT)' on PATH: install a Swift 6 toolchain (https://www.swift.org/install/linux/)" >&2; exit 1; }
	$(call debs,deps,$(BUILD_DEBS))

test-deps: deps
	$(call debs,test-deps,$(TEST_DEBS))

venv: $(VENV)/.installed

$(VENV)/.installed: Tests/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/requirements.txt
	touch $@

# The core's unit tests build in debug (Swift Testing does not link with the
# static stdlib); the tools are tested as built for release. The end-to-end
# tests run in TEST_JOBS processes (pytest-xdist), a test file per process at
# a time, so a module's sandbox serves all its tests.
TEST_JOBS ?= $(shell nproc)
PYTEST    = $(VENV)/bin/pytest -q -n $(TEST_JOBS) --dist loadfile
test: test-deps venv build
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	SOCIALPIPE_BIN=$(CURDIR)/$(RELEASE) $(PYTEST) Tests

# The fuzz targets (Fuzz/, a package of its own) built once with libFuzzer
# and AddressSanitizer, then each run for FUZZ_SECONDS over its seed corpus
# (Fuzz/Corpus/TARGET); FUZZ_TARGETS picks some. A target fails on a crash,
# a sanitizer's report or a broken invariant, and its input is kept in
# .build/fuzz/work/artifacts.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?=
FUZZ_BUILD    = .build/fuzz
fuzz: deps
	$(SWIFT) build --package-path Fuzz --build-path $(FUZZ_BUILD) -c release --sanitize=fuzzer \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing
	sh Fuzz/run.sh $(FUZZ_BUILD)/release $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The unit tests and a slice of the end-to-end tests (signals, batches,
# media uploads, token refreshes racing), against tools and tests built with
# AddressSanitizer (LeakSanitizer included) in .build/asan, then with
# ThreadSanitizer in .build/tsan. A sanitizer's report fails the run even
# when the tests pass: reports go to files, listed at the end. The unit
# tests run one at a time under ThreadSanitizer: the core keeps one loop
# per process, and loops run side by side by the test runner would race
# on its diagnostics state.
SANITIZE_TESTS  = Tests/tw-post/test_tw_post.py Tests/tw-post/test_media.py Tests/tw-friends/test_tw_friends.py \
                  Tests/oauth-sign/test_oauth_sign.py Tests/fb-feed/test_fb_feed.py Tests/tw-auth/test_refresh.py
SANITIZE_SELECT = (interrupt or sighup or signal or batch or test_media or test_refresh) and not peak_rss
sanitize: sanitize-address sanitize-thread

sanitize-address: test-deps venv
	$(call sanitized,address,.build/asan,ASAN_OPTIONS,)

sanitize-thread: test-deps venv
	$(call sanitized,thread,.build/tsan,TSAN_OPTIONS,--no-parallel)

# $(call sanitized,SANITIZER,BUILD,OPTIONS-VARIABLE,SWIFT-TEST-FLAGS)
define sanitized
	$(SWIFT) build --build-tests --sanitize=$(1) --build-path $(2)
	@echo "sanitize: $(1), reports in $(2)/reports:"; \
	rm -rf $(2)/reports; mkdir -p $(2)/reports; status=0; \
	export $(3)=log_path=$(CURDIR)/$(2)/reports/report; \
	echo "$(SWIFT) test --skip-build --disable-xctest $(4) --sanitize=$(1) --build-path $(2)"; \
	$(SWIFT) test --skip-build --disable-xctest $(4) --sanitize=$(1) --build-path $(2) || status=1; \
	echo "SOCIALPIPE_BIN=$(CURDIR)/$(2)/debug $(PYTEST) $(SANITIZE_TESTS) -k '$(SANITIZE_SELECT)'"; \
	SOCIALPIPE_BIN=$(CURDIR)/$(2)/debug $(PYTEST) $(SANITIZE_TESTS) -k '$(SANITIZE_SELECT)' || status=1; \
	for report in $(2)/reports/report*; do \
	  [ -e "$$report" ] || continue; status=1; echo "sanitize: $(1) sanitizer report $$report:"; cat "$$report"; \
	done; \
	exit $$status
endef

demo: test-deps venv build
	SOCIALPIPE_BIN=$(CURDIR)/$(RELEASE) PYTHON=$(CURDIR)/$(PYTHON) sh sandbox/demo.sh

bench: test-deps venv build
	SOCIALPIPE_BIN=$(CURDIR)/$(RELEASE) PYTHON=$(CURDIR)/$(PYTHON) sh bench/run.sh

# Installs what `make` built, and builds nothing: run as root, a build would
# leave root-owned files in .build.
install: $(BUILT)
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7
	for t in $(TOOLS); do install -m 755 $(RELEASE)/$$t $(BINDIR)/$$t; done
	install -m 644 man/*.1 $(MANDIR)/man1/
	install -m 644 man/*.5 $(MANDIR)/man5/
	install -m 644 man/*.7 $(MANDIR)/man7/
	install -d $(COMPDIR)/bash-completion/completions $(COMPDIR)/zsh/site-functions \
	  $(COMPDIR)/fish/vendor_completions.d $(COMPDIR)/fish/vendor_functions.d
	for t in $(TOOLS); do \
	  install -m 644 completions/bash/$$t $(COMPDIR)/bash-completion/completions/$$t; \
	  install -m 644 completions/zsh/_$$t $(COMPDIR)/zsh/site-functions/_$$t; \
	  install -m 644 completions/fish/$$t.fish $(COMPDIR)/fish/vendor_completions.d/$$t.fish; \
	done
	install -m 644 $(ZSH_HELPERS:%=completions/zsh/%) $(COMPDIR)/zsh/site-functions/
	install -m 644 $(FISH_FUNCTIONS:%=completions/fish/functions/%.fish) $(COMPDIR)/fish/vendor_functions.d/

$(BUILT):
	@echo "install: $@ is not built: run 'make' first (as yourself, not as root)" >&2; exit 1

uninstall:
	for t in $(TOOLS); do \
	  rm -f $(BINDIR)/$$t $(MANDIR)/man1/$$t.1 \
	        $(COMPDIR)/bash-completion/completions/$$t $(COMPDIR)/zsh/site-functions/_$$t \
	        $(COMPDIR)/fish/vendor_completions.d/$$t.fish; \
	done
	rm -f $(ZSH_HELPERS:%=$(COMPDIR)/zsh/site-functions/%) \
	      $(FISH_FUNCTIONS:%=$(COMPDIR)/fish/vendor_functions.d/%.fish)
	rm -f $(addprefix $(MANDIR)/man5/,$(notdir $(wildcard man/*.5))) \
	      $(addprefix $(MANDIR)/man7/,$(notdir $(wildcard man/*.7)))

clean:
	rm -rf .build $(VENV)
