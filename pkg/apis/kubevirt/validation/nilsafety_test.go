package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestNilObjects: nil objects give an error, never a panic.
func TestNilObjects(t *testing.T) {
	lists := map[string]field.ErrorList{
		"vm":             ValidateVirtualMachine(nil),
		"vm update":      ValidateVirtualMachineUpdate(nil, nil),
		"vm status":      ValidateVirtualMachineStatusUpdate(nil, nil),
		"vmi":            ValidateVirtualMachineInstance(nil),
		"vmi update":     ValidateVirtualMachineInstanceUpdate(nil, nil),
		"vmi status":     ValidateVirtualMachineInstanceStatusUpdate(nil, nil),
		"vmirs":          ValidateVirtualMachineInstanceReplicaSet(nil),
		"vmirs update":   ValidateVirtualMachineInstanceReplicaSetUpdate(nil, nil),
		"vmirs status":   ValidateVirtualMachineInstanceReplicaSetStatusUpdate(nil, nil),
		"vmim":           ValidateVirtualMachineInstanceMigration(nil),
		"vmim update":    ValidateVirtualMachineInstanceMigrationUpdate(nil, nil),
		"vmim status":    ValidateVirtualMachineInstanceMigrationStatusUpdate(nil, nil),
		"vmim source":    ValidateVirtualMachineInstanceMigrationSource(nil, nil, nil),
		"vmim no source": ValidateVirtualMachineInstanceMigrationSource(&kubevirtv1.VirtualMachineInstanceMigration{}, nil, nil),
		"vmi spec":       ValidateVMISpec(nil, field.NewPath("spec")),
		"vm empty":       ValidateVirtualMachine(&kubevirtv1.VirtualMachine{}),
		"vmi empty":      ValidateVirtualMachineInstance(&kubevirtv1.VirtualMachineInstance{}),
		"vmirs empty":    ValidateVirtualMachineInstanceReplicaSet(&kubevirtv1.VirtualMachineInstanceReplicaSet{}),
		"vmim empty":     ValidateVirtualMachineInstanceMigration(&kubevirtv1.VirtualMachineInstanceMigration{}),
		"vmi spec empty": ValidateVMISpec(&kubevirtv1.VirtualMachineInstanceSpec{}, field.NewPath("spec")),
	}
	for name, errs := range lists {
		if len(errs) == 0 {
			t.Errorf("%s: want an error for a nil or empty object, got none", name)
		}
	}
}

// TestRandomObjectsNeverPanic fills objects at random, with nil pointers, empty and odd values
// everywhere, and runs every validation function on them: none may panic, as a panic on a
// request path becomes a 500.
func TestRandomObjectsNeverPanic(t *testing.T) {
	iterations := 300
	if testing.Short() {
		iterations = 30
	}
	filler := randfill.NewWithSeed(1).NilChance(0.4).NumElements(0, 3).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1<<36)-(1<<20), resource.BinarySI)
		},
		// Random strings rarely hit the enumerations; mix in the values validation knows.
		func(s *kubevirtv1.VirtualMachineInstancePhase, c randfill.Continue) {
			*s = pick(c, vmiPhases, kubevirtv1.VirtualMachineInstancePhase(c.String(5)))
		},
		func(s *kubevirtv1.DiskBus, c randfill.Continue) {
			*s = pick(c, diskBuses, kubevirtv1.DiskBus(c.String(3)))
		},
	)
	for i := 0; i < iterations; i++ {
		var vm, vm2 kubevirtv1.VirtualMachine
		var vmi, vmi2 kubevirtv1.VirtualMachineInstance
		var rs, rs2 kubevirtv1.VirtualMachineInstanceReplicaSet
		var m, m2 kubevirtv1.VirtualMachineInstanceMigration
		for _, obj := range []any{&vm, &vm2, &vmi, &vmi2, &rs, &rs2, &m, &m2} {
			filler.Fill(obj)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("iteration %d: panic: %v", i, r)
				}
			}()
			ValidateVirtualMachine(&vm)
			ValidateVirtualMachineUpdate(&vm, &vm2)
			ValidateVirtualMachineStatusUpdate(&vm, &vm2)
			ValidateVirtualMachineInstance(&vmi)
			ValidateVirtualMachineInstanceUpdate(&vmi, &vmi2)
			ValidateVirtualMachineInstanceStatusUpdate(&vmi, &vmi2)
			ValidateVirtualMachineInstanceReplicaSet(&rs)
			ValidateVirtualMachineInstanceReplicaSetUpdate(&rs, &rs2)
			ValidateVirtualMachineInstanceReplicaSetStatusUpdate(&rs, &rs2)
			ValidateVirtualMachineInstanceMigration(&m)
			ValidateVirtualMachineInstanceMigrationUpdate(&m, &m2)
			ValidateVirtualMachineInstanceMigrationStatusUpdate(&m, &m2)
			ValidateVirtualMachineInstanceMigrationSource(&m, &vmi, []*kubevirtv1.VirtualMachineInstanceMigration{&m2, nil})
		}()
	}
}

// pick returns one of known, or other, at random.
func pick[T any](c randfill.Continue, known []T, other T) T {
	if n := c.Intn(len(known) + 1); n < len(known) {
		return known[n]
	}
	return other
}
