package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"k8s.io/klog/v2"
)

// Well-known ports.
const (
	// ServerPort is where servers listen.
	ServerPort = 67
	// ClientPort is where clients listen.
	ClientPort = 68
)

// Server answers the guest's DHCP requests on one interface.
type Server struct {
	// Responder computes the answers.
	Responder *Responder
	// Interface is the device the socket is bound to.
	Interface string
	// Port and ReplyPort override ServerPort and ClientPort (tests).
	Port, ReplyPort int
	// Log receives one line per answer.
	Log klog.Logger
}

// Listen opens the server's UDP socket: port 67 on every address, bound to
// the interface (so that only its clients are heard and broadcasts leave
// through it), allowed to broadcast.
func (s *Server) Listen(ctx context.Context) (net.PacketConn, error) {
	port := s.Port
	if port == 0 {
		port = ServerPort
	}
	var serr error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		err := c.Control(func(fd uintptr) {
			if serr = syscall.BindToDevice(int(fd), s.Interface); serr != nil {
				serr = fmt.Errorf("binding to device %s: %w", s.Interface, serr)
				return
			}
			if serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST, 1); serr != nil {
				serr = fmt.Errorf("SO_BROADCAST: %w", serr)
				return
			}
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return lc.ListenPacket(ctx, "udp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(port)))
}

// Serve answers requests on conn until ctx ends or conn fails; it closes
// conn when it returns.
func (s *Server) Serve(ctx context.Context, conn net.PacketConn) error {
	replyPort := s.ReplyPort
	if replyPort == 0 {
		replyPort = ClientPort
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer func() { _ = conn.Close() }()
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		req, err := Parse(buf[:n])
		if err != nil {
			s.Log.V(2).Info("Ignoring a malformed DHCP message", "from", from, "err", err)
			continue
		}
		ans, why := s.Responder.Reply(req)
		if ans == nil {
			s.Log.V(2).Info("No DHCP answer", "type", req.MessageType(), "client", req.CHAddr, "why", why)
			continue
		}
		out, err := ans.Packet.Marshal()
		if err != nil {
			s.Log.Error(err, "Encoding a DHCP answer")
			continue
		}
		to := &net.UDPAddr{IP: ans.Dest, Port: replyPort}
		if _, err := conn.WriteTo(out, to); err != nil {
			s.Log.Error(err, "Sending a DHCP answer", "to", to)
			continue
		}
		s.Log.Info("DHCP", "request", req.MessageType(), "answer", ans.Packet.MessageType(), "client", req.CHAddr,
			"address", ans.Packet.YIAddr, "to", to)
	}
}
