package streams_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// TestPipeRoundTrip runs Pipe on both ends of a WebSocket: the agent side
// echoes through a net.Pipe, the client side writes and reads raw bytes.
func TestPipeRoundTrip(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := streams.Upgrade(w, r)
		if err != nil {
			return
		}
		guest, agent := net.Pipe()
		go func() { _, _ = io.Copy(guest, guest) }() // echo "guest"
		_ = streams.Pipe(r.Context(), ws, agent)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := streams.Dial(ctx, srv.URL, nil, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if got := ws.Subprotocol(); got != streams.Subprotocol {
		t.Errorf("subprotocol = %q, want %q", got, streams.Subprotocol)
	}
	user, local := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- streams.Pipe(ctx, ws, local) }()

	want := []byte("hello\x00\xff guest\r\n")
	if _, err := user.Write(want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	_ = user.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(user, got); err != nil {
		t.Fatalf("read echo: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("echo = %q, want %q", got, want)
	}
	_ = user.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Pipe did not end after the local side closed")
	}
}
