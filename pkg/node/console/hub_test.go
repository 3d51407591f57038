package console

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// guest is the fake guest side of console streams opened by a hub.
type guest struct {
	mu    sync.Mutex
	opens int
	conns []net.Conn
}

func (g *guest) open() (io.ReadWriteCloser, error) {
	a, b := net.Pipe()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opens++
	g.conns = append(g.conns, b)
	return a, nil
}

func (g *guest) last() net.Conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.conns[len(g.conns)-1]
}

func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	buf := make([]byte, n)
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(r, buf); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read timed out")
	}
	return string(buf)
}

func TestFanOut(t *testing.T) {
	g := &guest{}
	h := NewHub(g.open)
	s1, err := h.Attach()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := h.Attach()
	if err != nil {
		t.Fatal(err)
	}
	if g.opens != 1 {
		t.Fatalf("console opened %d times for two sessions, want 1", g.opens)
	}
	gc := g.last()
	go func() { _, _ = gc.Write([]byte("login: ")) }()
	got := []string{readN(t, s1, 7), readN(t, s2, 7)}
	if diff := cmp.Diff([]string{"login: ", "login: "}, got); diff != "" {
		t.Errorf("sessions saw (-want +got):\n%s", diff)
	}

	// Input from either session reaches the guest.
	for _, in := range []struct {
		s    *Session
		data string
	}{{s1, "root\n"}, {s2, "ls\n"}} {
		go func() { _, _ = in.s.Write([]byte(in.data)) }()
		if got := readN(t, gc, len(in.data)); got != in.data {
			t.Errorf("guest got %q, want %q", got, in.data)
		}
	}

	// The last session leaving closes the stream; a new session reopens it.
	s1.Close()
	if h.Sessions() != 1 {
		t.Errorf("sessions after one close = %d, want 1", h.Sessions())
	}
	s2.Close()
	if _, err := gc.Read(make([]byte, 1)); err == nil {
		t.Error("guest stream still open after the last session left")
	}
	s3, err := h.Attach()
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if g.opens != 2 {
		t.Errorf("opens = %d, want 2 after reattaching", g.opens)
	}
}

func TestGuestEndEndsSessions(t *testing.T) {
	g := &guest{}
	h := NewHub(g.open)
	s1, _ := h.Attach()
	s2, _ := h.Attach()
	gc := g.last()
	go func() { _, _ = gc.Write([]byte("bye")); gc.Close() }()
	for i, s := range []*Session{s1, s2} {
		data, err := io.ReadAll(s)
		if err != nil || string(data) != "bye" {
			t.Errorf("session %d: ReadAll = %q, %v; want \"bye\", nil", i, data, err)
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Errorf("session %d: write after guest end succeeded", i)
		}
	}
	if h.Sessions() != 0 {
		t.Errorf("sessions = %d after guest end, want 0", h.Sessions())
	}
}

func TestSlowSessionDropped(t *testing.T) {
	g := &guest{}
	h := NewHub(g.open)
	slow, _ := h.Attach()
	fast, _ := h.Attach()
	defer fast.Close()
	gc := g.last()
	// The fast session keeps reading; the slow one never does. Each byte is written only once
	// the fast session has read the previous one, so the fast session can never fall behind
	// (whatever the scheduler does) while the slow one's buffer fills up.
	read := make(chan int, 1)
	got := make(chan struct{})
	go func() {
		n := 0
		buf := make([]byte, 1)
		for n < sessionBuffer+10 {
			m, err := fast.Read(buf)
			if err != nil {
				break
			}
			n += m
			got <- struct{}{}
		}
		close(got)
		read <- n
	}()
	for i := 0; i < sessionBuffer+10; i++ {
		if _, err := gc.Write([]byte{'a'}); err != nil {
			t.Fatal(err)
		}
		if _, ok := <-got; !ok {
			break
		}
	}
	if n := <-read; n != sessionBuffer+10 {
		t.Errorf("fast session read %d bytes, want %d", n, sessionBuffer+10)
	}
	if _, err := io.ReadAll(slow); !errors.Is(err, ErrTooSlow) {
		t.Errorf("slow session ended with %v, want ErrTooSlow", err)
	}
}

func TestOpenError(t *testing.T) {
	h := NewHub(func() (io.ReadWriteCloser, error) { return nil, errors.New("no console") })
	if _, err := h.Attach(); err == nil {
		t.Fatal("Attach succeeded although the console cannot be opened")
	}
	if h.Sessions() != 0 {
		t.Errorf("sessions = %d, want 0", h.Sessions())
	}
}
