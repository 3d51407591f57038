package vm

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	"github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
)

type fixture struct {
	t      *testing.T
	client *fake.Clientset
	// kube holds the ControllerRevisions of instance types and preferences.
	kube *kubefake.Clientset
	c    *Controller
	vms  func(obj any) error
	vmis func(obj any) error
	// vmiStore is the instance cache.
	vmiStore cache.Indexer
}

// newFixture builds the controller on a fake clientset holding objs, with informer caches filled
// by hand (no watch): the test decides what the cache shows.
func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	client := fake.NewSimpleClientset(objs...)
	factory := externalversions.NewSharedInformerFactory(client, 0)
	vmInf, vmiInf := factory.Kubevirt().V1().VirtualMachines(), factory.Kubevirt().V1().VirtualMachineInstances()
	kube := kubefake.NewSimpleClientset()
	c, err := New(kube, client, vmInf, vmiInf, record.NewFakeRecorder(100))
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return testNow }
	vmStore := vmInf.Informer().GetIndexer()
	f := &fixture{t: t, client: client, kube: kube, c: c,
		// Putting a VM into the cache is what the informer does before calling the handler.
		vms: func(obj any) error {
			if err := vmStore.Add(obj); err != nil {
				return err
			}
			c.vmChanged(obj)
			return nil
		},
		vmis:     vmiInf.Informer().GetIndexer().Add,
		vmiStore: vmiInf.Informer().GetIndexer()}
	for _, o := range objs {
		switch o := o.(type) {
		case *kubevirtv1.VirtualMachine:
			_ = f.vms(o)
		case *kubevirtv1.VirtualMachineInstance:
			_ = f.vmis(o)
		}
	}
	return f
}

// sync runs one sync and returns the API writes it made as "verb resource[/subresource]".
func (f *fixture) sync() []string {
	f.t.Helper()
	f.client.ClearActions()
	if _, err := f.c.sync(context.Background(), "default/vm-cirros"); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	var writes []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		w := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			w += "/" + a.GetSubresource()
		}
		writes = append(writes, w)
	}
	return writes
}

var (
	metaGet = metav1.GetOptions{}
	metaNow = metav1.NewTime(testNow)
)

func ptrStrategy(s kubevirtv1.VirtualMachineRunStrategy) *kubevirtv1.VirtualMachineRunStrategy {
	return &s
}

func withRV(vmi *kubevirtv1.VirtualMachineInstance, rv string) *kubevirtv1.VirtualMachineInstance {
	out := vmi.DeepCopy()
	out.ResourceVersion = rv
	return out
}

func deleteFromCache(f *fixture, vmi *kubevirtv1.VirtualMachineInstance) error {
	if err := f.vmiStore.Delete(vmi); err != nil {
		return err
	}
	f.c.vmiEvents.OnDelete(vmi)
	return nil
}

func (f *fixture) storedVM() *kubevirtv1.VirtualMachine {
	f.t.Helper()
	vm, err := f.client.KubevirtV1().VirtualMachines("default").Get(context.Background(), "vm-cirros", metaGet)
	if err != nil {
		f.t.Fatal(err)
	}
	return vm
}

func TestSyncStartCostsTwoWrites(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways))
	f := newFixture(t, vm)

	if diff := cmp.Diff([]string{"create virtualmachineinstances", "update virtualmachines/status"}, f.sync()); diff != "" {
		t.Errorf("first sync writes (-want +got):\n%s", diff)
	}
	stored := f.storedVM()
	if !stored.Status.Created || stored.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusStarting {
		t.Errorf("status after start = created %v %s, want created Starting", stored.Status.Created, stored.Status.PrintableStatus)
	}

	// The VM status update arrives before the new instance: the expectation holds the sync back,
	// and the key is looked at again should the instance's event never come.
	_ = f.vms(stored)
	if got := f.sync(); len(got) != 0 {
		t.Errorf("sync before the instance is observed wrote %v", got)
	}
	if res, err := f.c.sync(context.Background(), "default/vm-cirros"); err != nil || res.RequeueAfter != expectations.RecheckAfter {
		t.Errorf("held-back sync = %+v, %v; want a recheck after %s", res, err, expectations.RecheckAfter)
	}

	// The instance shows up and moves through its early phases: no further VM write.
	vmi, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vm-cirros", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.vmis(vmi)
	f.c.vmiEvents.OnAdd(vmi, false)
	for _, phase := range []kubevirtv1.VirtualMachineInstancePhase{"", kubevirtv1.Scheduling, kubevirtv1.Scheduled} {
		v := vmi.DeepCopy()
		v.Status.Phase = phase
		_ = f.vmis(v)
		if got := f.sync(); len(got) != 0 {
			t.Errorf("phase %q: sync wrote %v", phase, got)
		}
	}
}

func TestSyncStopAndFencing(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyHalted))
	vm.Status.Created = true
	vmi := newVMI(kubevirtv1.Running)
	f := newFixture(t, vm, vmi)
	if diff := cmp.Diff([]string{"delete virtualmachineinstances", "update virtualmachines/status"}, f.sync()); diff != "" {
		t.Errorf("stop writes (-want +got):\n%s", diff)
	}
	if got := f.storedVM().Status.PrintableStatus; got != kubevirtv1.VirtualMachineStatusStopping {
		t.Errorf("printableStatus = %s, want Stopping", got)
	}

	// Start again while the old instance still terminates: nothing is created.
	started := f.storedVM()
	started.Spec.RunStrategy = ptrStrategy(kubevirtv1.RunStrategyAlways)
	_ = f.vms(started)
	terminating := vmi.DeepCopy()
	terminating.DeletionTimestamp = &metaNow
	_ = f.vmis(terminating)
	f.c.vmiEvents.OnUpdate(vmi, withRV(terminating, "21"))
	for _, w := range f.sync() {
		if w == "create virtualmachineinstances" {
			t.Fatal("created an instance while the old one terminates")
		}
	}
	// Once it is gone (and the cache caught up with the status write), the new instance is created.
	_ = f.vms(f.storedVM())
	if err := deleteFromCache(f, terminating); err != nil {
		t.Fatal(err)
	}
	got := f.sync()
	if len(got) == 0 || got[0] != "create virtualmachineinstances" {
		t.Errorf("after the old instance left, writes = %v, want a create first", got)
	}
}

func TestSyncAdoptsOrphan(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways))
	vmi := newVMI(kubevirtv1.Running, orphan())
	f := newFixture(t, vm, vmi)
	got := f.sync()
	if len(got) == 0 || got[0] != "patch virtualmachineinstances" {
		t.Fatalf("writes = %v, want the adoption patch first", got)
	}
	for _, w := range got {
		if w == "create virtualmachineinstances" {
			t.Error("created an instance next to the orphan")
		}
	}
	adopted, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vm-cirros", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	if len(adopted.OwnerReferences) != 1 || adopted.OwnerReferences[0].UID != vm.UID {
		t.Errorf("owner references after adoption: %+v", adopted.OwnerReferences)
	}
}

func TestSyncCrashLoopRequeues(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyAlways))
	vm.Status.StartFailure = failure(2, "vmi-0", 30*time.Second)
	f := newFixture(t, vm)
	res, err := f.c.sync(context.Background(), "default/vm-cirros")
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 30*time.Second {
		t.Errorf("requeueAfter = %s, want 30s", res.RequeueAfter)
	}
	if got := f.storedVM().Status.PrintableStatus; got != kubevirtv1.VirtualMachineStatusCrashLoopBackOff {
		t.Errorf("printableStatus = %s, want CrashLoopBackOff", got)
	}
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "create" {
			t.Error("created an instance during the back-off")
		}
	}
}

func TestSyncManualRequests(t *testing.T) {
	vm := newVM(strategy(kubevirtv1.RunStrategyManual), requests(start()))
	f := newFixture(t, vm)
	if diff := cmp.Diff([]string{"create virtualmachineinstances", "update virtualmachines/status"}, f.sync()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if got := f.storedVM().Status.StateChangeRequests; len(got) != 0 {
		t.Errorf("requests after acting: %v, want none", got)
	}
}
