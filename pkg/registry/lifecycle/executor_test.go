package lifecycle

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes/fake"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// fakeVMs is an in-memory VM store whose first conflicts updates fail with a conflict, as if
// another writer had been faster.
type fakeVMs struct {
	vm        *kubevirtv1.VirtualMachine
	conflicts int
	gets      int
	updates   []*kubevirtv1.VirtualMachine
}

func (f *fakeVMs) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	f.gets++
	if f.vm == nil || f.vm.Name != name {
		return nil, apierrors.NewNotFound(kubevirtv1.Resource("virtualmachines"), name)
	}
	return f.vm.DeepCopy(), nil
}

func (f *fakeVMs) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	_ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, err := objInfo.UpdatedObject(ctx, f.vm)
	if err != nil {
		return nil, false, err
	}
	if f.conflicts > 0 {
		f.conflicts--
		return nil, false, apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), name, nil)
	}
	vm := obj.(*kubevirtv1.VirtualMachine)
	f.updates = append(f.updates, vm)
	f.vm = vm
	return vm, false, nil
}

func (f *fakeVMs) New() runtime.Object { return &kubevirtv1.VirtualMachine{} }

type fakeInstances struct {
	vmi     *kubevirtv1.VirtualMachineInstance
	deleted []metav1.DeleteOptions
}

func (f *fakeInstances) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if f.vmi == nil {
		return nil, apierrors.NewNotFound(kubevirtv1.Resource("virtualmachineinstances"), name)
	}
	return f.vmi.DeepCopy(), nil
}

func (f *fakeInstances) Update(ctx context.Context, _ string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	_ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, err := objInfo.UpdatedObject(ctx, f.vmi)
	if err != nil {
		return nil, false, err
	}
	f.vmi = obj.(*kubevirtv1.VirtualMachineInstance)
	return f.vmi, false, nil
}

func (f *fakeInstances) Delete(_ context.Context, _ string, _ rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	f.deleted = append(f.deleted, *opts)
	return f.vmi, true, nil
}

type fakePods struct{ calls []string }

func (f *fakePods) DeleteLauncherPods(_ context.Context, ns string, uid types.UID, dryRun bool) error {
	f.calls = append(f.calls, ns+"/"+string(uid))
	return nil
}

func TestExecutorRetriesConflicts(t *testing.T) {
	vms := &fakeVMs{vm: vmWith(kubevirtv1.RunStrategyHalted), conflicts: 2}
	e := &Executor{VMs: vms, VMStatus: vms, Instances: &fakeInstances{}}
	err := e.Run(context.Background(), "ns", "vm", false, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return PlanStart(vm, vmi, &kubevirtv1.StartOptions{})
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if vms.gets != 3 || len(vms.updates) != 1 {
		t.Errorf("gets %d, updates %d; want 3 reads (two conflicts) and one write", vms.gets, len(vms.updates))
	}
	if got := *vms.vm.Spec.RunStrategy; got != kubevirtv1.RunStrategyAlways {
		t.Errorf("run strategy %s, want Always", got)
	}
}

// A paused start of a Halted VM writes the pending paused request first and the run strategy
// second: the VM controller must never see Always without it.
func TestExecutorPausedStartWritesTheRequestFirst(t *testing.T) {
	vms := &fakeVMs{vm: vmWith(kubevirtv1.RunStrategyHalted)}
	e := &Executor{VMs: vms, VMStatus: vms, Instances: &fakeInstances{}}
	err := e.Run(context.Background(), "ns", "vm", false, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return PlanStart(vm, vmi, &kubevirtv1.StartOptions{Paused: true})
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(vms.updates) != 2 {
		t.Fatalf("%d writes, want 2", len(vms.updates))
	}
	first, second := vms.updates[0], vms.updates[1]
	if len(first.Status.StateChangeRequests) != 1 || *first.Spec.RunStrategy != kubevirtv1.RunStrategyHalted {
		t.Errorf("first write: requests %v, run strategy %s; want the paused start while still Halted",
			first.Status.StateChangeRequests, *first.Spec.RunStrategy)
	}
	if *second.Spec.RunStrategy != kubevirtv1.RunStrategyAlways || len(second.Status.StateChangeRequests) != 1 {
		t.Errorf("second write: run strategy %s, requests %v; want Always with the request kept",
			*second.Spec.RunStrategy, second.Status.StateChangeRequests)
	}
}

func TestExecutorDecisionConflictIsNotRetried(t *testing.T) {
	vms := &fakeVMs{vm: vmWith(kubevirtv1.RunStrategyAlways)}
	e := &Executor{VMs: vms, VMStatus: vms, Instances: &fakeInstances{vmi: vmiIn(kubevirtv1.Running)}}
	err := e.Run(context.Background(), "ns", "vm", false, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return PlanStart(vm, vmi, &kubevirtv1.StartOptions{})
	})
	if !apierrors.IsConflict(err) || vms.gets != 1 {
		t.Errorf("err %v after %d reads; want one read and a conflict", err, vms.gets)
	}
}

func TestExecutorForceStop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pods     bool
		dryRun   bool
		wantCode int32
	}{
		{name: "without Kubernetes API", wantCode: 503},
		{name: "with Kubernetes API", pods: true},
		{name: "dry run", pods: true, dryRun: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vms := &fakeVMs{vm: vmWith(kubevirtv1.RunStrategyAlways)}
			vmis := &fakeInstances{vmi: vmiIn(kubevirtv1.Running)}
			pods := &fakePods{}
			e := &Executor{VMs: vms, VMStatus: vms, Instances: vmis}
			if tc.pods {
				e.Pods = pods
			}
			err := e.Run(context.Background(), "ns", "vm", tc.dryRun, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
				return PlanStop(vm, vmi, &kubevirtv1.StopOptions{GracePeriod: i64(0)})
			})
			if tc.wantCode != 0 {
				if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != tc.wantCode {
					t.Fatalf("err %v, want code %d", err, tc.wantCode)
				}
				if len(vms.updates) != 0 || len(vmis.deleted) != 0 {
					t.Errorf("refused request wrote: %d VM updates, %d deletions", len(vms.updates), len(vmis.deleted))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"ns/" + string(vmiUID)}, pods.calls); diff != "" {
				t.Errorf("pod deletions (-want +got):\n%s", diff)
			}
			if len(vmis.deleted) != 1 || *vmis.deleted[0].GracePeriodSeconds != 0 || *vmis.deleted[0].Preconditions.UID != vmiUID {
				t.Errorf("instance deletions %+v, want one with grace 0 and the uid precondition", vmis.deleted)
			}
			if got := vmis.vmi.Annotations[StopGracePeriodAnnotation]; got != "0" {
				t.Errorf("grace annotation %q, want 0", got)
			}
			if tc.dryRun != (len(vmis.deleted[0].DryRun) == 1) {
				t.Errorf("dry run not passed on: %+v", vmis.deleted[0])
			}
		})
	}
}

func TestKubePodDeleter(t *testing.T) {
	pod := func(name, uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{
			kubevirtv1.AppLabel: "virt-launcher", kubevirtv1.CreatedByLabel: uid}}}
	}
	client := fake.NewSimpleClientset(pod("mine-1", string(vmiUID)), pod("mine-2", string(vmiUID)), pod("other", "other-uid"))
	if err := (KubePodDeleter{Client: client}).DeleteLauncherPods(context.Background(), "ns", vmiUID, false); err != nil {
		t.Fatal(err)
	}
	left, err := client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range left.Items {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"other"}, names); diff != "" {
		t.Errorf("pods left (-want +got):\n%s", diff)
	}
}

func (f *fakeInstances) New() runtime.Object { return &kubevirtv1.VirtualMachineInstance{} }
