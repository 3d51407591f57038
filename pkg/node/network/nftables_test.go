package network

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestRulesetAllPorts(t *testing.T) {
	p, err := PlanFor(podVMI(kubevirtv1.Interface{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `table ip nativevirt
delete table ip nativevirt
table ip nativevirt {
	chain prerouting {
		type nat hook prerouting priority -100; policy accept;
		iifname "eth0" counter jump inbound
	}
	chain output {
		type nat hook output priority -100; policy accept;
		ip daddr 127.0.0.1 counter dnat to 10.0.2.2
	}
	chain postrouting {
		type nat hook postrouting priority 100; policy accept;
		ip saddr 10.0.2.2 counter masquerade
		oifname "k6t-eth0" counter jump from_loopback
	}
	chain inbound {
		counter dnat to 10.0.2.2
	}
	chain from_loopback {
		ip saddr 127.0.0.1 counter snat to 10.0.2.1
	}
}
`
	if diff := cmp.Diff(want, ruleset(p)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRulesetDeclaredPorts(t *testing.T) {
	p, err := PlanFor(podVMI(kubevirtv1.Interface{Ports: []kubevirtv1.Port{
		{Port: 8080}, {Port: 53, Protocol: "UDP"}, {Port: 22, Protocol: "TCP"}, {Port: 22, Protocol: "tcp"}, {Port: 53, Protocol: "TCP"},
	}}, &kubevirtv1.PodNetwork{VMNetworkCIDR: "192.168.7.0/24"}))
	if err != nil {
		t.Fatal(err)
	}
	want := `table ip nativevirt
delete table ip nativevirt
table ip nativevirt {
	chain prerouting {
		type nat hook prerouting priority -100; policy accept;
		iifname "eth0" counter jump inbound
	}
	chain output {
		type nat hook output priority -100; policy accept;
		ip daddr 127.0.0.1 tcp dport { 22, 53, 8080 } counter dnat to 192.168.7.2
		ip daddr 127.0.0.1 udp dport { 53 } counter dnat to 192.168.7.2
	}
	chain postrouting {
		type nat hook postrouting priority 100; policy accept;
		ip saddr 192.168.7.2 counter masquerade
		oifname "k6t-eth0" counter jump from_loopback
	}
	chain inbound {
		tcp dport { 22, 53, 8080 } counter dnat to 192.168.7.2
		udp dport { 53 } counter dnat to 192.168.7.2
	}
	chain from_loopback {
		ip saddr 127.0.0.1 tcp dport { 22, 53, 8080 } counter snat to 192.168.7.1
		ip saddr 127.0.0.1 udp dport { 53 } counter snat to 192.168.7.1
	}
}
`
	if diff := cmp.Diff(want, ruleset(p)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
