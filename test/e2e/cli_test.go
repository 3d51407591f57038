/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// cliTimeout bounds one nativevirt command that returns (start, stop, pause, ...).
const cliTimeout = time.Minute

// nvCLI runs the real nativevirt command (_output/bin/nativevirt, built by make build) as the
// cluster admin, through kube-apiserver's aggregation.
type nvCLI struct {
	t          *testing.T
	bin        string
	kubeconfig string
	ns         string
}

func newNVCLI(t *testing.T, c *framework.Cluster, ns string) *nvCLI {
	t.Helper()
	bin := filepath.Join(c.Root(), "_output", "bin", "nativevirt")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the nativevirt CLI: %v (make build)", err)
	}
	return &nvCLI{t: t, bin: bin, kubeconfig: c.Kubeconfig(framework.AdminUser), ns: ns}
}

func (n *nvCLI) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"--kubeconfig", n.kubeconfig, "--namespace", n.ns}, args...)
	return exec.CommandContext(ctx, n.bin, full...)
}

// run runs one command that returns and fails the test when it does not succeed.
func (n *nvCLI) run(args ...string) string {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	out, err := n.command(ctx, args...).CombinedOutput()
	n.t.Logf("$ nativevirt %s\n%s", strings.Join(args, " "), strings.TrimRight(string(out), "\n"))
	if err != nil {
		n.t.Fatalf("nativevirt %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// consoleSession is one `nativevirt console NAME` with a pipe for stdin: everything the guest
// prints is collected, and expect waits for a pattern in what came after the last expect.
type consoleSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	out  bytes.Buffer
	mark int
}

// ansi matches the terminal escape sequences the guest's shell prints.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// console connects to the serial console of instance name.
func (n *nvCLI) console(name string) *consoleSession {
	n.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := n.command(ctx, "console", name)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		n.t.Fatal(err)
	}
	s := &consoleSession{t: n.t, cmd: cmd, stdin: stdin, cancel: cancel, done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		cancel()
		n.t.Fatalf("nativevirt console %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		_ = pw.Close()
	}()
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			k, err := pr.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:k])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// all is the whole transcript of the session, without carriage returns and escapes.
func (s *consoleSession) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.ReplaceAllString(strings.ReplaceAll(s.out.String(), "\r", ""), "")
}

// send types line and a newline.
func (s *consoleSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("console input: %v\ntranscript:\n%s", err, s.all())
	}
}

// expect waits until re matches the output since the last expect (pressing Enter every few
// seconds when poke is set, to wake a prompt), moves the mark past the match and returns the
// submatches. It returns nil on timeout or when the session ended.
func (s *consoleSession) expect(re *regexp.Regexp, timeout time.Duration, poke bool) []string {
	deadline := time.Now().Add(timeout)
	lastPoke := time.Time{}
	for time.Now().Before(deadline) {
		s.mu.Lock()
		raw := s.out.Bytes()[s.mark:]
		clean := ansi.ReplaceAllString(strings.ReplaceAll(string(raw), "\r", ""), "")
		m := re.FindStringSubmatch(clean)
		if m != nil {
			s.mark = s.out.Len()
		}
		s.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-s.done:
			return nil
		default:
		}
		if poke && time.Since(lastPoke) > 3*time.Second {
			_, _ = io.WriteString(s.stdin, "\n")
			lastPoke = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// close ends the session with the escape character (Ctrl+]), then kills what is left.
func (s *consoleSession) close() {
	_, _ = s.stdin.Write([]byte{0x1d})
	_ = s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cancel()
		<-s.done
	}
	s.cancel()
}

// vncBanner opens `nativevirt vnc NAME --proxy-only`, connects to the local port it prints and
// returns the first 12 bytes the VNC server sends (its RFB version).
func (n *nvCLI) vncBanner(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := n.command(ctx, "vnc", name, "--proxy-only")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	var port struct {
		Port int `json:"port"`
	}
	if err := json.NewDecoder(stdout).Decode(&port); err != nil {
		return "", fmt.Errorf("reading the proxy's port: %v (stderr: %s)", err, stderr.String())
	}
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port.Port), 10*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	banner := make([]byte, 12)
	if _, err := io.ReadFull(conn, banner); err != nil {
		return "", fmt.Errorf("reading the RFB banner: %v (stderr: %s)", err, stderr.String())
	}
	return string(banner), nil
}
