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
		Use:   "port-forward TYPE/NAME [LOCAL:]PORT[/PROTOCOL]...",
		Short: "Forward local ports to ports of a running instance or VM",
		Long: "Listen on local ports and carry every connection to a port of the guest, as virtctl " +
			"port-forward does: TYPE is vmi or vm (a VM's port is its running instance's), NAME alone " +
			"means vmi/NAME. PORT is the guest's port; LOCAL is the local one (the same by default, " +
			"0 or empty picks a free one), e.g. 8080:80 or :22; PROTOCOL is tcp (the default) or udp. Each TCP " +
			"connection, and each UDP client address, gets its own stream (subresource portforward/PORT/PROTOCOL). " +
			"With --stdio the command carries its standard input and output to one TCP port instead (for " +
			"ssh's ProxyCommand).",
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
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			dial := func(m portMapping) (*websocket.Conn, error) {
				return c.dialStream(ctx, resource, name, string(streams.ActionPortForward)+"/"+m.guest.String(), "port "+m.guest.String())
			}
			if stdio {
				if len(forwards) != 1 || forwards[0].local != forwards[0].guest.Port || forwards[0].guest.Protocol != "tcp" {
					return fmt.Errorf("--stdio carries one TCP guest port: give PORT alone")
				}
				ws, err := dial(forwards[0])
				if err != nil {
					return err
				}
				return streams.Pipe(ctx, ws, struct {
					io.Reader
					io.Writer
				}{o.streams.In, o.streams.Out})
			}
			// Each forward's server, started once every port listens.
			var servers []func() error
			var closers []io.Closer
			defer func() {
				for _, c := range closers {
					_ = c.Close()
				}
			}()
			for _, m := range forwards {
				// One stream up front, so that a stopped instance or a bad port is reported at once;
				// it carries the first connection (or the first UDP client's datagrams).
				first, err := dial(m)
				if err != nil {
					return err
				}
				closers = append(closers, first)
				next := func() (*websocket.Conn, error) { return dial(m) }
				local := net.JoinHostPort(address, strconv.Itoa(m.local))
				if m.guest.Protocol == "udp" {
					pc, err := net.ListenPacket("udp", local)
					if err != nil {
						return err
					}
					closers = append(closers, pc)
					_, _ = fmt.Fprintf(o.streams.Out, "Forwarding from %s -> %d/udp\n", pc.LocalAddr(), m.guest.Port)
					servers = append(servers, func() error { return serveDatagrams(ctx, pc, first, next, o.warn) })
					continue
				}
				l, err := net.Listen("tcp", local)
				if err != nil {
					return err
				}
				closers = append(closers, l)
				_, _ = fmt.Fprintf(o.streams.Out, "Forwarding from %s -> %d\n", l.Addr(), m.guest.Port)
				servers = append(servers, func() error { return serveStreams(ctx, l, first, next, o.warn) })
			}
			var wg sync.WaitGroup
			errs := make(chan error, len(servers))
			for _, serve := range servers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- serve()
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

// portMapping is one [LOCAL:]PORT[/PROTOCOL] argument.
type portMapping struct {
	local int
	guest streams.ForwardedPort
}

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

// parsePortMapping reads PORT, LOCAL:PORT or :PORT, each optionally followed by /tcp or /udp;
// the guest's part is what the portforward path takes (streams.ParseForwardedPort).
func parsePortMapping(s string) (portMapping, error) {
	local, guest, hasLocal := strings.Cut(s, ":")
	if !hasLocal {
		guest = s
	}
	port, err := streams.ParseForwardedPort(strings.Split(guest, "/"))
	if err != nil {
		return portMapping{}, fmt.Errorf("%q: %w", s, err)
	}
	m := portMapping{local: port.Port, guest: port}
	if hasLocal {
		m.local = 0
		if local != "" {
			if m.local, err = strconv.Atoi(local); err != nil || m.local < 0 || m.local > 65535 {
				return portMapping{}, fmt.Errorf("%q: the local port must be a number from 0 to 65535", s)
			}
		}
	}
	return m, nil
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

// serveDatagrams forwards UDP: each client address gets a stream of its own (the first one the
// stream dialled up front), a datagram from the client is one message on it, and each message
// back is one datagram to that client. It ends with ctx.
func serveDatagrams(ctx context.Context, pc net.PacketConn, first *websocket.Conn, dial func() (*websocket.Conn, error), warn func(error)) error {
	go func() {
		<-ctx.Done()
		_ = pc.Close()
	}()
	var mu sync.Mutex
	peers := map[string]*websocket.Conn{}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ws := range peers {
			_ = ws.Close()
		}
	}()
	pending := first
	buf := make([]byte, 64*1024)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		key := addr.String()
		mu.Lock()
		ws := peers[key]
		mu.Unlock()
		if ws == nil {
			if ws, pending = pending, nil; ws == nil {
				if ws, err = dial(); err != nil {
					warn(err)
					continue
				}
			}
			mu.Lock()
			peers[key] = ws
			mu.Unlock()
			go func() {
				for {
					_, data, err := ws.ReadMessage()
					if err != nil {
						mu.Lock()
						delete(peers, key)
						mu.Unlock()
						_ = ws.Close()
						return
					}
					_, _ = pc.WriteTo(data, addr)
				}
			}()
		}
		if err := ws.WriteMessage(websocket.BinaryMessage, buf[:n]); err != nil {
			warn(fmt.Errorf("forwarding a datagram from %s: %w", key, err))
		}
	}
}
