// Command nativevirt-bench runs NativeVirt's benchmarks (make bench) against the local cluster
// of hack/cluster: the API path side by side (aggregated, direct, CRD), scale, the control plane
// and the console. It prints one table per suite and writes _output/bench/<suite>.json and
// _output/bench/summary.md. BENCH_QUICK=1 (or -quick) runs smaller counts in under 3 minutes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nativevirt/nativevirt/test/bench"
)

// sizes are the counts of one run.
type sizes struct {
	api bench.APIPathConfig
	// scaleFresh fills a fresh process the benchmark owns; scale the deployed server, with fewer
	// VMs: 10,000 make the shared deployment's embedded etcd grow by hundreds of MiB that nothing
	// gives back, and under that load its pod fails its liveness probe (see docs/performance.md).
	scaleFresh, scale bench.ScaleConfig
	cp                bench.ControlPlaneConfig
	density           bench.DensityConfig
	startTax          bench.StartTaxConfig
}

var (
	full = sizes{
		api:        bench.APIPathConfig{Clients: []int{1, 16}, Creates: 500, Gets: 2000, Lists: 40, WatchEvents: 300, Rounds: 5},
		scaleFresh: bench.ScaleConfig{VMs: 10000, Namespaces: 100, Workers: 32, Repeats: 3, Settle: 45 * time.Second},
		scale:      bench.ScaleConfig{VMs: 2000, Namespaces: 20, Workers: 32, Repeats: 3, Settle: 45 * time.Second},
		cp:         bench.ControlPlaneConfig{Burst: 100, Interval: 100 * time.Millisecond, RunningBurst: 20, SingleStarts: 5, PausedBurst: true},
		density:    bench.DensityConfig{N: 100, Interval: 100 * time.Millisecond, CPUAllocationRatio: 100},
		startTax:   bench.StartTaxConfig{Rounds: 5},
	}
	quick = sizes{
		api:        bench.APIPathConfig{Clients: []int{1, 16}, Creates: 60, Gets: 300, Lists: 6, WatchEvents: 60, Rounds: 2},
		scaleFresh: bench.ScaleConfig{VMs: 1000, Namespaces: 10, Workers: 32, Repeats: 1, Settle: 10 * time.Second},
		scale:      bench.ScaleConfig{VMs: 300, Namespaces: 3, Workers: 32, Repeats: 1, Settle: 10 * time.Second},
		cp:         bench.ControlPlaneConfig{Burst: 5, Interval: 100 * time.Millisecond, RunningBurst: 3, SingleStarts: 3},
		density:    bench.DensityConfig{N: 20, Interval: 100 * time.Millisecond, CPUAllocationRatio: 100},
		startTax:   bench.StartTaxConfig{Rounds: 3},
	}
	allSuites = []string{"api-path", "control-plane", "start-tax", "density", "vm-memory", "console", "scale-fresh", "scale"}
	// ownServerSuites start the servers they measure and need no cluster: a run of only these
	// does not bring the cluster up.
	ownServerSuites = []string{"scale-fresh"}
)

// maxAttempts bounds how often a suite runs when the server is replaced under it.
const maxAttempts = 3

func main() {
	os.Exit(run())
}

func run() int {
	quickMode := flag.Bool("quick", os.Getenv("BENCH_QUICK") == "1", "smaller counts (also BENCH_QUICK=1)")
	out := flag.String("out", "_output/bench", "directory of the JSON results and summary.md")
	suites := flag.String("suites", strings.Join(allSuites, ","), "suites to run, comma-separated")
	mode := flag.String("mode", envOr("NV_BENCH_MODE", bench.ModeAuto),
		"how to reach nativevirt-apiserver: auto (the deployment, deployed if missing), deployed, process (a process of this machine)")
	asDeployed := flag.Bool("as-deployed", false,
		"measure a NativeVirt deployment found in the cluster as it is (default: hack/deploy-local.sh updates it to this tree first)")
	keep := flag.Bool("keep-cluster", os.Getenv("NV_BENCH_KEEP_CLUSTER") == "1", "leave a cluster this run started running")
	scaleVMs := flag.Int("scale-vms", 0, "override the number of VMs of the scale suite (the deployed server; e.g. 10000)")
	densityN := flag.Int("density-n", 0, "override the VMIs (and VMs, and plain pods) of the density suite (100; quick 20)")
	densityRatio := flag.Int("density-cpu-allocation-ratio", 0, "nativevirt-controller's --cpu-allocation-ratio during the density suite (100: 100 VMIs and 100 VMs fit the two-node cluster)")
	flag.Parse()

	sz := full
	if *quickMode {
		sz = quick
	}
	if *scaleVMs > 0 {
		sz.scale.VMs = *scaleVMs
		sz.scale.Namespaces = max(1, *scaleVMs/100)
	}
	if *densityN > 0 {
		sz.density.N = *densityN
	}
	if *densityRatio > 0 {
		sz.density.CPUAllocationRatio = *densityRatio
	}
	wanted := strings.Split(*suites, ",")
	for _, s := range wanted {
		if !slices.Contains(allSuites, s) {
			fmt.Fprintf(os.Stderr, "unknown suite %q (have %s)\n", s, strings.Join(allSuites, ", "))
			return 2
		}
	}
	outDir, err := filepath.Abs(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now()
	machine := bench.ReadMachine()
	fmt.Printf("nativevirt-bench: %s; quick=%v\n", machine, *quickMode)

	opts := bench.Options{Mode: *mode, WorkDir: filepath.Join(outDir, "work"), KeepCluster: *keep, AsDeployed: *asDeployed}
	var env *bench.Env
	if slices.ContainsFunc(wanted, func(s string) bool { return !slices.Contains(ownServerSuites, s) }) {
		env, err = bench.Setup(ctx, opts)
	} else {
		env, err = bench.NewEnv(opts) // no cluster needed
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if env != nil {
			if err := env.Close(cctx); err != nil {
				fmt.Fprintln(os.Stderr, "clean-up:", err)
			}
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	if env.Server != nil {
		fmt.Printf("nativevirt-apiserver: %s\n", env.Server.Describe)
	}

	var results []*bench.Result
	failed := false
	// do runs one suite. A suite on the server under test (the deployment; every suite but
	// ownServerSuites) runs again when that server is replaced mid-suite.
	do := func(name string, fn func(ctx context.Context) (*bench.Result, error)) {
		if !slices.Contains(wanted, name) || ctx.Err() != nil {
			return
		}
		onServer := !slices.Contains(ownServerSuites, name)
		t0, load := time.Now(), bench.LoadAverage()
		var r *bench.Result
		var err error
		for attempt := 1; ; attempt++ {
			if !onServer {
				r, err = fn(ctx)
				break
			}
			if env.Server.Refresh != nil {
				if err = env.Server.Refresh(ctx); err != nil {
					break
				}
			}
			id, attemptStart := env.Server.ID(ctx), time.Now().Add(-time.Second)
			sctx, cancel := context.WithCancel(ctx)
			go watchServer(sctx, env, id, cancel)
			r, err = fn(sctx)
			cancel()
			now := env.Server.ID(ctx)
			ended := ""
			if now != id && env.Server.LastTermination != nil {
				// The kubelet reports a container's end a moment after the pod stops being ready.
				for deadline := time.Now().Add(15 * time.Second); ended == "" && time.Now().Before(deadline); {
					if ended = env.Server.LastTermination(ctx, attemptStart); ended == "" {
						time.Sleep(time.Second)
					}
				}
			}
			// The server's own container ending under the load (an OOM kill, a failed liveness
			// probe, a crash) is the suite's result, not an accident of the shared cluster:
			// running the same load again would only end the same way. A replaced pod is.
			failedUnderLoad := ended != ""
			if now == id || failedUnderLoad || attempt == maxAttempts || ctx.Err() != nil {
				if now != id {
					if r == nil {
						r = &bench.Result{}
					}
					r.Note("nativevirt-apiserver was replaced or restarted during the suite (%s → %s; its container ended: %s)", id, now, orNone(ended))
					if failedUnderLoad {
						err = errors.Join(err, fmt.Errorf("nativevirt-apiserver's container ended under the load: %s", ended))
					}
				}
				break
			}
			fmt.Fprintf(os.Stderr, "%s: nativevirt-apiserver was replaced during the suite (%s → %s, another user of the cluster?); running it again\n", name, id, now)
			t0, load = time.Now(), bench.LoadAverage()
		}
		if r == nil {
			r = &bench.Result{Suite: name, Title: name}
		}
		r.Suite, r.Machine, r.Started, r.Quick = name, machine, t0, *quickMode
		r.Seconds, r.LoadBefore, r.LoadAfter = time.Since(t0).Seconds(), load, bench.LoadAverage()
		if r.Setup == nil {
			r.Setup = map[string]string{}
		}
		if onServer {
			r.Notes = append(r.Notes, env.Server.Notes...)
			r.Setup["nativevirt-apiserver"] = env.Server.Describe
		}
		if err != nil {
			failed = true
			r.Note("FAILED: %v", err)
		}
		r.Print(os.Stdout)
		if err := r.Write(outDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
		}
		results = append(results, r)
	}

	targets := []bench.Target{
		{Name: bench.Aggregated, Label: "kube-apiserver → APIService → nativevirt-apiserver", Config: env.Kube, Resource: bench.VMResource},
		{Name: bench.Direct, Label: "nativevirt-apiserver directly", Config: env.Direct, Resource: bench.VMResource},
		{Name: bench.CRD, Label: "CRD " + bench.CRDResource.GroupResource().String() + " on kube-apiserver", Config: env.Kube, Resource: bench.CRDResource},
	}
	do("api-path", func(ctx context.Context) (*bench.Result, error) {
		n, err := env.InstallCRD(ctx)
		if err != nil {
			return nil, fmt.Errorf("CRD target: %w", err)
		}
		r, err := bench.RunAPIPath(ctx, env, sz.api, targets)
		if r != nil {
			r.Setup["CRD schema"] = fmt.Sprintf("%d bytes of structural schema generated from /openapi/v3/apis/kubevirt.io/v1", n)
		}
		return r, err
	})
	do("control-plane", func(ctx context.Context) (*bench.Result, error) { return bench.RunControlPlane(ctx, env, sz.cp) })
	do("start-tax", func(ctx context.Context) (*bench.Result, error) { return bench.RunStartTax(ctx, env, sz.startTax) })
	do("density", func(ctx context.Context) (*bench.Result, error) { return bench.RunDensity(ctx, env, sz.density) })
	do("vm-memory", func(ctx context.Context) (*bench.Result, error) { return bench.RunVMMemory(ctx, env) })
	do("console", func(ctx context.Context) (*bench.Result, error) { return bench.RunConsole(ctx, env) })
	do("scale-fresh", func(ctx context.Context) (*bench.Result, error) { return bench.RunScaleFresh(ctx, env, sz.scaleFresh) })
	// Last: 10,000 VMs may take the server down (memory), which must not spoil the others.
	do("scale", func(ctx context.Context) (*bench.Result, error) {
		return bench.RunScale(ctx, env, sz.scale, targets[:2])
	})

	if err := writeSummary(outDir, machine, started, *quickMode, results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		failed = true
	}
	fmt.Printf("\nnativevirt-bench: %.0f s; results in %s\n", time.Since(started).Seconds(), outDir)
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "interrupted")
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

// writeSummary writes summary.md: the machine and every suite's table, for docs/performance.md.
func writeSummary(dir string, m bench.Machine, started time.Time, quick bool, results []*bench.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "summary.md"))
	if err != nil {
		return err
	}
	kind := "full run (make bench)"
	if quick {
		kind = "quick run (BENCH_QUICK=1 make bench)"
	}
	fmt.Fprintf(f, "Results of a %s started %s, %.0f s in all.\n\n", kind, started.UTC().Format(time.RFC3339), time.Since(started).Seconds())
	fmt.Fprintf(f, "Machine: %s.\n\n", m)
	for _, r := range results {
		r.Markdown(f)
	}
	return errors.Join(f.Close())
}

// watchServer cancels a suite as soon as the server it started with is replaced: requests to a
// vanished pod would otherwise only end with their timeout.
func watchServer(ctx context.Context, env *bench.Env, id string, cancel context.CancelFunc) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		if now := env.Server.ID(ctx); now != id && ctx.Err() == nil {
			cancel()
			return
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "nothing recorded"
	}
	return s
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
