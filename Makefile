# kopf-wasm's one test command is `make test` (CI runs it through .ci/run):
#   1. builds the local control plane (etcd, kube-apiserver,
#      kube-controller-manager) if it is not cached,
#   2. builds the wasm modules the tests load (bin/wasm/<name>.wasm),
#   3. checks gofmt, runs go vet on every module (guest modules for wasip1),
#   4. runs every module's tests, including the end-to-end tests on the real
#      control plane (the smoke test first, verbosely).
#
# Modules: . (host + CLI), abi, guest-sdk, examples; go.work ties them together.
# The Rust, AssemblyScript and Python guest SDKs (guest-sdk/rust,
# guest-sdk/assemblyscript, guest-sdk/python) and their examples
# (examples/rust/*, examples/assemblyscript/*, examples/python/*), and the TinyGo
# builds of Go examples, are built and tested by `make guests guesttest` (part
# of `make test`); their toolchains come from hack/guest-toolchains.sh (CI=true
# installs them, the Python runtime by building CPython for WASI with
# hack/python-runtime.sh, TinyGo by building it against Debian's LLVM with
# hack/tinygo.sh; elsewhere a missing one is one line that says what to run).
#
# The fast tier is `make unit`: every test that needs no control plane, in
# every module (go test -short: testenv.Start and the e2e packages' TestMain
# skip under -short, saying so), and the guest SDKs' own tests (make
# guesttest). It builds no control plane; it needs the wasm modules (make
# wasm, seconds when cached) and the guest toolchains (the tests build the
# non-Go guests they load). `make test` never passes -short and refuses a
# GOFLAGS that does, so there every end-to-end test runs.
#
# Also: `make demo` (hack/demo.sh: builds everything, starts the local control
# plane, runs the example operator on an example object, shows the result,
# stops everything), `make cli` (bin/kopf-wasm), `make docs` (rewrites
# docs/cli.md from the command tree and docs/settings.md from host/settings;
# `make test` fails when either is stale), `make fuzz` (every fuzz target for
# FUZZTIME each), `make chaos` (the fault tests' long version) and `make help`
# (this text). The documentation starts at docs/index.md.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test
MAKEFLAGS += --no-print-directory

GO ?= go
WASIP1 := GOOS=wasip1 GOARCH=wasm
EXAMPLES_MODULE := github.com/kopf-wasm/kopf-wasm/examples

# Wasm modules built by `make wasm`: package paths inside the examples module.
# Every main package there is found automatically; add others with
#   WASM_PACKAGES += some/pkg
# Each builds to bin/wasm/<last path element>.wasm, where internal/wasmtest
# looks for it, so the last elements must be unique.
WASM_PACKAGES = $(patsubst $(EXAMPLES_MODULE)/%,%,$(shell cd examples && $(WASIP1) $(GO) list -e -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... 2>/dev/null))
WASM_OUT := bin/wasm

# guest-sdk packages that also build natively (they do not reach go-pdk,
# whose //go:wasmimport functions exist only on wasm).
# Example modules with native unit tests (kopftest): they run under plain go test.
EXAMPLES_NATIVE_TESTS = $(shell cd examples && $(GO) list -e -f '{{if and (not .Error) (not .DepsErrors) .TestGoFiles}}{{.ImportPath}}{{end}}' ./... 2>/dev/null)
GUEST_SDK_NATIVE = $(shell cd guest-sdk && $(GO) list -e -f '{{if and (not .Error) (not .DepsErrors) .GoFiles}}{{.ImportPath}}{{range .Deps}} {{.}}{{end}}{{end}}' ./... | grep -v ' github.com/extism/go-pdk' | cut -d' ' -f1)

.PHONY: help test unit unit-go check-go check-not-short deps controlplane wasm fmt vet gotest clean demo cli docs guest-toolchains guests guesttest fuzz

test: check-go check-not-short deps controlplane wasm guests fmt vet guesttest gotest
	@echo "make test: all passed"

# The comment at the top of this file.
help:
	@sed -n '1,/^$$/{/^#/s/^# \{0,1\}//p}' $(firstword $(MAKEFILE_LIST))

# The fast tier: no control plane (see the top of this file).
unit: check-go wasm guest-toolchains unit-go guesttest
	@echo "make unit: all passed (the end-to-end tests were skipped: make test runs them)"

unit-go:
	@echo "== go test -short: every module, without the control plane"
	GO=$(GO) hack/gotest.sh -short -count=1 ./...
	cd abi && $(GO) test -short -count=1 ./...
	@pkgs="$(strip $(GUEST_SDK_NATIVE))"; if [ -n "$$pkgs" ]; then echo "cd guest-sdk && $(GO) test -short -count=1 $$pkgs"; cd guest-sdk && $(GO) test -short -count=1 $$pkgs; fi
	@pkgs="$(strip $(EXAMPLES_NATIVE_TESTS))"; if [ -n "$$pkgs" ]; then echo "cd examples && $(GO) test -short -count=1 $$pkgs"; cd examples && $(GO) test -short -count=1 $$pkgs; fi

# -short (make unit's switch) skips every end-to-end test; make test must not
# inherit it from GOFLAGS.
check-not-short:
	@case " $${GOFLAGS:-} " in *short*) echo "make test: GOFLAGS ($$GOFLAGS) sets -short, which skips the end-to-end tests; unset it (make unit is the short tier)" >&2; exit 1;; esac

check-go:
	@command -v $(GO) >/dev/null 2>&1 || { echo "make: no Go toolchain ('$(GO)') on PATH; install Go 1.25 or newer (https://go.dev/doc/install) and run make again" >&2; exit 1; }

deps: check-go
	@echo "== go mod download (all workspace modules)"
	@$(GO) mod download || { echo "make: downloading Go modules failed (see above); check the network and GOPROXY ($$($(GO) env GOPROXY)), then run make again" >&2; exit 1; }

controlplane: check-go
	@echo "== control plane (hack/controlplane/build.sh; cached after the first build)"
	@hack/controlplane/build.sh

wasm: check-go
	@echo "== wasm modules -> $(WASM_OUT)/"
	@mkdir -p $(WASM_OUT)
	@pkgs="$(strip $(WASM_PACKAGES))"; \
	dups=$$(for p in $$pkgs; do basename "$$p"; done | sort | uniq -d); \
	if [ -n "$$dups" ]; then echo "make: two wasm packages would both build $(WASM_OUT)/$$dups.wasm; rename one" >&2; exit 1; fi; \
	for p in $$pkgs; do \
	  out="$(CURDIR)/$(WASM_OUT)/$$(basename "$$p").wasm"; \
	  (cd examples && $(WASIP1) $(GO) build -buildmode=c-shared -o "$$out" "./$$p") || { echo "make: building $$p for wasip1 failed (see above)" >&2; exit 1; }; \
	  touch "$$out"; echo "   $$p"; \
	done

# Non-Go guests: examples/rust/<name> -> bin/wasm/rust-<name>.wasm,
# examples/assemblyscript/<name> -> bin/wasm/as-<name>.wasm (internal/guestwasm
# finds them there).
GUESTS_RUST = $(notdir $(wildcard examples/rust/*))
GUESTS_AS = $(notdir $(wildcard examples/assemblyscript/*))
# examples/python/<name> -> bin/wasm/py-<name>.wasm (kopf-wasm build, with the
# Python runtime that hack/python-runtime.sh builds into the cache).
GUESTS_PY = $(notdir $(wildcard examples/python/*))
# Go examples also built with TinyGo: examples/<name> -> bin/wasm/tinygo-<name>.wasm
# (hack/tinygo.sh's TinyGo; internal/wasmtest.TinyGoPath finds them there).
GUESTS_TINYGO = kopfexample children allkinds
# Debian's Rust, whatever rustup puts first on PATH.
DEBIAN_CARGO := PATH=/usr/bin:$$PATH RUSTC=/usr/bin/rustc CARGO_TARGET_DIR=$(CURDIR)/bin/cargo /usr/bin/cargo

guest-toolchains:
	@if [ "$${CI:-}" = true ]; then hack/guest-toolchains.sh install all; else hack/guest-toolchains.sh check all; fi

guests: guest-toolchains
	@echo "== guest modules (Rust, AssemblyScript, Python, TinyGo) -> $(WASM_OUT)/"
	@for g in $(GUESTS_RUST); do hack/guest-build.sh rust examples/rust/$$g $(WASM_OUT)/rust-$$g.wasm && echo "   rust/$$g"; done
	@for g in $(GUESTS_AS); do hack/guest-build.sh assemblyscript examples/assemblyscript/$$g $(WASM_OUT)/as-$$g.wasm && echo "   assemblyscript/$$g"; done
	@for g in $(GUESTS_PY); do hack/guest-build.sh python examples/python/$$g $(WASM_OUT)/py-$$g.wasm && echo "   python/$$g"; done
	@for g in $(GUESTS_TINYGO); do hack/guest-build.sh tinygo examples/$$g $(WASM_OUT)/tinygo-$$g.wasm && echo "   tinygo/$$g"; done

guesttest: guest-toolchains
	@echo "== cargo test (guest-sdk/rust and examples/rust/*, Debian's toolchain)"
	cd guest-sdk/rust && $(DEBIAN_CARGO) test --quiet
	@for g in $(GUESTS_RUST); do echo "cd examples/rust/$$g && cargo test"; (cd examples/rust/$$g && $(DEBIAN_CARGO) test --quiet) || exit 1; done
	@echo "== AssemblyScript SDK tests (guest-sdk/assemblyscript/test/run.mjs)"
	node guest-sdk/assemblyscript/test/run.mjs
	@echo "== Python SDK tests (guest-sdk/python/tests, the machine's python3; no wasm)"
	cd guest-sdk/python && python3 -m unittest discover -s tests -t tests

fmt:
	@echo "== gofmt"
	@files=$$(find . -name '*.go' -not -path './.git/*' -not -path './.cache/*' -not -path '*/testdata/*'); \
	bad=$$(gofmt -l $$files); \
	if [ -n "$$bad" ]; then echo "make: these files need gofmt -w:" >&2; echo "$$bad" >&2; exit 1; fi

vet:
	@echo "== go vet"
	$(GO) vet ./...
	cd abi && $(GO) vet ./...
	cd guest-sdk && $(WASIP1) $(GO) vet ./...
	@pkgs="$(strip $(GUEST_SDK_NATIVE))"; if [ -n "$$pkgs" ]; then echo "cd guest-sdk && $(GO) vet $$pkgs"; cd guest-sdk && $(GO) vet $$pkgs; fi
	cd examples && $(WASIP1) $(GO) vet ./...

gotest:
	@echo "== go test: the end-to-end smoke test on the real control plane"
	$(GO) test -count=1 -v -run '^TestSmokeE2E$$' ./internal/testenv
	@echo "== go test: every module"
	@# -timeout 60m: internal/imagebake cross-builds the host for arm64,
	@# about 12 minutes on a machine whose Go build cache is cold.
	GO=$(GO) hack/gotest.sh -count=1 -timeout 60m -skip '^TestSmokeE2E$$' ./...
	cd abi && $(GO) test -count=1 ./...
	@pkgs="$(strip $(GUEST_SDK_NATIVE))"; if [ -n "$$pkgs" ]; then echo "cd guest-sdk && $(GO) test -count=1 $$pkgs"; cd guest-sdk && $(GO) test -count=1 $$pkgs; fi
	@pkgs="$(strip $(EXAMPLES_NATIVE_TESTS))"; if [ -n "$$pkgs" ]; then echo "cd examples && $(GO) test -count=1 $$pkgs"; cd examples && $(GO) test -count=1 $$pkgs; fi
	@echo "== fuzz: every fuzz target for $(FUZZTIME_SHORT) (make fuzz: $(FUZZTIME) each)"
	FUZZTIME=$(FUZZTIME_SHORT) GO=$(GO) hack/fuzz.sh

# Every fuzz target (func Fuzz... in the modules' tests) for FUZZTIME each,
# one after another (hack/fuzz.sh); a failing input is kept under the
# package's testdata/fuzz/ for plain go test to replay. make test runs each
# for FUZZTIME_SHORT.
FUZZTIME ?= 30s
FUZZTIME_SHORT ?= 3s
fuzz: check-go
	FUZZTIME=$(FUZZTIME) GO=$(GO) hack/fuzz.sh

clean:
	rm -rf bin

demo: check-go controlplane
	@hack/demo.sh

cli: check-go
	$(GO) build -o bin/kopf-wasm ./cmd/kopf-wasm

# The host's container image, built without a Docker daemon (issue 20):
# static binaries for linux/amd64 and linux/arm64, pushed as one index to
# $(IMAGE). Reproducible: the same sources give the same digest.
#   make image IMAGE=registry.example/kopf-wasm:dev
IMAGE ?= localhost:5000/kopf-wasm:dev
IMAGE_PLATFORMS ?= amd64 arm64
IMAGE_LDFLAGS = -s -w -buildid= -X github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/app.version=$(shell git describe --tags --always --dirty 2>/dev/null)
.PHONY: image
image: check-go cli
	@for arch in $(IMAGE_PLATFORMS); do \
		echo "go build linux/$$arch"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags "$(IMAGE_LDFLAGS)" -o bin/linux-$$arch/kopf-wasm ./cmd/kopf-wasm || exit 1; \
	done
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) bin/kopf-wasm image --revision $$(git rev-parse HEAD) \
		$(foreach a,$(IMAGE_PLATFORMS),--host-binary linux/$(a)=bin/linux-$(a)/kopf-wasm) $(IMAGE)

docs: check-go
	$(GO) test -count=1 -run '^TestCLIDocs$$' ./cmd/kopf-wasm/internal/app -update
	$(GO) test -count=1 -run '^TestSettingsDocs$$' ./host/settings -update

# The kopfexamples benchmark (internal/cmd/bench, issue 4): kopf-wasm beside a
# hand-written controller-runtime controller, in one run on one local control
# plane; prints a table (BENCH_FLAGS='-json' for JSON). Not part of `make test`.
#   make bench BENCH_FLAGS='-n 200'
BENCH_FLAGS ?= -n 2000
.PHONY: bench
bench: check-go controlplane
	$(GO) run ./internal/cmd/bench $(BENCH_FLAGS)

# Timers and daemons (internal/cmd/bench spawning, issue 6): the lateness of
# 1,000 one-second timers over a 60 s window, and the RSS per running daemon
# with 100 sleeping daemons. Not part of `make test`.
#   make bench-spawning BENCH_SPAWNING_FLAGS='-timers 200 -window 20s -daemons 20'
BENCH_SPAWNING_FLAGS ?= -timers 1000 -window 60s -daemons 100
.PHONY: bench-spawning
bench-spawning: check-go controlplane
	$(GO) run ./internal/cmd/bench spawning $(BENCH_SPAWNING_FLAGS)

# The fault tests' long version (internal/chaostest, issue 23): the crash loop
# SIGKILLs the host 100 times while 600 objects are created, updated and
# deleted (the short version in `make test`: 30 kills, 200 objects), beside
# the API server restart and the 410 Gone tests. The tests log their seed;
#   make chaos KOPF_WASM_CHAOS_SEED=N
# replays a kill schedule. Not part of `make test`.
.PHONY: chaos
chaos: check-go controlplane wasm
	KOPF_WASM_CHAOS=long $(GO) test -count=1 -v -timeout 40m ./internal/chaostest
