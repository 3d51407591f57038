package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample", []time.Duration{7}, 99, 7},
		{"median of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 is the max", hundred, 100, 100 * time.Millisecond},
		{"tiny p is the min", hundred, 0.1, 1 * time.Millisecond},
		{"median of four takes the lower middle", []time.Duration{1, 2, 3, 4}, 50, 2},
		{"p99 of four is the max", []time.Duration{1, 2, 3, 4}, 99, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		samples []time.Duration
		wall    time.Duration
		errors  int
		want    Dist
	}{
		{
			name: "nothing measured",
			wall: time.Second, errors: 3,
			want: Dist{Errors: 3, WallSeconds: 1},
		},
		{
			name:    "unsorted input",
			samples: []time.Duration{3 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond, 10 * time.Millisecond},
			wall:    2 * time.Second,
			want: Dist{Count: 4, WallSeconds: 2, OpsPerSec: 2, P50Ms: 2, P90Ms: 10, P95Ms: 10, P99Ms: 10,
				MaxMs: 10, MeanMs: 4},
		},
		{
			name:    "sub-millisecond values keep microseconds",
			samples: []time.Duration{1500 * time.Microsecond},
			wall:    500 * time.Millisecond,
			want: Dist{Count: 1, WallSeconds: 0.5, OpsPerSec: 2, P50Ms: 1.5, P90Ms: 1.5, P95Ms: 1.5, P99Ms: 1.5,
				MaxMs: 1.5, MeanMs: 1.5},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.samples...)
			got := Summarize(tc.samples, tc.wall, tc.errors)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.samples); diff != "" {
				t.Errorf("Summarize modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRunOps(t *testing.T) {
	tests := []struct {
		name       string
		workers, n int
		failEvery  int
		wantCount  int
		wantErrors int
		wantMaxPar int
	}{
		{name: "one worker runs everything in turn", workers: 1, n: 10, wantCount: 10, wantMaxPar: 1},
		{name: "workers run concurrently", workers: 4, n: 40, wantCount: 40, wantMaxPar: 4},
		{name: "more workers than work", workers: 8, n: 3, wantCount: 3, wantMaxPar: 3},
		{name: "failures are counted apart", workers: 2, n: 10, failEvery: 5, wantCount: 8, wantErrors: 2, wantMaxPar: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[int]bool{}
			running, maxPar := 0, 0
			d := RunOps(context.Background(), tc.workers, tc.n, func(_ context.Context, _, i int) error {
				mu.Lock()
				seen[i] = true
				running++
				maxPar = max(maxPar, running)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
				if tc.failEvery > 0 && i%tc.failEvery == tc.failEvery-1 {
					return errors.New("boom")
				}
				return nil
			})
			if d.Count != tc.wantCount || d.Errors != tc.wantErrors {
				t.Errorf("count/errors = %d/%d, want %d/%d", d.Count, d.Errors, tc.wantCount, tc.wantErrors)
			}
			if len(seen) != tc.n {
				t.Errorf("ran %d distinct indexes, want %d", len(seen), tc.n)
			}
			if maxPar != tc.wantMaxPar {
				t.Errorf("max parallelism %d, want %d", maxPar, tc.wantMaxPar)
			}
			if d.P50Ms < 5 {
				t.Errorf("p50 %.3f ms is below the 5 ms each operation sleeps", d.P50Ms)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	tests := []struct{ a, b, want float64 }{{6, 3, 2}, {1, 4, 0.25}, {5, 0, 0}}
	for _, tc := range tests {
		if got := Ratio(tc.a, tc.b); got != tc.want {
			t.Errorf("Ratio(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestParseCPUTimes(t *testing.T) {
	before := parseCPUTimes([]byte("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n"))
	if before != (CPUTimes{Busy: 150, Total: 1000}) {
		t.Fatalf("parsed %+v", before)
	}
	after := parseCPUTimes([]byte("cpu  250 0 100 850 50 0 0 0 0 0\n"))
	if got := before.BusyFraction(after); got != 0.8 {
		t.Errorf("busy fraction %v, want 0.8", got)
	}
	stolen := parseCPUTimes([]byte("cpu  230 0 100 850 50 0 0 20 0 0\n"))
	if stolen.Steal != 20 || stolen.Busy != 350 {
		t.Fatalf("parsed %+v", stolen)
	}
	if got := before.StealFraction(stolen); got != 0.08 {
		t.Errorf("steal fraction %v, want 0.08", got)
	}
	if got := (parseCPUTimes([]byte("garbage"))); got != (CPUTimes{}) {
		t.Errorf("garbage parsed as %+v", got)
	}
}

func TestCalibrateCPU(t *testing.T) {
	d, err := CalibrateCPU()
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 || d > time.Second {
		t.Errorf("decoding the benchmark's VM took %v", d)
	}
	m := Machine{CPUs: 2, VMDecodeMicros: 41.25}
	if got := m.String(); !strings.HasSuffix(got, "; one CPU decodes the benchmark's VM in 41.2 µs") {
		t.Errorf("machine line %q", got)
	}
}
