package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A launcher writing its ready marker brings its VMI back at once, not on the
// next waitForLauncher poll; once attached, the pod is no longer watched.
func TestReadyMarkerEnqueues(t *testing.T) {
	e := newEnv(t)
	if err := e.agent.launchers.watchReadyMarkers(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.agent.launchers.stopWatchingReadyMarkers)
	e.addVMI(scheduledVMI())
	e.addLauncher(false)

	if after := e.sync(); after != waitForLauncher {
		t.Fatalf("requeue after %v while the launcher is not ready, want %v", after, waitForLauncher)
	}
	if n := e.agent.queue.Len(); n != 0 {
		t.Fatalf("%d keys queued before the marker exists", n)
	}
	e.markReady()
	got := make(chan string, 1)
	go func() {
		k, _ := e.agent.queue.Get()
		e.agent.queue.Done(k)
		got <- k
	}()
	select {
	case k := <-got:
		if k != key {
			t.Fatalf("queued %q, want %q", k, key)
		}
	case <-time.After(5 * time.Second):
		e.agent.queue.ShutDown()
		t.Fatal("the ready marker did not enqueue the VMI")
	}

	e.sync()
	if diff := cmp.Diff([]string{"Dial", "Define " + domain, "Start " + domain}, e.daemon.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if n := e.agent.launchers.ready.Watching(); n != 0 {
		t.Errorf("%d pods still watched after the attach", n)
	}
}
