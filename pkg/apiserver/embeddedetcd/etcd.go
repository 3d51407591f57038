// Package embeddedetcd runs a single-member etcd inside the nativevirt-apiserver process.
//
// It is the default storage when no --etcd-servers are given: one machine, one process, no extra
// daemon to install. Listeners are bound to 127.0.0.1 only; the data directory survives restarts,
// so a restarted server finds every object it stored before.
package embeddedetcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"k8s.io/klog/v2"
)

// Raft log retention of the single member (see Start).
const (
	snapshotCount          = 2000
	snapshotCatchUpEntries = 500
)

// Options configures the embedded etcd member.
type Options struct {
	// DataDir holds the member's WAL and snapshot; created if missing.
	DataDir string
	// ClientPort is the 127.0.0.1 port for clients; 0 picks a free one.
	ClientPort int
	// MaxRequestBytes bounds one etcd request. It must exceed the apiserver's request body limit so
	// that any body the apiserver accepts can also be stored.
	MaxRequestBytes uint
	// StartTimeout bounds how long Start waits for the member to be ready.
	StartTimeout time.Duration
	// DefragInterval is how often the running member is defragmented if fragmented; 0 checks
	// only when it starts.
	DefragInterval time.Duration
}

// Server is a running embedded etcd member.
type Server struct {
	etcd      *embed.Etcd
	clientURL string
	// stopDefrag ends the periodic defragmentation and waits for it (nil: none runs).
	stopDefrag func()

	clientOnce sync.Once
	client     *clientv3.Client
}

// Start launches the member and waits until it serves clients.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.DataDir == "" {
		return nil, fmt.Errorf("embedded etcd: a data directory is required")
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = time.Minute
	}
	var (
		e         *embed.Etcd
		clientURL url.URL
		err       error
	)
	// A port picked free can be taken by another process before etcd binds it: pick again.
	for attempt := 1; ; attempt++ {
		e, clientURL, err = launchMember(o)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || attempt == portAttempts {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: start: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(o.StartTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd: not ready after %s", o.StartTimeout)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	log := klog.FromContext(ctx)
	log.Info("Embedded etcd ready", "dataDir", o.DataDir, "clientURL", clientURL.String())
	s := &Server{etcd: e, clientURL: clientURL.String()}
	// Before anything is served: the history a previous run left is compacted, and a fragmented
	// file rewritten now, while no client waits for it.
	s.compactHistory(ctx, log)
	s.defragIfFragmented(log, "start")
	if o.DefragInterval > 0 {
		loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.defragLoop(loopCtx, log, o.DefragInterval)
		}()
		s.stopDefrag = func() { cancel(); <-done }
	}
	return s, nil
}

// ClientURL is the URL storage clients connect to.
func (s *Server) ClientURL() string { return s.clientURL }

// InProcessClient is a client of the member whose requests are function calls into it: no gRPC
// encoding, no loopback connection, no second copy of each watch event in flight. The same client
// is returned on every call; Stop closes it.
func (s *Server) InProcessClient() *clientv3.Client {
	s.clientOnce.Do(func() { s.client = v3client.New(s.etcd.Server) })
	return s.client
}

// Stop closes the member; it is safe to call more than once.
func (s *Server) Stop() {
	if s == nil || s.etcd == nil {
		return
	}
	if s.stopDefrag != nil {
		s.stopDefrag()
	}
	if s.client != nil {
		_ = s.client.Close()
	}
	s.etcd.Close()
	s.etcd = nil
}

// portAttempts bounds how often Start picks new ports when one it picked was taken meanwhile.
const portAttempts = 5

// launchMember starts the member on the ports of o (free ones where o names none); it returns the
// URL clients reach it at.
func launchMember(o Options) (*embed.Etcd, url.URL, error) {
	clientPort := o.ClientPort
	if clientPort == 0 {
		p, err := freeLoopbackPort()
		if err != nil {
			return nil, url.URL{}, err
		}
		clientPort = p
	}
	peerPort, err := freeLoopbackPort()
	if err != nil {
		return nil, url.URL{}, err
	}

	cfg := embed.NewConfig()
	cfg.Name = "nativevirt"
	cfg.Dir = filepath.Join(o.DataDir, "member-data")
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	// The peer URL is never dialled by a single member; it only has to be stable across restarts
	// because etcd derives the member ID from it, and a port number chosen per start is not.
	advertisedPeer := url.URL{Scheme: "http", Host: "127.0.0.1:2380"}
	listenPeer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{listenPeer}
	cfg.AdvertisePeerUrls = []url.URL{advertisedPeer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ListenMetricsUrls = nil
	cfg.LogLevel = "error"
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = "1h"
	// etcd keeps every raft entry since its last snapshot in memory, plus SnapshotCatchUpEntries
	// after it for followers that fall behind. A single member has no followers, and an entry
	// here is a whole stored object (~5 KB for a VirtualMachine): with etcd's defaults (10,000 +
	// 5,000) a burst of writes keeps ~70 MiB of old entries alive. A snapshot of this member is
	// cheap (the v2 store holds only the membership; the data is in bbolt already).
	cfg.SnapshotCount = snapshotCount
	cfg.SnapshotCatchUpEntries = snapshotCatchUpEntries
	if o.MaxRequestBytes > 0 {
		cfg.MaxRequestBytes = o.MaxRequestBytes
	}

	e, err := embed.StartEtcd(cfg)
	return e, clientURL, err
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("embedded etcd: pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
