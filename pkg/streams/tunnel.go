package streams

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tunnelHandshakeTimeout bounds the TLS handshake and the upgrade exchange.
const tunnelHandshakeTimeout = 30 * time.Second

// DialTunnel opens the migration tunnel t at the node agent endpoint
// ("host:port"): a GET with "Connection: Upgrade" and "Upgrade:
// MigrationUpgrade" over mutual TLS; after "101 Switching Protocols" the
// returned connection carries raw bytes. A refusal returns an error with the
// agent's status and message.
func DialTunnel(ctx context.Context, endpoint string, tlsConfig *tls.Config, t MigrationTarget) (net.Conn, error) {
	cfg := tlsConfig.Clone()
	// The upgrade is HTTP/1.1; HTTP/2 has no Upgrade.
	cfg.NextProtos = []string{"http/1.1"}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: tunnelHandshakeTimeout, KeepAlive: 15 * time.Second}, Config: cfg}
	c, err := d.DialContext(ctx, "tcp", endpoint)
	if err != nil {
		return nil, fmt.Errorf("migration tunnel %s to %s: %w", t.Channel, endpoint, err)
	}
	conn := c.(*tls.Conn)
	ok := false
	defer func() {
		if !ok {
			_ = conn.Close()
		}
	}()
	deadline := time.Now().Add(tunnelHandshakeTimeout)
	if d, has := ctx.Deadline(); has && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL(endpoint), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", MigrationUpgrade)
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("migration tunnel %s to %s: %w", t.Channel, endpoint, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, fmt.Errorf("migration tunnel %s to %s: %w", t.Channel, endpoint, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("migration tunnel %s to %s refused: %s: %s", t.Channel, endpoint, resp.Status, strings.TrimSpace(string(msg)))
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), MigrationUpgrade) {
		return nil, fmt.Errorf("migration tunnel %s to %s: upgraded to %q, not %q", t.Channel, endpoint, resp.Header.Get("Upgrade"), MigrationUpgrade)
	}
	_ = conn.SetDeadline(time.Time{})
	ok = true
	// Bytes the agent sent right after the 101 (an NBD server greets first)
	// may already sit in br.
	return &bufferedConn{Conn: conn, r: br}, nil
}

// IsTunnelUpgrade reports whether r asks for a migration tunnel.
func IsTunnelUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && strings.EqualFold(r.Header.Get("Upgrade"), MigrationUpgrade)
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), token) {
				return true
			}
		}
	}
	return false
}

// AcceptTunnel answers a tunnel request with "101 Switching Protocols" and
// returns the raw connection. The caller owns it.
func AcceptTunnel(w http.ResponseWriter, r *http.Request) (net.Conn, error) {
	if !IsTunnelUpgrade(r) {
		return nil, errors.New("not a migration tunnel upgrade")
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, errors.New("the connection cannot be taken over (HTTP/2?)")
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, err
	}
	if _, err := rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + MigrationUpgrade + "\r\n\r\n"); err != nil {
		_ = conn.Close()
		return nil, err
	}
	if err := rw.Flush(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	if rw.Reader.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: rw.Reader}, nil
	}
	return conn, nil
}

// bufferedConn reads what a bufio.Reader already holds before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the connection when it can.
func (c *bufferedConn) CloseWrite() error { return closeWrite(c.Conn) }

type writeCloser interface{ CloseWrite() error }

func closeWrite(c net.Conn) error {
	if wc, ok := c.(writeCloser); ok {
		return wc.CloseWrite()
	}
	return c.Close()
}

// Splice copies bytes both ways between a and b until both directions ended
// (each end of stream is passed on as a half-close) or one of them failed,
// then closes both. It returns the bytes copied a→b and b→a.
func Splice(a, b net.Conn) (aToB, bToA int64) {
	var wg sync.WaitGroup
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = a.Close()
			_ = b.Close()
		})
	}
	copyHalf := func(dst, src net.Conn, n *int64) {
		defer wg.Done()
		var err error
		*n, err = io.Copy(dst, src)
		if err != nil {
			closeBoth()
			return
		}
		if closeWrite(dst) != nil {
			closeBoth()
		}
	}
	wg.Add(2)
	go copyHalf(b, a, &aToB)
	go copyHalf(a, b, &bToA)
	wg.Wait()
	closeBoth()
	return aToB, bToA
}
