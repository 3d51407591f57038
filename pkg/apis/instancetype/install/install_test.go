package install

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
)

var kinds = []string{
	"VirtualMachineInstancetype", "VirtualMachineInstancetypeList",
	"VirtualMachineClusterInstancetype", "VirtualMachineClusterInstancetypeList",
	"VirtualMachinePreference", "VirtualMachinePreferenceList",
	"VirtualMachineClusterPreference", "VirtualMachineClusterPreferenceList",
}

func TestInstallRegistersEveryKindUnderEveryVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	Install(scheme)
	for _, gv := range []schema.GroupVersion{v1beta1.SchemeGroupVersion, InternalGroupVersion} {
		for _, kind := range kinds {
			if !scheme.Recognizes(gv.WithKind(kind)) {
				t.Errorf("%s not registered under %s", kind, gv)
			}
		}
	}
	// meta/v1 option types are only added to the external version.
	if !scheme.Recognizes(v1beta1.SchemeGroupVersion.WithKind("ListOptions")) {
		t.Error("ListOptions not registered under v1beta1")
	}
	if diff := cmp.Diff([]schema.GroupVersion{v1beta1.SchemeGroupVersion},
		scheme.PrioritizedVersionsForGroup(v1beta1.GroupName)); diff != "" {
		t.Errorf("version priority (-want +got):\n%s", diff)
	}
	// The first kind of an object is the external one.
	gvks, _, err := scheme.ObjectKinds(&v1beta1.VirtualMachineClusterPreference{})
	if err != nil {
		t.Fatal(err)
	}
	if want := v1beta1.SchemeGroupVersion.WithKind("VirtualMachineClusterPreference"); gvks[0] != want {
		t.Errorf("first kind = %v, want %v", gvks[0], want)
	}
}

func TestInstallExternalLeavesOutTheInternalVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	InstallExternal(scheme)
	for _, kind := range kinds {
		if scheme.Recognizes(InternalGroupVersion.WithKind(kind)) {
			t.Errorf("InstallExternal registered %s under the internal version", kind)
		}
	}
}

func TestFieldLabelConversions(t *testing.T) {
	scheme := runtime.NewScheme()
	Install(scheme)
	for _, kind := range []string{"VirtualMachineInstancetype", "VirtualMachineClusterInstancetype",
		"VirtualMachinePreference", "VirtualMachineClusterPreference"} {
		gvk := v1beta1.SchemeGroupVersion.WithKind(kind)
		for _, label := range []string{"metadata.name", "metadata.namespace"} {
			if l, v, err := scheme.ConvertFieldLabel(gvk, label, "x"); err != nil || l != label || v != "x" {
				t.Errorf("%s: label %q = (%q, %q, %v), want it accepted unchanged", kind, label, l, v, err)
			}
		}
		if _, _, err := scheme.ConvertFieldLabel(gvk, "spec.cpu.guest", "1"); err == nil {
			t.Errorf("%s: label spec.cpu.guest accepted, want an error", kind)
		}
	}
}
