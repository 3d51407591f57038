package expectations

import (
	"testing"
	"time"
)

func TestExpectations(t *testing.T) {
	now := time.Unix(1000, 0)
	tests := []struct {
		name  string
		steps func(e *Expectations)
		after time.Duration
		want  bool
	}{
		{name: "nothing expected", steps: func(e *Expectations) {}, want: true},
		{name: "creation pending", steps: func(e *Expectations) { e.ExpectCreations("k", 2); e.CreationObserved("k") }, want: false},
		{name: "creations observed", steps: func(e *Expectations) { e.ExpectCreations("k", 2); e.CreationObserved("k"); e.CreationObserved("k") }, want: true},
		{name: "extra observations do not go negative", steps: func(e *Expectations) {
			e.CreationObserved("k")
			e.ExpectCreations("k", 1)
		}, want: false},
		{name: "deletion pending", steps: func(e *Expectations) {
			e.ExpectDeletion("k", "a")
			e.ExpectDeletion("k", "b")
			e.DeletionObserved("k", "a")
		}, want: false},
		{name: "deletion observed twice is harmless", steps: func(e *Expectations) {
			e.ExpectDeletion("k", "a")
			e.DeletionObserved("k", "a")
			e.DeletionObserved("k", "a")
		}, want: true},
		{name: "other key", steps: func(e *Expectations) { e.ExpectCreations("other", 1) }, want: true},
		{name: "expired", steps: func(e *Expectations) { e.ExpectCreations("k", 1) }, after: DefaultTTL + time.Second, want: true},
		{name: "not yet expired", steps: func(e *Expectations) { e.ExpectCreations("k", 1) }, after: DefaultTTL - time.Second, want: false},
		{name: "own write not yet seen", steps: func(e *Expectations) { e.ExpectVersion("k", "7") }, want: false},
		{name: "an older version is not enough", steps: func(e *Expectations) { e.ExpectVersion("k", "7"); e.VersionObserved("k", "6") }, want: false},
		{name: "own write seen", steps: func(e *Expectations) { e.ExpectVersion("k", "7"); e.VersionObserved("k", "7") }, want: true},
		{name: "a newer version is enough", steps: func(e *Expectations) { e.ExpectVersion("k", "7"); e.VersionObserved("k", "8") }, want: true},
		{name: "the watch beat the response", steps: func(e *Expectations) { e.VersionObserved("k", "7"); e.ExpectVersion("k", "7") }, want: true},
		{name: "the watch beat the response and moved on", steps: func(e *Expectations) {
			e.VersionObserved("k", "7")
			e.VersionObserved("k", "9")
			e.ExpectVersion("k", "7")
		}, want: true},
		{name: "an old version seen before the write", steps: func(e *Expectations) { e.VersionObserved("k", "6"); e.ExpectVersion("k", "7") }, want: false},
		{name: "opaque versions compare by equality", steps: func(e *Expectations) { e.ExpectVersion("k", "abc"); e.VersionObserved("k", "abd") }, want: false},
		{name: "empty version expects nothing", steps: func(e *Expectations) { e.ExpectVersion("k", "") }, want: true},
		{name: "version expectation expires", steps: func(e *Expectations) { e.ExpectVersion("k", "7") }, after: DefaultTTL + time.Second, want: true},
		{name: "deleted key", steps: func(e *Expectations) { e.ExpectCreations("k", 1); e.Delete("k") }, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := now
			e := New()
			e.now = func() time.Time { return clock }
			tc.steps(e)
			clock = clock.Add(tc.after)
			if got := e.Satisfied("k"); got != tc.want {
				t.Errorf("Satisfied = %v, want %v", got, tc.want)
			}
		})
	}
}
