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
// socket, whose namespace is its pod's. The PID comes from the peer
// credentials of a connection, which the kernel gives in the caller's PID
// namespace: the node agent runs in the host's, so the PID is the daemon's
// host PID. The connection stays open until the namespace is open, so the
// daemon cannot have gone and its PID been reused meanwhile.
func SocketPeerNetNS(path string) (*NetNS, error) {
	conn, err := net.DialTimeout("unix", path, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", path, err)
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("peer credentials on %s: %w", path, serr)
	}
	if cred.Pid <= 0 {
		return nil, errors.New("the socket's peer is not in this PID namespace (does the node agent run with hostPID?)")
	}
	return OpenNetNS(fmt.Sprintf("/proc/%d/ns/net", cred.Pid))
}
