# gpuplan build, test and CI entry points. Run `make help` for a summary.

GO        ?= go
FUZZTIME  ?= 5s
BIN       := bin
# Packages whose tests need a GPU when built with -tags cuda.
GPU_TEST_PKGS := ./executor ./executor/nccl ./workloads/bfs ./workloads/kronbuild ./workloads/partbfs ./workloads/rebuild ./workloads/wavedag
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2

export PATH := $(PATH):/usr/local/go/bin

.PHONY: help run test bench fuzz fuzz-ci lint build-chart vet-cuda cuda-toolkit build-cuda cudalib cudalib-check gpu-test-bins ptx ptx-check gate ci clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

run: ## plan the embedded default example (no GPU needed)
	$(GO) run ./cmd/gpuplan plan

test: ## the whole pure-Go test suite (no GPU, CGO disabled), then the chart build's tests (-tags chart)
	CGO_ENABLED=0 $(GO) test ./...
	CGO_ENABLED=0 $(GO) test -tags chart ./evidence/... ./cmd/gpuplan/...

bench: ## run the pure-Go benchmarks
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchmem ./...

fuzz: ## run every fuzz target for FUZZTIME each, one at a time with one worker
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

fuzz-ci: ## every fuzz target for one second (in CI; what a fuzzer finds lands under testdata/fuzz/ as a seed)
	FUZZTIME=1s bash scripts/fuzz.sh

lint: ## go vet (also -tags chart), gofmt, staticcheck, and promtool on the telemetry exposition where promtool is installed
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet -tags chart ./evidence/... ./cmd/gpuplan/...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting:"; echo "$$unformatted"; exit 1; fi
	@if GOFLAGS= CGO_ENABLED=0 $(GO) run $(STATICCHECK) -version >/dev/null 2>&1; then \
		echo "staticcheck ./..."; GOFLAGS= CGO_ENABLED=0 $(GO) run $(STATICCHECK) ./... && \
		echo "staticcheck -tags chart ./evidence/... ./cmd/gpuplan/..." && \
		GOFLAGS= CGO_ENABLED=0 $(GO) run $(STATICCHECK) -tags chart ./evidence/... ./cmd/gpuplan/...; \
	else echo "staticcheck: not installable from the module proxy here; skipped"; fi
	@if command -v promtool >/dev/null 2>&1; then \
		echo "promtool check metrics (the telemetry exposition)"; \
		GPUPLAN_REQUIRE_PROMTOOL=1 CGO_ENABLED=0 $(GO) test -count=1 -run 'TestPrometheusExpositionPassesPromtool|TestWriteMetricsFile' ./executor ./cmd/gpuplan; \
	else echo "promtool: not on PATH (apt-get install prometheus); skipped"; fi

build-chart: ## build gpuplan with charts (-tags chart: report --chart, load --chart) into bin/gpuplan; the default build links no plotting library
	CGO_ENABLED=0 $(GO) build -tags chart -o $(BIN)/gpuplan ./cmd/gpuplan

cuda-toolkit: ## install nvcc, ptxas, cuda.h and CUB's headers (CUDA 11.8) from Debian non-free; idempotent
	bash scripts/cuda-toolkit.sh

vet-cuda: cuda-toolkit ## go vet with -tags cuda (and cmd/gpuplan with cuda,chart)
	CGO_ENABLED=1 $(GO) vet -tags cuda ./...
	CGO_ENABLED=1 $(GO) vet -tags cuda,chart ./cmd/gpuplan

build-cuda: cuda-toolkit ptx-check ## build everything with -tags cuda (the GPU executor), and bin/gpuplan with charts too (cuda,chart); the PTX must pass ptxas first
	CGO_ENABLED=1 $(GO) build -tags cuda ./...
	CGO_ENABLED=1 $(GO) build -buildvcs=true -tags cuda,chart -o $(BIN)/gpuplan ./cmd/gpuplan

cudalib: cuda-toolkit ## regenerate internal/cudalib's driver trampolines from the symbols the CUDA build calls
	bash scripts/gen-cudalib.sh

cudalib-check: cuda-toolkit ## the CUDA build loads libcuda at run time: trampolines up to date, no libcuda dependency, GPU commands fail clearly without it
	bash scripts/gen-cudalib.sh check
	CGO_ENABLED=1 $(GO) test -count=1 -tags cuda ./internal/cudalib
	CGO_ENABLED=1 $(GO) test -count=1 -tags cuda -run 'TestLazyLink|TestProbe|TestDevices' ./cmd/gpuplan

gpu-test-bins: cuda-toolkit ptx-check ## compile GPU test binaries (plain and -race) into bin/ to carry to a GPU machine (run scripts/gpu-check.sh there); the PTX must pass ptxas first
	@mkdir -p $(BIN)
	@for p in $(GPU_TEST_PKGS); do \
		n=$$(basename $$p); echo "go test -c -tags cuda $$p -> $(BIN)/$$n.test, $(BIN)/$$n.race.test"; \
		CGO_ENABLED=1 $(GO) test -buildvcs=true -ldflags=-s -c -tags cuda -o $(BIN)/$$n.test $$p || exit 1; \
		CGO_ENABLED=1 $(GO) test -buildvcs=true -ldflags=-s -race -c -tags cuda -o $(BIN)/$$n.race.test $$p || exit 1; \
	done
	CGO_ENABLED=1 $(GO) build -buildvcs=true -tags cuda,chart -o $(BIN)/gpuplan ./cmd/gpuplan

ptx: cuda-toolkit ## regenerate the committed PTX from the CUDA C sources
	bash scripts/ptx.sh build

ptx-check: cuda-toolkit ## check every PTX file with ptxas (sm_80, sm_90), that it regenerates unchanged, and that gpuplan run's images link (nvlink)
	bash scripts/ptx.sh check
	bash scripts/link-check.sh

gate: ## check the release claims in evidence/gates.json against evidence/results/
	CGO_ENABLED=0 $(GO) run ./cmd/gpuplan gate

ci: test lint fuzz-ci cuda-toolkit vet-cuda build-cuda cudalib-check ptx-check gate ## everything CI runs

clean: ## remove build outputs
	rm -rf $(BIN)
