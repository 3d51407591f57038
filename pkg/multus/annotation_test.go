package multus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestPodInterfaceName(t *testing.T) {
	// sha256("blue") = 16477688c0e00699c6cfa4497a3612d7e83c532062b64b250fed8908128ed548
	if got, want := PodInterfaceName("blue"), "pod16477688c0e"; got != want {
		t.Errorf("PodInterfaceName(blue) = %q, want %q", got, want)
	}
	if n := PodInterfaceName("a-very-long-network-name-indeed"); len(n) != 14 {
		t.Errorf("PodInterfaceName gives %q (%d bytes), want 14", n, len(n))
	}
}

func multusNet(name, networkName string, def bool) kubevirtv1.Network {
	return kubevirtv1.Network{Name: name, NetworkSource: kubevirtv1.NetworkSource{
		Multus: &kubevirtv1.MultusNetwork{NetworkName: networkName, Default: def}}}
}

func TestPodAnnotations(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "vm"}}
	vmi.Spec.Networks = []kubevirtv1.Network{
		{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}},
		multusNet("blue", "blue-net", false),
		multusNet("red", "other/red-net", false),
	}
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{
		{Name: "default"}, {Name: "blue", MacAddress: "02:00:00:AB:CD:EF"}, {Name: "red"},
	}
	got, err := PodAnnotations(vmi)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{NetworksAnnotation: `[{"name":"blue-net","namespace":"ns1","interface":"pod16477688c0e","mac":"02:00:00:ab:cd:ef"},` +
		`{"name":"red-net","namespace":"other","interface":"` + PodInterfaceName("red") + `"}]`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	vmi.Spec.Networks = []kubevirtv1.Network{multusNet("default", "main-net", true)}
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{{Name: "default"}}
	got, err = PodAnnotations(vmi)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{DefaultNetworkAnnotation: "ns1/main-net"}, got); diff != "" {
		t.Errorf("default network annotations (-want +got):\n%s", diff)
	}
}

func TestParseNetworkStatus(t *testing.T) {
	ann := map[string]string{NetworkStatusAnnotation: `[{"name":"nativevirt","interface":"eth0","ips":["10.244.1.5"],"mac":"aa:bb:cc:dd:ee:01","default":true,"dns":{}},
{"name":"ns1/blue-net","interface":"pod16477688c0e","ips":["192.168.50.3"],"mac":"02:00:00:ab:cd:ef","dns":{}}]`}
	got, err := ParseNetworkStatus(ann)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := ByInterface(got, "pod16477688c0e")
	if !ok || s.Name != "ns1/blue-net" || len(s.IPs) != 1 || s.IPs[0] != "192.168.50.3" || s.Default {
		t.Errorf("ByInterface = %+v, %v", s, ok)
	}
	if none, err := ParseNetworkStatus(nil); none != nil || err != nil {
		t.Errorf("no annotation: %v, %v", none, err)
	}
	if _, err := ParseNetworkStatus(map[string]string{NetworkStatusAnnotation: "{"}); err == nil {
		t.Error("garbage parsed")
	}
}
