// Package console shares one serial console among any number of sessions.
//
// libvirt hands out a domain's console to one stream at a time (opening it
// again with the force flag takes it away from the previous holder). The node
// agent therefore opens ONE libvirt console stream per VMI and fans it out:
//
//   - every byte the guest writes is delivered to every attached session;
//   - bytes written by any session go to the guest, in the order they arrive
//     (so two people typing at once interleave, as on a shared serial line);
//   - the stream is opened when the first session attaches and closed when
//     the last one leaves; the serial log file keeps the full history;
//   - a session that cannot keep up (its buffer of guest output overflows) is
//     disconnected rather than slowing the others down;
//   - when the guest side ends (guest gone, launcher died), every session ends.
package console

import (
	"errors"
	"io"
	"sync"
)

// sessionBuffer is how many chunks of guest output a session may lag behind.
const sessionBuffer = 256

// ErrTooSlow ends a session that fell too far behind the guest's output.
var ErrTooSlow = errors.New("console session too slow: disconnected")

// OpenFunc opens the guest's console stream.
type OpenFunc func() (io.ReadWriteCloser, error)

// Hub is the shared console of one VMI.
type Hub struct {
	open OpenFunc

	mu       sync.Mutex
	stream   io.ReadWriteCloser
	sessions map[*Session]struct{}
	writeMu  sync.Mutex
}

// NewHub returns a hub that opens the guest console with open when needed.
func NewHub(open OpenFunc) *Hub {
	return &Hub{open: open, sessions: map[*Session]struct{}{}}
}

// Sessions is the number of attached sessions.
func (h *Hub) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Attach adds a session, opening the guest console if it is not open yet.
func (h *Hub) Attach() (*Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stream == nil {
		s, err := h.open()
		if err != nil {
			return nil, err
		}
		h.stream = s
		go h.pump(s)
	}
	sess := &Session{hub: h, out: make(chan []byte, sessionBuffer), done: make(chan struct{})}
	h.sessions[sess] = struct{}{}
	return sess, nil
}

// Close ends every session and the guest stream.
func (h *Hub) Close() {
	h.mu.Lock()
	stream := h.stream
	h.stream = nil
	for s := range h.sessions {
		s.end(io.EOF)
		delete(h.sessions, s)
	}
	h.mu.Unlock()
	if stream != nil {
		_ = stream.Close()
	}
}

// pump copies guest output to every session until the stream ends.
func (h *Hub) pump(stream io.ReadWriteCloser) {
	buf := make([]byte, 32*1024)
	for {
		n, err := stream.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			h.mu.Lock()
			for s := range h.sessions {
				select {
				case s.out <- chunk:
				default:
					s.end(ErrTooSlow)
					delete(h.sessions, s)
				}
			}
			h.mu.Unlock()
		}
		if err != nil {
			h.mu.Lock()
			if h.stream == stream {
				h.stream = nil
				for s := range h.sessions {
					s.end(io.EOF)
					delete(h.sessions, s)
				}
			}
			h.mu.Unlock()
			_ = stream.Close()
			return
		}
	}
}

// write sends session input to the guest.
func (h *Hub) write(p []byte) (int, error) {
	h.mu.Lock()
	stream := h.stream
	h.mu.Unlock()
	if stream == nil {
		return 0, io.ErrClosedPipe
	}
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	return stream.Write(p)
}

// detach removes a session; the last one closes the guest stream.
func (h *Hub) detach(s *Session) {
	h.mu.Lock()
	delete(h.sessions, s)
	var stream io.ReadWriteCloser
	if len(h.sessions) == 0 && h.stream != nil {
		stream = h.stream
		h.stream = nil
	}
	h.mu.Unlock()
	if stream != nil {
		_ = stream.Close()
	}
}

// Session is one attached console client: Read returns guest output, Write
// sends input to the guest, Close detaches.
type Session struct {
	hub     *Hub
	out     chan []byte
	pending []byte

	once   sync.Once
	done   chan struct{}
	endErr error
}

var _ io.ReadWriteCloser = &Session{}

// end marks the session finished with err (called with hub.mu held).
func (s *Session) end(err error) {
	s.once.Do(func() {
		s.endErr = err
		close(s.done)
	})
}

// Read implements io.Reader. Output already queued is delivered before the
// end of the session is reported.
func (s *Session) Read(p []byte) (int, error) {
	if len(s.pending) == 0 {
		select {
		case chunk := <-s.out:
			s.pending = chunk
		case <-s.done:
			select {
			case chunk := <-s.out:
				s.pending = chunk
			default:
				return 0, s.endErr
			}
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// Write implements io.Writer.
func (s *Session) Write(p []byte) (int, error) {
	select {
	case <-s.done:
		return 0, s.endErr
	default:
	}
	return s.hub.write(p)
}

// Close implements io.Closer.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.endErr = io.EOF
		close(s.done)
	})
	s.hub.detach(s)
	return nil
}
