package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/cli"
	"github.com/nativevirt/nativevirt/pkg/streams"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// syncBuffer is a bytes.Buffer safe for a writer and a polling reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runCLI runs the nativevirt command against srv.
func runCLI(t *testing.T, srv *framework.Server, in io.Reader, out io.Writer, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return runCLIContext(ctx, t, srv, in, out, args...)
}

func runCLIContext(ctx context.Context, t *testing.T, srv *framework.Server, in io.Reader, out io.Writer, args ...string) error {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	var errOut bytes.Buffer
	cmd := cli.NewCommand("nativevirt", cli.IOStreams{In: in, Out: out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--server", srv.Config.Host, "--insecure-skip-tls-verify", "--token", "x", "-n", ns}, args...))
	return cmd.ExecuteContext(ctx)
}

// TestCLI: the nativevirt command against the real server: lifecycle actions change the VM,
// refusals come back with the server's message, and the console carries bytes both ways
// through the apiserver and a node agent.
func TestCLI(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	ctx := context.Background()
	makeVM(t, c, "cli-vm", vmState{runStrategy: kubevirtv1.RunStrategyHalted})

	var out bytes.Buffer
	if err := runCLI(t, w.srv, strings.NewReader(""), &out, "start", "cli-vm"); err != nil {
		t.Fatalf("start: %v", err)
	}
	vm, err := c.KubevirtV1().VirtualMachines(ns).Get(ctx, "cli-vm", metav1.GetOptions{})
	if err != nil || vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy != kubevirtv1.RunStrategyAlways {
		t.Fatalf("after start: %v, %v", vm.Spec.RunStrategy, err)
	}
	if err := runCLI(t, w.srv, strings.NewReader(""), &out, "restart", "cli-vm"); err == nil || !strings.Contains(err.Error(), "VM is not running") {
		t.Errorf("restart without instance: %v, want the server's 409 message", err)
	}

	vmi := makeVMI(t, c, "cli-vm", kubevirtv1.Running, false)
	w.agent.run(vmi.Name, vmi.UID)
	if err := runCLI(t, w.srv, strings.NewReader(""), &out, "pause", "vm", "cli-vm"); err != nil {
		t.Errorf("pause: %v", err)
	}

	stdin, typer := io.Pipe()
	var screen syncBuffer
	done := make(chan error, 1)
	go func() { done <- runCLI(t, w.srv, stdin, &screen, "console", "cli-vm") }()
	if _, err := io.WriteString(typer, "echo hi\r"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(screen.String(), "echo hi\r") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := screen.String(); got != "echo hi\r" {
		t.Errorf("console screen %q, want the echo of what was typed", got)
	}
	_, _ = typer.Write([]byte{0x1d}) // Ctrl+]
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("console: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("console did not end on Ctrl+]")
	}
}

// TestCLIVNCProxy: `nativevirt vnc --proxy-only` prints its port and carries a local TCP
// connection to the node agent's VNC stream.
func TestCLIVNCProxy(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	vmi := makeVMI(t, c, "vnc-vm", kubevirtv1.Running, false)
	w.agent.run(vmi.Name, vmi.UID)
	makeVMI(t, c, "stopped-vm", kubevirtv1.Succeeded, false)

	if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, "vnc", "stopped-vm", "--proxy-only"); err == nil || !strings.Contains(err.Error(), "VMI is not running") {
		t.Errorf("vnc of a stopped VMI: %v, want the 409 message", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(ctx, t, w.srv, strings.NewReader(""), &out, "vnc", "vnc-vm", "--proxy-only")
	}()
	var port struct{ Port int }
	deadline := time.Now().Add(10 * time.Second)
	for json.Unmarshal([]byte(out.String()), &port) != nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if port.Port == 0 {
		cancel()
		t.Fatalf("no port printed: %q", out.String())
	}
	for i := 0; i < 2; i++ { // the pre-dialled stream, then a fresh one
		echoThrough(t, fmt.Sprintf("127.0.0.1:%d", port.Port), fmt.Sprintf("RFB 003.008\n#%d", i))
	}
	stopCLI(t, cancel, done, "vnc")
}

// echoThrough sends want over a new TCP connection to addr and expects it back.
func echoThrough(t *testing.T, addr, want string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, want)
	got := make([]byte, len(want))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != want {
		t.Errorf("through %s: %q, %v; want %q back", addr, got, err, want)
	}
}

// stopCLI cancels a long-running command and waits for it to end without an error.
func stopCLI(t *testing.T, cancel context.CancelFunc, done <-chan error, what string) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not stop", what)
	}
}

// TestCLIPortForward: `nativevirt port-forward vm/NAME LOCAL:PORT` prints where it listens and
// carries each local TCP connection over its own portforward stream to the guest's port; a VM
// that does not run is refused at once with the server's message.
func TestCLIPortForward(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	vmi := makeVM(t, c, "pf-cli", vmState{runStrategy: kubevirtv1.RunStrategyAlways, vmiPhase: kubevirtv1.Running})
	w.agent.run(vmi.Name, vmi.UID)
	makeVM(t, c, "pf-halted", vmState{runStrategy: kubevirtv1.RunStrategyHalted})

	if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, "port-forward", "vm/pf-halted", "2222:22"); err == nil || !strings.Contains(err.Error(), "VM is not running") {
		t.Errorf("port-forward of a halted VM: %v, want the 409 message", err)
	}
	if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, "port-forward", "vm/pf-cli", fmt.Sprint(closedGuestPort)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("port-forward to a closed guest port: %v, want the agent's reason", err)
	}
	for _, bad := range [][]string{{"vm/pf-cli", "0"}, {"vm/pf-cli", "22/sctp"}, {"pod/pf-cli", "22"}, {"vm/pf-cli", "x:22"}} {
		if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, append([]string{"port-forward"}, bad...)...); err == nil {
			t.Errorf("port-forward %v: no error", bad)
		}
	}

	// --stdio: standard input to the guest's port, its answer to standard output (ssh's
	// ProxyCommand); the command ends when the input does.
	stdin, input := io.Pipe()
	var stdout syncBuffer
	stdioDone := make(chan error, 1)
	go func() {
		stdioDone <- runCLI(t, w.srv, stdin, &stdout, "port-forward", "--stdio", "vm/pf-cli", "22")
	}()
	_, _ = io.WriteString(input, "SSH-2.0-OpenSSH_9.2\r\n")
	for deadline := time.Now().Add(10 * time.Second); stdout.String() == "" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if stdout.String() != "SSH-2.0-OpenSSH_9.2\r\n" {
		t.Errorf("port-forward --stdio printed %q, want the echo of its input", stdout.String())
	}
	_ = input.Close()
	select {
	case err := <-stdioDone:
		if err != nil {
			t.Errorf("port-forward --stdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("port-forward --stdio did not end with its input")
	}
	if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, "port-forward", "--stdio", "vm/pf-cli", "2222:22"); err == nil {
		t.Error("port-forward --stdio with a local port: no error")
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(ctx, t, w.srv, strings.NewReader(""), &out, "port-forward", "vm/pf-cli", ":22", "0:8080", "0:53/udp")
	}()
	forwarding := regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+) -> (\d+)\n`)
	udp := regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+) -> 53/udp\n`)
	deadline := time.Now().Add(10 * time.Second)
	for !udp.MatchString(out.String()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	lines := forwarding.FindAllStringSubmatch(out.String(), -1)
	udpLine := udp.FindStringSubmatch(out.String())
	if len(lines) != 2 || udpLine == nil {
		cancel()
		t.Fatalf("port-forward printed %q, want two TCP and one UDP Forwarding lines", out.String())
	}
	// UDP: each client address gets its own stream; a datagram comes back as one datagram.
	for i := 0; i < 2; i++ {
		conn, err := net.Dial("udp", udpLine[1])
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("dns query #%d", i)
		_, _ = io.WriteString(conn, want)
		got := make([]byte, 100)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(got)
		if err != nil || string(got[:n]) != want {
			t.Errorf("UDP client %d: %q, %v; want the datagram %q back", i, got[:n], err, want)
		}
		_ = conn.Close()
	}
	for i := 0; i < 2; i++ { // the stream dialled up front, then a fresh one
		for _, l := range lines {
			echoThrough(t, l[1], fmt.Sprintf("to %s #%d", l[2], i))
		}
	}
	stopCLI(t, cancel, done, "port-forward")
	var forwards []string
	for _, r := range w.agent.seen() {
		if strings.Contains(r, "/portforward/") && !strings.Contains(r, fmt.Sprintf("/portforward/%d/", closedGuestPort)) {
			forwards = append(forwards, r)
		}
	}
	want := []string{ // --stdio's, the three up front, then one stream per further connection or client
		"GET default/pf-cli/portforward/22/tcp uid-ok",
		"GET default/pf-cli/portforward/22/tcp uid-ok", "GET default/pf-cli/portforward/8080/tcp uid-ok", "GET default/pf-cli/portforward/53/udp uid-ok",
		"GET default/pf-cli/portforward/53/udp uid-ok",
		"GET default/pf-cli/portforward/22/tcp uid-ok", "GET default/pf-cli/portforward/8080/tcp uid-ok",
	}
	if diff := cmp.Diff(want, forwards); diff != "" {
		t.Errorf("streams at the agent (-want +got):\n%s", diff)
	}
}

// TestCLIMigrate: `nativevirt migrate` creates a migration through the subresource, a second one
// is refused with the server's message, and `nativevirt migrate-cancel` deletes the migration
// (the controller, absent here, would then cancel it; its finalizer holds it meanwhile).
func TestCLIMigrate(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	ctx := context.Background()
	makeVM(t, c, "mig-vm", vmState{runStrategy: kubevirtv1.RunStrategyAlways, vmiPhase: kubevirtv1.Running})

	var out bytes.Buffer
	if err := runCLI(t, srv, strings.NewReader(""), &out, "migrate", "mig-vm"); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !strings.Contains(out.String(), "VM mig-vm was scheduled to migrate") {
		t.Errorf("output %q", out.String())
	}
	list, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.VMIName != "mig-vm" {
		t.Fatalf("migrations after migrate: %+v (err %v)", list, err)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "migrate", "mig-vm"); err == nil || !strings.Contains(err.Error(), "in-flight migration detected") {
		t.Errorf("second migrate: %v, want the in-flight refusal", err)
	}
	out.Reset()
	if err := runCLI(t, srv, strings.NewReader(""), &out, "migrate-cancel", "mig-vm"); err != nil {
		t.Fatalf("migrate-cancel: %v", err)
	}
	if !strings.Contains(out.String(), "VM mig-vm was scheduled to migrate-cancel") {
		t.Errorf("output %q", out.String())
	}
	m, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(ctx, list.Items[0].Name, metav1.GetOptions{})
	if err != nil || m.DeletionTimestamp == nil {
		t.Errorf("after migrate-cancel the migration is not being deleted: %v (err %v)", m, err)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "migrate-cancel", "other-vm"); err == nil || !strings.Contains(err.Error(), "found no migration to cancel for other-vm") {
		t.Errorf("migrate-cancel without a migration: %v", err)
	}
}
