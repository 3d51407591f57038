package launcher

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"libvirt.org/go/libvirt"
)

var prompt = regexp.MustCompile(`demo:~# `)

// TestLauncherBootConsoleVNCAndSIGTERM: the launcher runs libvirtd with the pod's capabilities
// only, the demo guest boots through its socket, its console answers a command, its VNC socket
// speaks RFB, and SIGTERM powers the guest off through ACPI and ends the launcher with 0 within
// the grace period.
func TestLauncherBootConsoleVNCAndSIGTERM(t *testing.T) {
	skipIfNeeded(t)
	const grace = 20
	p := startLauncher(t, grace)
	t.Logf("launcher ready after %s", p.waitReady(60*time.Second).Round(time.Millisecond))

	// Exactly the launcher pod's capabilities, for the launcher and for libvirtd.
	if got := procField(p.pid, "CapEff"); got != podCapEff {
		t.Errorf("launcher CapEff %s, want %s (DAC_OVERRIDE, SETGID, SETUID, SETPCAP)", got, podCapEff)
	}
	libvirtds := p.childrenNamed("libvirtd")
	if len(libvirtds) != 1 {
		t.Fatalf("libvirtd children: %v, want one", libvirtds)
	}
	if got := procField(libvirtds[0], "CapEff"); got != podCapEff {
		t.Errorf("libvirtd CapEff %s, want %s", got, podCapEff)
	}

	conn := p.connect()
	dom, boot := p.bootGuest(conn)
	t.Logf("guest banner on the serial port %s after start", boot.Round(time.Millisecond))

	con := openConsole(t, conn, dom)
	con.send("\r")
	_, off := con.expect(prompt, 0, 30*time.Second)
	n := rand.IntN(1_000_000)
	con.send(fmt.Sprintf("echo hello-$RANDOM-$((%d*3))\r", n))
	// The shell evaluated the line: the tty's echo of the typed text cannot contain the product.
	want := regexp.MustCompile(fmt.Sprintf(`\nhello-[0-9]+-%d\r?\n`, n*3))
	con.expect(want, off, 30*time.Second)
	t.Logf("console transcript:\n%s", con.transcript())

	banner, err := vncBanner(filepath.Join(p.runDir, "vnc.sock"))
	if err != nil {
		t.Fatalf("VNC: %v", err)
	}
	if !strings.HasPrefix(banner, "RFB 003.00") {
		t.Errorf("VNC banner %q, want RFB 003.00x", banner)
	}
	t.Logf("VNC banner: %q", strings.TrimSpace(banner))

	sent := time.Now()
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.waitExit(grace * time.Second); code != 0 {
		t.Errorf("launcher exit code %d after SIGTERM, want 0", code)
	}
	took := p.exited.Sub(sent)
	t.Logf("launcher exited %s after SIGTERM (grace period %ds)", took.Round(time.Millisecond), grace)
	serial, _ := os.ReadFile(filepath.Join(p.runDir, "serial.log"))
	if !strings.Contains(string(serial), "ACPI power button, powering off") {
		t.Errorf("the guest did not power off through ACPI; serial log tail:\n%s", tail(string(serial), 5))
	}
	if log := p.log(); !strings.Contains(log, "Guest powered off") || strings.Contains(log, "destroying") {
		t.Errorf("the launcher did not see a graceful power-off; its log:\n%s", log)
	}
	if fileExists(filepath.Join(p.runDir, "ready")) {
		t.Error("ready marker left behind")
	}
}

// TestLauncherExitsWithTheDomain: once the guest has run, the launcher ends (0) when the domain
// stays shut off or is undefined.
func TestLauncherExitsWithTheDomain(t *testing.T) {
	skipIfNeeded(t)
	tests := []struct {
		name string
		// end makes the domain go away and returns when it did.
		end func(t *testing.T, conn *libvirt.Connect, dom *libvirt.Domain) time.Time
		// minWait is the least time the launcher must wait after the domain stopped.
		minWait time.Duration
	}{{
		name: "the guest powers itself off",
		end: func(t *testing.T, conn *libvirt.Connect, dom *libvirt.Domain) time.Time {
			con := openConsole(t, conn, dom)
			con.send("\r")
			_, off := con.expect(prompt, 0, 30*time.Second)
			con.send("poweroff -f\r")
			con.expect(regexp.MustCompile(`reboot: Power down`), off, 30*time.Second)
			return time.Now()
		},
		minWait: 1500 * time.Millisecond,
	}, {
		name: "the node agent destroys and undefines it",
		end: func(t *testing.T, _ *libvirt.Connect, dom *libvirt.Domain) time.Time {
			if err := dom.Destroy(); err != nil {
				t.Fatal(err)
			}
			if err := dom.Undefine(); err != nil {
				t.Fatal(err)
			}
			return time.Now()
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startLauncher(t, 30)
			p.waitReady(60 * time.Second)
			conn := p.connect()
			dom, _ := p.bootGuest(conn)
			stopped := tt.end(t, conn, dom)
			if code := p.waitExit(30 * time.Second); code != 0 {
				t.Errorf("launcher exit code %d, want 0", code)
			}
			waited := p.exited.Sub(stopped)
			t.Logf("launcher exited %s after the domain went away", waited.Round(time.Millisecond))
			if waited < tt.minWait {
				t.Errorf("launcher exited after %s, want at least %s", waited, tt.minWait)
			}
			if !strings.Contains(p.log(), "The domain is gone") {
				t.Errorf("the launcher's log does not say why it ended:\n%s", p.log())
			}
		})
	}
}

// TestLauncherFailsWhenLibvirtdDies: libvirtd is the guest's lifeline; when it is killed the
// launcher exits non-zero and takes QEMU with it.
func TestLauncherFailsWhenLibvirtdDies(t *testing.T) {
	skipIfNeeded(t)
	p := startLauncher(t, 30)
	p.waitReady(60 * time.Second)
	conn := p.connect()
	p.bootGuest(conn)
	qemus := p.childrenNamed("qemu-system-x86")
	if len(qemus) != 1 {
		t.Errorf("QEMU processes re-parented to the launcher: %v, want one", qemus)
	}
	libvirtds := p.childrenNamed("libvirtd")
	if len(libvirtds) != 1 {
		t.Fatalf("libvirtd children: %v, want one", libvirtds)
	}
	killed := time.Now()
	if err := syscall.Kill(libvirtds[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code := p.waitExit(30 * time.Second)
	t.Logf("launcher exited with %d, %s after libvirtd was killed", code, p.exited.Sub(killed).Round(time.Millisecond))
	if code == 0 {
		t.Error("launcher exit code 0 after libvirtd died, want non-zero")
	}
	if !strings.Contains(p.log(), "libvirtd exited (killed by signal killed)") {
		t.Errorf("the launcher's log does not say libvirtd died:\n%s", p.log())
	}
	for _, pid := range qemus {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("QEMU %d survived the launcher", pid)
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(cleanTranscript(s), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
