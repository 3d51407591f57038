package convert

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/install"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// seedManifest is the seed document's vm-cirros, kept with the API types.
const seedManifest = "../../apis/kubevirt/v1/testdata/vm-cirros-v1alpha3.yaml"

// goldenCases maps input manifests (a VirtualMachineInstance, or a
// VirtualMachine whose template becomes one) to golden domain XML files.
var goldenCases = []struct {
	name     string
	manifest string
	ctx      Context
}{
	{
		name:     "vm-cirros",
		manifest: seedManifest,
		ctx:      Context{Emulation: true, DiskFormats: map[string]DiskFormat{"containerdisk": FormatQCOW2}},
	},
	{
		name:     "kernel-boot",
		manifest: "testdata/kernel-boot.yaml",
		ctx:      Context{Emulation: true},
	},
	{
		name:     "multi-disk",
		manifest: "testdata/multi-disk.yaml",
		ctx: Context{
			DiskFormats:  map[string]DiskFormat{"root": FormatQCOW2, "installer": FormatRaw, "empty-tray": FormatRaw},
			BlockVolumes: map[string]bool{"blockclaim": true},
		},
	},
	{
		name:     "kvm-devices",
		manifest: "testdata/kvm-devices.yaml",
		ctx: Context{
			DiskFormats: map[string]DiskFormat{"root": FormatRaw},
		},
	},
	{
		name:     "multus-bridge",
		manifest: "testdata/multus-bridge.yaml",
		ctx:      Context{Emulation: true},
	},
	{
		name:     "transitional-pc",
		manifest: "testdata/transitional-pc.yaml",
		ctx:      Context{Emulation: true, DiskFormats: map[string]DiskFormat{"root": FormatQCOW2}},
	},
}

// decodeVMI reads a manifest the way the API server does (strict, with
// defaults) and returns the instance it describes. A VirtualMachine yields
// the instance its controller would create, with the UID and firmware UUID
// the registry would give it.
func decodeVMI(t *testing.T, manifest string) *kubevirtv1.VirtualMachineInstance {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	install.Install(scheme)
	decoder := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("decode %s: %v", manifest, err)
	}
	scheme.Default(obj)
	switch o := obj.(type) {
	case *kubevirtv1.VirtualMachineInstance:
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		return o
	case *kubevirtv1.VirtualMachine:
		vmi := &kubevirtv1.VirtualMachineInstance{}
		vmi.Name, vmi.Namespace = o.Name, o.Namespace
		if vmi.Namespace == "" {
			vmi.Namespace = "default"
		}
		vmi.UID = types.UID("6a1d7a0e-0000-4000-8000-00000000c1a0")
		vmi.Labels = o.Spec.Template.ObjectMeta.Labels
		vmi.Spec = *o.Spec.Template.Spec.DeepCopy()
		if vmi.Spec.Domain.Firmware == nil {
			vmi.Spec.Domain.Firmware = &kubevirtv1.Firmware{}
		}
		if vmi.Spec.Domain.Firmware.UUID == "" {
			vmi.Spec.Domain.Firmware.UUID = "5b3ee6a6-1d6b-5a4f-9c55-9c8f1b2a3c4d"
		}
		return vmi
	}
	t.Fatalf("%s: unexpected kind %T", manifest, obj)
	return nil
}

// TestGolden converts each case and compares the XML with its golden file.
// Run with -update to rewrite the golden files after an intended change.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := decodeVMI(t, tc.manifest)
			before := vmi.DeepCopy()
			d, err := Convert(vmi, tc.ctx)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if diff := cmp.Diff(before, vmi); diff != "" {
				t.Errorf("Convert changed the instance (-before +after):\n%s", diff)
			}
			got, err := d.Marshal()
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			golden := filepath.Join("testdata", tc.name+".xml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("domain XML differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestGoldenFilesHaveCases fails when a golden file has no case (a renamed
// or removed case would otherwise leave a stale file behind).
func TestGoldenFilesHaveCases(t *testing.T) {
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tc := range goldenCases {
		names[tc.name] = true
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".xml"); !names[name] {
			t.Errorf("%s has no golden case", f)
		}
	}
}

// TestGoldenRoundTrip parses each golden file back into a Domain and
// marshals it again: the structures must hold everything they emit.
func TestGoldenRoundTrip(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", tc.name+".xml"))
			if err != nil {
				t.Skipf("no golden file: %v", err)
			}
			d := &Domain{}
			if err := xml.Unmarshal(want, d); err != nil {
				t.Fatal(err)
			}
			got, err := d.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("round trip differs (-want +got):\n%s", cmp.Diff(string(want), string(got)))
			}
		})
	}
}
