package network

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// SocketPeerNetNS opens the network namespace of the process listening on
// the unix socket at path: the launcher's libvirt daemon for its libvirt
// socket, whose namespace is its pod's. The connection stays open until the
// namespace is open, so the daemon cannot have gone and its PID been reused
// meanwhile.
func SocketPeerNetNS(path string) (*NetNS, error) {
	var ns *NetNS
	err := WithSocketPeer(path, func(pid int) error {
		var err error
		ns, err = OpenNetNS(fmt.Sprintf("/proc/%d/ns/net", pid))
		return err
	})
	return ns, err
}

// WithSocketPeer calls fn with the PID of the process listening on the unix
// socket at path, while a connection to it is open (the process cannot have
// gone and its PID been reused). The PID comes from the peer credentials of
// the connection, which the kernel gives in the caller's PID namespace: the
// node agent runs in the host's, so it is the daemon's host PID.
func WithSocketPeer(path string, fn func(pid int) error) error {
	conn, err := net.DialTimeout("unix", path, 10*time.Second)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", path, err)
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("peer credentials on %s: %w", path, serr)
	}
	if cred.Pid <= 0 {
		return errors.New("the socket's peer is not in this PID namespace (does the node agent run with hostPID?)")
	}
	return fn(int(cred.Pid))
}
