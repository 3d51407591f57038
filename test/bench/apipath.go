package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// APIPathConfig sizes the API path suite.
type APIPathConfig struct {
	// Clients are the numbers of concurrent clients to measure (1 and 16).
	Clients []int
	// Creates objects are created per target and client count; Gets and Lists are the numbers
	// of those operations (lists return all Creates objects); WatchEvents objects are created
	// by one writer while every client watches.
	Creates, Gets, Lists, WatchEvents int
	// Rounds splits every operation's work into rounds that alternate between the targets, so
	// that load from outside the benchmark (other builds on the machine) hits them alike.
	Rounds int
}

// APIRecord is one measured operation of one target.
type APIRecord struct {
	Target  string `json:"target"`
	Op      string `json:"op"`
	Clients int    `json:"clients"`
	Dist
}

// apiOps are the operations in table order.
var apiOps = []string{"create", "get", "list", "watch"}

// RunAPIPath measures create, get, list and watch of the same VirtualMachines on each target,
// with each number of concurrent clients; targets are interleaved per operation so that load
// from outside the benchmark hits them alike.
func RunAPIPath(ctx context.Context, e *Env, cfg APIPathConfig, targets []Target) (*Result, error) {
	res := &Result{Suite: "api-path", Title: "API path: VirtualMachine create/get/list/watch side by side"}
	res.Columns = []string{"op", "clients"}
	for _, t := range targets {
		res.Columns = append(res.Columns, "("+t.Name+") ops/s", "("+t.Name+") p50 ms", "("+t.Name+") p99 ms")
	}
	res.Columns = append(res.Columns, "(a)/(c)", "(b)/(c)")
	res.Setup = map[string]string{
		"counts": fmt.Sprintf("per target and client count: %d creates, %d gets, %d lists of %d objects, %d watched creates",
			cfg.Creates, cfg.Gets, cfg.Lists, cfg.Creates, cfg.WatchEvents),
		"ops/s": "create/get/list: successful requests per second of wall time; watch: events received per second by all watchers together",
		"watch": "every client watches the namespace; one writer creates objects one after the other; latency = event received − create sent",
		"quiet": "before each operation, the benchmark waits until nativevirt-apiserver served no kubevirt.io write for 2 s (so that no other writer's work overlaps the measurement)",
	}
	for _, t := range targets {
		res.Setup["target ("+t.Name+")"] = t.Label
	}
	resume, note, err := e.pauseController(ctx)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := resume(cctx); err != nil {
			res.Note("resuming %s: %v", controllerName, err)
		}
	}()
	if err != nil {
		return res, err
	}
	res.Setup["controller"] = note
	rounds := max(1, cfg.Rounds)
	res.Setup["rounds"] = fmt.Sprintf("each operation's work is split into %d rounds; a round runs on (a), (b), (c) in turn", rounds)
	var records []APIRecord
	defer func() {
		// Also after a failure: what was measured is shown.
		res.Records = records
		fillAPITable(res, records, targets, cfg.Clients)
	}()
	for _, clients := range cfg.Clients {
		run, err := newAPIRun(ctx, e, cfg, targets, clients)
		if err != nil {
			return res, err
		}
		if clients == cfg.Clients[0] {
			for i, t := range targets {
				res.Setup["object size ("+t.Name+")"] = run.sizes[i]
			}
		}
		for _, op := range apiOps {
			if _, _, _, err := waitWritesQuiet(ctx, e.Direct, 2*time.Second, time.Minute); err != nil {
				return res, err
			}
			recs := make([]Recorder, len(targets))
			walls := make([]time.Duration, len(targets))
			for round := 0; round < rounds; round++ {
				for i, t := range targets {
					if round == 0 {
						e.Logf("api-path: %s, %d clients, target (%s), %d rounds", op, clients, t.Name, rounds)
					}
					wall, err := run.measure(ctx, op, i, round, rounds, &recs[i])
					if err != nil {
						return res, fmt.Errorf("%s on (%s) with %d clients: %w", op, t.Name, clients, err)
					}
					walls[i] += wall
				}
			}
			for i, t := range targets {
				d := recs[i].Dist(walls[i])
				if d.Count == 0 {
					return res, fmt.Errorf("%s on (%s) with %d clients: nothing succeeded: %v", op, t.Name, clients, recs[i].FirstError())
				}
				if d.Errors > 0 {
					res.Note("%s on (%s) with %d clients: %d errors, the first: %v", op, t.Name, clients, d.Errors, recs[i].FirstError())
				}
				records = append(records, APIRecord{Target: t.Name, Op: op, Clients: clients, Dist: d})
			}
		}
		for i, t := range targets {
			if err := t.DeleteAll(ctx, run.namespaces[i]); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// fillAPITable writes one row per operation and client count, and the ratio targets.
func fillAPITable(res *Result, records []APIRecord, targets []Target, clientCounts []int) {
	find := func(t, op string, clients int) *APIRecord {
		for i := range records {
			if r := &records[i]; r.Target == t && r.Op == op && r.Clients == clients {
				return r
			}
		}
		return nil
	}
	for _, clients := range clientCounts {
		for _, op := range apiOps {
			row := []string{op, strconv.Itoa(clients)}
			for _, t := range targets {
				r := find(t.Name, op, clients)
				if r == nil {
					row = append(row, "-", "-", "-")
					continue
				}
				row = append(row, FmtOps(r.OpsPerSec), FmtMs(r.P50Ms), FmtMs(r.P99Ms))
			}
			c := find(CRD, op, clients)
			for _, spec := range []struct {
				name string
				goal float64
			}{{Aggregated, 1.0}, {Direct, 2.0}} {
				x := find(spec.name, op, clients)
				if x == nil || c == nil {
					row = append(row, "-")
					continue
				}
				ratio := Ratio(x.OpsPerSec, c.OpsPerSec)
				row = append(row, FmtRatio(ratio))
				res.Targets = append(res.Targets, NewCheck(
					fmt.Sprintf("%s, %d clients: (%s)/(c) ops/s", op, clients, spec.name),
					fmt.Sprintf("≥ %.1f×", spec.goal), FmtRatio(ratio), ratio >= spec.goal))
			}
			res.AddRow(row...)
		}
	}
}

// apiRun is one client count's namespaces, objects and clients per target.
type apiRun struct {
	cfg        APIPathConfig
	targets    []Target
	namespaces []string
	objects    [][]*unstructured.Unstructured
	watched    [][]*unstructured.Unstructured
	clients    [][]dynamic.Interface
	sizes      []string
}

func newAPIRun(ctx context.Context, e *Env, cfg APIPathConfig, targets []Target, clients int) (*apiRun, error) {
	r := &apiRun{cfg: cfg, targets: targets}
	for _, t := range targets {
		ns := fmt.Sprintf("bench-api-%s-c%d", t.Name, clients)
		if err := e.Namespace(ctx, ns); err != nil {
			return nil, err
		}
		if err := t.DeleteAll(ctx, ns); err != nil { // a namespace reused after an interrupted run
			return nil, err
		}
		b := VMBuilder{GroupVersion: t.GroupVersion()}
		objs, err := b.BuildMany(ns, "vm", cfg.Creates)
		if err != nil {
			return nil, err
		}
		watched, err := b.BuildMany(ns, "watch", cfg.WatchEvents)
		if err != nil {
			return nil, err
		}
		cs, err := t.Clients(clients)
		if err != nil {
			return nil, err
		}
		r.namespaces = append(r.namespaces, ns)
		r.objects = append(r.objects, objs)
		r.watched = append(r.watched, watched)
		r.clients = append(r.clients, cs)
		r.sizes = append(r.sizes, fmt.Sprintf("%d bytes of JSON sent", JSONSize(objs[0])))
	}
	return r, nil
}

// measure runs round of rounds of one operation on target i into rec and returns its wall time.
func (r *apiRun) measure(ctx context.Context, op string, i, round, rounds int, rec *Recorder) (time.Duration, error) {
	t, ns, cs := r.targets[i], r.namespaces[i], r.clients[i]
	res := func(w int) dynamic.ResourceInterface { return cs[w].Resource(t.Resource).Namespace(ns) }
	objs := r.objects[i]
	switch op {
	case "create":
		part := chunk(objs, round, rounds)
		return RunOpsInto(ctx, len(cs), len(part), rec, func(ctx context.Context, w, i int) error {
			_, err := res(w).Create(ctx, part[i], metav1.CreateOptions{})
			return err
		}), nil
	case "get":
		n := len(chunk(make([]struct{}, r.cfg.Gets), round, rounds))
		return RunOpsInto(ctx, len(cs), n, rec, func(ctx context.Context, w, i int) error {
			_, err := res(w).Get(ctx, objs[(round*7919+i)%len(objs)].GetName(), metav1.GetOptions{})
			return err
		}), nil
	case "list":
		n := len(chunk(make([]struct{}, r.cfg.Lists), round, rounds))
		return RunOpsInto(ctx, len(cs), n, rec, func(ctx context.Context, w, _ int) error {
			l, err := res(w).List(ctx, metav1.ListOptions{})
			if err == nil && len(l.Items) != len(objs) {
				err = fmt.Errorf("list returned %d objects, want %d", len(l.Items), len(objs))
			}
			return err
		}), nil
	case "watch":
		return MeasureWatch(ctx, cs, cs[0], t, ns, chunk(r.watched[i], round, rounds), rec)
	}
	return 0, fmt.Errorf("unknown operation %q", op)
}

// chunk returns the round-th of rounds nearly equal parts of s.
func chunk[T any](s []T, round, rounds int) []T {
	return s[round*len(s)/rounds : (round+1)*len(s)/rounds]
}

// MeasureWatch opens one watch per watcher on namespace, creates objs one after the other with
// writer, and records for every watcher and object the time from just before the create was
// sent to the ADDED event's arrival. The throughput is events received per second, from the
// first create to the last event. Latencies go into rec; the wall time is returned. A failed
// create is recorded as an error and its event is not waited for.
func MeasureWatch(ctx context.Context, watchers []dynamic.Interface, writer dynamic.Interface, t Target, namespace string, objs []*unstructured.Unstructured, rec *Recorder) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	wres := writer.Resource(t.Resource).Namespace(namespace)
	l, err := wres.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	index := make(map[string]int, len(objs))
	for i, o := range objs {
		index[o.GetName()] = i
	}
	sent := make([]atomic.Int64, len(objs))
	// want is the number of successful creates, known when writing is over.
	var want atomic.Int64
	want.Store(int64(len(objs)))
	writing := make(chan struct{})
	var received, last atomic.Int64
	var wg sync.WaitGroup
	for _, c := range watchers {
		w, err := c.Resource(t.Resource).Namespace(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
		if err != nil {
			return 0, fmt.Errorf("watch: %w", err)
		}
		defer w.Stop()
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, wr := int64(0), writing
			for got < want.Load() {
				select {
				case <-ctx.Done():
					rec.Fail(fmt.Errorf("watch: %d of %d events before %w", got, want.Load(), ctx.Err()))
					return
				case <-wr:
					wr = nil // the loop condition now reads the final count
				case ev, ok := <-w.ResultChan():
					now := time.Now().UnixNano()
					if !ok {
						rec.Fail(fmt.Errorf("watch closed after %d of %d events", got, want.Load()))
						return
					}
					m, isObj := ev.Object.(metav1.Object)
					if ev.Type != watch.Added || !isObj {
						continue
					}
					i, ok := index[m.GetName()]
					if !ok {
						continue
					}
					got++
					rec.Add(time.Duration(now - sent[i].Load()))
					received.Add(1)
					for prev := last.Load(); now > prev && !last.CompareAndSwap(prev, now); prev = last.Load() {
					}
				}
			}
		}()
	}
	start := time.Now()
	created := 0
	for i, o := range objs {
		sent[i].Store(time.Now().UnixNano())
		if _, err := wres.Create(ctx, o, metav1.CreateOptions{}); err != nil {
			rec.Fail(fmt.Errorf("create %s while watching: %w", o.GetName(), err))
			continue
		}
		created++
	}
	want.Store(int64(created))
	close(writing)
	wg.Wait()
	if received.Load() == 0 {
		return 0, fmt.Errorf("no watch event received: %v", rec.FirstError())
	}
	return time.Duration(last.Load() - start.UnixNano()), nil
}
