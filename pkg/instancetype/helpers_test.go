package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// templatePath is where a VirtualMachine's template lies, as the callers pass it.
var templatePath = field.NewPath("spec", "template")

// conflictErr is the error Apply gives for a template field the instance type sets too.
func conflictErr(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeInvalid, Field: path, BadValue: field.OmitValueType{},
		Detail: "VM field(s) " + path + " conflicts with selected instance type"}
}

// unmetErr is the error Apply gives for an unmet preference requirement.
func unmetErr(path, msg string) *field.Error {
	return &field.Error{Type: field.ErrorTypeNotFound, Field: path, BadValue: field.OmitValueType{},
		Detail: "failure checking preference requirements: " + msg}
}

// instancetypeSpec is an instance type with guest vCPUs and guest memory, nothing else.
func instancetypeSpec(guest int32, memory string) *instancetypev1beta1.VirtualMachineInstancetypeSpec {
	return &instancetypev1beta1.VirtualMachineInstancetypeSpec{
		CPU:    instancetypev1beta1.CPUInstancetype{Guest: guest},
		Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse(memory)},
	}
}

// diffOpts compare specs treating nil and empty maps and slices alike, and quantities by value.
var diffOpts = []cmp.Option{
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 && a.String() == b.String() }),
}

// wantNoErrs fails the test on errors.
func wantNoErrs(t *testing.T, errs field.ErrorList) {
	t.Helper()
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
}

// wantErrs compares errors exactly (type, field, value and detail), in order.
func wantErrs(t *testing.T, got field.ErrorList, want ...*field.Error) {
	t.Helper()
	if diff := cmp.Diff(field.ErrorList(want), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// wantSpec compares a spec with the expected one.
func wantSpec(t *testing.T, got, want kubevirtv1.VirtualMachineInstanceSpec) {
	t.Helper()
	if diff := cmp.Diff(want, got, diffOpts...); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}
