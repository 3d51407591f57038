package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ErrLibvirtdExited is returned by Run when the libvirt daemon dies: the virtual machine cannot
// run without it, and the container must end in failure.
var ErrLibvirtdExited = errors.New("libvirtd exited")

// Launcher runs the pod-private libvirt daemon for the life of the pod's virtual machine.
type Launcher struct {
	opts Options
	dial DialFunc
	log  klog.Logger
	// clock times the retries of the DHCP loop (the real clock when nil; tests step a fake one).
	clock clock.Clock
}

// New checks opts (after filling in the defaults) and returns a launcher that connects to its
// daemon with dial (DialLibvirt when nil).
func New(opts Options, dial DialFunc, log klog.Logger) (*Launcher, error) {
	opts.Complete()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if dial == nil {
		dial = DialLibvirt
	}
	return &Launcher{opts: opts, dial: dial, log: log, clock: clock.RealClock{}}, nil
}

// Options returns the launcher's completed options.
func (l *Launcher) Options() Options { return l.opts }

// Run starts the daemons and supervises them until the virtual machine is gone (nil), libvirtd
// dies (an error wrapping ErrLibvirtdExited) or ctx is cancelled (SIGTERM: the guests are shut
// down within the grace period, then nil). The daemons, and any process left behind, are
// stopped before Run returns.
func (l *Launcher) Run(ctx context.Context) error {
	log := l.log
	log.Info("Starting", "namespace", l.opts.Namespace, "name", l.opts.Name, "uid", l.opts.UID,
		"runDir", l.opts.RunDir, "gracePeriod", l.opts.GracePeriod, "capabilities", effectiveCapabilities())
	if err := becomeSubreaper(); err != nil {
		// Only matters when the launcher is not PID 1: orphans then go to the real init.
		log.Info("Orphaned processes will not be reaped here", "err", err)
	}
	if l.opts.HoldLock != "" {
		lock, err := holdLock(l.opts.HoldLock)
		if err != nil {
			return err
		}
		defer func() { _ = lock.Close() }()
	}
	if err := os.Remove(l.opts.ReadyPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing a stale ready marker: %w", err)
	}
	conf, err := l.prepareDaemons()
	if err != nil {
		return err
	}
	if err := createClaimDisks(l.opts.ClaimsDir, l.opts.ClaimDisks); err != nil {
		return err
	}
	if err := createConfigDisks(l.opts.ConfigVolumesDir, l.opts.DisksDir, l.opts.ConfigDisks); err != nil {
		return err
	}

	sup, stopSupervisor := runSupervisor(log)
	defer stopSupervisor()

	var virtlogd, libvirtd *child
	if l.opts.Virtlogd != "" {
		virtlogd, err = sup.start("virtlogd", []string{l.opts.Virtlogd})
	}
	if err == nil {
		libvirtd, err = sup.startEnv("libvirtd", []string{l.opts.Libvirtd, "--config", conf}, libvirtdEnv)
	}
	if err == nil {
		err = l.serve(ctx, libvirtd, virtlogd)
	}

	if rerr := os.Remove(l.opts.ReadyPath()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		log.Info("Could not remove the ready marker", "err", rerr)
	}
	sup.stop(libvirtd, l.opts.DaemonStopTimeout)
	sup.stop(virtlogd, l.opts.DaemonStopTimeout)
	sup.killRemaining(l.opts.DaemonStopTimeout)
	if err != nil {
		log.Error(err, "Exiting")
		return err
	}
	log.Info("Exiting")
	return nil
}

// libvirtdEnv is libvirtd's environment besides the launcher's: one malloc arena. With glibc's
// default (up to 8 per CPU) each of its worker threads that allocated keeps an arena of its own,
// ~10 MiB more resident for a daemon whose one client is the node agent
// (hack/images/launcher-memory.sh: 20 → 10 MiB anonymous). QEMU does not inherit it (libvirt
// gives QEMU a clean environment); there it saved nothing measurable.
var libvirtdEnv = []string{"MALLOC_ARENA_MAX=1"}

// prepareDaemons writes the daemons' configuration and state directories; it returns the path
// of libvirtd.conf.
func (l *Launcher) prepareDaemons() (string, error) {
	conf, err := WriteConfigs(&l.opts)
	if err != nil {
		return "", err
	}
	return conf, makeStateDirs(l.opts.StateRoot)
}

// runSupervisor starts the supervisor of the daemons (and reaper of orphans); the returned
// function stops it.
func runSupervisor(log klog.Logger) (*supervisor, func()) {
	sup := newSupervisor(log)
	ctx, cancel := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		sup.run(ctx)
	}()
	return sup, func() {
		cancel()
		<-reaped
	}
}

// serve waits for libvirtd, announces readiness and watches the domains.
func (l *Launcher) serve(ctx context.Context, libvirtd, virtlogd *child) error {
	log := l.log
	h, err := l.waitForLibvirtd(ctx, libvirtd)
	if err != nil || h == nil {
		return err
	}
	defer func() { _ = h.Close() }()
	if ready, err := l.becomeReady(ctx, libvirtd); err != nil || !ready {
		return err
	}
	// DHCP for the guest lives as long as the launcher serves, through the graceful shutdown.
	defer l.startDHCP(ctx)()

	watch := domainWatch{offGrace: l.opts.OffGrace}
	// Libvirt's lifecycle events say when to look at the domains again; a listing every
	// ResyncInterval covers what they might miss. Without events, the launcher polls.
	changed := make(chan struct{}, 1)
	events := subscribe(h, changed, log)
	defer func() { events.stop() }()
	next := time.NewTimer(0)
	defer next.Stop()
	var virtlogdDone <-chan struct{}
	if virtlogd != nil {
		virtlogdDone = virtlogd.done
	}
	for {
		select {
		case <-libvirtd.done:
			return libvirtdExited(libvirtd)
		case <-virtlogdDone:
			// QEMU writes its logs itself (stdio_handler = "file"): the VM does not need it.
			log.Info("virtlogd exited; carrying on without it", "status", describeStatus(virtlogd.status))
			virtlogdDone = nil
		case <-ctx.Done():
			return l.terminate(h, libvirtd)
		case <-changed:
		case <-next.C:
		}
		doms, err := h.Domains()
		if err != nil {
			if libvirtd.exited() {
				return libvirtdExited(libvirtd)
			}
			log.Info("Listing domains failed, reconnecting", "err", err)
			if nh, derr := l.dial(l.opts.URI()); derr == nil {
				events.stop()
				_ = h.Close()
				h = nh
				events = subscribe(h, changed, log)
			}
			resetTimer(next, l.opts.PollInterval)
			continue
		}
		if watch.observe(time.Now(), doms) {
			log.Info("The domain is gone", "domains", doms)
			return nil
		}
		// A shut off domain's grace is timed by polling, as is everything without events.
		wait := l.opts.ResyncInterval
		if !events.ok || watch.waiting() {
			wait = l.opts.PollInterval
		}
		resetTimer(next, wait)
	}
}

// becomeReady waits for the disk copies the launcher awaits, then writes the ready marker.
// ready is false when ctx ended first.
func (l *Launcher) becomeReady(ctx context.Context, libvirtd *child) (ready bool, err error) {
	log := l.log
	if len(l.opts.AwaitFiles) > 0 {
		start := time.Now()
		done, err := awaitFiles(ctx, l.opts.AwaitFiles, libvirtd)
		if err != nil || !done {
			if err == nil {
				log.Info("Terminated before the disks were copied")
			}
			return false, err
		}
		log.Info("Disks copied", "files", l.opts.AwaitFiles, "waited", time.Since(start).Round(time.Millisecond))
	}
	if err := writeFileAtomic(l.opts.ReadyPath(), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return false, err
	}
	log.Info("Ready", "socket", l.opts.SocketPath())
	return true, nil
}

// startDHCP serves DHCP to the guest, also after ctx ends, until the returned stop is called;
// stop returns once the server ended.
func (l *Launcher) startDHCP(ctx context.Context) (stop func()) {
	dhcpCtx, stopDHCP := context.WithCancel(context.WithoutCancel(ctx))
	dhcpDone := make(chan struct{})
	go func() {
		defer close(dhcpDone)
		l.serveDHCP(dhcpCtx)
	}()
	return func() {
		stopDHCP()
		<-dhcpDone
	}
}

// terminate shuts the guests down when the launcher is told to end, after the terminated
// marker is written: the node agent tells by it that the guest was stopped for the launcher,
// not by itself.
func (l *Launcher) terminate(h Hypervisor, libvirtd *child) error {
	log := l.log
	if err := writeFileAtomic(l.opts.TerminatedPath(), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		log.Error(err, "Could not write the terminated marker")
	}
	res, err := shutdownGuests(h, shutdownPolicy{
		grace:   l.opts.GracePeriod,
		poll:    l.opts.PollInterval,
		repress: 5 * time.Second,
	}, log)
	if libvirtd.exited() {
		return libvirtdExited(libvirtd)
	}
	if err != nil {
		return fmt.Errorf("shutting the guests down: %w", err)
	}
	log.Info("Terminated", "poweredOff", res.poweredOff, "destroyed", res.destroyed)
	return nil
}

// subscription is the launcher's registration for libvirt's lifecycle events.
type subscription struct {
	ok   bool
	stop func()
}

// subscribe has h signal changed (without blocking) on every domain lifecycle event. When h
// cannot deliver events the subscription is not ok and the launcher polls instead.
func subscribe(h Hypervisor, changed chan<- struct{}, log klog.Logger) subscription {
	stop, err := h.OnLifecycle(func() {
		select {
		case changed <- struct{}{}:
		default: // a listing is due already
		}
	})
	if err != nil {
		log.Info("No domain events from libvirt; polling the domains instead", "err", err)
		return subscription{stop: func() {}}
	}
	return subscription{ok: true, stop: stop}
}

// resetTimer makes t fire after d, whether or not it fired and was drained before.
func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}

// waitForLibvirtd connects to libvirtd once its socket answers and its QEMU driver lists
// domains. It returns (nil, nil) when ctx is cancelled first.
func (l *Launcher) waitForLibvirtd(ctx context.Context, libvirtd *child) (Hypervisor, error) {
	start := time.Now()
	deadline := start.Add(l.opts.StartTimeout)
	var lastErr error
	for {
		if _, err := os.Stat(l.opts.SocketPath()); err == nil {
			h, err := l.dial(l.opts.URI())
			if err == nil {
				if _, err = h.Domains(); err == nil {
					l.log.Info("libvirtd answers", "after", time.Since(start).Round(time.Millisecond))
					return h, nil
				}
				_ = h.Close()
			}
			lastErr = err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("libvirtd did not answer on %s within %s: %v", l.opts.SocketPath(), l.opts.StartTimeout, lastErr)
		}
		select {
		case <-ctx.Done():
			l.log.Info("Terminated before libvirtd was ready")
			return nil, nil
		case <-libvirtd.done:
			return nil, libvirtdExited(libvirtd)
		case <-time.After(libvirtdPoll):
		}
	}
}

// libvirtdPoll is how often the launcher looks for libvirtd's socket while it starts (~60 ms
// here): every poll interval of waiting delays the VM's start.
const libvirtdPoll = 10 * time.Millisecond

func libvirtdExited(c *child) error {
	return fmt.Errorf("%w (%s): the virtual machine cannot run without it", ErrLibvirtdExited, describeStatus(c.status))
}

// effectiveCapabilities is the CapEff line of /proc/self/status, for the start-up log.
func effectiveCapabilities() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
