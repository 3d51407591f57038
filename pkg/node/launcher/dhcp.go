package launcher

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nativevirt/nativevirt/pkg/node/dhcp"
)

// dhcpRetry is how often the launcher looks for the DHCP configuration, and
// how long it waits before it tries again after a failure.
const dhcpRetry = 500 * time.Millisecond

// serveDHCP serves the guest's DHCP until ctx ends: on the pod's bridge
// (masquerade binding, dhcp.json) and on the bridge of each secondary network
// with an address (bridge binding, dhcp-<bridge>.json). The node agent writes
// the configurations once it has made the bridges, before it starts the
// domain; until then, and for a VM without such networks, the launcher only
// looks for the files, and serves each one it finds from then on.
func (l *Launcher) serveDHCP(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	served := map[string]bool{}
	for ctx.Err() == nil {
		paths, _ := filepath.Glob(filepath.Join(l.opts.RunDir, "dhcp*.json"))
		for _, path := range paths {
			if served[path] {
				continue
			}
			served[path] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.serveDHCPPath(ctx, path)
			}()
		}
		select {
		case <-ctx.Done():
		case <-l.after(dhcpRetry):
		}
	}
}

// serveDHCPPath serves the configuration at path until ctx ends. Failures
// are logged and retried: the guest keeps asking.
func (l *Launcher) serveDHCPPath(ctx context.Context, path string) {
	log := l.log.WithName("dhcp")
	var lastErr string
	for ctx.Err() == nil {
		err := l.serveDHCPOnce(ctx, path)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
		case err.Error() != lastErr:
			log.Error(err, "Serving DHCP to the guest; retrying", "config", path)
			lastErr = err.Error()
		}
		select {
		case <-ctx.Done():
		case <-l.after(dhcpRetry):
		}
	}
}

// serveDHCPOnce serves the configuration at path until ctx ends or the
// socket fails.
func (l *Launcher) serveDHCPOnce(ctx context.Context, path string) error {
	cfg, err := dhcp.ReadConfig(path)
	if err != nil {
		return err
	}
	var resolver dhcp.Resolver
	if f, err := os.Open(l.opts.ResolvConf); err == nil {
		resolver, err = dhcp.ParseResolvConf(f)
		_ = f.Close()
		if err != nil {
			return err
		}
	} else {
		l.log.Info("No resolver configuration for the guest", "err", err)
	}
	r, err := dhcp.NewResponder(*cfg, resolver)
	if err != nil {
		return err
	}
	s := &dhcp.Server{Responder: r, Interface: cfg.Interface, Port: l.opts.DHCPPort, ReplyPort: l.opts.DHCPReplyPort, Log: l.log.WithName("dhcp")}
	conn, err := s.Listen(ctx)
	if err != nil {
		return err
	}
	l.log.Info("Serving DHCP to the guest", "interface", cfg.Interface, "guest", cfg.ClientIP, "gateway", cfg.ServerIP,
		"mac", cfg.ClientMAC, "mtu", cfg.MTU, "dns", resolver.Servers, "search", resolver.Search)
	return s.Serve(ctx, conn)
}

// after is the launcher clock's After (the real clock's without one).
func (l *Launcher) after(d time.Duration) <-chan time.Time {
	if l.clock == nil {
		return time.After(d)
	}
	return l.clock.After(d)
}
