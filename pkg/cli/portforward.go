package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

func newPortForwardCommand(o *options) *cobra.Command {
	var address string
	var stdio bool
	cmd := &cobra.Command{
		Use:   "port-forward TYPE/NAME [LOCAL:]PORT...",
		Short: "Forward local ports to ports of a running instance or VM",
		Long: "Listen on local ports and carry every connection to a port of the guest, as virtctl " +
			"port-forward does: TYPE is vmi or vm (a VM's port is its running instance's), NAME alone " +
			"means vmi/NAME. PORT is the guest's port; LOCAL is the local one (the same by default, " +
			"0 or empty picks a free one), e.g. 8080:80 or :22. Each connection gets its own stream " +
			"(subresource portforward/PORT/tcp). With --stdio the command carries its standard input and " +
			"output to one port instead (for ssh's ProxyCommand). Forwarding of UDP ports (PORT/udp) is " +
			"served by the API but not by this command.",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			resource, name, err := parseForwardTarget(args[0])
			if err != nil {
				return err
			}
			var forwards []portMapping
			for _, a := range args[1:] {
				m, err := parsePortMapping(a)
				if err != nil {
					return err
				}
				forwards = append(forwards, m)
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			if stdio {
				if len(forwards) != 1 || forwards[0].local != forwards[0].remote {
					return fmt.Errorf("--stdio carries one guest port: give PORT alone")
				}
				ws, err := c.dialStream(cmd.Context(), resource, name,
					fmt.Sprintf("%s/%d/tcp", streams.ActionPortForward, forwards[0].remote), fmt.Sprintf("port %d", forwards[0].remote))
				if err != nil {
					return err
				}
				return streams.Pipe(cmd.Context(), ws, struct {
					io.Reader
					io.Writer
				}{o.streams.In, o.streams.Out})
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			dial := func(m portMapping) (*websocket.Conn, error) {
				return c.dialStream(ctx, resource, name, fmt.Sprintf("%s/%d/tcp", streams.ActionPortForward, m.remote),
					fmt.Sprintf("port %d", m.remote))
			}
			var listeners []net.Listener
			defer func() {
				for _, l := range listeners {
					_ = l.Close()
				}
			}()
			var firsts []*websocket.Conn
			defer func() {
				for _, ws := range firsts {
					if ws != nil {
						_ = ws.Close()
					}
				}
			}()
			for _, m := range forwards {
				// One stream up front, so that a stopped instance or a bad port is reported at once;
				// it carries the first connection.
				first, err := dial(m)
				if err != nil {
					return err
				}
				firsts = append(firsts, first)
				l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(m.local)))
				if err != nil {
					return err
				}
				listeners = append(listeners, l)
				_, _ = fmt.Fprintf(o.streams.Out, "Forwarding from %s -> %d\n", l.Addr(), m.remote)
			}
			var wg sync.WaitGroup
			errs := make(chan error, len(listeners))
			for i, l := range listeners {
				m, first := forwards[i], firsts[i]
				firsts[i] = nil // serveStreams owns it now
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- serveStreams(ctx, l, first, func() (*websocket.Conn, error) { return dial(m) }, o.warn)
				}()
			}
			var first error
			select {
			case <-ctx.Done():
			case first = <-errs:
				cancel()
			}
			wg.Wait()
			return first
		},
	}
	cmd.Flags().StringVar(&address, "address", "127.0.0.1", "Local address to listen on.")
	cmd.Flags().BoolVar(&stdio, "stdio", false, "Carry standard input and output to the one guest port given.")
	return cmd
}

// portMapping is one LOCAL:PORT argument.
type portMapping struct{ local, remote int }

// parseForwardTarget reads vmi/NAME, vm/NAME or NAME (an instance).
func parseForwardTarget(s string) (resource, name string, err error) {
	kind, name, found := strings.Cut(s, "/")
	if !found {
		kind, name = "vmi", s
	}
	switch kind {
	case "vmi", "vmis", "virtualmachineinstance", "virtualmachineinstances":
		resource = "virtualmachineinstances"
	case "vm", "vms", "virtualmachine", "virtualmachines":
		resource = "virtualmachines"
	default:
		return "", "", fmt.Errorf("%q: the target is vmi/NAME or vm/NAME", s)
	}
	if name == "" {
		return "", "", fmt.Errorf("%q: the target needs a name", s)
	}
	return resource, name, nil
}

// parsePortMapping reads PORT, LOCAL:PORT or :PORT; a /tcp suffix is accepted, /udp refused.
func parsePortMapping(s string) (portMapping, error) {
	spec, protocol, _ := strings.Cut(s, "/")
	if protocol != "" && protocol != "tcp" {
		if protocol == "udp" {
			return portMapping{}, fmt.Errorf("%q: this command forwards TCP only", s)
		}
		return portMapping{}, fmt.Errorf("%q: unknown protocol %q (tcp)", s, protocol)
	}
	local, remote, hasLocal := strings.Cut(spec, ":")
	if !hasLocal {
		remote, local = spec, spec
	}
	r, err := strconv.Atoi(remote)
	if err != nil || r < 1 || r > 65535 {
		return portMapping{}, fmt.Errorf("%q: the guest port must be a number from 1 to 65535", s)
	}
	l := 0
	if local != "" {
		if l, err = strconv.Atoi(local); err != nil || l < 0 || l > 65535 {
			return portMapping{}, fmt.Errorf("%q: the local port must be a number from 0 to 65535", s)
		}
	}
	return portMapping{local: l, remote: r}, nil
}

// serveStreams carries each accepted connection over a stream of its own until ctx ends; the
// first connection uses the stream dialled up front. A connection whose stream cannot be opened
// (the instance stopped meanwhile) is closed and reported to warn; the listener goes on.
func serveStreams(ctx context.Context, l net.Listener, first *websocket.Conn, dial func() (*websocket.Conn, error), warn func(error)) error {
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	var mu sync.Mutex
	pending := first
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if pending != nil {
			_ = pending.Close()
		}
	}()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		mu.Lock()
		ws := pending
		pending = nil
		mu.Unlock()
		go func() {
			if ws == nil {
				var err error
				if ws, err = dial(); err != nil {
					_ = conn.Close()
					warn(err)
					return
				}
			}
			_ = streams.Pipe(ctx, ws, conn)
		}()
	}
}
