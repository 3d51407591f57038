package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/kubevirt/apitesting"
)

// These tests prove that NativeVirt's types are JSON-identical to KubeVirt's
// (kubevirt.io/api v1.7.0) for every field modelled here. Each of our objects
// is filled completely by reflection, then compared both ways with KubeVirt's
// type (apitesting.AssertSameJSON).
//
// Fields KubeVirt has and NativeVirt does not model are out of scope by
// design: the API server rejects them as unknown.

// compatCase pairs one of our kinds with KubeVirt's.
type compatCase struct {
	name   string
	ours   func() any
	theirs func() any
	kind   string
}

func compatCases() []compatCase {
	return []compatCase{
		{"VirtualMachine", func() any { return &VirtualMachine{} }, func() any { return &kubevirtv1.VirtualMachine{} }, "VirtualMachine"},
		{"VirtualMachineList", func() any { return &VirtualMachineList{} }, func() any { return &kubevirtv1.VirtualMachineList{} }, "VirtualMachineList"},
		{"VirtualMachineInstance", func() any { return &VirtualMachineInstance{} }, func() any { return &kubevirtv1.VirtualMachineInstance{} }, "VirtualMachineInstance"},
		{"VirtualMachineInstanceList", func() any { return &VirtualMachineInstanceList{} }, func() any { return &kubevirtv1.VirtualMachineInstanceList{} }, "VirtualMachineInstanceList"},
		{"VirtualMachineInstanceReplicaSet", func() any { return &VirtualMachineInstanceReplicaSet{} }, func() any { return &kubevirtv1.VirtualMachineInstanceReplicaSet{} }, "VirtualMachineInstanceReplicaSet"},
		{"VirtualMachineInstanceMigration", func() any { return &VirtualMachineInstanceMigration{} }, func() any { return &kubevirtv1.VirtualMachineInstanceMigration{} }, "VirtualMachineInstanceMigration"},
		{"StartOptions", func() any { return &StartOptions{} }, func() any { return &kubevirtv1.StartOptions{} }, "StartOptions"},
		{"StopOptions", func() any { return &StopOptions{} }, func() any { return &kubevirtv1.StopOptions{} }, "StopOptions"},
		{"RestartOptions", func() any { return &RestartOptions{} }, func() any { return &kubevirtv1.RestartOptions{} }, "RestartOptions"},
		{"MigrateOptions", func() any { return &MigrateOptions{} }, func() any { return &kubevirtv1.MigrateOptions{} }, "MigrateOptions"},
		{"PauseOptions", func() any { return &PauseOptions{} }, func() any { return &kubevirtv1.PauseOptions{} }, "PauseOptions"},
		{"UnpauseOptions", func() any { return &UnpauseOptions{} }, func() any { return &kubevirtv1.UnpauseOptions{} }, "UnpauseOptions"},
		{"VirtualMachineInstanceGuestAgentInfo", func() any { return &VirtualMachineInstanceGuestAgentInfo{} }, func() any { return &kubevirtv1.VirtualMachineInstanceGuestAgentInfo{} }, "VirtualMachineInstanceGuestAgentInfo"},
		{"VirtualMachineInstanceGuestOSUserList", func() any { return &VirtualMachineInstanceGuestOSUserList{} }, func() any { return &kubevirtv1.VirtualMachineInstanceGuestOSUserList{} }, "VirtualMachineInstanceGuestOSUserList"},
		{"VirtualMachineInstanceFileSystemList", func() any { return &VirtualMachineInstanceFileSystemList{} }, func() any { return &kubevirtv1.VirtualMachineInstanceFileSystemList{} }, "VirtualMachineInstanceFileSystemList"},
	}
}

func TestJSONCompatibleWithKubeVirt(t *testing.T) {
	for _, mode := range apitesting.FillModes {
		for _, tc := range compatCases() {
			t.Run(mode.Name+"/"+tc.name, func(t *testing.T) {
				ours := tc.ours()
				(&apitesting.Filler{ZeroLeaves: mode.ZeroLeaves}).Fill(ours)
				setTypeMeta(t, ours, tc.kind)
				withoutNewerCDIFields(ours)
				apitesting.AssertSameJSON(t, ours, tc.theirs(), tc.ours())
			})
		}
	}
}

// TestJSONCompatibleKubeVirtObject goes the other way for a realistic object
// written with KubeVirt's own Go types.
func TestJSONCompatibleKubeVirtObject(t *testing.T) {
	theirs := kubeVirtVM()
	theirsJSON := apitesting.MustMarshal(t, theirs)
	ours := &VirtualMachine{}
	if err := apitesting.StrictUnmarshal(theirsJSON, ours); err != nil {
		t.Fatalf("KubeVirt's VirtualMachine does not decode strictly into ours: %v", err)
	}
	if diff := cmp.Diff(apitesting.AsGeneric(t, theirsJSON), apitesting.AsGeneric(t, apitesting.MustMarshal(t, ours))); diff != "" {
		t.Errorf("JSON differs after KubeVirt → NativeVirt (-kubevirt +nativevirt):\n%s", diff)
	}
}

// withoutNewerCDIFields clears the CDI fields of dataVolumeTemplates that CDI added after the
// CDI API that kubevirt.io/api v1.7.0 is built with (containerized-data-importer-api v1.63.1):
// dataVolumeTemplates use NativeVirt's CDI types, which follow a newer CDI (compared with CDI's
// own types in pkg/apis/cdi/v1beta1).
func withoutNewerCDIFields(obj any) {
	var vms []*VirtualMachine
	switch o := obj.(type) {
	case *VirtualMachine:
		vms = append(vms, o)
	case *VirtualMachineList:
		for i := range o.Items {
			vms = append(vms, &o.Items[i])
		}
	}
	for _, vm := range vms {
		for i := range vm.Spec.DataVolumeTemplates {
			if src := vm.Spec.DataVolumeTemplates[i].Spec.Source; src != nil && src.Imageio != nil {
				src.Imageio.InsecureSkipVerify = nil
			}
		}
	}
}

// setTypeMeta gives top-level objects (and list items) their apiVersion and kind.
func setTypeMeta(t *testing.T, obj any, kind string) {
	t.Helper()
	tm := metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: kind}
	switch o := obj.(type) {
	case *VirtualMachine:
		o.TypeMeta = tm
	case *VirtualMachineList:
		o.TypeMeta = tm
		o.ListMeta = metav1.ListMeta{ResourceVersion: "7", Continue: "c"}
		for i := range o.Items {
			o.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: tm.APIVersion, Kind: "VirtualMachine"}
		}
	case *VirtualMachineInstance:
		o.TypeMeta = tm
	case *VirtualMachineInstanceList:
		o.TypeMeta = tm
		o.ListMeta = metav1.ListMeta{ResourceVersion: "7"}
		for i := range o.Items {
			o.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: tm.APIVersion, Kind: "VirtualMachineInstance"}
		}
	case *VirtualMachineInstanceReplicaSet:
		o.TypeMeta = tm
	case *VirtualMachineInstanceMigration:
		o.TypeMeta = tm
	case *StartOptions:
		o.TypeMeta = tm
	case *StopOptions:
		o.TypeMeta = tm
	case *RestartOptions:
		o.TypeMeta = tm
	case *MigrateOptions:
		o.TypeMeta = tm
	case *PauseOptions:
		o.TypeMeta = tm
	case *UnpauseOptions:
		o.TypeMeta = tm
	case *VirtualMachineInstanceGuestAgentInfo:
		o.TypeMeta = tm
	case *VirtualMachineInstanceGuestOSUserList:
		o.TypeMeta, o.ListMeta = tm, metav1.ListMeta{}
	case *VirtualMachineInstanceFileSystemList:
		o.TypeMeta, o.ListMeta = tm, metav1.ListMeta{}
	default:
		t.Fatalf("setTypeMeta: unexpected type %T", obj)
	}
}
