package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// ScaleConfig sizes the scale suite.
type ScaleConfig struct {
	// VMs are created in each scenario: all in one namespace, then spread over Namespaces.
	VMs, Namespaces int
	// Workers create and delete concurrently.
	Workers int
	// Repeats is how often each read is measured (the median is shown).
	Repeats int
	// Settle bounds the wait for controllers' writes after the creates (a deployed controller
	// writes every new VM's status); reads start when it is over even if writes go on.
	Settle time.Duration
}

// ScaleRecord is one figure of the scale suite.
type ScaleRecord struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Detail   string  `json:"detail,omitempty"`
}

// Goals of the issue.
const (
	listGoal = time.Second
	rssGoal  = 400 << 20
)

// scaleServers are the servers a scale run fills: one per scenario, or the same one for both.
type scaleServers struct {
	// label describes them in the setup; via says how kubectl reaches them.
	label, via string
	// open gives the server of the next scenario; release ends what open started for it.
	open func(ctx context.Context) (h *scaleHost, release func() error, err error)
}

// scaleHost is the server one scenario of the scale suite fills and reads back.
type scaleHost struct {
	// create is the target the VMs are created and deleted through (directly); reads are read
	// back (each paginated list, list and watch is measured per read target).
	create Target
	reads  []Target
	// namespace makes a namespace the VMs may live in; dropNamespace removes it (both may be
	// no-ops for a server without namespace admission).
	namespace, dropNamespace func(ctx context.Context, name string) error
	// kubectl runs _output/bin/kubectl against the server.
	kubectl func(args ...string) (string, error)
	// footprint reads the server's memory and etcd size.
	footprint func(ctx context.Context) (footprint, error)
	// metrics reaches the server's /metrics.
	metrics *rest.Config
	logf    func(format string, args ...any)
	// crd, when set, is a kube-apiserver serving the CRD target (c): it receives the same VMs,
	// and kubectl get reads them there alternately with the server's.
	crd *crdHost
}

// crdHost is a kube-apiserver with the CRD of target (c) installed.
type crdHost struct {
	target    Target
	namespace func(ctx context.Context, name string) error
	kubectl   func(args ...string) (string, error)
}

// RunScale creates cfg.VMs VirtualMachines in one namespace, measures reading them back
// (kubectl get vm -A, a paginated list, a watch delivering them all) and the server's memory
// and etcd size, deletes them, and does the same with the VMs spread over cfg.Namespaces.
// targets are (a) and (b) of the deployed server; objects are created directly (b) because
// only reading is measured. Both scenarios run on the same server, so the second one's figures
// include what the first one's VMs left behind (the watch cache's history, etcd's free pages).
func RunScale(ctx context.Context, e *Env, cfg ScaleConfig, targets []Target) (*Result, error) {
	h := &scaleHost{
		create: targets[1], reads: targets,
		namespace: e.Namespace,
		dropNamespace: func(ctx context.Context, ns string) error {
			err := e.KubeClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		kubectl:   e.Cluster.Kubectl,
		footprint: func(ctx context.Context) (footprint, error) { return serverFootprint(ctx, e.Server.PID, e.Direct) },
		metrics:   e.Direct,
		logf:      e.Logf,
	}
	res := &Result{Suite: "scale", Title: fmt.Sprintf("Scale: %d VirtualMachines on the server under test", cfg.VMs)}
	res.Note("both scenarios run on the same server, one after the other: the second one's figures include what the first one's %d VMs left behind", cfg.VMs)
	return runScale(ctx, cfg, res, scaleServers{
		label: "nativevirt-apiserver under test (" + e.Server.Mode + ")",
		via:   "through kube-apiserver",
		open: func(context.Context) (*scaleHost, func() error, error) {
			return h, func() error { return nil }, nil
		},
	})
}

// runScale runs the scenarios, cfg.VMs in one namespace and then in cfg.Namespaces, each on
// the server that servers.open gives for it.
func runScale(ctx context.Context, cfg ScaleConfig, res *Result, servers scaleServers) (*Result, error) {
	res.Columns = []string{"scenario", "measurement", "value", "goal"}
	res.Setup = map[string]string{
		"server":  servers.label,
		"reads":   fmt.Sprintf("each read is run %d times; the median is shown", cfg.Repeats),
		"watch":   "a watch from resourceVersion 0 (served from the watch cache) until it delivered an ADDED event for every object",
		"kubectl": "real kubectl from _output/bin, default output (server-side table, chunks of 500), " + servers.via,
	}
	var records []ScaleRecord
	add := func(scenario, metric string, value float64, unit, detail string) {
		records = append(records, ScaleRecord{Scenario: scenario, Metric: metric, Value: value, Unit: unit, Detail: detail})
	}
	defer func() { res.Records = records }()

	for _, nsCount := range []int{1, cfg.Namespaces} {
		scenario := fmt.Sprintf("%d VMs in %d namespace", cfg.VMs, nsCount)
		if nsCount > 1 {
			scenario += "s"
		}
		h, release, err := servers.open(ctx)
		if err != nil {
			return res, fmt.Errorf("%s: %w", scenario, err)
		}
		h.logf("%s: %s", res.Suite, scenario)
		err = runScaleScenario(ctx, h, cfg, nsCount, scenario, res, add)
		if rerr := release(); err == nil && rerr != nil {
			err = fmt.Errorf("release the server: %w", rerr)
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", scenario, err)
		}
	}
	return res, nil
}

func runScaleScenario(ctx context.Context, h *scaleHost, cfg ScaleConfig, nsCount int, scenario string,
	res *Result, add func(scenario, metric string, value float64, unit, detail string)) (err error) {
	namespaces := make([]string, nsCount)
	defer func() {
		if err == nil {
			return
		}
		// Best effort, so that the next suite does not run beside thousands of VMs; the
		// namespaces' deletion at the end removes whatever is left.
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		for _, ns := range namespaces {
			if ns != "" {
				_ = h.create.DeleteAll(cctx, ns)
			}
		}
	}()
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("bench-scale-%d-%03d", nsCount, i)
		if err := h.namespace(ctx, namespaces[i]); err != nil {
			return err
		}
	}
	if f, err := h.footprint(ctx); err == nil {
		res.AddRow(scenario, "nativevirt-apiserver RSS before the creates", f.String(), "")
		res.AddRow(scenario, "etcd DB size before the creates", FmtMiB(f.db), "")
		addFootprint(add, scenario, "before-", f)
	} else {
		res.Note("%s: server footprint before the creates unavailable: %v", scenario, err)
	}
	direct := h.create
	for _, ns := range namespaces { // objects left by an interrupted attempt
		if err := direct.DeleteAll(ctx, ns); err != nil {
			return err
		}
	}
	clients, err := direct.Clients(cfg.Workers)
	if err != nil {
		return err
	}
	b := VMBuilder{GroupVersion: direct.GroupVersion()}
	d, err := RunOpsErr(ctx, cfg.Workers, cfg.VMs, func(ctx context.Context, w, i int) error {
		ns := namespaces[i%nsCount]
		o, err := b.Build(ns, fmt.Sprintf("vm-%05d", i), false)
		if err != nil {
			return err
		}
		_, err = clients[w].Resource(direct.Resource).Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
		return err
	})
	if d.Count != cfg.VMs {
		return fmt.Errorf("created %d of %d VMs: %v", d.Count, cfg.VMs, err)
	}
	res.AddRow(scenario, fmt.Sprintf("create directly (%d clients)", cfg.Workers), fmt.Sprintf("%s/s, p99 %s ms", FmtOps(d.OpsPerSec), FmtMs(d.P99Ms)), "")
	add(scenario, "create-rate", d.OpsPerSec, "1/s", "")
	// A deployed controller writes each new VM's status: let it catch up so that the reads
	// below are measured on a quiet server.
	settled, writes, quiet, err := waitWritesQuiet(ctx, h.metrics, 3*time.Second, cfg.Settle)
	if err != nil {
		return err
	}
	cell := fmt.Sprintf("%.0f writes in %s", writes, FmtSeconds(settled))
	if !quiet {
		cell = fmt.Sprintf("%.0f writes in %s, still writing: the reads ran beside them", writes, FmtSeconds(cfg.Settle))
	}
	res.AddRow(scenario, "other kubevirt.io writes after the creates (controllers), until 3 s without any", cell, "")
	add(scenario, "settle", settled.Seconds(), "s", fmt.Sprintf("%.0f writes", writes))

	if h.crd != nil {
		if err := fillCRD(ctx, h.crd, cfg, namespaces, scenario, res, add); err != nil {
			return fmt.Errorf("the CRD (c): %w", err)
		}
	}
	if err := timeKubectlGet(h, cfg, scenario, res, add); err != nil {
		return err
	}
	repeats := max(1, cfg.Repeats)

	scope, match := "", func(ns string) bool { return strings.HasPrefix(ns, fmt.Sprintf("bench-scale-%d-", nsCount)) }
	scopeName := "all namespaces"
	if nsCount == 1 {
		scope, scopeName = namespaces[0], "the namespace"
	}
	for _, t := range h.reads {
		c, err := t.Client()
		if err != nil {
			return err
		}
		r := c.Resource(t.Resource)
		var ri dynamic.ResourceInterface = r
		if scope != "" {
			ri = r.Namespace(scope)
		}
		readers, err := pagedReaders(t, scope, ri)
		if err != nil {
			return err
		}
		paged := make([][]time.Duration, len(readers))
		var whole, watched []time.Duration
		var pages int
		for range repeats {
			for i, rd := range readers {
				p, n, dur, err := timePaged(ctx, rd.read, 500)
				if err != nil {
					return fmt.Errorf("(%s) paginated list, %s: %w", t.Name, rd.name, err)
				}
				if n >= 0 && n < cfg.VMs {
					return fmt.Errorf("(%s) paginated list, %s: %d objects, want at least %d", t.Name, rd.name, n, cfg.VMs)
				}
				paged[i], pages = append(paged[i], dur), p
			}
			t0 := time.Now()
			l, err := ri.List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			whole = append(whole, time.Since(t0))
			if len(l.Items) < cfg.VMs {
				return fmt.Errorf("(%s) list returned %d objects, want at least %d", t.Name, len(l.Items), cfg.VMs)
			}
			wd, err := watchInitial(ctx, ri, cfg.VMs, match)
			if err != nil {
				// The server may end a watch whose client falls behind; that is a result too.
				res.Note("%s: (%s) watch from resourceVersion 0: %v", scenario, t.Name, err)
				continue
			}
			watched = append(watched, wd)
		}
		for i, rd := range readers {
			pt := median(paged[i])
			if i == 0 { // received: the server's part, the goal
				res.AddRow(scenario, fmt.Sprintf("(%s) paginated list of %s, limit=500 (%d pages): %s", t.Name, scopeName, pages, rd.name), FmtSeconds(pt), "≤ 1 s")
				res.Targets = append(res.Targets, NewCheck(fmt.Sprintf("%s: (%s) paginated list, all pages received", scenario, t.Name), "≤ 1 s", FmtSeconds(pt), pt <= listGoal))
			} else {
				res.AddRow(scenario, fmt.Sprintf("(%s) the same pages %s", t.Name, rd.name), FmtSeconds(pt), "")
			}
			add(scenario, "paginated-list-"+rd.key+t.Name, pt.Seconds(), "s", fmt.Sprintf("%d pages, %s", pages, rd.name))
		}
		res.AddRow(scenario, fmt.Sprintf("(%s) list of %s in one response", t.Name, scopeName), FmtSeconds(median(whole)), "")
		wt := median(watched)
		wcell := fmt.Sprintf("%s (%s events/s)", FmtSeconds(wt), FmtOps(float64(cfg.VMs)/wt.Seconds()))
		if len(watched) < repeats {
			wcell = fmt.Sprintf("%d of %d watches ended early (notes)", repeats-len(watched), repeats)
			if len(watched) > 0 {
				wcell += "; the others: " + FmtSeconds(wt)
			}
		}
		res.AddRow(scenario, fmt.Sprintf("(%s) watch delivering %d ADDED events", t.Name, cfg.VMs), wcell, "")
		add(scenario, "list-"+t.Name, median(whole).Seconds(), "s", "")
		add(scenario, "watch-"+t.Name, wt.Seconds(), "s", fmt.Sprintf("%d events", cfg.VMs))
	}

	f, err := h.footprint(ctx)
	if err != nil {
		res.Note("%s: server footprint unavailable: %v", scenario, err)
	} else {
		res.AddRow(scenario, "nativevirt-apiserver RSS", f.String(), "≤ 400 MiB")
		res.AddRow(scenario, "etcd DB size", FmtMiB(f.db), "")
		res.Targets = append(res.Targets, NewCheck(scenario+": nativevirt-apiserver RSS", "≤ 400 MiB", FmtMiB(f.mem.RSS), f.mem.RSS <= rssGoal))
		addFootprint(add, scenario, "", f)
	}

	h.logf("%s: deleting %d VMs", res.Suite, cfg.VMs)
	d, err = RunOpsErr(ctx, cfg.Workers, cfg.VMs, func(ctx context.Context, w, i int) error {
		return clients[w].Resource(direct.Resource).Namespace(namespaces[i%nsCount]).Delete(ctx, fmt.Sprintf("vm-%05d", i), metav1.DeleteOptions{})
	})
	if d.Count != cfg.VMs {
		return fmt.Errorf("deleted %d of %d VMs: %v", d.Count, cfg.VMs, err)
	}
	res.AddRow(scenario, fmt.Sprintf("delete directly (%d clients)", cfg.Workers), fmt.Sprintf("%s/s, p99 %s ms", FmtOps(d.OpsPerSec), FmtMs(d.P99Ms)), "")
	add(scenario, "delete-rate", d.OpsPerSec, "1/s", "")
	// The namespaces are empty now; Close waits for their deletion, which runs meanwhile.
	for _, ns := range namespaces {
		if err := h.dropNamespace(ctx, ns); err != nil {
			return err
		}
	}
	return nil
}

// footprint is the server's memory and storage at one moment.
type footprint struct {
	mem ProcMemory
	// db is the embedded etcd's database file size.
	db int64
	// heap is go_memstats_heap_inuse_bytes of the server's /metrics (0 when unknown).
	heap float64
	// heapProfile is the file of the heap profile taken with it, or why it failed (heapProfilesEnv).
	heapProfile string
}

// String is a table cell.
func (f footprint) String() string {
	s := fmt.Sprintf("%s (anon %s, file %s; peak %s)", FmtMiB(f.mem.RSS), FmtMiB(f.mem.Anon), FmtMiB(f.mem.File), FmtMiB(f.mem.HWM))
	if f.heap > 0 {
		s += "; Go heap in use " + FmtMiB(int64(f.heap))
	}
	if f.heapProfile != "" {
		s += "; heap profile " + f.heapProfile
	}
	return s
}

// serverFootprint reads the server's memory, its embedded etcd's database size and Go heap.
func serverFootprint(ctx context.Context, pidOf func() (int, error), metrics *rest.Config) (footprint, error) {
	var f footprint
	pid, err := pidOf()
	if err != nil {
		return f, err
	}
	if f.mem, err = ReadProcMemory(pid); err != nil {
		return f, err
	}
	dir, err := DataDirOf(pid)
	if err != nil {
		return f, err
	}
	if f.db, _, err = EtcdDBSize(dir); err != nil {
		return f, err
	}
	if b, err := GetRaw(ctx, metrics, "/metrics"); err == nil {
		if samples, err := ParseMetrics(b); err == nil {
			f.heap = SumBy(samples, "go_memstats_heap_inuse_bytes", nil, "")[""]
		}
	}
	if dir := os.Getenv(heapProfilesEnv); dir != "" {
		f.heapProfile = filepath.Join(dir, fmt.Sprintf("heap-%d-%s.pb.gz", pid, time.Now().Format("150405")))
		b, err := GetRaw(ctx, metrics, "/debug/pprof/heap")
		if err == nil {
			err = os.WriteFile(f.heapProfile, b, 0o644)
		}
		if err != nil {
			f.heapProfile = "failed: " + err.Error()
		}
	}
	return f, nil
}

// heapProfilesEnv names a directory: when set, every footprint also saves the server's heap
// profile there (its /debug/pprof/heap; `go tool pprof` reads it).
const heapProfilesEnv = "NV_BENCH_HEAP_PROFILES"

// addFootprint records f under metric names that start with prefix.
func addFootprint(add func(scenario, metric string, value float64, unit, detail string), scenario, prefix string, f footprint) {
	add(scenario, prefix+"rss", float64(f.mem.RSS), "bytes", "VmRSS")
	add(scenario, prefix+"rss-anon", float64(f.mem.Anon), "bytes", "RssAnon")
	add(scenario, prefix+"rss-file", float64(f.mem.File), "bytes", "RssFile (binary, mmapped bbolt database)")
	add(scenario, prefix+"rss-peak", float64(f.mem.HWM), "bytes", "VmHWM since the process started")
	add(scenario, prefix+"go-heap-inuse", f.heap, "bytes", "go_memstats_heap_inuse_bytes")
	add(scenario, prefix+"etcd-db", float64(f.db), "bytes", "member/snap/db")
}

// watchInitial opens a watch at resourceVersion 0 and returns the time until it delivered the
// ADDED events of want objects whose namespace matches.
func watchInitial(ctx context.Context, r dynamic.ResourceInterface, want int, match func(ns string) bool) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	w, err := r.Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	got := 0
	for got < want {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%d of %d events: %w", got, want, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("watch closed after %d of %d events", got, want)
			}
			if ev.Type != watch.Added {
				continue
			}
			if m, ok := ev.Object.(metav1.Object); ok && match(m.GetNamespace()) {
				got++
			}
		}
	}
	return time.Since(t0), nil
}

// waitWritesQuiet waits until nativevirt-apiserver served no kubevirt.io write for quiet, at
// most max, and returns when the last write was seen, how many writes happened meanwhile and
// whether it went quiet at all.
func waitWritesQuiet(ctx context.Context, metrics *rest.Config, quiet, max time.Duration) (time.Duration, float64, bool, error) {
	total := func() (float64, error) {
		b, err := GetRaw(ctx, metrics, "/metrics")
		if err != nil {
			return 0, err
		}
		samples, err := ParseMetrics(b)
		if err != nil {
			return 0, err
		}
		sum := 0.0
		for _, v := range WritesByResource(samples, "kubevirt.io") {
			sum += v
		}
		return sum, nil
	}
	t0 := time.Now()
	first, err := total()
	if err != nil {
		return 0, 0, false, err
	}
	last, lastChange := first, time.Now()
	for time.Since(lastChange) < quiet && time.Since(t0) < max {
		select {
		case <-ctx.Done():
			return 0, 0, false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		v, err := total()
		if err != nil {
			return 0, 0, false, err
		}
		if v != last {
			last, lastChange = v, time.Now()
		}
	}
	return lastChange.Sub(t0), last - first, time.Since(lastChange) >= quiet, nil
}

// median of a list (the lower middle for an even count; 0 for none).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return Percentile(s, 50)
}
