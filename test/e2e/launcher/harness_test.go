package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"libvirt.org/go/libvirt"
)

// launcherProc is one nativevirt-launcher running as PID 1 of its own PID namespace.
type launcherProc struct {
	t *testing.T
	// runDir is the launcher's --run-dir (the pod's `private` emptyDir); disksDir plays the
	// `disks` emptyDir.
	runDir, disksDir string
	logPath          string
	cmd              *exec.Cmd
	pid              int
	// pidNS identifies the launcher's PID namespace (readlink /proc/<pid>/ns/pid).
	pidNS string

	done    chan struct{}
	waitErr error
	exited  time.Time
}

// startLauncher starts the launcher with the given grace period and stops it (SIGKILL, which
// ends its whole PID namespace) at the end of the test if it still runs.
func startLauncher(t *testing.T, graceSeconds int) *launcherProc {
	t.Helper()
	// Short paths: the sockets under runDir must fit in 108 bytes.
	runDir, err := os.MkdirTemp("", "nvl")
	if err != nil {
		t.Fatal(err)
	}
	disksDir, err := os.MkdirTemp("", "nvd")
	if err != nil {
		t.Fatal(err)
	}
	p := &launcherProc{t: t, runDir: runDir, disksDir: disksDir, done: make(chan struct{})}
	p.logPath = filepath.Join(t.TempDir(), "launcher.log")
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logFile.Close() }()

	p.cmd = exec.Command(os.Args[0], "--namespace", "harness", "--name", "vm", "--uid", "uid-"+strconv.Itoa(os.Getpid()),
		"--grace-period-seconds", strconv.Itoa(graceSeconds), "--run-dir", runDir)
	p.cmd.Env = append(os.Environ(), helperEnv+"="+launcherBin)
	p.cmd.Stdout = logFile
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
		// Should the test binary die, the namespace dies with it.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting the launcher: %v", err)
	}
	p.pid = p.cmd.Process.Pid
	p.pidNS, _ = os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", p.pid))
	go func() {
		p.waitErr = p.cmd.Wait()
		p.exited = time.Now()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.hasExited() {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			<-p.done
		}
		if left := processesIn(p.pidNS); len(left) > 0 {
			t.Errorf("processes left in the launcher's PID namespace: %v", left)
		}
		if t.Failed() {
			t.Logf("launcher log:\n%s", p.log())
		}
		_ = os.RemoveAll(runDir)
		_ = os.RemoveAll(disksDir)
	})
	return p
}

func (p *launcherProc) hasExited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// log is what the launcher (and libvirtd) printed.
func (p *launcherProc) log() string {
	data, _ := os.ReadFile(p.logPath)
	return string(data)
}

// waitReady waits for the ready marker.
func (p *launcherProc) waitReady(timeout time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for !fileExists(filepath.Join(p.runDir, "ready")) {
		if p.hasExited() {
			p.t.Fatalf("the launcher exited before it was ready: %v", p.waitErr)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no ready marker after %s", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// waitExit waits for the launcher to exit and returns its exit code.
func (p *launcherProc) waitExit(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("the launcher did not exit within %s", timeout)
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return 0
	case errors.As(p.waitErr, &ee):
		return ee.ExitCode()
	default:
		p.t.Fatalf("waiting for the launcher: %v", p.waitErr)
		return -1
	}
}

// childrenNamed returns the PIDs (host view) of the launcher's children whose command is name.
func (p *launcherProc) childrenNamed(name string) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p.pid))
	var pids []int
	for _, task := range tasks {
		data, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(f)
			if err == nil && procField(pid, "Name") == name {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// procField is a field of /proc/<pid>/status.
func procField(pid int, field string) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// processesIn lists the processes of the PID namespace ns.
func processesIn(ns string) []string {
	if ns == "" {
		return nil
	}
	links, _ := filepath.Glob("/proc/[0-9]*/ns/pid")
	var out []string
	for _, l := range links {
		if target, err := os.Readlink(l); err == nil && target == ns {
			pid, _ := strconv.Atoi(strings.Split(l, "/")[2])
			out = append(out, fmt.Sprintf("%d (%s)", pid, procField(pid, "Name")))
		}
	}
	return out
}

var eventLoop sync.Once

// connect opens the launcher's libvirt socket as the node agent does.
func (p *launcherProc) connect() *libvirt.Connect {
	p.t.Helper()
	eventLoop.Do(func() {
		if err := libvirt.EventRegisterDefaultImpl(); err != nil {
			p.t.Fatalf("libvirt event loop: %v", err)
		}
		go func() {
			for {
				_ = libvirt.EventRunDefaultImpl()
			}
		}()
	})
	conn, err := libvirt.NewConnect("qemu+unix:///system?socket=" + filepath.Join(p.runDir, "libvirt", "libvirt-sock"))
	if err != nil {
		p.t.Fatalf("connecting to the launcher's libvirtd: %v", err)
	}
	p.t.Cleanup(func() { _, _ = conn.Close() })
	return conn
}

// domainXML is a small TCG guest booting the demo disk through SeaBIOS, with the serial console
// logged and VNC on a unix socket at the paths of the launcher pod contract (relative to runDir).
const domainXML = `<domain type='qemu'>
  <name>harness_vm</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><boot dev='hd'/></os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw'/>
      <source file='%[2]s/disk.img'/>
      <target dev='vda' bus='virtio'/>
      <transient/>
    </disk>
    <serial type='pty'><log file='%[1]s/serial.log' append='on'/><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <graphics type='vnc'><listen type='socket' socket='%[1]s/vnc.sock'/></graphics>
    <video><model type='vga'/></video>
  </devices>
</domain>`

// bootGuest copies the demo disk to the disks directory, defines and starts the guest and
// waits for its banner in the serial log.
func (p *launcherProc) bootGuest(conn *libvirt.Connect) (*libvirt.Domain, time.Duration) {
	p.t.Helper()
	if err := copyFile(demoDisk, filepath.Join(p.disksDir, "disk.img")); err != nil {
		p.t.Fatal(err)
	}
	dom, err := conn.DomainDefineXML(fmt.Sprintf(domainXML, p.runDir, p.disksDir))
	if err != nil {
		p.t.Fatalf("defining the domain: %v", err)
	}
	p.t.Cleanup(func() { _ = dom.Free() })
	start := time.Now()
	if err := dom.Create(); err != nil {
		p.t.Fatalf("starting the domain: %v", err)
	}
	p.waitSerial(bannerLine, 90*time.Second)
	return dom, time.Since(start)
}

// bannerLine is what the demo guest prints on ttyS0 once its init runs.
const bannerLine = "NativeVirt demo guest ready"

// waitSerial waits for want in the serial log.
func (p *launcherProc) waitSerial(want string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(filepath.Join(p.runDir, "serial.log"))
		if bytes.Contains(data, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q on the serial port after %s; serial log:\n%s", want, timeout, data)
		}
		if p.hasExited() {
			p.t.Fatalf("the launcher exited while waiting for %q: %v", want, p.waitErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// console is the guest's serial console opened through libvirt (virDomainOpenConsole), as the
// node agent opens it.
type console struct {
	t      *testing.T
	stream *libvirt.Stream
	mu     sync.Mutex
	buf    bytes.Buffer
	closed chan struct{}
}

func openConsole(t *testing.T, conn *libvirt.Connect, dom *libvirt.Domain) *console {
	t.Helper()
	stream, err := conn.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := dom.OpenConsole("", stream, libvirt.DOMAIN_CONSOLE_FORCE); err != nil {
		t.Fatalf("opening the console: %v", err)
	}
	c := &console{t: t, stream: stream, closed: make(chan struct{})}
	go func() {
		defer close(c.closed)
		buf := make([]byte, 4096)
		for {
			n, err := stream.Recv(buf)
			if n > 0 {
				c.mu.Lock()
				c.buf.Write(buf[:n])
				c.mu.Unlock()
			}
			if err != nil || n == 0 {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = stream.Abort()
		select {
		case <-c.closed:
		case <-time.After(5 * time.Second):
		}
		_ = stream.Free()
	})
	return c
}

// send types s on the console.
func (c *console) send(s string) {
	c.t.Helper()
	if _, err := c.stream.Send([]byte(s)); err != nil {
		c.t.Fatalf("typing %q: %v", s, err)
	}
}

// expect waits until re matches the console output after offset and returns the submatches
// and the offset after the match.
func (c *console) expect(re *regexp.Regexp, offset int, timeout time.Duration) ([]string, int) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		out := c.buf.String()
		c.mu.Unlock()
		if offset < len(out) {
			if loc := re.FindStringSubmatchIndex(out[offset:]); loc != nil {
				var subs []string
				for i := 0; i < len(loc); i += 2 {
					subs = append(subs, out[offset+loc[i]:offset+loc[i+1]])
				}
				return subs, offset + loc[1]
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("console: no match for %q after %s; output:\n%s", re, timeout, cleanTranscript(out))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// transcript is the console output so far, for humans.
func (c *console) transcript() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cleanTranscript(c.buf.String())
}

var terminalQueries = regexp.MustCompile("\x1b\\[[0-9;]*[a-zA-Z]")

// cleanTranscript drops carriage returns and terminal control sequences (busybox's line editor
// asks for the cursor position).
func cleanTranscript(s string) string {
	return terminalQueries.ReplaceAllString(strings.ReplaceAll(s, "\r", ""), "")
}

// vncBanner reads the first bytes the VNC server sends on the unix socket.
func vncBanner(path string) (string, error) {
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 12)
	if _, err := io.ReadFull(conn, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}
