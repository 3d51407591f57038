package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// RunOps runs op for i = 0..n-1 on the given number of concurrent workers (each worker takes the
// next index when it is free, so a slow operation does not hold the others back) and returns
// the distribution of the successful operations' latencies. ctx cancels the remaining work.
func RunOps(ctx context.Context, workers, n int, op func(ctx context.Context, worker, i int) error) Dist {
	var rec Recorder
	wall := RunOpsInto(ctx, workers, n, &rec, op)
	return rec.Dist(wall)
}

// RunOpsErr is RunOps that also returns the first error seen, for messages.
func RunOpsErr(ctx context.Context, workers, n int, op func(ctx context.Context, worker, i int) error) (Dist, error) {
	var rec Recorder
	wall := RunOpsInto(ctx, workers, n, &rec, op)
	return rec.Dist(wall), rec.FirstError()
}

// RunOpsInto is RunOps recording into rec (so that several runs make one distribution); it
// returns the wall time of the run.
func RunOpsInto(ctx context.Context, workers, n int, rec *Recorder, op func(ctx context.Context, worker, i int) error) time.Duration {
	workers = max(1, min(workers, n))
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := op(ctx, w, i); err != nil {
					rec.Fail(err)
					continue
				}
				rec.Add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}
