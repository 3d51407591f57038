# The local Kubernetes (hack/cluster: one control plane, NODES kubelet nodes) and the Kubernetes
# binaries it runs.
# Included by the top-level Makefile.

.PHONY: deps k8s-binaries cluster-up down

deps: ## Install the Debian packages of the local environment (idempotent; lists in hack/deps).
	hack/install-deps.sh

k8s-binaries: ## Build kube-apiserver, kubelet, ... from the module proxy (cached in _output/bin).
	hack/build-k8s.sh

cluster-up: deps k8s-binaries ## Start the local Kubernetes, NODES nodes (default 1; idempotent; KUBECONFIG=_output/local/kubeconfig).
	NV_NODES=$(or $(NODES),1) hack/cluster/up.sh

down: ## Stop a local cluster left behind, all its nodes (WIPE=1 also deletes its state).
	hack/cluster/down.sh
