// Package tunnel is the source side of a live migration's transport: the
// node agent listens on unix sockets in the source launcher pod's migration
// directory, where the source libvirt daemon and QEMU connect as if the
// target's daemon and QEMU were there, and carries every accepted connection
// through a mutual-TLS tunnel (package streams) to the target node agent,
// which connects it to the target launcher. No TCP port is ever opened in a
// pod, and nothing but the two node agents talks across nodes.
package tunnel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// DialFunc opens the tunnel of one channel to the target node agent.
type DialFunc func(ctx context.Context, ch streams.MigrationChannel) (net.Conn, error)

// Proxy listens on one socket per migration channel and tunnels every
// accepted connection until Close.
type Proxy struct {
	// cancel ends the dials of tunnels in flight (Close).
	cancel    context.CancelFunc
	dial      DialFunc
	log       klog.Logger
	dir       *podfs.Dir
	listeners []net.Listener
	wg        sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}

	// Bytes counts what went to the target (Sent) and came back (Received).
	sent, received atomic.Int64
	tunnels        atomic.Int64
}

// Listen creates the directory at host path dir (mode 0700) and listens on
// <dir>/<channel>.sock for every channel, replacing stale socket files of an
// earlier migration. The directory is held open and the sockets are named
// through it (podfs), so a long kubelet path does not hit the 108-byte limit
// of unix socket paths. The tunnels are dialled on ctx until Close.
func Listen(ctx context.Context, dir string, dial DialFunc, log klog.Logger) (*Proxy, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("migration socket directory: %w", err)
	}
	d, err := podfs.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("migration socket directory: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Proxy{cancel: cancel, dial: dial, log: log, dir: d, conns: map[net.Conn]struct{}{}}
	for _, ch := range streams.MigrationChannels {
		path := d.Path(ch.Socket())
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			_ = p.Close()
			return nil, fmt.Errorf("removing the stale socket %s: %w", path, err)
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("listening for the migration's %s channel: %w", ch, err)
		}
		// The socket file goes with the listener.
		l.(*net.UnixListener).SetUnlinkOnClose(true)
		p.listeners = append(p.listeners, l)
		p.wg.Add(1)
		go p.accept(ctx, l, ch)
	}
	return p, nil
}

// accept serves the connections accepted on l until it is closed.
func (p *Proxy) accept(ctx context.Context, l net.Listener, ch streams.MigrationChannel) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		p.wg.Add(1)
		go p.serve(ctx, c, ch)
	}
}

// serve tunnels one accepted connection. When the tunnel cannot be opened
// the connection is closed: libvirt or QEMU then fail the migration, and the
// guest stays on the source.
func (p *Proxy) serve(ctx context.Context, c net.Conn, ch streams.MigrationChannel) {
	defer p.wg.Done()
	defer p.untrack(c)
	remote, err := p.dial(ctx, ch)
	if err != nil {
		p.log.Error(err, "Opening a migration tunnel", "channel", ch)
		_ = c.Close()
		return
	}
	if !p.track(remote) {
		_ = remote.Close()
		_ = c.Close()
		return
	}
	defer p.untrack(remote)
	p.tunnels.Add(1)
	p.log.V(2).Info("Migration tunnel open", "channel", ch)
	out, in := streams.Splice(c, remote)
	p.sent.Add(out)
	p.received.Add(in)
	p.log.V(2).Info("Migration tunnel closed", "channel", ch, "bytesSent", out, "bytesReceived", in)
}

// track remembers an open connection; false once the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// Stats reports how many tunnels were opened and the bytes sent to and
// received from the target so far (of the tunnels that ended).
func (p *Proxy) Stats() (tunnels, sent, received int64) {
	return p.tunnels.Load(), p.sent.Load(), p.received.Load()
}

// Close stops listening (removing the sockets), closes every tunnel and
// waits for their goroutines.
func (p *Proxy) Close() error {
	p.cancel()
	var errs []error
	for _, l := range p.listeners {
		if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
	p.wg.Wait()
	errs = append(errs, p.dir.Close())
	return errors.Join(errs...)
}
