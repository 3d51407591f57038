package node

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/pkg/node/network/netnstest"
)

// podNetwork gives the simulated pod (the network namespace of process pid)
// what CNI gives a real one: eth0 with the pod IP and a default route, its
// peer in a "node" namespace of the test. It returns that namespace's name.
func podNetwork(t *testing.T, pid int) string {
	t.Helper()
	node := fmt.Sprintf("nvnode-%06d", rand.IntN(1000000))
	inPod := func(args ...string) []string {
		return append([]string{"nsenter", "--net=/proc/" + strconv.Itoa(pid) + "/ns/net", "--"}, args...)
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "netns", "add", node)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", node).Run() })
	mtu := strconv.Itoa(podMTU)
	run("ip", "-n", node, "link", "add", "up0", "mtu", mtu, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(pid))
	run("ip", "-n", node, "address", "add", nodeIP+"/24", "dev", "up0")
	run("ip", "-n", node, "link", "set", "up0", "up")
	run(inPod("ip", "link", "set", "lo", "up")...)
	run(inPod("ip", "link", "set", "eth0", "mtu", mtu, "up")...)
	run(inPod("ip", "address", "add", podIP+"/24", "dev", "eth0")...)
	run(inPod("ip", "route", "add", "default", "via", nodeIP)...)
	return node
}

// httpGet fetches / from addr out of the node namespace.
func httpGet(t *testing.T, nodeNS, addr string) (string, error) {
	t.Helper()
	var c net.Conn
	if err := netnstest.Run(nodeNS, func() (err error) { c, err = net.DialTimeout("tcp4", addr, 5*time.Second); return err }); err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /index.html HTTP/1.0\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// checkGuestNetwork checks the masquerade binding end to end: the guest took
// its DHCP lease (address, MTU and the pod's resolver), its web server is
// reachable on the pod IP, and its own connections leave from the pod IP.
func checkGuestNetwork(t *testing.T, p *pod, console io.ReadWriter) {
	t.Helper()
	lease := "NativeVirt demo guest: eth0 10.0.2.2/24"
	waitFor(t, 60*time.Second, "the guest's DHCP lease in the serial log", func() bool {
		b, _ := os.ReadFile(filepath.Join(p.private, "serial.log"))
		return bytes.Contains(b, []byte(lease))
	})
	// A leading newline, as for the first command: busybox's line editor asks the terminal for the
	// cursor position after a prompt and would take typed bytes as the (missing) answer.
	fmt.Fprintf(console, "\necho mtu-$(cat /sys/class/net/eth0/mtu)-dns-$(grep -c '^nameserver 10.96.0.10$' /etc/resolv.conf)-$(grep -c '^search default.svc.cluster.local$' /etc/resolv.conf)\n")
	readUntil(t, console, fmt.Sprintf("mtu-%d-dns-1-1", podMTU), 30*time.Second)
	t.Logf("guest: %s, MTU %d, resolver from the pod's resolv.conf", lease, podMTU)

	var body string
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for {
		body, err = httpGet(t, p.nodeNS, podIP+":8080")
		if (err == nil && strings.Contains(body, webMarker)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil || !strings.Contains(body, webMarker) {
		t.Fatalf("GET http://%s:8080/ from the node: %q, %v; want the guest's %s", podIP, body, err, webMarker)
	}
	t.Logf("GET http://%s:8080/ from outside the pod: %q", podIP, webMarker)

	var ln net.Listener
	if err := netnstest.Run(p.nodeNS, func() (err error) { ln, err = net.Listen("tcp4", nodeIP+":9090"); return err }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fmt.Fprintf(console, "\necho from-guest-$((3*3)) | nc %s 9090\n", nodeIP)
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("no connection from the guest: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(c)
	peer := c.RemoteAddr().(*net.TCPAddr).IP.String()
	if peer != podIP || strings.TrimSpace(string(got)) != "from-guest-9" {
		t.Errorf("the guest's connection came from %s with %q; want %s (the pod IP) with from-guest-9", peer, got, podIP)
	}
	t.Logf("the guest's outbound connection arrived from %s", peer)
}
