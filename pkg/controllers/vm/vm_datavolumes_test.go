package vm

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
)

// dvFixture is a fixture whose controller follows DataVolumes and claims from hand-filled caches.
type dvFixture struct {
	*fixture
	dvs, claims cache.Indexer
	recorder    *record.FakeRecorder
}

func newDVFixture(t *testing.T, vm *kubevirtv1.VirtualMachine) *dvFixture {
	t.Helper()
	f := newFixture(t, vm)
	dvInf := externalversions.NewSharedInformerFactory(f.client, 0).Cdi().V1beta1().DataVolumes()
	claimInf := kubeinformers.NewSharedInformerFactory(f.kube, 0).Core().V1().PersistentVolumeClaims()
	recorder := record.NewFakeRecorder(100)
	if err := f.c.UseDataVolumes(f.client, dvInf, claimInf.Lister(), recorder); err != nil {
		t.Fatal(err)
	}
	return &dvFixture{fixture: f, dvs: dvInf.Informer().GetIndexer(), claims: claimInf.Informer().GetIndexer(), recorder: recorder}
}

// withTemplate gives the VM a dataVolumeTemplate "root" used by its volume "root".
func withTemplate() vmOpt {
	return func(vm *kubevirtv1.VirtualMachine) {
		vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{{
			ObjectMeta: metav1.ObjectMeta{Name: "root", Labels: map[string]string{"app": "db"}},
			Spec: cdiv1beta1.DataVolumeSpec{
				Source:  &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/disk.qcow2"}},
				Storage: &cdiv1beta1.StorageSpec{},
			},
		}}
		vm.Spec.Template.Spec.Volumes = []kubevirtv1.Volume{{Name: "root",
			VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "root"}}}}
	}
}

func ownedDV(phase cdiv1beta1.DataVolumePhase, conds ...cdiv1beta1.DataVolumeCondition) *cdiv1beta1.DataVolume {
	dv := newDataVolume(newVM(withTemplate()), &newVM(withTemplate()).Spec.DataVolumeTemplates[0],
		metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-cirros", UID: "vm-uid", Controller: new(true)})
	dv.Status.Phase, dv.Status.Conditions = phase, conds
	return dv
}

func claimIn(phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "default"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
}

func (f *dvFixture) printable() kubevirtv1.VirtualMachinePrintableStatus {
	vm := f.storedVM()
	_ = f.vms(vm)
	return vm.Status.PrintableStatus
}

// A halted VM gets the DataVolume of its template, owned by it, and shows Provisioning.
func TestSyncCreatesDataVolumeWhileHalted(t *testing.T) {
	f := newDVFixture(t, newVM(strategy(kubevirtv1.RunStrategyHalted), withTemplate()))
	if d := cmp.Diff([]string{"create datavolumes", "update virtualmachines/status"}, f.sync()); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	dv, err := f.client.CdiV1beta1().DataVolumes("default").Get(context.Background(), "root", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(dv)
	if ref == nil || ref.UID != "vm-uid" || ref.Kind != "VirtualMachine" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner references %+v, want the VM as controller blocking its deletion", dv.OwnerReferences)
	}
	if dv.Labels["app"] != "db" || dv.Annotations["cdi.kubevirt.io/allowClaimAdoption"] != "true" || dv.Spec.Source.HTTP.URL != "http://images.example/disk.qcow2" {
		t.Errorf("DataVolume %+v does not follow the template", dv)
	}
	if got := f.printable(); got != kubevirtv1.VirtualMachineStatusProvisioning {
		t.Errorf("printableStatus %s, want Provisioning", got)
	}
	if evs := drain(f.recorder); !strings.Contains(evs, "SuccessfulDataVolumeCreate") {
		t.Errorf("events %q, want SuccessfulDataVolumeCreate", evs)
	}
}

// The instance starts once the DataVolume Succeeded; a pending import keeps it back.
func TestSyncStartsOnlyOnUsableDataVolumes(t *testing.T) {
	f := newDVFixture(t, newVM(strategy(kubevirtv1.RunStrategyAlways), withTemplate()))
	_ = f.dvs.Add(ownedDV(cdiv1beta1.ImportInProgress))
	_ = f.claims.Add(claimIn(corev1.ClaimBound))
	if d := cmp.Diff([]string{"update virtualmachines/status"}, f.sync()); d != "" {
		t.Errorf("writes while importing (-want +got):\n%s", d)
	}
	if got := f.printable(); got != kubevirtv1.VirtualMachineStatusProvisioning {
		t.Errorf("printableStatus %s, want Provisioning", got)
	}
	_ = f.dvs.Update(ownedDV(cdiv1beta1.Succeeded))
	if d := cmp.Diff([]string{"create virtualmachineinstances", "update virtualmachines/status"}, f.sync()); d != "" {
		t.Errorf("writes once Succeeded (-want +got):\n%s", d)
	}
	if got := f.printable(); got != kubevirtv1.VirtualMachineStatusStarting {
		t.Errorf("printableStatus %s, want Starting", got)
	}
}

// A WaitForFirstConsumer DataVolume lets the instance start (its pod is the first consumer);
// meanwhile the VM waits for the claim's binding.
func TestSyncStartsOnWaitForFirstConsumer(t *testing.T) {
	f := newDVFixture(t, newVM(strategy(kubevirtv1.RunStrategyAlways), withTemplate()))
	_ = f.dvs.Add(ownedDV(cdiv1beta1.WaitForFirstConsumer))
	_ = f.claims.Add(claimIn(corev1.ClaimPending))
	if d := cmp.Diff([]string{"create virtualmachineinstances", "update virtualmachines/status"}, f.sync()); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	if got := f.printable(); got != kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding {
		t.Errorf("printableStatus %s, want WaitingForVolumeBinding", got)
	}
}

// A failed DataVolume: DataVolumeError with KubeVirt's event, and no start.
func TestSyncDataVolumeError(t *testing.T) {
	for name, dv := range map[string]*cdiv1beta1.DataVolume{
		"Failed": ownedDV(cdiv1beta1.Failed),
		"Running condition Error": ownedDV(cdiv1beta1.ImportInProgress, cdiv1beta1.DataVolumeCondition{
			Type: cdiv1beta1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "Error"}),
		"retrying importer": ownedDV(cdiv1beta1.ImportInProgress, cdiv1beta1.DataVolumeCondition{
			Type: cdiv1beta1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "CrashLoopBackOff"}),
	} {
		t.Run(name, func(t *testing.T) {
			f := newDVFixture(t, newVM(strategy(kubevirtv1.RunStrategyAlways), withTemplate()))
			_ = f.dvs.Add(dv)
			if d := cmp.Diff([]string{"update virtualmachines/status"}, f.sync()); d != "" {
				t.Errorf("writes (-want +got):\n%s", d)
			}
			if got := f.printable(); got != kubevirtv1.VirtualMachineStatusDataVolumeError {
				t.Errorf("printableStatus %s, want DataVolumeError", got)
			}
			if evs := drain(f.recorder); !strings.Contains(evs, "Warning FailedDataVolumeImport DataVolume root failed to import disk image") {
				t.Errorf("events %q, want FailedDataVolumeImport", evs)
			}
			// The event is not repeated while the error stays.
			f.sync()
			if evs := drain(f.recorder); strings.Contains(evs, "FailedDataVolumeImport") {
				t.Errorf("repeated events %q", evs)
			}
		})
	}
}

// A DataVolume of the template's name without a controller is adopted; one controlled by
// something else is left alone.
func TestSyncAdoptsDataVolume(t *testing.T) {
	f := newDVFixture(t, newVM(strategy(kubevirtv1.RunStrategyHalted), withTemplate()))
	dv := ownedDV(cdiv1beta1.Succeeded)
	dv.OwnerReferences = nil
	if _, err := f.client.CdiV1beta1().DataVolumes("default").Create(context.Background(), dv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = f.dvs.Add(dv)
	if d := cmp.Diff([]string{"patch datavolumes", "update virtualmachines/status"}, f.sync()); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	got, _ := f.client.CdiV1beta1().DataVolumes("default").Get(context.Background(), "root", metaGet)
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != "vm-uid" {
		t.Errorf("owner references %+v, want the VM", got.OwnerReferences)
	}

	foreign := ownedDV(cdiv1beta1.Succeeded)
	foreign.OwnerReferences[0].UID = "other"
	_ = f.dvs.Update(foreign)
	_ = f.vms(f.storedVM())
	if writes := f.sync(); len(writes) != 0 {
		t.Errorf("writes %v for a DataVolume controlled by another object", writes)
	}
}

func TestWithVolumes(t *testing.T) {
	always, halted := kubevirtv1.RunStrategyAlways, kubevirtv1.RunStrategyHalted
	pending := newVMI(kubevirtv1.Pending)
	cases := []struct {
		name     string
		base     kubevirtv1.VirtualMachinePrintableStatus
		vmi      *kubevirtv1.VirtualMachineInstance
		strategy kubevirtv1.VirtualMachineRunStrategy
		vols     volumeState
		want     kubevirtv1.VirtualMachinePrintableStatus
	}{
		{"nothing to say", kubevirtv1.VirtualMachineStatusStopped, nil, halted, volumeState{ready: true}, kubevirtv1.VirtualMachineStatusStopped},
		{"halted provisioning", kubevirtv1.VirtualMachineStatusStopped, nil, halted, volumeState{provisioning: true}, kubevirtv1.VirtualMachineStatusProvisioning},
		{"running wins", kubevirtv1.VirtualMachineStatusRunning, newVMI(kubevirtv1.Running), always, volumeState{failed: []string{"a"}}, kubevirtv1.VirtualMachineStatusRunning},
		{"error before provisioning", kubevirtv1.VirtualMachineStatusStopped, nil, always, volumeState{failed: []string{"a"}, provisioning: true}, kubevirtv1.VirtualMachineStatusDataVolumeError},
		{"missing claim of an instance", kubevirtv1.VirtualMachineStatusStarting, pending, always, volumeState{missing: true, failed: []string{"a"}}, kubevirtv1.VirtualMachineStatusPvcNotFound},
		{"missing claim without instance", kubevirtv1.VirtualMachineStatusStopped, nil, halted, volumeState{missing: true}, kubevirtv1.VirtualMachineStatusStopped},
		{"unschedulable before provisioning", kubevirtv1.VirtualMachineStatusUnschedulable, pending, always, volumeState{provisioning: true}, kubevirtv1.VirtualMachineStatusUnschedulable},
		{"unbound, set to start", kubevirtv1.VirtualMachineStatusStopped, nil, always, volumeState{unbound: true}, kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding},
		{"unbound, halted", kubevirtv1.VirtualMachineStatusStopped, nil, halted, volumeState{unbound: true}, kubevirtv1.VirtualMachineStatusStopped},
		{"unbound, starting", kubevirtv1.VirtualMachineStatusStarting, pending, always, volumeState{unbound: true}, kubevirtv1.VirtualMachineStatusWaitingForVolumeBinding},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := withVolumes(c.base, newVM(strategy(c.strategy)), c.vmi, c.strategy, &c.vols); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// drain returns the events recorded so far, one a line.
func drain(r *record.FakeRecorder) string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}
