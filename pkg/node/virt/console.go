package virt

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"libvirt.org/go/libvirt"
)

// OpenConsole implements Inspector with a non-blocking libvirt stream driven by libvirt's event
// loop (as virsh console does). A blocking Recv on its own goroutine lost wake-ups: when
// another thread of the connection (an RPC, the event loop) read the console's data from the
// socket, the waiting Recv went on polling the socket and returned that data only with the next
// bytes the guest wrote; the end of a command's output then came with the next keystroke.
func (c inspectorConn) OpenConsole(name string) (io.ReadWriteCloser, error) {
	s, err := c.conn.NewStream(libvirt.STREAM_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("console stream for %s: %w", name, err)
	}
	err = c.do(name, "opening the console of", func(d *libvirt.Domain) error {
		return d.OpenConsole("", s, libvirt.DOMAIN_CONSOLE_FORCE)
	})
	if err != nil {
		_ = s.Free()
		return nil, err
	}
	cs := &consoleStream{s: s, ready: make(chan struct{}, 1)}
	events := libvirt.STREAM_EVENT_READABLE | libvirt.STREAM_EVENT_ERROR | libvirt.STREAM_EVENT_HANGUP
	if err := s.EventAddCallback(events, cs.onEvent); err != nil {
		_ = s.Abort()
		_ = s.Free()
		return nil, fmt.Errorf("watching the console stream of %s: %w", name, err)
	}
	return cs, nil
}

// consoleStream adapts a non-blocking libvirt stream to io.ReadWriteCloser: the event loop
// drains the stream into buf, Read takes from buf.
type consoleStream struct {
	s *libvirt.Stream

	mu  sync.Mutex
	buf []byte
	// end is why the stream ended (io.EOF for a normal end); nil while it runs.
	end error
	// ready is signalled when buf or end changed.
	ready chan struct{}

	once sync.Once
}

// onEvent runs on libvirt's event loop: it reads everything the stream has now.
func (cs *consoleStream) onEvent(_ *libvirt.Stream, events libvirt.StreamEventType) {
	chunk := make([]byte, 32*1024)
	for {
		n, err := cs.s.Recv(chunk)
		switch {
		case err != nil: // io.EOF at the end of the stream
			cs.finish(err)
			return
		case n == -2: // nothing more for now
			if events&(libvirt.STREAM_EVENT_ERROR|libvirt.STREAM_EVENT_HANGUP) != 0 {
				cs.finish(io.EOF)
			}
			return
		case n > 0:
			cs.mu.Lock()
			cs.buf = append(cs.buf, chunk[:n]...)
			cs.mu.Unlock()
			cs.signal()
		}
	}
}

func (cs *consoleStream) signal() {
	select {
	case cs.ready <- struct{}{}:
	default:
	}
}

// finish records the end of the stream (the first reason wins) and wakes Read.
func (cs *consoleStream) finish(err error) {
	cs.mu.Lock()
	if cs.end == nil {
		cs.end = err
	}
	cs.mu.Unlock()
	cs.signal()
}

// Read returns buffered guest output, waiting for some; the end is reported once the buffer
// is empty.
func (cs *consoleStream) Read(p []byte) (int, error) {
	for {
		cs.mu.Lock()
		if len(cs.buf) > 0 {
			n := copy(p, cs.buf)
			cs.buf = cs.buf[n:]
			cs.mu.Unlock()
			return n, nil
		}
		end := cs.end
		cs.mu.Unlock()
		if end != nil {
			return 0, end
		}
		<-cs.ready
	}
}

// Write sends input to the guest; a full stream is retried shortly (console input is small).
func (cs *consoleStream) Write(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		cs.mu.Lock()
		end := cs.end
		cs.mu.Unlock()
		if end != nil {
			return total, errors.Join(io.ErrClosedPipe, end)
		}
		n, err := cs.s.Send(p[total:])
		if err != nil {
			return total, err
		}
		if n == -2 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		total += n
	}
	return total, nil
}

// Close ends the stream; a Read waiting for output returns io.EOF.
func (cs *consoleStream) Close() error {
	var err error
	cs.once.Do(func() {
		cs.finish(io.EOF)
		_ = cs.s.EventRemoveCallback()
		_ = cs.s.Abort()
		err = cs.s.Free()
	})
	return err
}
