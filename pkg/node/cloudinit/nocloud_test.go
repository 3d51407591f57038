package cloudinit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func testVMI(hostname string, uuid string) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{}
	vmi.Namespace, vmi.Name, vmi.UID = "ns", "vm1", "uid-1"
	vmi.Spec.Hostname = hostname
	if uuid != "" {
		vmi.Spec.Domain.Firmware = &kubevirtv1.Firmware{UUID: "5b3ee6a6-1d6b-5a4f-9c55-9c8f1b2a3c4d"}
	}
	return vmi
}

func TestNoCloudISO(t *testing.T) {
	tests := []struct {
		name                    string
		userData, meta, network []byte
		want                    map[string][]byte
	}{{
		name:     "user data, meta data, network config",
		userData: []byte("#cloud-config\n"), meta: []byte("instance-id: a\n"), network: []byte("version: 2\n"),
		want: map[string][]byte{"user-data": []byte("#cloud-config\n"), "meta-data": []byte("instance-id: a\n"), "network-config": []byte("version: 2\n")},
	}, {
		name: "no user data: empty user-data file, no network-config",
		meta: []byte("instance-id: a\n"),
		want: map[string][]byte{"user-data": nil, "meta-data": []byte("instance-id: a\n")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := NoCloudISO(tc.userData, tc.meta, tc.network)
			if err != nil {
				t.Fatal(err)
			}
			im, err := readISO(img)
			if err != nil {
				t.Fatal(err)
			}
			if im.volumeID != "cidata" {
				t.Errorf("label %q", im.volumeID)
			}
			if diff := cmp.Diff(tc.want, im.files, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoCloudMetaData(t *testing.T) {
	tests := []struct {
		name string
		vmi  *kubevirtv1.VirtualMachineInstance
		keys map[string]string
		want map[string]any
	}{
		{"host name from the instance name", testVMI("", ""), nil, map[string]any{"instance-id": "vm1.ns", "local-hostname": "vm1"}},
		{"spec.hostname", testVMI("web-1", ""), nil, map[string]any{"instance-id": "vm1.ns", "local-hostname": "web-1"}},
		{"YAML-hostile name stays a string", testVMI(`a: "b"`, ""), nil, map[string]any{"instance-id": "vm1.ns", "local-hostname": `a: "b"`}},
		{"SSH public keys by name", testVMI("", ""), map[string]string{"alice": "ssh-ed25519 AAAAC3Nza alice@example", "ci: #1": "ecdsa-sha2-nistp256 AAAAE2V"},
			map[string]any{"instance-id": "vm1.ns", "local-hostname": "vm1", "public-keys": map[string]any{
				"alice": "ssh-ed25519 AAAAC3Nza alice@example", "ci: #1": "ecdsa-sha2-nistp256 AAAAE2V"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got map[string]any
			if err := yaml.Unmarshal(NoCloudMetaData(tc.vmi, tc.keys), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigDriveISO(t *testing.T) {
	img, err := ConfigDriveISO([]byte("#!/bin/sh\n"), []byte(`{"uuid":"x"}`), []byte(`{"links":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	im, err := readISO(img)
	if err != nil {
		t.Fatal(err)
	}
	if im.volumeID != "config-2" {
		t.Errorf("label %q", im.volumeID)
	}
	want := map[string][]byte{
		"openstack/latest/user_data":         []byte("#!/bin/sh\n"),
		"openstack/latest/meta_data.json":    []byte(`{"uuid":"x"}`),
		"openstack/latest/network_data.json": []byte(`{"links":[]}`),
	}
	if diff := cmp.Diff(want, im.files, cmp.Comparer(bytes.Equal)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	img, err = ConfigDriveISO(nil, []byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if im, err = readISO(img); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"openstack/latest/meta_data.json"}, sortedKeys(im.files)); diff != "" {
		t.Errorf("without user and network data (-want +got):\n%s", diff)
	}
}

func TestConfigDriveMetaData(t *testing.T) {
	keys := map[string]string{"alice": "ssh-ed25519 AAAAC3Nza alice@example"}
	tests := []struct {
		name string
		vmi  *kubevirtv1.VirtualMachineInstance
		keys map[string]string
		want configDriveMeta
	}{
		{"firmware UUID", testVMI("h", "yes"), nil, configDriveMeta{UUID: "5b3ee6a6-1d6b-5a4f-9c55-9c8f1b2a3c4d", InstanceID: "vm1.ns", Name: "vm1", Hostname: "h"}},
		{"no firmware UUID", testVMI("", ""), nil, configDriveMeta{UUID: "vm1.ns", InstanceID: "vm1.ns", Name: "vm1", Hostname: "vm1"}},
		{"SSH public keys", testVMI("", ""), keys, configDriveMeta{UUID: "vm1.ns", InstanceID: "vm1.ns", Name: "vm1", Hostname: "vm1", PublicKeys: keys}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got configDriveMeta
			if err := json.Unmarshal(ConfigDriveMetaData(tc.vmi, tc.keys), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
