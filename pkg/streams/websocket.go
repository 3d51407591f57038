package streams

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// PingInterval is how often an idle stream is pinged, so that proxies and load
// balancers between the ends keep it open.
const PingInterval = 30 * time.Second

const (
	bufferSize   = 32 * 1024
	writeTimeout = 10 * time.Second
)

// Upgrade turns a console or vnc request into a WebSocket speaking Subprotocol.
// Origins are not checked: only mutually authenticated callers reach the agent,
// and browsers never talk to it directly.
func Upgrade(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	u := websocket.Upgrader{
		ReadBufferSize:  bufferSize,
		WriteBufferSize: bufferSize,
		Subprotocols:    []string{Subprotocol},
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	return u.Upgrade(w, r, nil)
}

// Dial opens a stream at url ("wss://…" or "https://…") with Subprotocol.
// A failed handshake returns the response, whose body explains the refusal.
func Dial(ctx context.Context, url string, tlsConfig *tls.Config, header http.Header) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  tlsConfig,
		HandshakeTimeout: 30 * time.Second,
		ReadBufferSize:   bufferSize,
		WriteBufferSize:  bufferSize,
		Subprotocols:     []string{Subprotocol},
	}
	return d.DialContext(ctx, wsURL(url), header)
}

func wsURL(u string) string {
	switch {
	case len(u) > 8 && u[:8] == "https://":
		return "wss://" + u[8:]
	case len(u) > 7 && u[:7] == "http://":
		return "ws://" + u[7:]
	}
	return u
}

// Pipe copies frames from ws to rw and bytes read from rw to ws as binary
// frames, pinging ws every PingInterval, until either side ends or ctx is done.
// It then closes ws (and rw when it is an io.Closer). A normal close by the
// peer or io.EOF from rw is not an error.
func Pipe(ctx context.Context, ws *websocket.Conn, rw io.ReadWriter) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 3)
	var writeMu sync.Mutex
	send := func(kind int, data []byte) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		_ = ws.SetWriteDeadline(time.Now().Add(writeTimeout))
		return ws.WriteMessage(kind, data)
	}

	go func() { errs <- wsToWriter(ws, rw) }()
	go func() { errs <- readerToWS(rw, send) }()
	go func() {
		t := time.NewTicker(PingInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := send(websocket.PingMessage, nil); err != nil {
					errs <- err
					return
				}
			}
		}
	}()

	var err error
	select {
	case err = <-errs:
	case <-ctx.Done():
	}
	_ = send(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	_ = ws.Close()
	if c, ok := rw.(io.Closer); ok {
		_ = c.Close()
	}
	return err
}

func wsToWriter(ws *websocket.Conn, w io.Writer) error {
	for {
		kind, r, err := ws.NextReader()
		if err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				return nil
			}
			return err
		}
		if kind != websocket.BinaryMessage && kind != websocket.TextMessage {
			continue
		}
		if _, err := io.Copy(w, r); err != nil {
			return err
		}
	}
}

func readerToWS(r io.Reader, send func(int, []byte) error) error {
	buf := make([]byte, bufferSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if werr := send(websocket.BinaryMessage, buf[:n]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
