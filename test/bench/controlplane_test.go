package bench

import (
	"testing"
	"time"
)

// oneStart is a startRun of one VM that reached Running after d (never when d is 0).
func oneStart(name string, d time.Duration) startRun {
	t0 := time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)
	tl := &timeline{}
	tl.see(msCreated, t0)
	r := startRun{chain: runningChain, timelines: []*timeline{tl}, vms: map[string]map[string]float64{name: {}}, cpuSeconds: 1, cpuBusy: 0.5}
	if d > 0 {
		tl.see(msRunning, t0.Add(d))
		r.durations = []time.Duration{d}
	} else {
		r.failure = "timed out"
	}
	r.summarize()
	return r
}

func TestMergeRuns(t *testing.T) {
	m := mergeRuns([]startRun{
		oneStart("a", 900*time.Millisecond),
		oneStart("b", 1100*time.Millisecond),
		oneStart("c", 0),
		oneStart("d", 1000*time.Millisecond),
	})
	if m.reached != 3 || m.dist.Count != 3 || m.dist.Errors != 1 {
		t.Errorf("reached %d, dist count %d errors %d; want 3 reached of 4", m.reached, m.dist.Count, m.dist.Errors)
	}
	if m.dist.P50Ms != 1000 || m.dist.MaxMs != 1100 {
		t.Errorf("p50 %v ms max %v ms, want the p50 of all the starts (1000) and the slowest (1100)", m.dist.P50Ms, m.dist.MaxMs)
	}
	if len(m.vms) != 4 || len(m.timelines) != 4 || m.cpuSeconds != 4 || m.cpuBusy != 0.5 {
		t.Errorf("vms %d timelines %d cpu %v s busy %v; want all four runs'", len(m.vms), len(m.timelines), m.cpuSeconds, m.cpuBusy)
	}
	if m.failure != "timed out" {
		t.Errorf("failure %q, want the failed run's", m.failure)
	}
}
