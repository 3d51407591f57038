# Benchmarks (test/bench, issues 7 and 27): API path side by side (aggregated / direct / CRD), scale,
# control plane, start tax, density, VM memory, console. Tables on stdout, JSON and summary.md in
# _output/bench; method and the current figures in docs/performance.md. Included by the top-level Makefile.

BENCH_QUICK ?=
# Extra flags of nativevirt-bench, e.g. BENCH_ARGS='-suites=api-path -mode=process'.
BENCH_ARGS  ?=

.PHONY: bench
bench: ## Run the benchmarks (BENCH_QUICK=1: ≤ 3 min)
	@mkdir -p $(BIN) $(OUT)/bench
	$(GO) build $(GOFLAGS) -o $(BIN)/ ./cmd/nativevirt-apiserver ./test/bench/cmd/nativevirt-bench
	hack/cluster/exclusive.sh $(BIN)/nativevirt-bench -out=$(OUT)/bench -quick=$(if $(filter 1 true yes,$(BENCH_QUICK)),true,false) $(BENCH_ARGS)
