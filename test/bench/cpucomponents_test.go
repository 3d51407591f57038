package bench

import "testing"

func TestParseProcStat(t *testing.T) {
	line := []byte("4242 (containerd-shim) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 20 10 20 0 12 0 5000 0 0")
	p, ok := parseProcStat(line, false)
	if !ok || p.group != "containerd-shim (+ runc, container inits)" || p.ticks != 40 || p.start != 5000 {
		t.Fatalf("got %+v %v", p, ok)
	}
	if p, ok := parseProcStat([]byte("2 (kworker/0:1 (x)) I 2 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9 0 0"), false); !ok || p.group != "kernel threads" {
		t.Fatalf("kernel thread: %+v %v", p, ok)
	}
	// Another user's shell: its own time only, not the build it waited for.
	if p, ok := parseProcStat([]byte("77 (bash) S 1 77 77 0 -1 0 0 0 0 0 2 1 9000 500 20 0 1 0 9 0 0"), false); !ok || p.group != notTheCluster || p.ticks != 3 {
		t.Fatalf("bash: %+v %v", p, ok)
	}
	if p, ok := parseProcStat([]byte("78 (sleep) S 1 77 77 0 -1 0 0 0 0 0 2 1 0 0 20 0 1 0 9 0 0"), true); !ok || p.group != "sleep" {
		t.Fatalf("a pod's process: %+v %v", p, ok)
	}
}

func TestComponentCPU(t *testing.T) {
	before := ProcSnapshot{1: {group: "a", start: 1, ticks: 100}, 2: {group: "b", start: 5, ticks: 50}}
	after := ProcSnapshot{1: {group: "a", start: 1, ticks: 130}, 2: {group: "b", start: 6, ticks: 20}, 3: {group: "a", start: 9, ticks: 10}}
	var c ComponentCPU
	c.Add(before, after, 100)
	names, sec, rest := c.PerWindow()
	if len(names) != 2 || names[0] != "a" || sec["a"] != 0.4 || sec["b"] != 0.2 || rest < 0.399 || rest > 0.401 {
		t.Fatalf("names %v seconds %v rest %v", names, sec, rest)
	}
}
