package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
)

// fakeLibvirtd is a stand-in daemon: it creates the socket file named by the unix_sock_dir of
// the libvirtd.conf it is given (--config FILE), then runs body.
func fakeLibvirtd(t *testing.T, body string) string {
	t.Helper()
	script := `#!/bin/sh
[ "$1" = --config ] || { echo "fake libvirtd: want --config FILE, got $*" >&2; exit 64; }
dir=$(sed -n 's/^unix_sock_dir = "\(.*\)"$/\1/p' "$2")
[ -d "$dir" ] || { echo "fake libvirtd: no socket directory in $2" >&2; exit 65; }
: > "$dir/libvirt-sock"
` + body + "\n"
	path := filepath.Join(t.TempDir(), "libvirtd")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// shortTempDir is a temporary directory short enough for the socket paths under it (108 bytes).
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nvl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// testOptions are a launcher's options under dir with a fake libvirtd running libvirtdBody and
// a virtlogd that sleeps, with short timings.
func testOptions(t *testing.T, dir, libvirtdBody string) Options {
	t.Helper()
	virtlogd := filepath.Join(dir, "virtlogd")
	if err := os.WriteFile(virtlogd, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{
		Namespace: "ns", Name: "vm", UID: "uid-1",
		GracePeriod:       300 * time.Millisecond,
		RunDir:            filepath.Join(dir, "run"),
		ConfigDir:         filepath.Join(dir, "etc"),
		StateRoot:         filepath.Join(dir, "root"),
		Libvirtd:          fakeLibvirtd(t, libvirtdBody),
		Virtlogd:          virtlogd,
		OffGrace:          200 * time.Millisecond,
		PollInterval:      20 * time.Millisecond,
		DaemonStopTimeout: time.Second,
	}
}

// startLauncher runs a launcher with opts and dial; Run's result arrives on errc, cancel is its
// SIGTERM.
func startLauncher(t *testing.T, opts Options, dial DialFunc) (errc <-chan error, cancel context.CancelFunc) {
	t.Helper()
	l, err := New(opts, dial, klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan error, 1)
	go func() { c <- l.Run(ctx) }()
	return c, cancel
}

func TestRun(t *testing.T) {
	boom := errors.New("unreachable")
	tests := []struct {
		name     string
		libvirtd string
		// during runs once the launcher is ready (or at once when never ready), with the fake.
		during func(t *testing.T, h *fakeHypervisor, cancel context.CancelFunc)
		// dialErr makes every dial fail.
		dialErr      error
		startTimeout time.Duration
		wantErr      string
		wantCalls    []string
		wantReady    bool
		// wantTerminated: the terminated marker tells the node agent that the launcher stopped
		// the guest.
		wantTerminated bool
	}{{
		name:     "the domain runs, then is undefined",
		libvirtd: "exec sleep 60",
		during: func(t *testing.T, h *fakeHypervisor, _ context.CancelFunc) {
			h.set("ns_vm", &fakeGuest{active: true})
			h.awaitListings(t, 2) // the launcher saw the running domain
			h.set("ns_vm", nil)
		},
		wantReady: true,
	}, {
		name:     "the domain runs, then stays shut off",
		libvirtd: "exec sleep 60",
		during: func(t *testing.T, h *fakeHypervisor, _ context.CancelFunc) {
			h.set("ns_vm", &fakeGuest{active: true})
			h.awaitListings(t, 2) // the launcher saw the running domain
			h.set("ns_vm", &fakeGuest{active: false})
		},
		wantReady: true,
	}, {
		name:     "SIGTERM: the guest powers off on the ACPI button",
		libvirtd: "exec sleep 60",
		during: func(t *testing.T, h *fakeHypervisor, cancel context.CancelFunc) {
			h.set("ns_vm", &fakeGuest{active: true, offAfterPresses: 1})
			h.awaitListings(t, 2) // the launcher saw the running domain
			cancel()
		},
		wantCalls:      []string{"shutdown ns_vm"},
		wantReady:      true,
		wantTerminated: true,
	}, {
		name:     "SIGTERM: a guest ignoring ACPI is destroyed after the grace period",
		libvirtd: "exec sleep 60",
		during: func(t *testing.T, h *fakeHypervisor, cancel context.CancelFunc) {
			h.set("ns_vm", &fakeGuest{active: true})
			h.awaitListings(t, 2) // the launcher saw the running domain
			cancel()
		},
		wantCalls:      []string{"shutdown ns_vm", "destroy ns_vm"},
		wantReady:      true,
		wantTerminated: true,
	}, {
		name:     "libvirtd dies while the domain runs",
		libvirtd: "sleep 0.5; exit 3",
		during: func(t *testing.T, h *fakeHypervisor, _ context.CancelFunc) {
			h.set("ns_vm", &fakeGuest{active: true})
		},
		wantErr:   "libvirtd exited (exit status 3)",
		wantReady: true,
	}, {
		name:     "libvirtd dies before it answers",
		libvirtd: "exit 7",
		dialErr:  boom,
		wantErr:  "libvirtd exited (exit status 7)",
	}, {
		name:         "libvirtd never answers",
		libvirtd:     "exec sleep 60",
		dialErr:      boom,
		startTimeout: 300 * time.Millisecond,
		wantErr:      "did not answer",
	}, {
		name:     "SIGTERM before libvirtd answers",
		libvirtd: "exec sleep 60",
		dialErr:  boom,
		during: func(t *testing.T, h *fakeHypervisor, cancel context.CancelFunc) {
			// Once the launcher has tried, and tries again.
			if !waitFor(5*time.Second, func() bool { return h.dials.Load() >= 2 }) {
				t.Error("the launcher did not dial libvirtd twice")
			}
			cancel()
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := shortTempDir(t)
			h := newFakeHypervisor(map[string]*fakeGuest{})
			opts := testOptions(t, dir, tt.libvirtd)
			opts.StartTimeout = tt.startTimeout
			dial := func(uri string) (Hypervisor, error) {
				h.dials.Add(1)
				if want := "qemu+unix:///system?socket=" + filepath.Join(dir, "run", "libvirt", "libvirt-sock"); uri != want {
					t.Errorf("dialled %q, want %q", uri, want)
				}
				if tt.dialErr != nil {
					return nil, tt.dialErr
				}
				return h, nil
			}
			errc, cancel := startLauncher(t, opts, dial)
			defer cancel()

			ready := false
			if tt.wantReady {
				ready = waitFor(5*time.Second, func() bool { return fileExists(opts.RunDir + "/ready") })
			}
			if tt.during != nil {
				tt.during(t, h, cancel)
			}
			var runErr error
			select {
			case runErr = <-errc:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return")
			}

			if tt.wantErr == "" && runErr != nil {
				t.Errorf("Run: %v", runErr)
			}
			if tt.wantErr != "" && (runErr == nil || !strings.Contains(runErr.Error(), tt.wantErr)) {
				t.Errorf("Run error %v, want one containing %q", runErr, tt.wantErr)
			}
			if ready != tt.wantReady {
				t.Errorf("ready marker seen: %t, want %t", ready, tt.wantReady)
			}
			if fileExists(opts.RunDir + "/ready") {
				t.Error("ready marker left behind")
			}
			if got := fileExists(opts.RunDir + "/terminated"); got != tt.wantTerminated {
				t.Errorf("terminated marker written: %t, want %t", got, tt.wantTerminated)
			}
			if diff := cmp.Diff(tt.wantCalls, collapse(h.callLog())); diff != "" {
				t.Errorf("hypervisor calls (-want +got):\n%s", diff)
			}
			if got := childPIDs(); len(got) > 0 {
				t.Errorf("processes left behind: %v", got)
			}
			for _, f := range []string{"etc/libvirtd.conf", "etc/qemu.conf", "root/var/lib/libvirt/qemu", "root/run/libvirt"} {
				if !fileExists(filepath.Join(dir, f)) {
					t.Errorf("%s was not created", f)
				}
			}
		})
	}
}

// set changes a domain (nil: undefines it) and tells the lifecycle listeners, if any.
func (f *fakeHypervisor) set(name string, g *fakeGuest) {
	f.setQuietly(name, g)
	f.emit()
}

// setQuietly changes a domain without an event.
func (f *fakeHypervisor) setQuietly(name string, g *fakeGuest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g == nil {
		delete(f.guests, name)
		return
	}
	f.guests[name] = g
}

// With libvirt's lifecycle events the launcher lists its domains when an event comes (and
// every ResyncInterval), not every PollInterval; it still polls while a shut off domain's grace
// runs.
func TestRunFollowsLifecycleEvents(t *testing.T) {
	for _, tt := range []struct {
		name string
		// end makes the domain gone; Run must not return before it.
		end func(h *fakeHypervisor)
	}{{
		name: "undefined",
		end:  func(h *fakeHypervisor) { h.set("ns_vm", nil) },
	}, {
		name: "shut off for the grace",
		end:  func(h *fakeHypervisor) { h.set("ns_vm", &fakeGuest{active: false}) },
	}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := shortTempDir(t)
			h := newFakeHypervisor(map[string]*fakeGuest{})
			h.events = true
			opts := testOptions(t, dir, "exec sleep 60")
			opts.ResyncInterval = time.Hour
			errc, cancel := startLauncher(t, opts, func(string) (Hypervisor, error) { return h, nil })
			defer cancel()
			if !waitFor(5*time.Second, func() bool { return h.listening() == 1 }) {
				t.Fatal("the launcher did not subscribe to lifecycle events")
			}
			seen := h.listings()
			h.set("ns_vm", &fakeGuest{active: true})
			if !waitFor(5*time.Second, func() bool { return h.listings() > seen }) {
				t.Fatal("the launcher did not list the domains after the event")
			}

			// Undefined without an event: a launcher polling every PollInterval (20 ms) would
			// notice; this one waits for an event or the resync.
			h.setQuietly("ns_vm", nil)
			select {
			case err := <-errc:
				t.Fatalf("Run returned without an event (%v): the launcher still polls", err)
			case <-time.After(300 * time.Millisecond):
			}

			h.set("ns_vm", &fakeGuest{active: true})
			tt.end(h)
			select {
			case err := <-errc:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after the event")
			}
			if n := h.listening(); n != 0 {
				t.Errorf("%d lifecycle listeners left registered", n)
			}
		})
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}
