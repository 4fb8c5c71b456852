# Weft's developer commands. Every target works offline on a machine with Go,
# Node and npm, once the Go module proxy and the npm registry have been reached
# (or their caches filled).
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(CURDIR)/bin:$(PATH)
export GOFLAGS ?= -mod=readonly

GRPCURL_VERSION := v1.9.4
PROTOVALIDATE_VERSION := v1.2.2
GO_TEST_FLAGS ?= -count=1 -timeout=20m

.PHONY: all gen gen-check lint breaking test test-go test-ts run bench bench-scale tools chromium console vendor-protovalidate clean

all: lint test

## node_modules: the pinned npm packages (buf, protoc-gen-es, the TS client's dependencies).
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund

## console/node_modules: the web console's pinned npm packages (its own package.json).
console/node_modules/.package-lock.json: console/package.json console/package-lock.json
	npm ci --prefix console --ignore-scripts --no-audit --no-fund

## tools: grpcurl and Chromium for the end-to-end tests.
bin/grpcurl:
	GOBIN=$(CURDIR)/bin GOFLAGS= go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)

## chromium: Debian's Chromium for the browser test (cmd/weftd/browser_test.go),
## installed with apt only when /usr/bin/chromium is missing. Where apt cannot
## run (a laptop), it says so and the test skips loudly (it fails when CI is set).
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "make tools: installing Debian's chromium"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	else echo "make tools: /usr/bin/chromium is missing and apt-get cannot install it here; the browser test will skip"; fi

tools: node_modules/.package-lock.json console/node_modules/.package-lock.json bin/grpcurl chromium

## gen: regenerate Go (gen/) and TypeScript (client/ts/src/gen/) from proto/, then the
## events' JSON Schema files (docs/events/) from the generated descriptors, then the
## web console (console/dist/), which bundles the generated TypeScript.
gen: node_modules/.package-lock.json console/node_modules/.package-lock.json
	buf generate
	go run ./tools/eventschema docs/events
	node console/build.mjs

## console: build the web console (console/src/) into console/dist/, which weftd embeds
## and serves at /ui/ (docs/console.md). Commit the result, like generated code.
console: console/node_modules/.package-lock.json
	node console/build.mjs

## gen-check: fail when regenerating changes anything (generated code is committed).
gen-check: gen
	@test -z "$$(git status --porcelain -- gen client/ts/src/gen docs/events console/dist)" || \
		{ echo "generated code is stale: run 'make gen' and commit"; git status --porcelain -- gen client/ts/src/gen docs/events console/dist; exit 1; }

## lint: buf lint and breaking, gofmt, go vet, and the TypeScript type check.
lint: node_modules/.package-lock.json console/node_modules/.package-lock.json breaking
	buf lint
	@bad=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
		test -z "$$bad" || { echo "gofmt would change:"; echo "$$bad"; exit 1; }
	go vet ./...
	tsc -p client/ts --noEmit
	tsc -p console --noEmit

## breaking: the v1 API may only grow: compare with the commit that introduced it.
breaking: node_modules/.package-lock.json
	@base=$$(git log --diff-filter=A --format=%H -- proto/weft/v1/run.proto 2>/dev/null | tail -n 1); \
		if [ -z "$$base" ]; then echo "buf breaking: no baseline commit in this clone; skipped"; \
		else buf breaking --against ".git#ref=$$base"; fi

## test: every test: Go (store suites on memory, Pebble and PostgreSQL; server;
## weftd, curl, grpcurl and the TS client as real processes).
test: tools test-go

test-go:
	go test $(GO_TEST_FLAGS) ./...

## run: weftd on the embedded default (Pebble in ./.weft), on 127.0.0.1:7400.
run:
	go run ./cmd/weftd

## bench: the end-to-end benchmark (bench/, docs/performance.md): the raw commit
## ceilings of PostgreSQL and Pebble, then Weft through a real weftd in the
## cluster (PostgreSQL, Redis) and embedded configurations, with issue 8's
## targets; a table on stdout, JSON under bench/out/. A full run (W=2000)
## takes about 15 minutes on a 2-core machine, so make bench runs W=500 unless
## WEFT_BENCH_W says otherwise. The store micro-benchmarks:
## go test -run '^$$' -bench . ./store/...
WEFT_BENCH_W ?= 500
bench:
	WEFT_BENCH_W=$(WEFT_BENCH_W) go run ./bench/cmd/weftbench

## bench-scale: issue 8's two scale targets alone (docs/performance.md, "Scale"):
## the workload (W=6000, C=16: rounds of about 15 s, long enough that Pebble's
## compactions average out) with 10k, 100k and 1M completed runs stored, and
## weftd's memory with 100k active runs, embedded. 15 to 25 minutes and 10 GB of
## temporary disk on a 2-core machine; go run ./bench/cmd/weftbench -h lists the
## -scale-* flags (WEFT_BENCH_SCALE_*), e.g. WEFT_BENCH_SCALE_CONFIGS=cluster,embedded.
bench-scale:
	go run ./bench/cmd/weftbench -scale-only -scale-w 6000

## vendor-protovalidate: refresh the vendored validate.proto from the Go module cache.
vendor-protovalidate:
	@dir=$$(GOFLAGS= go mod download -json github.com/bufbuild/protovalidate@$(PROTOVALIDATE_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
		install -D -m0644 $$dir/proto/protovalidate/buf/validate/validate.proto third_party/protovalidate/buf/validate/validate.proto; \
		install -D -m0644 $$dir/LICENSE third_party/protovalidate/LICENSE

clean:
	rm -rf bin node_modules client/ts/dist-test console/node_modules console/test-dist
