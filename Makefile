# cua — run `make help` for the targets.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/cua
PKGS  := ./...

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## Install what the build and tests need (Chromium, PostgreSQL, Node.js and npm, Xvfb + AT-SPI + GTK + Mousepad for the desktop surface) when missing
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing chromium"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@if ! command -v initdb >/dev/null && [ ! -x /usr/local/bin/initdb ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing postgresql (store tests start a private server)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	fi
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "installing nodejs and npm (codegen tests run the generated specs with Playwright)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi
	@if ! command -v Xvfb >/dev/null || [ ! -x /usr/libexec/at-spi-bus-launcher ] || ! command -v dbus-daemon >/dev/null \
		|| ! /usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null || ! command -v mousepad >/dev/null; then \
		echo "installing the desktop surface's session (Xvfb, D-Bus, AT-SPI, PyGObject GTK 3, Mousepad)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			xvfb dbus dbus-x11 at-spi2-core python3-gi gir1.2-gtk-3.0 mousepad >/dev/null; \
	fi
	@command -v $(GO) >/dev/null || { echo "go toolchain not found"; exit 1; }

.PHONY: build
build: ## Build bin/cua
	$(GO) build -o $(BIN) ./cmd/cua

.PHONY: lint
lint: ## go vet and gofmt
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: scan
scan: ## Fail on key-shaped strings in the repository (cua secrets scan; fixtures in .cua-scan-allow)
	$(GO) run ./cmd/cua secrets scan

.PHONY: test
test: deps lint scan ## Vet, gofmt, secrets scan, and run every test with the race detector
	$(GO) test -race -count=1 -timeout 25m $(PKGS)

.PHONY: docs
docs: ## Regenerate the CLI reference, docs/reference/cli (one page per command; a stale page fails make test)
	$(GO) run ./cmd/clidoc

.PHONY: validate
validate: build ## Validate the reference capabilities
	$(BIN) capability validate examples/capabilities/*.yaml

.PHONY: demo
demo: deps build ## Run the verified story: every replay case against the mock back office
	$(BIN) demo

.PHONY: bench
bench: deps ## Benchmarks (about 10 min, 20-35 more for the fault model): replay vs Playwright and bare CDP, cold start, scale, drift, engine, queue, write faults; writes bench/results/latest.json
	bench/replay.sh $(BENCH_FLAGS)
