package launcher

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeGuest describes how a fake domain reacts.
type fakeGuest struct {
	active bool
	// offAfterPresses powers the guest off on that many-th ACPI press (0: ignores ACPI).
	offAfterPresses int
	// offDelay is how long after that press the guest is off.
	offDelay time.Duration

	presses int
	offAt   time.Time
}

// fakeHypervisor is an in-memory Hypervisor that records the calls it gets.
type fakeHypervisor struct {
	mu      sync.Mutex
	guests  map[string]*fakeGuest
	calls   []string
	listErr error
	closed  bool
	probe   func() error
	// agent answers guest agent commands; nil: no agent in the guest.
	agent func(domain, command string) (string, error)
	// events makes OnLifecycle work (else it fails, as without libvirt's event loop); set
	// then tells the listeners of every change.
	events    bool
	listeners map[int]func()
	nextID    int
	// dials counts the test's dials of the daemon.
	dials atomic.Int32
	// lists counts the listings; listed is broadcast (on mu) after each.
	lists  int
	listed *sync.Cond
}

var _ Hypervisor = &fakeHypervisor{}

func newFakeHypervisor(guests map[string]*fakeGuest) *fakeHypervisor {
	f := &fakeHypervisor{guests: guests}
	f.listed = sync.NewCond(&f.mu)
	return f
}

// awaitListings waits until the launcher has listed the domains n more times: with n = 2, the
// launcher has acted on a listing that saw what was set before the call (its loop lists, acts,
// then lists again). It fails t after 10 s.
func (f *fakeHypervisor) awaitListings(t *testing.T, n int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	want := f.lists + n
	timedOut := false
	timer := time.AfterFunc(10*time.Second, func() {
		f.mu.Lock()
		timedOut = true
		f.mu.Unlock()
		f.listed.Broadcast()
	})
	defer timer.Stop()
	for f.lists < want && !timedOut {
		f.listed.Wait()
	}
	if f.lists < want {
		t.Errorf("the launcher listed its domains %d times in 10 s, want %d", n-(want-f.lists), n)
	}
}

// ProbeQEMU runs probe, when set, as libvirt's probe (which writes the capability cache).
func (f *fakeHypervisor) ProbeQEMU() error {
	f.mu.Lock()
	f.calls = append(f.calls, "probe")
	probe := f.probe
	f.mu.Unlock()
	if probe != nil {
		return probe()
	}
	return nil
}

// AgentCommand hands the command to agent, or fails as libvirt does without an agent.
func (f *fakeHypervisor) AgentCommand(domain, command string, _ time.Duration) (string, error) {
	f.mu.Lock()
	agent := f.agent
	f.mu.Unlock()
	if agent == nil {
		return "", errors.New("Guest agent is not responding: QEMU guest agent is not connected")
	}
	return agent(domain, command)
}

func (f *fakeHypervisor) OnLifecycle(fn func()) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.events {
		return nil, errors.New("this fake delivers no events")
	}
	if f.listeners == nil {
		f.listeners = map[int]func(){}
	}
	id := f.nextID
	f.nextID++
	f.listeners[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.listeners, id)
	}, nil
}

// emit calls the lifecycle listeners, as libvirt's event loop does.
func (f *fakeHypervisor) emit() {
	f.mu.Lock()
	fns := make([]func(), 0, len(f.listeners))
	for _, fn := range f.listeners {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (f *fakeHypervisor) listings() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

func (f *fakeHypervisor) listening() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.listeners)
}

func (f *fakeHypervisor) Domains() ([]Domain, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	f.listed.Broadcast()
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []Domain
	for name, g := range f.guests {
		if g.active && !g.offAt.IsZero() && !time.Now().Before(g.offAt) {
			g.active = false
		}
		out = append(out, Domain{Name: name, Active: g.active})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeHypervisor) Shutdown(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "shutdown "+name)
	g, ok := f.guests[name]
	if !ok {
		return nil
	}
	g.presses++
	if g.offAfterPresses > 0 && g.presses == g.offAfterPresses {
		g.offAt = time.Now().Add(g.offDelay)
	}
	return nil
}

func (f *fakeHypervisor) Destroy(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "destroy "+name)
	g, ok := f.guests[name]
	if !ok {
		return errors.New("no such domain")
	}
	g.active = false
	return nil
}

func (f *fakeHypervisor) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fakeHypervisor) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeHypervisor) setListErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listErr = err
}
