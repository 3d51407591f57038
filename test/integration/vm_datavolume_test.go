package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// createDataVolumeVM creates a halted VM whose disk "containerdisk" is the DataVolume of its
// template <name>-root (an http import into a 100Mi spec.pvc claim, which the DataVolume
// controller populates without waiting for a consumer).
func (e *controllerEnv) createDataVolumeVM(name string) *kubevirtv1.VirtualMachine {
	e.t.Helper()
	vm := &kubevirtv1.VirtualMachine{}
	if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), vm); err != nil {
		e.t.Fatal(err)
	}
	dv := name + "-root"
	for i, v := range vm.Spec.Template.Spec.Volumes {
		if v.ContainerDisk != nil {
			vm.Spec.Template.Spec.Volumes[i].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: dv}}
		}
	}
	vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{{
		ObjectMeta: metav1.ObjectMeta{Name: dv},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/" + name + ".qcow2"}},
			PVC: &corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Mi")}}},
		},
	}}
	created, err := e.admin.KubevirtV1().VirtualMachines(ns).Create(context.Background(), vm, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// finishImporter ends the importer pod of a DataVolume as the kubelet would report it, with the
// importer's termination message.
func (e *controllerEnv) finishImporter(dv, message string) {
	e.t.Helper()
	ctx := context.Background()
	var pod *corev1.Pod
	e.eventually("the importer pod of "+dv, func() (bool, error) {
		var err error
		pod, err = e.kube.CoreV1().Pods(ns).Get(ctx, "importer-"+dv, metav1.GetOptions{})
		return err == nil, err
	})
	pod = pod.DeepCopy()
	pod.Spec.NodeName = "node1"
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: message}}}}
	if err := e.kube.Tracker().Update(podsGVR, pod, ns); err != nil {
		e.t.Fatal(err)
	}
}

// TestControllerVMDataVolumes runs all controllers in-process: a halted VM's dataVolumeTemplate
// becomes a DataVolume owned by the VM and the VM shows Provisioning; set to run, the VM starts
// no instance before the import Succeeded; then its launcher pod uses the DataVolume's claim. A
// failed import shows DataVolumeError with the event FailedDataVolumeImport.
func TestControllerVMDataVolumes(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()

	vm := env.createDataVolumeVM("dvvm")
	var dv *cdiv1beta1.DataVolume
	env.eventually("the DataVolume of the template", func() (bool, error) {
		var err error
		dv, err = env.admin.CdiV1beta1().DataVolumes(ns).Get(ctx, "dvvm-root", metav1.GetOptions{})
		return err == nil, err
	})
	ref := metav1.GetControllerOf(dv)
	if ref == nil || ref.UID != vm.UID || ref.Kind != "VirtualMachine" || ref.APIVersion != "kubevirt.io/v1" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("DataVolume owner references %+v, want the VM as controller", dv.OwnerReferences)
	}
	if dv.Spec.Source.HTTP.URL != "http://images.example/dvvm.qcow2" {
		t.Errorf("DataVolume spec %+v does not follow the template", dv.Spec)
	}
	env.printable("dvvm", kubevirtv1.VirtualMachineStatusProvisioning)

	// Set to run while the import goes on: no instance.
	env.setStrategy("dvvm", kubevirtv1.RunStrategyAlways)
	env.eventually("the VM's status to take the run strategy", func() (bool, error) {
		return env.vm("dvvm").Status.RunStrategy == kubevirtv1.RunStrategyAlways, nil
	})
	if _, err := env.vmi("dvvm"); !apierrors.IsNotFound(err) {
		t.Fatalf("instance while the DataVolume is provisioned: %v", err)
	}
	if got := env.vm("dvvm").Status.PrintableStatus; got != kubevirtv1.VirtualMachineStatusProvisioning {
		t.Errorf("printableStatus %s while importing, want Provisioning", got)
	}

	// The import succeeds and the claim is bound: the instance starts on the claim.
	var claim *corev1.PersistentVolumeClaim
	var err error
	env.eventually("the DataVolume's claim", func() (bool, error) {
		claim, err = env.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "dvvm-root", metav1.GetOptions{})
		return err == nil, err
	})
	claim = claim.DeepCopy()
	claim.Status.Phase = corev1.ClaimBound
	if err := env.kube.Tracker().Update(claimsGVR, claim, ns); err != nil {
		t.Fatal(err)
	}
	env.finishImporter("dvvm-root", `{"result":{"format":"qcow2","sourceBytes":1048576,"seconds":1}}`)
	var vmi *kubevirtv1.VirtualMachineInstance
	env.eventually("the instance", func() (bool, error) {
		vmi, err = env.vmi("dvvm")
		return err == nil, err
	})
	pod := env.launcherPod(vmi.UID)
	found := false
	for _, v := range pod.Spec.Volumes {
		if v.Name == "containerdisk" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "dvvm-root" {
			found = true
		}
	}
	if !found {
		t.Errorf("launcher pod volumes %+v, want containerdisk on the claim dvvm-root", pod.Spec.Volumes)
	}
	if args := strings.Join(pod.Spec.Containers[0].Command, " "); !strings.Contains(args, "--await-file /var/run/nativevirt-pvcs/containerdisk/disk.img") {
		t.Errorf("launcher command %q does not await the imported disk", args)
	}

	// A failed import.
	env.createDataVolumeVM("broken")
	env.printable("broken", kubevirtv1.VirtualMachineStatusProvisioning)
	env.finishImporter("broken-root", `{"permanentError":"the source is text, not a disk image (raw, qcow2 or iso)"}`)
	env.printable("broken", kubevirtv1.VirtualMachineStatusDataVolumeError)
	env.eventually("the event FailedDataVolumeImport", func() (bool, error) {
		events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "FailedDataVolumeImport" && e.InvolvedObject.Name == "broken" &&
				e.Message == "DataVolume broken-root failed to import disk image" {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events", len(events.Items))
	})
}

// TestVMDataVolumeTemplateValidation: the API server's answers to bad templates.
func TestVMDataVolumeTemplateValidation(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.Clientset(t)
	base := func() *kubevirtv1.VirtualMachine {
		vm := &kubevirtv1.VirtualMachine{}
		if err := yaml.Unmarshal([]byte(framework.VMYAML("bad")), vm); err != nil {
			t.Fatal(err)
		}
		return vm
	}
	tmpl := func(name string) kubevirtv1.DataVolumeTemplateSpec {
		return kubevirtv1.DataVolumeTemplateSpec{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cdiv1beta1.DataVolumeSpec{
			Source:  &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}}
	}
	cases := []struct {
		name   string
		mutate func(vm *kubevirtv1.VirtualMachine)
		want   string
	}{
		{"unreferenced template", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{tmpl("spare")}
		}, "must be referenced in the VMI template's 'volumes' list"},
		{"s3 source", func(vm *kubevirtv1.VirtualMachine) {
			t := tmpl("disk")
			t.Spec.Source = &cdiv1beta1.DataVolumeSource{S3: &cdiv1beta1.DataVolumeSourceS3{URL: "s3://b/k"}}
			vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{t}
			vm.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "disk"}}
		}, "spec.dataVolumeTemplates[0].spec.source.s3"},
		{"hotpluggable without a hotplug disk", func(vm *kubevirtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "disk", Hotpluggable: true}}
			vm.Spec.Template.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: vm.Spec.Template.Spec.Volumes[0].Name,
				DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusSATA}}}}
		}, "requires bus to be 'scsi' or 'virtio'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := base()
			c.mutate(vm)
			_, err := client.KubevirtV1().VirtualMachines(ns).Create(context.Background(), vm, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("create: %v, want 422 mentioning %q", err, c.want)
			}
		})
	}
	// A valid one is stored as given (CDI's spec round-trips).
	vm := base()
	vm.Spec.DataVolumeTemplates = []kubevirtv1.DataVolumeTemplateSpec{tmpl("disk")}
	vm.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "disk"}}
	got, err := client.KubevirtV1().VirtualMachines(ns).Create(context.Background(), vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.DataVolumeTemplates[0].Spec.Source.Blank == nil || got.Spec.DataVolumeTemplates[0].Spec.Storage == nil {
		t.Errorf("stored templates %+v", got.Spec.DataVolumeTemplates)
	}
}
