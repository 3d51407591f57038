package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// withDataVolumeRoot makes the demo VM boot from the DataVolume of a template named <vm>-root,
// imported from url, instead of its containerDisk.
func withDataVolumeRoot(vm *kubevirtv1.VirtualMachine, url string) string {
	dv := vm.Name + "-root"
	for i, v := range vm.Spec.Template.Spec.Volumes {
		if v.ContainerDisk != nil {
			vm.Spec.Template.Spec.Volumes[i].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: dv}}
		}
	}
	vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{{
		ObjectMeta: metav1.ObjectMeta{Name: dv},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: url}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(dvSize)}}},
		},
	}}
	return dv
}

// printableStatuses records every printableStatus a VM goes through, from a watch started
// before the VM exists and read all along by its own goroutine (a watch nobody reads stalls).
func printableStatuses(t *testing.T, e *ctrlEnv, name string) func() []kubevirtv1.VirtualMachinePrintableStatus {
	t.Helper()
	w, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seen []kubevirtv1.VirtualMachinePrintableStatus
	go func() {
		for ev := range w.ResultChan() {
			vm, ok := ev.Object.(*kubevirtv1.VirtualMachine)
			if !ok {
				continue
			}
			mu.Lock()
			if s := vm.Status.PrintableStatus; s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
				seen = append(seen, s)
			}
			mu.Unlock()
		}
	}()
	return func() []kubevirtv1.VirtualMachinePrintableStatus {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// TestVMDataVolumeTemplates: the demo VM with an HTTP dataVolumeTemplate (the demo disk as
// qcow2, served by the test on the pods' bridge) on the cluster's WaitForFirstConsumer class. Its
// DataVolume is created and owned by the VM; the VM shows Provisioning, then Running, and the
// guest boots from the imported disk to its shell prompt. A template whose URL answers 404 shows
// DataVolumeError with the event FailedDataVolumeImport. Deleting the VM collects its DataVolume
// and claim; an orphaning delete keeps them.
func TestVMDataVolumeTemplates(t *testing.T) {
	e := newCtrlEnv(t, "e2e-dvvm")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	e.gcObserved()
	disk, raw, _ := e.demoDisk()
	base := serveImages(t, disk, raw)

	statuses := printableStatuses(t, e, demoVM)
	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	dvName := withDataVolumeRoot(vm, base+"/demo.qcow2")
	start := time.Now()
	created, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dvs := e.kv.CdiV1beta1().DataVolumes(e.ns)
	var dv *cdiv1beta1.DataVolume
	e.wait("the DataVolume of the template", func() (bool, error) {
		dv, err = dvs.Get(ctx, dvName, metav1.GetOptions{})
		return err == nil, err
	})
	if ref := metav1.GetControllerOf(dv); ref == nil || ref.UID != created.UID {
		t.Errorf("DataVolume owner references %+v, want the VM as controller", dv.OwnerReferences)
	}

	vmi, pod := f.running(demoVM, "")
	t.Logf("VM Running %s after creation; launcher pod %s on %s", time.Since(start).Round(time.Second), pod.Name, vmi.Status.NodeName)
	s := f.cli.console(demoVM)
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		s.close()
		t.Fatalf("console of %s: no shell prompt from the imported disk:\n%s", demoVM, s.all())
	}
	s.close()
	t.Logf("guest booted from the imported disk %s after creation", time.Since(start).Round(time.Second))
	dv, _ = dvs.Get(ctx, dvName, metav1.GetOptions{})
	if dv.Status.Phase != cdiv1beta1.Succeeded {
		t.Errorf("DataVolume phase %s with the guest running, want Succeeded", dv.Status.Phase)
	}
	seen := statuses()
	t.Logf("printableStatus: %v", seen)
	p, r := slices.Index(seen, kubevirtv1.VirtualMachineStatusProvisioning), slices.Index(seen, kubevirtv1.VirtualMachineStatusRunning)
	if p < 0 || r < 0 || p > r {
		t.Errorf("printableStatus went %v, want Provisioning before Running", seen)
	}

	// A broken URL: the importer retries the 404; the VM shows DataVolumeError.
	broken := e.demoVM(kubevirtv1.RunStrategyAlways)
	broken.Name = "vm-broken"
	broken.Spec.Template.ObjectMeta.Labels = map[string]string{"kubevirt.io/vm": "vm-broken"}
	brokenDV := withDataVolumeRoot(broken, base+"/missing.qcow2")
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.printable("vm-broken", kubevirtv1.VirtualMachineStatusDataVolumeError)
	e.wait("the event FailedDataVolumeImport", func() (bool, error) {
		evs, err := e.kube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedDataVolumeImport"})
		if err != nil || len(evs.Items) == 0 {
			return false, err
		}
		t.Logf("event: %s %s: %s", evs.Items[0].Type, evs.Items[0].Reason, evs.Items[0].Message)
		return evs.Items[0].Message == "DataVolume "+brokenDV+" failed to import disk image", fmt.Errorf("message %q", evs.Items[0].Message)
	})

	// Deleting the VM collects its DataVolume and, through it, the claim.
	e.gcObserved()
	if err := e.kv.KubevirtV1().VirtualMachines(e.ns).Delete(ctx, demoVM, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.wait("the DataVolume and claim of the deleted VM to be collected", func() (bool, error) {
		_, dvErr := dvs.Get(ctx, dvName, metav1.GetOptions{})
		_, claimErr := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, dvName, metav1.GetOptions{})
		return apierrors.IsNotFound(dvErr) && apierrors.IsNotFound(claimErr), fmt.Errorf("DataVolume: %v, claim: %v", dvErr, claimErr)
	})

	// An orphaning delete keeps them.
	orphan := metav1.DeletePropagationOrphan
	if err := e.kv.KubevirtV1().VirtualMachines(e.ns).Delete(ctx, "vm-broken", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	e.wait("vm-broken to be gone", func() (bool, error) {
		_, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Get(ctx, "vm-broken", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	kept, err := dvs.Get(ctx, brokenDV, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("DataVolume after an orphaning delete of its VM: %v", err)
	}
	if ref := metav1.GetControllerOf(kept); ref != nil {
		t.Errorf("orphaned DataVolume still has a controller: %+v", ref)
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, brokenDV, metav1.GetOptions{}); err != nil {
		t.Errorf("claim after an orphaning delete: %v", err)
	}
}
