package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestDomainName(t *testing.T) {
	if got := DomainName("ns", "vm-1"); got != "ns_vm-1" {
		t.Errorf("DomainName = %q", got)
	}
	tests := []struct {
		in       string
		ns, name string
		wantErr  bool
	}{
		{in: "ns_vm-1", ns: "ns", name: "vm-1"},
		{in: "novm", wantErr: true},
		{in: "_vm", wantErr: true},
		{in: "ns_", wantErr: true},
		{in: "a_b_c", wantErr: true},
	}
	for _, tc := range tests {
		ns, name, err := SplitDomainName(tc.in)
		if (err != nil) != tc.wantErr || ns != tc.ns || name != tc.name {
			t.Errorf("SplitDomainName(%q) = %q, %q, %v", tc.in, ns, name, err)
		}
	}
}

func TestInstanceMetadataRoundTrip(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{}
	vmi.Namespace, vmi.Name, vmi.UID = "ns", "vm1", types.UID("uid-1")
	vmi.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: qty("64Mi")}
	d, err := Convert(vmi, Context{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseDomainMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	want := &InstanceMetadata{UID: "uid-1", Namespace: "ns", Name: "vm1", GracePeriodSeconds: 30}
	if diff := cmp.Diff(want, got, cmpIgnoreXMLName); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseInstanceMetadata(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *InstanceMetadata
		wantErr bool
	}{{
		name: "as NativeVirt writes it",
		in:   `<instance xmlns="https://nativevirt.io/xmlns/domain/v1"><uid>u</uid><namespace>n</namespace><name>v</name><gracePeriodSeconds>5</gracePeriodSeconds></instance>`,
		want: &InstanceMetadata{UID: "u", Namespace: "n", Name: "v", GracePeriodSeconds: 5},
	}, {
		name: "with libvirt's prefix",
		in: `<nativevirt:instance xmlns:nativevirt="https://nativevirt.io/xmlns/domain/v1"><nativevirt:uid>u</nativevirt:uid>` +
			`<nativevirt:namespace>n</nativevirt:namespace><nativevirt:name>v</nativevirt:name></nativevirt:instance>`,
		want: &InstanceMetadata{UID: "u", Namespace: "n", Name: "v"},
	}, {
		name:    "another namespace",
		in:      `<instance xmlns="http://kubevirt.io"><uid>u</uid></instance>`,
		wantErr: true,
	}, {
		name:    "no uid",
		in:      `<instance xmlns="https://nativevirt.io/xmlns/domain/v1"><name>v</name></instance>`,
		wantErr: true,
	}, {
		name:    "not XML",
		in:      `{}`,
		wantErr: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseInstanceMetadata([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmpIgnoreXMLName); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDomainMetadataWithoutOurs(t *testing.T) {
	if _, err := ParseDomainMetadata([]byte(`<domain><name>x</name><metadata><other xmlns="urn:x"/></metadata></domain>`)); err == nil {
		t.Error("a domain without NativeVirt metadata parsed")
	}
}
