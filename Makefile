# accelc — make help lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO      ?= go
BIN     := $(CURDIR)/bin
ACCELC  := $(BIN)/accelc
CORE    := $(BIN)/accelc-core
# accelc test's policy engine (OPA, Gatekeeper), a program of its own so
# that accelc's other commands do not start it up; accelc finds it beside itself.
ENGINE  := $(BIN)/accelc-policytest
EXAMPLE := examples/clusters/hetero-prod
# Every example cluster: a directory with an inventory beside its CUE.
EXAMPLES := $(patsubst %/inventory.json,%,$(wildcard examples/clusters/*/inventory.json))

# Tools, pinned; installed into ./bin by `make tools`.
CUE_VERSION   := v0.17.1
GATOR_VERSION := v3.23.1
STATICCHECK_VERSION := v0.6.1
CRANE_VERSION := v0.22.1
# ko builds accelc's image without a Docker daemon (make image).
KO_VERSION    := v0.19.1
# The control plane of the end-to-end tests (internal/controlplane); tools/e2e/go.mod pins the same.
K8S_VERSION   := v1.36.3
# The older minor the end-to-end suite's ODH workloads and hostile fixtures
# also run on (make e2e-older): the oldest the README's table supports, one
# without MutatingAdmissionPolicy; only its kube-apiserver, kube-scheduler
# and kube-controller-manager are built, from tools/e2e-k8s134.
K8S_OLDER_VERSION := v1.34.12
K8S_OLDER_MODULE  := tools/e2e-k8s134
# Gatekeeper's manager in the end-to-end tests: the gator version; tools/gatekeeper/go.mod pins the same.
GATEKEEPER_VERSION := $(GATOR_VERSION)
# Kueue's manager and CRDs in the end-to-end tests; tools/kueue/go.mod pins the same.
KUEUE_VERSION := v0.19.2
# Flux's source-controller and kustomize-controller in the end-to-end tests: the
# version of the Flux API modules accelc renders with; tools/flux/go.mod pins the same.
FLUX_VERSION  := v1.9.6
# Karpenter's NodePool CRD in the end-to-end tests and its scheduler in
# tools/karpenter: v1.14.1, the newest whose go.mod Go 1.26.8 builds
# (v1.14.3 and v1.15.0 ask for Go 1.26.9 and later).
KARPENTER_VERSION := v1.14.1
# Node Feature Discovery's nfd-master and CRDs in the end-to-end tests, and
# its validator in tools/upstream; tools/nfd/go.mod pins the same.
NFD_VERSION   := v0.19.0
# KWOK's simulated kubelets in the whole-cluster story and its benchmark;
# tools/kwok/go.mod pins the same.
KWOK_VERSION  := v0.8.0

export GOTOOLCHAIN := local

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/accelc, bin/accelc-core (every command but version and push, which accelc runs itself) and bin/accelc-policytest, the policy engine accelc test runs (static, CGO_ENABLED=0)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(ACCELC) ./cmd/accelc
	CGO_ENABLED=0 $(GO) build -trimpath -o $(CORE) ./cmd/accelc-core
	CGO_ENABLED=0 $(GO) build -trimpath -o $(ENGINE) ./cmd/accelc-policytest

# go-nvml leaves NVML's symbols undefined until it loads the driver's
# library; -z lazy keeps the binary starting where the driver is missing (cgo
# refuses the flag in a #cgo directive, so it is passed here).
.PHONY: build-nvml
build-nvml: ## Build bin/accelc-core with cgo and NVML, for `accelc inventory nvml` on GPU nodes (and bin/accelc, bin/accelc-policytest)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(ACCELC) ./cmd/accelc
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags=-extldflags=-Wl,-z,lazy -o $(CORE) ./cmd/accelc-core
	CGO_ENABLED=0 $(GO) build -trimpath -o $(ENGINE) ./cmd/accelc-policytest

.PHONY: demo
demo: build ## Show the example cluster's node view and render it into out/
	$(ACCELC) inventory show --config $(EXAMPLE) --group-by type
	@echo
	$(ACCELC) render $(EXAMPLE)

# make check's tests that start kube-apiserver skip: they look for it in a
# folder that is never there, and CI is cleared so that they skip rather
# than fail. A registry's tests run where docker-registry is installed.
.PHONY: check
check: lint ## Run this one every minute: lint and the unit tests (go test ./...): no control plane, no apt, no root (make test runs everything)
	ACCELC_K8S_BIN=$(BIN)/no-control-plane-in-make-check CI= $(GO) test ./...

.PHONY: test
test: lint control-plane registry ## Vet, check formatting and go.mod, run every test, check the policies with gator, run every benchmark once
	$(GO) test -timeout 20m ./...
	$(MAKE) --no-print-directory policy-check
	$(MAKE) --no-print-directory upstream-check
	$(MAKE) --no-print-directory karpenter-check
	$(MAKE) --no-print-directory escape-ablation
	$(MAKE) --no-print-directory bench-once

.PHONY: upstream-check
upstream-check: ## The rendered trees through upstream projects' own validators (tools/upstream: Node Feature Discovery's, NVIDIA's device plugin's, Kueue's, Open Data Hub's types)
	@v=$$(cd tools/upstream && $(GO) list -m -f '{{.Version}}' sigs.k8s.io/kueue); [ "$$v" = "$(KUEUE_VERSION)" ] || { echo "upstream-check: tools/upstream requires Kueue $$v, the Makefile's KUEUE_VERSION is $(KUEUE_VERSION)" >&2; exit 1; }
	cd tools/upstream && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) test -count=1 ./...

.PHONY: karpenter-check
karpenter-check: ## The rendered NodePools through Karpenter's own scheduler (tools/karpenter: which pool, instance type and capacity type each profile's pod gets)
	@v=$$(cd tools/karpenter && $(GO) list -m -f '{{.Version}}' sigs.k8s.io/karpenter); [ "$$v" = "$(KARPENTER_VERSION)" ] || { echo "karpenter-check: tools/karpenter requires Karpenter $$v, the Makefile's KARPENTER_VERSION is $(KARPENTER_VERSION)" >&2; exit 1; }
	set -o pipefail; cd tools/karpenter && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) test -count=1 -v ./... | grep -E '^(---|ok|FAIL|PASS)|→|not placed|no NodePool'

.PHONY: bench-once
bench-once: ## Run every benchmark once so none rots (BenchmarkReadLive, which fills an API server for minutes, is make bench-live's; the serve benchmarks run at a hundredth of their size)
	$(GO) test -run '^$$' -bench . -benchtime 1x $$($(GO) list ./... | grep -v /pkg/inventory/live)

.PHONY: registry
registry: ## Install the CNCF distribution registry (Debian docker-registry) for the push tests
	@command -v docker-registry >/dev/null || { [ "$$(id -u)" = 0 ] || { echo "registry: install docker-registry (apt-get install docker-registry)" >&2; exit 1; }; \
		export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-registry >/dev/null; }
	@echo "registry: $$(command -v docker-registry): $$(docker-registry --version 2>&1 | head -n 1)"

.PHONY: control-plane
control-plane: ## Install etcd and build kube-apiserver/kube-scheduler/kube-controller-manager into bin/k8s-<version>, for 1.36 and the older minor, for the end-to-end tests (cached)
	GO=$(GO) K8S_VERSION=$(K8S_VERSION) ./hack/control-plane.sh
	GO=$(GO) K8S_VERSION=$(K8S_OLDER_VERSION) K8S_MODULE=$(K8S_OLDER_MODULE) ./hack/control-plane.sh

.PHONY: e2e-tools
e2e-tools: control-plane ## Build kubectl, Gatekeeper's and Kueue's managers, fetch the CRDs the end-to-end tests install (cached in bin/)
	GO=$(GO) K8S_VERSION=$(K8S_VERSION) GATEKEEPER_VERSION=$(GATEKEEPER_VERSION) KUEUE_VERSION=$(KUEUE_VERSION) FLUX_VERSION=$(FLUX_VERSION) KARPENTER_VERSION=$(KARPENTER_VERSION) NFD_VERSION=$(NFD_VERSION) KWOK_VERSION=$(KWOK_VERSION) ./hack/e2e-tools.sh

.PHONY: image
image: $(BIN)/ko ## Build accelc's image (accelc-core, which serves the catalog) with ko and push it to KO_DOCKER_REPO (e.g. ghcr.io/acme/accelc); KO_DEFAULTBASEIMAGE picks the base
	@[ -n "$$KO_DOCKER_REPO" ] || { echo "image: set KO_DOCKER_REPO to the repository to push to, e.g. ghcr.io/acme/accelc" >&2; exit 2; }
	$(BIN)/ko build ./cmd/accelc-core --bare --platform=linux/amd64 --sbom=none --tags $$(git describe --tags --always --dirty 2>/dev/null || echo dev)

$(BIN)/ko:
	GOBIN=$(BIN) $(GO) install github.com/google/ko@$(KO_VERSION)

.PHONY: browser
browser: ## Install Debian's chromium for the page's headless-browser test (TestServePage)
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] || { echo "browser: install chromium (apt-get install chromium)" >&2; exit 1; }; \
		export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
	@echo "browser: $$(command -v chromium): $$(chromium --version 2>/dev/null)"

.PHONY: e2e
e2e: build e2e-tools browser $(BIN)/ko ## End to end: every example through etcd, kube-apiserver, kube-scheduler and Gatekeeper, and Kueue's controller; the whole story in one cluster (TestStory); the cluster, pod policy and admission cost benchmarks once, small (e2e/)
	CI=true $(GO) test -tags e2e -count=1 -v -timeout 60m ./e2e
	CI=true ACCELC_BENCH_SCALE=2 ACCELC_BENCH_PODS=150 ACCELC_BENCH_IDLE_SECONDS=5 $(GO) test -tags e2e -count=1 -run '^$$' -bench '^BenchmarkCluster$$' -benchtime 1x -timeout 20m ./e2e
	CI=true ACCELC_BENCH_POLICY_FLEETS=100x20 $(GO) test -tags e2e -count=1 -run '^$$' -bench '^BenchmarkPodProfilePolicy$$' -benchtime 20x -timeout 10m ./e2e
	CI=true ACCELC_BENCH_ROUNDS=1 $(GO) test -tags e2e -count=1 -run '^$$' -bench '^BenchmarkAdmissionCost$$' -benchtime 20x -timeout 10m ./e2e
	$(MAKE) --no-print-directory e2e-older

# The older minor's subset: every example through admission (its ODH
# workloads and hostile fixtures, rendered for the older minor; where the
# example runs the catalog service, through accelc's own mutating webhook,
# which stands in for the MutatingAdmissionPolicies) and the attacks, on
# the same harness with the older control plane (about 8 minutes).
.PHONY: e2e-older
e2e-older: build e2e-tools ## The end-to-end suite's ODH workloads and hostile fixtures (TestEndToEnd, TestAttacks) on the older Kubernetes minor (K8S_OLDER_VERSION), which serves no MutatingAdmissionPolicy
	CI=true ACCELC_K8S_VERSION=$(K8S_OLDER_VERSION) $(GO) test -tags e2e -count=1 -v -timeout 40m -run '^(TestEndToEnd|TestAttacks)$$' ./e2e

.PHONY: cluster
cluster: build e2e-tools ## Start the whole cluster (hetero-prod on KWOK, Gatekeeper, Kueue, Flux, nfd-master) and keep it until Ctrl-C; prints the kubeconfig
	ACCELC_CLUSTER_HOLD=1 $(GO) test -tags e2e -count=1 -v -timeout 0 -run '^TestCluster$$' ./e2e

.PHONY: bench-policy
bench-policy: build e2e-tools ## What accelc-pod-profile costs the API server a pod, and to compile, for generated clusters of 5 to 1,000 teams (ACCELC_BENCH_POLICY_FLEETS; docs/scale.md)
	CI=true $(GO) test -tags e2e -count=1 -run '^$$' -bench '^BenchmarkPodProfilePolicy$$' -benchtime 300x -timeout 30m ./e2e

.PHONY: bench-admission
bench-admission: build e2e-tools ## What accelc's admission (its admission policies, Gatekeeper's webhook conditions) costs the API server a pod, at creation and at Kueue's admission, beside the same pods written by hand, on a quiet API server (ACCELC_BENCH_ROUNDS, 3; docs/scale.md)
	CI=true $(GO) test -tags e2e -count=1 -run '^$$' -bench '^BenchmarkAdmissionCost$$' -benchtime 1000x -timeout 30m ./e2e

.PHONY: bench-cluster
bench-cluster: build e2e-tools ## The storm (3,000 GPU pods and Jobs on 1,015 KWOK nodes) on bare, Kueue alone, Gatekeeper alone and accelc as rendered, interleaved: pods/s, create→bound p50/p99, CPU per pod across every component, API writes and webhook calls per pod, webhook latency, peak memory, Workloads (ACCELC_BENCH_SCALE, ACCELC_BENCH_PODS, ACCELC_BENCH_ROUNDS, ACCELC_BENCH_VARIANTS; docs/scale.md)
	CI=true $(GO) test -tags e2e -count=1 -run '^$$' -bench '^BenchmarkCluster$$' -benchtime 1x -timeout 240m -v ./e2e

.PHONY: policy-check
policy-check: build $(BIN)/gator ## accelc test on every example; gator verify the policy folders and the examples' suites; gator expand the mutations
	$(BIN)/gator verify ./policies/...
	@rm -rf out/suites
	@set -e; for d in $(EXAMPLES); do echo "accelc test $$d"; $(ACCELC) test $$d --write-suite out/suites/$$(basename $$d); done
	$(BIN)/gator verify ./out/suites/...
	GATOR=$(BIN)/gator ACCELC=$(ACCELC) ./hack/gator-expand-check.sh

.PHONY: lint
lint: ## gofmt, go vet, staticcheck, go mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) mod tidy -diff

.PHONY: golden
golden: ## Refresh golden files and expected CLI output after an intended change
	$(GO) test ./... -update
	@git status --short testdata examples cmd/accelc-core/testdata

.PHONY: bench
bench: build tools registry ## Benchmarks: `accelc version` and `accelc push` beside crane's; 5,000-node render beside `cue export`; one pod through the constraints beside required-labels; accelc audit of 50,000 pods in 5,000 workloads
	$(GO) test ./cmd/accelc -run '^$$' -bench CLI -benchtime 20x
	$(GO) test ./pkg/render -run '^$$' -bench . -benchmem -benchtime 10x
	./hack/bench.sh
	$(GO) test ./pkg/policytest/engine -run '^$$' -bench Admission -benchmem -benchtime 1000x
	$(GO) test ./pkg/estimate -run '^$$' -bench Query -benchmem
	ACCELC_BENCH_NODES=5000 ACCELC_BENCH_PODS=50000 $(GO) test ./pkg/audit -run '^$$' -bench 'Audit$$' -benchmem -benchtime 1x

.PHONY: bench-cli
bench-cli: registry ## `accelc version` and `accelc push` beside `crane version` and `crane append` of the same tree, in turns: each side's min/p50/p90, the ratios, sizes, init time (BENCH_CLI_RUNS, 30)
	$(GO) test ./cmd/accelc -run '^$$' -bench '^BenchmarkCLI$$' -benchtime $(or $(BENCH_CLI_RUNS),30)x

.PHONY: bench-push
bench-push: build registry $(BIN)/crane ## Push a rendered 5,000-node cluster to the loopback registry, beside crane
	$(GO) test ./pkg/artifact -run '^$$' -bench Push -benchtime 20x -benchmem
	./hack/bench-push.sh

$(BIN)/crane:
	GOBIN=$(BIN) $(GO) install github.com/google/go-containerregistry/cmd/crane@$(CRANE_VERSION)

.PHONY: bench-live
bench-live: control-plane ## Live inventory, accelc serve and accelc audit --live on a real API server with 5,000 nodes and 50,000 pods: live.Read with each lever turned back, beside kubectl; accelc serve --live as a process of its own: RSS at ready and under 100 clients beside the limit rendered for the size, p99s beside the catalog ConfigMap's, and 250 clients on a 20,000-node node view; the workloads reader (paged, each lever turned) and audit beside kubectl get pods -A -o json (ACCELC_BENCH_KUBECONFIG: read that cluster instead)
	$(GO) test ./pkg/inventory/live -run '^$$' -bench ReadLive -benchtime 5x -timeout 30m
	ACCELC_BENCH_LIVE=1 $(GO) test ./pkg/serve -run '^$$' -bench 'ServeLive$$|ServeNodeView$$' -benchtime 1x -timeout 30m
	ACCELC_BENCH_LIVE=1 $(GO) test ./pkg/workloads -run '^$$' -bench ReadLive -benchmem -benchtime 3x -timeout 30m
	ACCELC_BENCH_LIVE=1 $(GO) test ./pkg/audit -run '^$$' -bench AuditLive -benchtime 1x -timeout 30m

.PHONY: escape-ablation
escape-ablation: control-plane ## Each guard rule taken out of the admission template in turn: the escape check must then find escapes (pkg/policytest/engine TestGuardsAreNeeded)
	$(GO) test ./pkg/policytest/engine -run '^TestGuardsAreNeeded$$' -count=1 -timeout 30m -escape.ablate

.PHONY: fuzz
fuzz: control-plane ## Fuzz each parser, the artifact reader and the URL sanitiser briefly (FUZZTIME=10s each); the escape check with ESCAPE_PODS (100,000) pods per example
	$(GO) test ./pkg/policytest/engine -run '^TestEscapes$$' -count=1 -v -timeout 90m -escape.pods $(or $(ESCAPE_PODS),100000) -escape.seed $(or $(ESCAPE_SEED),1)
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(or $(FUZZTIME),10s)
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzGFDProduct$$' -fuzztime $(or $(FUZZTIME),10s)
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzLabels$$' -fuzztime $(or $(FUZZTIME),10s)
	$(GO) test ./pkg/workloads -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(or $(FUZZTIME),10s)
	$(GO) test ./pkg/compile -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(or $(FUZZTIME),10s)
	# Minimizing a new input of a tar layer takes up to a minute by default, with no exec in between.
	$(GO) test ./pkg/artifact -run '^$$' -fuzz '^FuzzReadLayer$$' -fuzztime $(or $(FUZZTIME),10s) -fuzzminimizetime 2s
	$(GO) test ./pkg/safeurl -run '^$$' -fuzz '^FuzzSource$$' -fuzztime $(or $(FUZZTIME),10s)
	$(GO) test ./pkg/safeurl -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(or $(FUZZTIME),10s)

.PHONY: tools
tools: $(BIN)/cue $(BIN)/gator ## Install pinned tools into ./bin

$(BIN)/cue:
	GOBIN=$(BIN) $(GO) install cuelang.org/go/cmd/cue@$(CUE_VERSION)

# Gatekeeper's CLI, which evaluates templates with Gatekeeper's own engine.
$(BIN)/gator:
	GOBIN=$(BIN) $(GO) install github.com/open-policy-agent/gatekeeper/v3/cmd/gator@$(GATOR_VERSION)

.PHONY: clean
clean: ## Remove bin/ and out/
	rm -rf $(BIN) out
