package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// consoleKeys is the number of keystrokes measured.
const consoleKeys = 50

// guestPrompt is the shell prompt of the demo guest (hack/images/build-guest.sh).
const guestPrompt = "demo:~# "

// RunConsole measures the keystroke echo round trip of the serial console: kube-apiserver →
// nativevirt-apiserver → node agent → guest shell and back, over KubeVirt's console websocket
// (subprotocol plain.kubevirt.io). It needs the controller and the node agent.
func RunConsole(ctx context.Context, e *Env) (*Result, error) {
	res := &Result{Suite: "console", Title: "Console: keystroke echo round trip"}
	res.Columns = []string{"measurement", "keys", "p50", "p99", "max"}
	res.Setup = map[string]string{
		"path": "websocket GET /apis/subresources.kubevirt.io/v1/namespaces/<ns>/virtualmachineinstances/<name>/console through kube-apiserver",
		"key":  "one byte sent in a binary frame; the round trip ends when the guest shell's echo of it arrives",
	}
	const label = "keystroke → echo"
	for _, ready := range []func(context.Context) (bool, string){e.controllerReady, e.handlerReady} {
		if ok, why := ready(ctx); !ok {
			res.AddRow(label, "-", "skipped: "+why, "-", "-")
			res.Targets = append(res.Targets, Skipped("console round trip", "measured", "skipped"))
			return res, nil
		}
	}
	const ns = "bench-console"
	// A new name per run: a run cancelled by a server restart may leave its VM behind.
	name := fmt.Sprintf("console-%d", time.Now().Unix())
	if err := e.Namespace(ctx, ns); err != nil {
		return res, err
	}
	c, err := NewClient(e.Kube)
	if err != nil {
		return res, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Resource(VMResource).Namespace(ns).Delete(cctx, name, metav1.DeleteOptions{})
	}()
	vm, err := smallVMObject(ns, name)
	if err != nil {
		return res, err
	}
	if _, err := c.Resource(VMResource).Namespace(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		return res, err
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := c.Resource(VMIResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return p == "Running", nil
	})
	if err != nil {
		return res, fmt.Errorf("VMI %s/%s not Running: %w", ns, name, err)
	}
	conn, err := dialConsole(ctx, e.Kube, ns, name)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	reader := newConsoleReader(conn)
	if err := waitPrompt(conn, reader, 4*time.Minute); err != nil {
		return res, err
	}
	var rec Recorder
	t0 := time.Now()
	for i := 0; i < consoleKeys; i++ {
		key := byte('a' + i%26)
		sent := time.Now()
		if err := conn.WriteMessage(websocket.BinaryMessage, []byte{key}); err != nil {
			return res, err
		}
		if err := reader.until([]byte{key}, 10*time.Second); err != nil {
			rec.Fail(err)
			continue
		}
		rec.Add(time.Since(sent))
	}
	// Leave the shell's line empty again (Ctrl-U).
	_ = conn.WriteMessage(websocket.BinaryMessage, []byte{0x15})
	d := rec.Dist(time.Since(t0))
	res.AddRow(label, fmt.Sprint(d.Count), FmtMs(d.P50Ms)+" ms", FmtMs(d.P99Ms)+" ms", FmtMs(d.MaxMs)+" ms")
	res.Targets = append(res.Targets, NewCheck("console round trip", "measured", FmtMs(d.P50Ms)+" ms p50", d.Count > 0))
	res.Records = d
	return res, nil
}

// dialConsole opens the console websocket of a VMI through kube-apiserver.
func dialConsole(ctx context.Context, cfg *rest.Config, ns, name string) (*websocket.Conn, error) {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	d := websocket.Dialer{TLSClientConfig: tlsCfg, Subprotocols: []string{"plain.kubevirt.io"}, HandshakeTimeout: 30 * time.Second}
	u := strings.Replace(strings.TrimSuffix(cfg.Host, "/"), "https://", "wss://", 1) +
		fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/virtualmachineinstances/%s/console", ns, name)
	h := http.Header{}
	if cfg.BearerToken != "" {
		h.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	conn, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("console websocket: %w (%s)", err, resp.Status)
		}
		return nil, fmt.Errorf("console websocket: %w", err)
	}
	return conn, nil
}

// ansiEscape matches terminal control sequences (CSI ... final byte) and carriage returns.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\r`)

// consoleReader reads the websocket in the background: a read deadline would leave a gorilla
// websocket connection unusable, so waits time out on the channel instead.
type consoleReader struct {
	frames chan []byte
	err    chan error
	buf    []byte
}

func newConsoleReader(conn *websocket.Conn) *consoleReader {
	r := &consoleReader{frames: make(chan []byte, 1024), err: make(chan error, 1)}
	go func() {
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				r.err <- err
				close(r.frames)
				return
			}
			r.frames <- b
		}
	}()
	return r
}

// until consumes output until want appeared (keeping what follows it) or timeout passed.
func (r *consoleReader) until(want []byte, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		if i := bytes.Index(r.buf, want); i >= 0 {
			r.buf = r.buf[i+len(want):]
			return nil
		}
		select {
		case b, ok := <-r.frames:
			if !ok {
				return fmt.Errorf("console closed: %v", <-r.err)
			}
			// The shell's line editing writes terminal escapes and carriage returns around
			// what it echoes; they are not part of what is waited for.
			r.buf = ansiEscape.ReplaceAll(append(r.buf, b...), nil)
		case <-deadline:
			if len(r.buf) > len(want) {
				r.buf = r.buf[len(r.buf)-len(want):]
			}
			return fmt.Errorf("no %q on the console within %s", want, timeout)
		}
	}
}

// drain discards output for d.
func (r *consoleReader) drain(d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-r.frames:
			if !ok {
				return
			}
		case <-deadline:
			r.buf = nil
			return
		}
	}
}

// waitPrompt presses Enter until the guest shell prints its prompt.
func waitPrompt(conn *websocket.Conn, r *consoleReader, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := conn.WriteMessage(websocket.BinaryMessage, []byte("\r")); err != nil {
			return err
		}
		if err := r.until([]byte(guestPrompt), 5*time.Second); err == nil {
			r.drain(500 * time.Millisecond) // the rest of the boot messages
			return nil
		}
	}
	return fmt.Errorf("no prompt %q on the console within %s", guestPrompt, timeout)
}
