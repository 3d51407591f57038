package launcher

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/klog/v2"
)

func TestShutdownGuests(t *testing.T) {
	const grace = 400 * time.Millisecond
	tests := []struct {
		name   string
		guests map[string]*fakeGuest
		grace  time.Duration
		want   shutdownResult
		// wantCalls are the calls the hypervisor got, in order, repeats of a call collapsed (how
		// often the button is pressed again depends on the timing).
		wantCalls []string
		// maxTime bounds how long the shutdown may take.
		maxTime time.Duration
		minTime time.Duration
	}{{
		name:    "nothing running",
		guests:  map[string]*fakeGuest{"off": {active: false}},
		grace:   grace,
		maxTime: 100 * time.Millisecond,
	}, {
		name:      "guest powers off on the first press",
		guests:    map[string]*fakeGuest{"vm": {active: true, offAfterPresses: 1, offDelay: 50 * time.Millisecond}},
		grace:     grace,
		want:      shutdownResult{poweredOff: []string{"vm"}},
		wantCalls: []string{"shutdown vm"},
		maxTime:   300 * time.Millisecond,
	}, {
		name:      "guest ignores ACPI: destroyed after the grace period",
		guests:    map[string]*fakeGuest{"vm": {active: true}},
		grace:     grace,
		want:      shutdownResult{destroyed: []string{"vm"}},
		wantCalls: []string{"shutdown vm", "destroy vm"},
		minTime:   grace,
		maxTime:   grace + 300*time.Millisecond,
	}, {
		name:      "guest misses the first press, obeys the second",
		guests:    map[string]*fakeGuest{"vm": {active: true, offAfterPresses: 2}},
		grace:     grace,
		want:      shutdownResult{poweredOff: []string{"vm"}},
		wantCalls: []string{"shutdown vm"},
		maxTime:   grace,
	}, {
		name: "one obeys, one is destroyed, a stopped one is left alone",
		guests: map[string]*fakeGuest{
			"good": {active: true, offAfterPresses: 1},
			"bad":  {active: true},
			"off":  {active: false},
		},
		grace:     grace,
		want:      shutdownResult{poweredOff: []string{"good"}, destroyed: []string{"bad"}},
		wantCalls: []string{"shutdown bad", "shutdown good", "shutdown bad", "destroy bad"},
		minTime:   grace,
		maxTime:   grace + 300*time.Millisecond,
	}, {
		name:      "zero grace: destroyed at once, no press",
		guests:    map[string]*fakeGuest{"vm": {active: true, offAfterPresses: 1}},
		grace:     0,
		want:      shutdownResult{destroyed: []string{"vm"}},
		wantCalls: []string{"destroy vm"},
		maxTime:   100 * time.Millisecond,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHypervisor(tt.guests)
			start := time.Now()
			got, err := shutdownGuests(h, shutdownPolicy{grace: tt.grace, poll: 20 * time.Millisecond, repress: 150 * time.Millisecond}, klog.Background())
			took := time.Since(start)
			if err != nil {
				t.Fatalf("shutdownGuests: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(shutdownResult{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, collapse(h.callLog()), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if took < tt.minTime || took > tt.maxTime {
				t.Errorf("took %s, want between %s and %s", took, tt.minTime, tt.maxTime)
			}
			doms, _ := h.Domains()
			if names := activeNames(doms); len(names) > 0 {
				t.Errorf("still running: %v", names)
			}
		})
	}
}

func TestShutdownGuestsListError(t *testing.T) {
	h := newFakeHypervisor(map[string]*fakeGuest{"vm": {active: true}})
	boom := errors.New("connection reset")
	h.setListErr(boom)
	if _, err := shutdownGuests(h, shutdownPolicy{grace: time.Second, poll: 10 * time.Millisecond}, klog.Background()); !errors.Is(err, boom) {
		t.Fatalf("shutdownGuests error = %v, want %v", err, boom)
	}
}

// collapse drops consecutive repeats.
func collapse(calls []string) []string {
	var out []string
	for _, c := range calls {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}
