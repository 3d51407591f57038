package install

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestInstallRegistersEveryKindUnderEveryVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	Install(scheme)
	kinds := []string{
		"VirtualMachine", "VirtualMachineList",
		"VirtualMachineInstance", "VirtualMachineInstanceList",
		"VirtualMachineInstanceReplicaSet", "VirtualMachineInstanceReplicaSetList",
		"VirtualMachineInstanceMigration", "VirtualMachineInstanceMigrationList",
		"StartOptions", "StopOptions", "RestartOptions", "MigrateOptions", "PauseOptions", "UnpauseOptions",
	}
	versions := []schema.GroupVersion{v1.SchemeGroupVersion, v1.V1alpha3GroupVersion, InternalGroupVersion}
	for _, gv := range versions {
		for _, kind := range kinds {
			if !scheme.Recognizes(gv.WithKind(kind)) {
				t.Errorf("%s not registered under %s", kind, gv)
			}
		}
	}
	// meta/v1 option types are only added to the external versions.
	for _, gv := range ExternalGroupVersions {
		if !scheme.Recognizes(gv.WithKind("ListOptions")) {
			t.Errorf("ListOptions not registered under %s", gv)
		}
	}
	if diff := cmp.Diff([]schema.GroupVersion{v1.SchemeGroupVersion, v1.V1alpha3GroupVersion},
		scheme.PrioritizedVersionsForGroup(v1.GroupName)); diff != "" {
		t.Errorf("version priority (-want +got):\n%s", diff)
	}
}

func TestInstallExternalLeavesOutTheInternalVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	InstallExternal(scheme)
	if scheme.Recognizes(InternalGroupVersion.WithKind("VirtualMachine")) {
		t.Error("InstallExternal registered the internal version")
	}
	gvks, _, err := scheme.ObjectKinds(&v1.VirtualMachine{})
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupVersionKind{
		v1.SchemeGroupVersion.WithKind("VirtualMachine"),
		v1.V1alpha3GroupVersion.WithKind("VirtualMachine"),
	}
	if diff := cmp.Diff(want, gvks); diff != "" {
		t.Errorf("kinds of VirtualMachine (-want +got):\n%s", diff)
	}
}

func TestFieldLabelConversions(t *testing.T) {
	scheme := runtime.NewScheme()
	Install(scheme)
	tests := []struct {
		kind    string
		label   string
		wantErr bool
	}{
		{"VirtualMachineInstance", "metadata.name", false},
		{"VirtualMachineInstance", "metadata.namespace", false},
		{"VirtualMachineInstance", "status.phase", false},
		{"VirtualMachineInstance", "status.nodeName", false},
		{"VirtualMachineInstance", "spec.hostname", true},
		{"VirtualMachine", "status.printableStatus", false},
		{"VirtualMachine", "status.ready", false},
		{"VirtualMachine", "status.phase", true},
		{"VirtualMachineInstanceReplicaSet", "metadata.name", false},
		{"VirtualMachineInstanceReplicaSet", "status.replicas", true},
		{"VirtualMachineInstanceMigration", "spec.vmiName", false},
		{"VirtualMachineInstanceMigration", "status.phase", false},
		{"VirtualMachineInstanceMigration", "status.nodeName", true},
	}
	for _, gv := range ExternalGroupVersions {
		for _, tt := range tests {
			t.Run(gv.Version+"/"+tt.kind+"/"+tt.label, func(t *testing.T) {
				label, value, err := scheme.ConvertFieldLabel(gv.WithKind(tt.kind), tt.label, "x")
				if tt.wantErr {
					if err == nil {
						t.Fatalf("label %q accepted, want an error", tt.label)
					}
					return
				}
				if err != nil {
					t.Fatalf("label %q rejected: %v", tt.label, err)
				}
				if label != tt.label || value != "x" {
					t.Errorf("got %q=%q, want %q=%q", label, value, tt.label, "x")
				}
			})
		}
	}
}

func TestInstallRegistersDefaulters(t *testing.T) {
	scheme := runtime.NewScheme()
	Install(scheme)
	vmi := &v1.VirtualMachineInstance{}
	scheme.Default(vmi)
	if vmi.Spec.Domain.Machine == nil || vmi.Spec.Domain.Machine.Type != v1.DefaultMachineType {
		t.Errorf("machine after defaulting = %+v, want type %q", vmi.Spec.Domain.Machine, v1.DefaultMachineType)
	}
}
