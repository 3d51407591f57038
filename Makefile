# NativeVirt — run `make help` for the targets.
# Fragments under hack/make/*.mk add targets owned by one concern (cluster, images, ...).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

OUT       ?= $(CURDIR)/_output
BIN       := $(OUT)/bin
GO        ?= go
GOFLAGS   ?=
export PATH := /usr/local/go/bin:$(BIN):$(PATH)

COMPONENTS := $(notdir $(wildcard cmd/*))

# Kubelet nodes of the local cluster (hack/cluster): `make run NODES=2`, `make test-e2e NODES=1`.
# NV_NODES in the environment works too. Unset, make run and cluster-up start 1 node and
# test-e2e starts E2E_NODES (two, so that the tests that need two nodes run).
NODES     ?= $(NV_NODES)
E2E_NODES ?= 2
# HA=1 (or NV_HA=1): make run deploys the HA installation (artifacts/local/ha: the production
# overlay's three-member etcd with TLS, two API servers, PDBs) instead of the default one.
HA        ?= $(NV_HA)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: deps ## Build the NativeVirt binaries into _output/bin.
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS) -o $(BIN)/ $(addprefix ./cmd/,$(COMPONENTS))

.PHONY: generate
generate: ## Regenerate deepcopy, defaulters, OpenAPI and clients (k8s.io/code-generator).
	hack/update-codegen.sh

.PHONY: verify
verify: deps ## gofmt, go vet, staticcheck, shellcheck (hack/*.sh) and generated-code drift.
	hack/verify.sh

.PHONY: test
test: test-unit test-integration test-e2e test-e2e-ha test-faults-quick ## All tests: unit, integration, e2e, the HA installation's e2e, the short fault suite.

.PHONY: test-unit
test-unit: deps ## Unit tests (no servers).
	$(GO) test $(GOFLAGS) -count=1 $$($(GO) list ./... | grep -v -E '/test/(integration|e2e|faults)')

.PHONY: test-integration
test-integration: ## Integration tests: real server in-process with a real embedded etcd.
	$(GO) test $(GOFLAGS) -count=1 -timeout 20m ./test/integration/...

.PHONY: test-e2e
# The e2e packages run one at a time (-p 1): each boots TCG guests, and two of them side by side
# on a 2-CPU machine starve each other's guests and timed steps.
test-e2e: deps k8s-binaries build images ## End-to-end tests against real kube-apiserver, kubelet pods, libvirt/QEMU.
	NV_NODES=$(or $(NODES),$(E2E_NODES)) hack/cluster/exclusive.sh $(GO) test $(GOFLAGS) -p 1 -count=1 -timeout 60m -v ./test/e2e/...

.PHONY: test-e2e-ha
# A cluster of its own with the HA installation (NV_HA=1: hack/deploy-local.sh deploys
# artifacts/local/ha) and the tests that check it (TestHA*).
test-e2e-ha: deps k8s-binaries build images ## End-to-end test of the HA installation (3 etcd members, 2 API servers, leader election).
	NV_HA=1 NV_NODES=$(or $(NODES),$(E2E_NODES)) hack/cluster/exclusive.sh $(GO) test $(GOFLAGS) -p 1 -count=1 -timeout 30m -v -run '^TestHA' ./test/e2e/

.PHONY: run
run: ## Main job: local Kubernetes + NativeVirt + a booted demo VM; Ctrl-C stops it all (NODES=2: two nodes; HA=1: the HA installation).
	NV_HA=$(or $(HA),0) NV_NODES=$(or $(NODES),1) hack/cluster/exclusive.sh hack/run.sh

.PHONY: clean
clean: ## Remove build output (_output).
	rm -rf $(OUT)

-include hack/make/*.mk
