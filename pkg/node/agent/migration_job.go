package agent

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/tunnel"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// migration is one outgoing migration of this process: the transfer running
// in libvirt, or (orphan) one an earlier agent process started.
type migration struct {
	uid    types.UID // the migration's
	domain string
	// sharedDisks: the guest has disks on ReadWriteMany claims, which stay in
	// place (see virt.MigrateParams.SharedDisks).
	sharedDisks bool
	// orphan: started by an earlier process of the agent; only libvirt's
	// state tells how it went.
	orphan bool

	abortOnce sync.Once
	abort     chan struct{}
	done      chan struct{}

	// Set before done is closed.
	err error
	// failure is the agent's own reason to abort (a timeout), if any.
	failure string
	// stats is the last progress read.
	stats   virt.JobStats
	started time.Time
	ended   time.Time
}

// requestAbort asks the running transfer to stop.
func (m *migration) requestAbort() {
	m.abortOnce.Do(func() { close(m.abort) })
}

func (m *migration) finished() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// migrationSource plays the source's part of the migrations of this node's
// VMIs: it starts the transfers, watches them and decides their outcome (see
// migration_source.go for the rule that keeps one running copy).
type migrationSource struct {
	node      string
	cfg       MigrationConfig
	dial      virt.DialFunc
	now       func() time.Time
	launchers *launcherSet
	report    reporter
	enqueue   func(key string)

	mu sync.Mutex
	// migrations are the outgoing migrations of this process, by VMI uid.
	migrations map[types.UID]*migration
}

// newMigrationSource returns a source with no migrations.
func newMigrationSource(node string, cfg MigrationConfig, dial virt.DialFunc, now func() time.Time, launchers *launcherSet, report reporter, enqueue func(string)) *migrationSource {
	return &migrationSource{node: node, cfg: cfg, dial: dial, now: now, launchers: launchers, report: report, enqueue: enqueue,
		migrations: map[types.UID]*migration{}}
}

// migrationOf returns this process's migration of the VMI, or nil.
func (s *migrationSource) migrationOf(uid types.UID) *migration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.migrations[uid]
}

// track records m as the migration of the VMI uid.
func (s *migrationSource) track(uid types.UID, m *migration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.migrations[uid] = m
}

func (s *migrationSource) forgetMigration(uid types.UID, m *migration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.migrations[uid] == m {
		delete(s.migrations, uid)
	}
}

// awaitAll waits, until timeout fires, for the running transfers to end
// (the agent stops: they abort on the context they run on), and forgets them.
func (s *migrationSource) awaitAll(logger klog.Logger, timeout <-chan time.Time) {
	s.mu.Lock()
	migrations := s.migrations
	s.migrations = map[types.UID]*migration{}
	s.mu.Unlock()
	for _, m := range migrations {
		select {
		case <-m.done:
		case <-timeout:
			logger.Info("A migration did not end after its abort", "migration", m.uid)
		}
	}
}

// inPod is the path of a migration socket inside a launcher pod.
func inPod(ch streams.MigrationChannel) string {
	return launcherpod.PrivateDir + "/" + MigrationDir + "/" + ch.Socket()
}

// migrateParams are the libvirt parameters of every migration: the three
// channels go to the agent's sockets in the source pod (the tunnels), and
// the writable disks of the disks volume are block-copied; disks on shared
// claims are left in place.
func (s *migrationSource) migrateParams(sharedDisks bool) virt.MigrateParams {
	return virt.MigrateParams{
		DestURI:        virt.URI(inPod(streams.ChannelLibvirt)),
		MigrationURI:   "unix://" + inPod(streams.ChannelQEMU),
		DisksURI:       "unix://" + inPod(streams.ChannelNBD),
		CopyDisksUnder: launcherpod.DisksDir,
		BandwidthMiB:   s.cfg.BandwidthMiB,
		SharedDisks:    sharedDisks,
	}
}

// completionTimeout is CompletionTimeoutPerGiB times the guest memory in
// GiB, at least one GiB's worth.
func (s *migrationSource) completionTimeout(vmi *kubevirtv1.VirtualMachineInstance) time.Duration {
	per := s.cfg.CompletionTimeoutPerGiB
	q, ok := convert.GuestMemory(&vmi.Spec.Domain)
	if !ok || q.Value() <= 1<<30 {
		return per
	}
	return time.Duration(float64(per) * float64(q.Value()) / float64(1<<30))
}

// startMigration opens the tunnels' sockets in the source pod and starts
// the transfer on a connection of its own; the outcome is committed by sync
// once done is closed. The transfer runs on ctx, the worker's context (not
// one sync's): it is aborted when the agent stops.
func (s *migrationSource) startMigration(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher) (*migration, error) {
	ms := vmi.Status.MigrationState
	logger := klog.FromContext(ctx).WithValues("migration", ms.MigrationUID, "target", ms.TargetNode, "targetAddress", ms.TargetNodeAddress)
	endpoint, muid := ms.TargetNodeAddress, ms.MigrationUID
	// The tunnels live until the transfer ends and closes the proxy, also
	// while it is being aborted because ctx ended.
	proxy, err := tunnel.Listen(context.WithoutCancel(ctx), l.fs.Private.HostPath(MigrationDir), func(ctx context.Context, ch streams.MigrationChannel) (net.Conn, error) {
		return s.cfg.DialTunnel(ctx, endpoint, streams.MigrationTarget{UID: muid, Channel: ch})
	}, logger)
	if err != nil {
		return nil, err
	}
	conn, err := s.dial(l.fs.Private.Path(podfs.LibvirtSocket))
	if err != nil {
		_ = proxy.Close()
		return nil, fmt.Errorf("connecting to the source libvirt: %w", err)
	}
	m := &migration{uid: muid, domain: l.domain, sharedDisks: len(l.sharedVolumes) > 0,
		abort: make(chan struct{}), done: make(chan struct{}), started: s.now()}
	s.track(vmi.UID, m)
	go s.runMigration(ctx, logger, l.key, m, conn, proxy, s.completionTimeout(vmi))
	return m, nil
}

// runMigration runs the transfer and watches it: progress and completion
// timeouts and abort requests stop it with virDomainAbortJob. conn is the
// migration's own connection (closed at the end), of which it uses the
// Migrator: libvirt serves the progress and abort calls while the migration
// call blocks on it.
func (s *migrationSource) runMigration(ctx context.Context, logger klog.Logger, key string, m *migration, conn virt.Conn, proxy *tunnel.Proxy, completion time.Duration) {
	observer := conn.Migrator
	result := make(chan error, 1)
	go func() { result <- observer.Migrate(m.domain, s.migrateParams(m.sharedDisks)) }()
	logger.Info("Migration started", "domain", m.domain, "completionTimeout", completion, "progressTimeout", s.cfg.ProgressTimeout)

	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	start := time.Now()
	lastProgress, lowest := start, uint64(0)
	aborting := false
	abortCh, stopping := m.abort, ctx.Done()
	abort := func(why string) {
		if aborting {
			return
		}
		aborting = true
		if m.failure == "" {
			m.failure = why
		}
		logger.Info("Aborting the migration", "why", why)
		if err := observer.AbortJob(m.domain); err != nil {
			logger.Error(err, "Aborting the migration")
		}
	}
	var err error
loop:
	for {
		select {
		case err = <-result:
			break loop
		case <-abortCh:
			abort("")
			abortCh = nil // aborted once; keep waiting for the result
		case <-stopping:
			abort("the node agent stopped")
			stopping = nil
		case <-tick.C:
			st, serr := observer.JobStats(m.domain, false)
			if serr != nil || !st.Active {
				continue
			}
			m.stats = st
			now := time.Now()
			if lowest == 0 || st.DataRemaining < lowest {
				lowest, lastProgress = st.DataRemaining, now
			}
			switch {
			case now.Sub(lastProgress) > s.cfg.ProgressTimeout:
				abort(fmt.Sprintf("no progress for %s (progress timeout)", s.cfg.ProgressTimeout))
			case now.Sub(start) > completion:
				abort(fmt.Sprintf("not done after %s (completion timeout)", completion))
			}
		}
	}
	_ = proxy.Close()
	_ = conn.Close()
	tunnels, sent, received := proxy.Stats()
	m.err, m.ended = err, s.now()
	logger.Info("Migration transfer ended", "err", err, "took", time.Since(start).Round(time.Millisecond),
		"tunnels", tunnels, "bytesSent", sent, "bytesReceived", received, "lastProgress", m.stats.DataProcessed)
	close(m.done)
	s.enqueue(key)
}
