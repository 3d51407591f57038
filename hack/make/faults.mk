# The fault suite (test/faults, issue 25): with guests running and a writer writing, kill each
# NativeVirt component and each node's processes one at a time, then take a node away; what held
# and what it cost in docs/reliability.md (tables also in _output/faults). Included by the
# top-level Makefile. Two nodes (NODES=…), like test-e2e; its cluster is brought up and down.

FAULTS_QUICK ?=

.PHONY: test-faults test-faults-quick
test-faults: deps k8s-binaries build images ## Fault suite under load, ≤ 20 min (FAULTS_QUICK=1: the short form of make test)
	NV_NODES=$(or $(NODES),$(E2E_NODES)) NV_FAULTS_QUICK=$(if $(filter 1 true yes,$(FAULTS_QUICK)),1,0) \
		hack/cluster/exclusive.sh $(GO) test $(GOFLAGS) -count=1 -timeout 30m -v ./test/faults/

test-faults-quick: ## The short fault suite (one pod of each component; no node loss), run by make test
	$(MAKE) test-faults FAULTS_QUICK=1
