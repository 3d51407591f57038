package dhcp

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseResolvConf(t *testing.T) {
	in := `# kubelet's resolv.conf
search old.example
nameserver 10.96.0.10
nameserver 127.0.0.53   # the host's stub: unreachable from the guest
nameserver fd00::10
nameserver not-an-address
search ns1.svc.cluster.local svc.cluster.local cluster.local ; the last search wins
options ndots:5
nameserver 10.96.0.11
`
	got, err := ParseResolvConf(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Resolver{
		Servers: []net.IP{net.IPv4(10, 96, 0, 10).To4(), net.IPv4(10, 96, 0, 11).To4()},
		Search:  []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = ParseResolvConf(strings.NewReader("domain example.org\nnameserver 8.8.8.8\n"))
	if len(got.Search) != 1 || got.Search[0] != "example.org" {
		t.Errorf("domain line: search %v, want [example.org]", got.Search)
	}
}
