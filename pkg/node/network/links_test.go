package network

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Output of `ip -json -details address show` (trimmed to what is read) in
// a pod before and after Prepare.
const (
	freshPod = `[{"ifindex":1,"ifname":"lo","mtu":65536,"link_type":"loopback","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8}]},
{"ifindex":2,"ifname":"eth0","mtu":1450,"link_type":"ether","linkinfo":{"info_kind":"veth"},
 "addr_info":[{"family":"inet","local":"10.88.0.7","prefixlen":16},{"family":"inet6","local":"fe80::1","prefixlen":64}]}]`
	preparedPod = `[{"ifindex":2,"ifname":"eth0","mtu":1450,"linkinfo":{"info_kind":"veth"},"addr_info":[]},
{"ifindex":3,"ifname":"k6t-eth0","mtu":1450,"linkinfo":{"info_kind":"bridge","info_data":{"forward_delay":1500,"stp_state":0}},
 "addr_info":[{"family":"inet","local":"10.0.2.1","prefixlen":24}]},
{"ifindex":4,"ifname":"tap0","mtu":1450,"master":"k6t-eth0","linkinfo":{"info_kind":"tun","info_data":{"type":"tap","pi":false,"multi_queue":false,"persist":true,"user":"root","group":"root"},"info_slave_kind":"bridge"},"addr_info":[]}]`
)

func TestLinkCommands(t *testing.T) {
	settings := []string{
		"link set dev k6t-eth0 address 02:00:00:00:00:00 mtu 1450 up",
		"link set dev tap0 master k6t-eth0 mtu 1450 up",
		"address replace 10.0.2.1/24 dev k6t-eth0",
	}
	tests := []struct {
		name   string
		links  string
		queues uint32
		want   []string
	}{{
		name:  "fresh pod: bridge and tap created",
		links: freshPod,
		want: append([]string{"link add name k6t-eth0 type bridge",
			"tuntap add dev tap0 mode tap user 0 group 0"}, settings...),
	}, {
		name:   "fresh pod, four queues: a multi-queue tap",
		links:  freshPod,
		queues: 4,
		want: append([]string{"link add name k6t-eth0 type bridge",
			"tuntap add dev tap0 mode tap user 0 group 0 multi_queue"}, settings...),
	}, {
		name:  "prepared pod: nothing created, settings again",
		links: preparedPod,
		want:  settings,
	}, {
		name:   "prepared with one queue, now four: the tap is made again",
		links:  preparedPod,
		queues: 4,
		want: append([]string{"link delete dev tap0",
			"tuntap add dev tap0 mode tap user 0 group 0 multi_queue"}, settings...),
	}, {
		name:  "another address on the bridge is removed",
		links: strings.Replace(preparedPod, `"local":"10.0.2.1","prefixlen":24`, `"local":"10.9.9.1","prefixlen":16`, 1),
		want:  append(settings[:2:2], "address delete 10.9.9.1/16 dev k6t-eth0", settings[2]),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanFor(podVMI(kubevirtv1.Interface{}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if tc.queues > 0 {
				p.NIC.Queues = tc.queues
			}
			links, err := parseLinks([]byte(tc.links))
			if err != nil {
				t.Fatal(err)
			}
			got, mtu, err := linkCommands(p, links)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if mtu != 1450 {
				t.Errorf("MTU %d, want eth0's 1450", mtu)
			}
		})
	}
}

func TestLinkCommandErrors(t *testing.T) {
	p, err := PlanFor(podVMI(kubevirtv1.Interface{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ links, want string }{
		"no eth0":               {`[{"ifname":"lo","mtu":65536}]`, "no interface eth0"},
		"eth0 without MTU":      {`[{"ifname":"eth0"}]`, "MTU 0"},
		"k6t-eth0 not a bridge": {`[{"ifname":"eth0","mtu":1500},{"ifname":"k6t-eth0","mtu":1500,"linkinfo":{"info_kind":"dummy"}}]`, "not a bridge"},
		"tap0 not a tap":        {`[{"ifname":"eth0","mtu":1500},{"ifname":"tap0","mtu":1500,"linkinfo":{"info_kind":"tun","info_data":{"type":"tun"}}}]`, "not a tap"},
		"tap0 a veth":           {`[{"ifname":"eth0","mtu":1500},{"ifname":"tap0","mtu":1500,"linkinfo":{"info_kind":"veth"}}]`, "not a tap"},
		"tap0 in use with other queues": {`[{"ifname":"eth0","mtu":1500},{"ifname":"tap0","mtu":1500,"flags":["BROADCAST","UP","LOWER_UP"],` +
			`"linkinfo":{"info_kind":"tun","info_data":{"type":"tap","multi_queue":true}}}]`, "in use"},
	} {
		links, err := parseLinks([]byte(tc.links))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := linkCommands(p, links); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
	if _, err := parseLinks([]byte("Error: not json")); err == nil {
		t.Error("garbage: no error")
	}
}

func TestSysctls(t *testing.T) {
	p := &Plan{Bridge: "k6t-eth0"}
	want := []string{"net.ipv4.ip_forward=1", "net.ipv4.conf.k6t-eth0.route_localnet=1"}
	if diff := cmp.Diff(want, sysctls(p)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
