package launcher

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDomainWatch(t *testing.T) {
	running := []Domain{{Name: "ns_vm", Active: true}}
	off := []Domain{{Name: "ns_vm", Active: false}}
	none := []Domain{}
	type step struct {
		at      time.Duration
		domains []Domain
	}
	tests := []struct {
		name  string
		steps []step
		// want is observe's answer at each step.
		want []bool
	}{{
		name:  "nothing defined yet: wait for the node agent",
		steps: []step{{0, none}, {time.Hour, none}},
		want:  []bool{false, false},
	}, {
		name:  "defined but never started: wait",
		steps: []step{{0, off}, {time.Hour, off}},
		want:  []bool{false, false},
	}, {
		name:  "running",
		steps: []step{{0, running}, {time.Hour, running}},
		want:  []bool{false, false},
	}, {
		name:  "undefined after running: done at once",
		steps: []step{{0, running}, {time.Second, none}},
		want:  []bool{false, true},
	}, {
		name:  "shut off after running: done once off for the grace",
		steps: []step{{0, running}, {1 * time.Second, off}, {2 * time.Second, off}, {3 * time.Second, off}},
		want:  []bool{false, false, false, true},
	}, {
		name: "restarted within the grace: the clock starts again",
		steps: []step{{0, running}, {1 * time.Second, off}, {2 * time.Second, running},
			{3 * time.Second, off}, {4500 * time.Millisecond, off}, {5 * time.Second, off}},
		want: []bool{false, false, false, false, false, true},
	}, {
		name:  "shut off then undefined within the grace: done",
		steps: []step{{0, running}, {1 * time.Second, off}, {1500 * time.Millisecond, none}},
		want:  []bool{false, false, true},
	}, {
		name: "one of two still running",
		steps: []step{{0, []Domain{{Name: "a", Active: true}, {Name: "b", Active: true}}},
			{10 * time.Second, []Domain{{Name: "a"}, {Name: "b", Active: true}}}},
		want: []bool{false, false},
	}}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := domainWatch{offGrace: 2 * time.Second}
			var got []bool
			for _, s := range tt.steps {
				got = append(got, w.observe(base.Add(s.at), s.domains))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("observe answers (-want +got):\n%s", diff)
			}
		})
	}
}
