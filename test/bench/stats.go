package bench

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Recorder collects latencies from concurrent workers.
type Recorder struct {
	mu     sync.Mutex
	d      []time.Duration
	errors int
	first  error
}

// Add records one successful operation.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

// Fail records one failed operation; the first error is kept for the report.
func (r *Recorder) Fail(err error) {
	r.mu.Lock()
	r.errors++
	if r.first == nil {
		r.first = err
	}
	r.mu.Unlock()
}

// FirstError is the first error recorded, or nil.
func (r *Recorder) FirstError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// Dist summarises the recorded latencies; wall is the elapsed time of the whole run, from which
// the throughput is computed (operations that failed do not count).
func (r *Recorder) Dist(wall time.Duration) Dist {
	r.mu.Lock()
	d := slices.Clone(r.d)
	errs := r.errors
	r.mu.Unlock()
	return Summarize(d, wall, errs)
}

// Dist is a latency distribution with the throughput of the run that produced it. Times are in
// milliseconds so that the JSON reads without conversion.
type Dist struct {
	// Count is the number of successful operations.
	Count int `json:"count"`
	// Errors is the number of failed operations.
	Errors int `json:"errors"`
	// WallSeconds is the elapsed time of the run.
	WallSeconds float64 `json:"wallSeconds"`
	// OpsPerSec is Count / WallSeconds.
	OpsPerSec float64 `json:"opsPerSec"`
	// P50Ms, P90Ms, P95Ms and P99Ms are nearest-rank percentiles; MaxMs the slowest; MeanMs the mean.
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P95Ms  float64 `json:"p95Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
	MeanMs float64 `json:"meanMs"`
}

// Summarize computes a Dist from samples (not modified) measured over wall.
func Summarize(samples []time.Duration, wall time.Duration, errors int) Dist {
	s := slices.Clone(samples)
	slices.Sort(s)
	out := Dist{Count: len(s), Errors: errors, WallSeconds: wall.Seconds()}
	if wall > 0 {
		out.OpsPerSec = float64(len(s)) / wall.Seconds()
	}
	if len(s) == 0 {
		return out
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	out.P50Ms = ms(Percentile(s, 50))
	out.P90Ms = ms(Percentile(s, 90))
	out.P95Ms = ms(Percentile(s, 95))
	out.P99Ms = ms(Percentile(s, 99))
	out.MaxMs = ms(s[len(s)-1])
	out.MeanMs = ms(sum / time.Duration(len(s)))
	return out
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of sorted samples: the
// smallest sample such that at least p percent of the samples are less than or equal to it.
// It returns 0 for no samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// ms converts to milliseconds rounded to microseconds.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// Ratio is a/b, or 0 when b is 0 (no comparison possible).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
