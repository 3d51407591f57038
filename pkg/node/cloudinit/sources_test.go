package cloudinit

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func withVolumes(vols ...kubevirtv1.Volume) *kubevirtv1.VirtualMachineInstance {
	vmi := testVMI("", "")
	vmi.Spec.Volumes = vols
	return vmi
}

func TestSources(t *testing.T) {
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	tests := []struct {
		name    string
		vmi     *kubevirtv1.VirtualMachineInstance
		want    []Source
		wantErr string
	}{{
		name: "no cloud-init volume",
		vmi:  withVolumes(kubevirtv1.Volume{Name: "d", VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{}}}),
	}, {
		name: "NoCloud, base64 user data (the seed VM), plain network data",
		vmi: withVolumes(kubevirtv1.Volume{Name: "cloudinitdisk", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
			UserDataBase64: "IyEvYmluL3NoCgplY2hvICdwcmludGVkIGZyb20gY2xvdWQtaW5pdCB1c2VyZGF0YScK",
			NetworkData:    "version: 2\n",
		}}}),
		want: []Source{{Volume: "cloudinitdisk", Kind: NoCloud,
			UserData: []byte("#!/bin/sh\n\necho 'printed from cloud-init userdata'\n"), NetworkData: []byte("version: 2\n")}},
	}, {
		name: "ConfigDrive from secrets",
		vmi: withVolumes(kubevirtv1.Volume{Name: "cd", VolumeSource: kubevirtv1.VolumeSource{CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{
			UserDataSecretRef: ref("ud"), NetworkDataSecretRef: ref("nd"),
		}}}),
		want: []Source{{Volume: "cd", Kind: ConfigDrive, UserDataSecret: "ud", NetworkDataSecret: "nd"}},
	}, {
		name: "user data twice",
		vmi: withVolumes(kubevirtv1.Volume{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
			UserData: "a", UserDataSecretRef: ref("s"),
		}}}),
		wantErr: "volume ci: user data is set more than once",
	}, {
		name: "bad base64",
		vmi: withVolumes(kubevirtv1.Volume{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{
			NetworkDataBase64: "!!!",
		}}}),
		wantErr: "networkDataBase64 is not valid base64",
	}, {
		name:    "nil instance",
		wantErr: "nil VirtualMachineInstance",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Sources(tc.vmi)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	secrets := map[string]map[string][]byte{
		"lower":  {"userdata": []byte("lower"), "userData": []byte("camel")},
		"camel":  {"userData": []byte("camel"), "networkData": []byte("net")},
		"nokeys": {"other": []byte("x")},
	}
	get := func(name string) (map[string][]byte, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		return nil, errors.New("not found")
	}
	tests := []struct {
		name    string
		src     Source
		get     SecretGetter
		want    Source
		wantErr string
	}{
		{name: "nothing to resolve", src: Source{Volume: "v", UserData: []byte("u")}, want: Source{Volume: "v", UserData: []byte("u")}},
		{name: "userdata key wins", src: Source{Volume: "v", UserDataSecret: "lower"}, get: get, want: Source{Volume: "v", UserData: []byte("lower")}},
		{
			name: "camel-case keys",
			src:  Source{Volume: "v", UserDataSecret: "camel", NetworkDataSecret: "camel"},
			get:  get,
			want: Source{Volume: "v", UserData: []byte("camel"), NetworkData: []byte("net")},
		},
		{name: "missing secret", src: Source{Volume: "v", UserDataSecret: "gone"}, get: get, wantErr: "volume v: user data: secret gone: not found"},
		{name: "no key", src: Source{Volume: "v", NetworkDataSecret: "nokeys"}, get: get, wantErr: "none of the keys networkdata, networkData"},
		{name: "no getter", src: Source{Volume: "v", UserDataSecret: "lower"}, wantErr: "no secret getter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.src.Resolve(tc.get)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSourceISO(t *testing.T) {
	vmi := testVMI("host", "")
	tests := []struct {
		name      string
		src       Source
		wantLabel string
		wantFiles map[string][]byte
		wantErr   string
	}{{
		name:      "NoCloud",
		src:       Source{Volume: "v", Kind: NoCloud, UserData: []byte("ud")},
		wantLabel: "cidata",
		wantFiles: map[string][]byte{"user-data": []byte("ud"), "meta-data": NoCloudMetaData(vmi)},
	}, {
		name:      "ConfigDrive",
		src:       Source{Volume: "v", Kind: ConfigDrive, UserData: []byte("ud"), NetworkData: []byte("{}")},
		wantLabel: "config-2",
		wantFiles: map[string][]byte{
			"openstack/latest/user_data":         []byte("ud"),
			"openstack/latest/meta_data.json":    ConfigDriveMetaData(vmi),
			"openstack/latest/network_data.json": []byte("{}"),
		},
	}, {
		name:    "unresolved secret",
		src:     Source{Volume: "v", Kind: NoCloud, UserDataSecret: "s"},
		wantErr: "not resolved",
	}, {
		name:    "unknown kind",
		src:     Source{Volume: "v", Kind: "Ignition"},
		wantErr: "unknown cloud-init kind",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := tc.src.ISO(vmi)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			im, err := readISO(img)
			if err != nil {
				t.Fatal(err)
			}
			if im.volumeID != tc.wantLabel {
				t.Errorf("label %q, want %q", im.volumeID, tc.wantLabel)
			}
			if diff := cmp.Diff(tc.wantFiles, im.files, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := (Source{Kind: NoCloud}).ISO(nil); err == nil {
		t.Error("ISO of a nil instance succeeded")
	}
}
