package network

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/nativevirt/nativevirt/pkg/node/network/enter"
)

// Runner runs a command in a network namespace.
type Runner interface {
	// Run runs name with args, stdin as its input, and returns its output.
	Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)
}

// NetNS is an open network namespace. Holding the namespace open keeps it
// (and so the commands' target) from changing under a reused PID.
type NetNS struct {
	f *os.File
	// NSEnter is the nsenter binary ("nsenter" from PATH when empty).
	NSEnter string
}

var _ Runner = &NetNS{}

// OpenNetNS opens the network namespace at path (/proc/<pid>/ns/net or a
// bind mount such as /run/netns/<name>).
func OpenNetNS(path string) (*NetNS, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening network namespace %s: %w", path, err)
	}
	// NS_GET_NSTYPE tells the kind of a namespace file, also of a bind
	// mount of one (/run/netns/<name>).
	kind, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), nsGetNSType, 0)
	if errno != 0 || kind != syscall.CLONE_NEWNET {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not a network namespace", path)
	}
	return &NetNS{f: f}, nil
}

// nsGetNSType is the NS_GET_NSTYPE ioctl of namespace files (Linux 4.11).
const nsGetNSType = 0xb703

// ID is the namespace's identity as /proc shows it, e.g. net:[4026532281].
func (n *NetNS) ID() string {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(n.f.Fd()), &st); err != nil {
		return "net:[?]"
	}
	return fmt.Sprintf("net:[%d]", st.Ino)
}

// Dial connects to address from inside the namespace: the socket is made there, so 127.0.0.1
// is the namespace's loopback (a launcher pod's, whose NAT rules send it on to the guest).
func (n *NetNS) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	var conn net.Conn
	err := enter.Do(n.f, func() error {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, address)
		conn = c
		return err
	})
	return conn, err
}

// Close releases the namespace.
func (n *NetNS) Close() error {
	return n.f.Close()
}

// Run runs the command in the namespace: nsenter gets the namespace as its
// file descriptor 3 and enters it before it executes the command, so the
// command sees the namespace's links, rules and net sysctls.
func (n *NetNS) Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	nsenter := n.NSEnter
	if nsenter == "" {
		nsenter = "nsenter"
	}
	cmd := exec.CommandContext(ctx, nsenter, append([]string{"--net=/proc/self/fd/3", "--", name}, args...)...)
	cmd.ExtraFiles = []*os.File{n.f}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
