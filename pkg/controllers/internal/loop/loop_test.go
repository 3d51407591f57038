package loop

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestProcessNext(t *testing.T) {
	tests := []struct {
		name      string
		result    Result
		err       error
		wantAgain bool
	}{
		{name: "done", wantAgain: false},
		{name: "error retries", err: errors.New("conflict"), wantAgain: true},
		{name: "requeue after", result: Result{RequeueAfter: 10 * time.Millisecond}, wantAgain: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			q := New("test", func(_ context.Context, key string) (Result, error) {
				calls = append(calls, key)
				return tc.result, tc.err
			})
			defer q.ShutDown()
			q.Add("ns/a")
			if !q.ProcessNext(context.Background()) {
				t.Fatal("queue shut down")
			}
			// A retry or a requeue shows up within the rate limiter's first delay (5 ms) or the
			// requested 10 ms.
			deadline := time.Now().Add(time.Second)
			for q.Len() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
				if !tc.wantAgain && time.Since(deadline.Add(-time.Second)) > 100*time.Millisecond {
					break
				}
			}
			if got := q.Len() > 0; got != tc.wantAgain {
				t.Errorf("queued again = %v, want %v (calls %v)", got, tc.wantAgain, calls)
			}
		})
	}
}

func TestEarliest(t *testing.T) {
	tests := []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, 5, 5}, {5, 0, 5}, {3, 5, 3}, {5, 3, 3}, {-1, 4, 4},
	}
	for _, tc := range tests {
		if got := Earliest(tc.a, tc.b); got != tc.want {
			t.Errorf("Earliest(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestRunStoppedBeforeSync: a controller stopped while its informers still sync returns no
// error and never syncs a key.
func TestRunStoppedBeforeSync(t *testing.T) {
	synced := 0
	q := New("test", func(context.Context, string) (Result, error) { synced++; return Result{}, nil })
	q.Add("ns/a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, 1, func() bool { return false }) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if synced != 0 {
		t.Errorf("synced %d keys before the caches synced", synced)
	}
}
