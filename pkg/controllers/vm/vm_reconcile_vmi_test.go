package vm

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// stubAPI records the calls of an instanceAPI and answers from its fields.
type stubAPI struct {
	calls     []string
	patchErr  error
	createErr error
	deleteErr error
	freshVM   *kubevirtv1.VirtualMachine
	events    []string
}

func (s *stubAPI) api() *instanceAPI {
	return &instanceAPI{
		create: func(_ context.Context, vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
			s.calls = append(s.calls, "create "+vmi.Name)
			if s.createErr != nil {
				return nil, s.createErr
			}
			out := vmi.DeepCopy()
			out.UID = "vmi-new"
			return out, nil
		},
		delete: func(_ context.Context, _, name string, uid types.UID) error {
			s.calls = append(s.calls, "delete "+name+" "+string(uid))
			return s.deleteErr
		},
		patch: func(_ context.Context, _, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error) {
			s.calls = append(s.calls, "patch "+name+" "+string(data))
			if s.patchErr != nil {
				return nil, s.patchErr
			}
			return newVMI(kubevirtv1.Running), nil
		},
		getVM: func(_ context.Context, _, name string) (*kubevirtv1.VirtualMachine, error) {
			s.calls = append(s.calls, "get "+name)
			if s.freshVM == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "virtualmachines"}, name)
			}
			return s.freshVM, nil
		},
		event: func(_ *kubevirtv1.VirtualMachine, eventType, reason, message string) {
			s.events = append(s.events, eventType+" "+reason+" "+message)
		},
	}
}

func TestClaim(t *testing.T) {
	adoptPatch := `patch vm-cirros {"metadata":{"uid":"vmi-1","ownerReferences":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","name":"vm-cirros","uid":"vm-uid","controller":true,"blockOwnerDeletion":true}]}}`
	tests := []struct {
		name        string
		vm          *kubevirtv1.VirtualMachine
		vmi         *kubevirtv1.VirtualMachineInstance
		stub        stubAPI
		wantOwn     bool
		wantForeign bool
		wantErr     bool
		wantCalls   []string
	}{
		{name: "no instance", vm: newVM()},
		{name: "own instance", vm: newVM(), vmi: newVMI(kubevirtv1.Running), wantOwn: true},
		{name: "instance of another controller", vm: newVM(), vmi: newVMI(kubevirtv1.Running, ownedBy("old-vm")), wantForeign: true},
		{name: "orphan is adopted after a fresh read", vm: newVM(), vmi: newVMI(kubevirtv1.Running, orphan()),
			stub: stubAPI{freshVM: newVM()}, wantOwn: true, wantCalls: []string{"get vm-cirros", adoptPatch}},
		{name: "orphan of a replaced VM is not adopted", vm: newVM(), vmi: newVMI(kubevirtv1.Running, orphan()),
			stub: stubAPI{freshVM: newVM(func(v *kubevirtv1.VirtualMachine) { v.UID = "other" })}, wantForeign: true, wantCalls: []string{"get vm-cirros"}},
		{name: "orphan of a VM being deleted (fresh read) is not adopted", vm: newVM(), vmi: newVMI(kubevirtv1.Running, orphan()),
			stub: stubAPI{freshVM: newVM(vmDeleting())}, wantForeign: true, wantCalls: []string{"get vm-cirros"}},
		{name: "orphan while the cached VM is being deleted", vm: newVM(vmDeleting()), vmi: newVMI(kubevirtv1.Running, orphan()), wantForeign: true},
		{name: "terminating orphan is left alone", vm: newVM(), vmi: newVMI(kubevirtv1.Running, orphan(), vmiDeleting()), wantForeign: true},
		{name: "fresh read fails", vm: newVM(), vmi: newVMI(kubevirtv1.Running, orphan()), wantErr: true, wantCalls: []string{"get vm-cirros"}},
		{name: "adoption fails", vm: newVM(), vmi: newVMI(kubevirtv1.Running, orphan()),
			stub: stubAPI{freshVM: newVM(), patchErr: errors.New("conflict")}, wantErr: true, wantCalls: []string{"get vm-cirros", adoptPatch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.stub
			got, err := s.api().claim(context.Background(), tc.vm, tc.vmi)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if (got.vmi != nil) != tc.wantOwn || (got.foreign != nil) != tc.wantForeign {
				t.Errorf("claim = own %v foreign %v, want own %v foreign %v", got.vmi != nil, got.foreign != nil, tc.wantOwn, tc.wantForeign)
			}
			if diff := cmp.Diff(tc.wantCalls, s.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewInstance(t *testing.T) {
	vm := newVM(func(v *kubevirtv1.VirtualMachine) {
		v.Spec.Template.ObjectMeta.Annotations = map[string]string{"a": "b"}
	})
	got := newInstance(vm)
	want := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name: "vm-cirros", Namespace: "default",
			Labels:      map[string]string{"kubevirt.io/vm": "vm-cirros"},
			Annotations: map[string]string{"a": "b", GenerationAnnotation: "3", SpecHashAnnotation: specHash(vm)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-cirros",
				UID: "vm-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			Finalizers: []string{kubevirtv1.VirtualMachineControllerFinalizer},
		},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Firmware: &kubevirtv1.Firmware{UUID: "fw-uuid"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instance (-want +got):\n%s", diff)
	}
	// The instance must not share maps with the template.
	got.Labels["x"] = "y"
	if _, ok := vm.Spec.Template.ObjectMeta.Labels["x"]; ok {
		t.Error("the instance shares its labels with the template")
	}
}

func TestExecute(t *testing.T) {
	tests := []struct {
		name       string
		act        action
		paused     bool
		vm         *kubevirtv1.VirtualMachine
		vmi        *kubevirtv1.VirtualMachineInstance
		stub       stubAPI
		wantVMI    bool
		wantDelTS  bool
		wantReason string
		wantEvents []string
	}{
		{name: "nothing", act: actNone, vm: newVM(), vmi: newVMI(kubevirtv1.Running), wantVMI: true},
		{name: "create", act: actCreate, vm: newVM(), wantVMI: true,
			wantEvents: []string{"Normal SuccessfulCreate Started the virtual machine by creating the new virtual machine instance vm-cirros"}},
		{name: "create paused", act: actCreate, paused: true, vm: newVM(), wantVMI: true,
			wantEvents: []string{"Normal SuccessfulCreate Started the virtual machine by creating the new virtual machine instance vm-cirros"}},
		{name: "create fails", act: actCreate, vm: newVM(), stub: stubAPI{createErr: errors.New("quota")}, wantReason: ReasonFailedCreate,
			wantEvents: []string{"Warning FailedCreate Error creating virtual machine instance: quota"}},
		{name: "no template", act: actCreate, vm: newVM(func(v *kubevirtv1.VirtualMachine) { v.Spec.Template = nil }), wantReason: ReasonFailedCreate,
			wantEvents: []string{"Warning FailedCreate Error creating virtual machine instance: the VM has no template"}},
		{name: "delete", act: actDelete, vm: newVM(), vmi: newVMI(kubevirtv1.Running), wantVMI: true, wantDelTS: true,
			wantEvents: []string{"Normal SuccessfulDelete Stopped the virtual machine by deleting the virtual machine instance vmi-1"}},
		{name: "delete of a vanished instance", act: actDelete, vm: newVM(), vmi: newVMI(kubevirtv1.Running),
			stub: stubAPI{deleteErr: apierrors.NewNotFound(schema.GroupResource{}, "vm-cirros")}},
		{name: "delete fails", act: actDelete, vm: newVM(), vmi: newVMI(kubevirtv1.Running), stub: stubAPI{deleteErr: errors.New("boom")},
			wantVMI: true, wantReason: ReasonFailedDelete, wantEvents: []string{"Warning FailedDelete Error deleting virtual machine instance vm-cirros: boom"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.stub
			got, reason, err := s.api().execute(context.Background(), tc.vm, tc.vmi, tc.act, tc.paused, metav1.NewTime(testNow))
			if (got != nil) != tc.wantVMI {
				t.Errorf("instance = %v, want one: %v", got, tc.wantVMI)
			}
			if got != nil && (got.DeletionTimestamp != nil) != tc.wantDelTS {
				t.Errorf("deletion timestamp = %v, want set: %v", got.DeletionTimestamp, tc.wantDelTS)
			}
			if reason != tc.wantReason || (err != nil) != (tc.wantReason != "") {
				t.Errorf("reason %q err %v, want reason %q", reason, err, tc.wantReason)
			}
			if diff := cmp.Diff(tc.wantEvents, s.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tc.vmi != nil && tc.vmi.DeletionTimestamp != nil {
				t.Error("execute modified the cached instance")
			}
			if tc.act == actCreate && got != nil {
				paused := got.Spec.StartStrategy != nil && *got.Spec.StartStrategy == kubevirtv1.StartStrategyPaused
				if paused != tc.paused {
					t.Errorf("created instance's startStrategy %v, want paused: %v", got.Spec.StartStrategy, tc.paused)
				}
			}
		})
	}
}
