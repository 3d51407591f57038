/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestLiveMigrationSharedDataVolume migrates a guest whose disk is a DataVolume on a
// ReadWriteMany claim (a blank DataVolume, spec.pvc naming a shared volume): the instance has
// DataVolumesReady=True and is LiveMigratable, the migration Succeeds on the other node, and
// what the guest wrote before is on the volume, which the target pod mounts in place.
func TestLiveMigrationSharedDataVolume(t *testing.T) {
	requireNodes(t, 2)
	e := newCtrlEnv(t, "e2e-dvrwx")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	hostDir, pvName := e.hostPathPV("shared-dv", corev1.ReadWriteMany)
	image := filepath.Join(hostDir, "disk.img")

	dvs := e.kv.CdiV1beta1().DataVolumes(e.ns)
	dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "shared-dv"}, Spec: cdiv1beta1.DataVolumeSpec{
		Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
		PVC: &corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: ptrTo(manualClass),
			VolumeName:       pvName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *resource.NewQuantity(pvcSize, resource.BinarySI)}},
		},
	}}
	if _, err := dvs.Create(ctx, dv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPhase(e, dvs, "shared-dv", cdiv1beta1.Succeeded)
	if _, err := os.Stat(image); err != nil {
		t.Fatalf("the blank DataVolume's disk.img on the shared volume: %v", err)
	}

	vm := e.migratingVM()
	tmpl := &vm.Spec.Template.Spec
	tmpl.Domain.Devices.Disks = append(tmpl.Domain.Devices.Disks, kubevirtv1.Disk{Name: "data", Serial: "nvdata",
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}})
	tmpl.Volumes = append(tmpl.Volumes, kubevirtv1.Volume{Name: "data", VolumeSource: kubevirtv1.VolumeSource{
		DataVolume: &kubevirtv1.DataVolumeSource{Name: "shared-dv"}}})
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, source := f.running(demoVM, "")
	f.waitFor("DataVolumesReady=True and LiveMigratable=True", controllerTimeout, func() (bool, error) {
		ready, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceDataVolumesReady)
		if err != nil {
			return false, err
		}
		migratable, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceIsMigratable)
		return ready == corev1.ConditionTrue && migratable == corev1.ConditionTrue,
			fmt.Errorf("DataVolumesReady %q, LiveMigratable %q (%v)", ready, migratable, err)
	})

	before := fmt.Sprintf("nv-dvrwx-%d", rand.IntN(1<<30))
	f.writeClaimDisk(before, 0)
	f.fileHas(image, before)

	v := f.migrateWithClaim(vmi, source, "the DataVolume's claim")
	f.fileHas(image, before)
	t.Logf("guest on DataVolume %s (ReadWriteMany) moved %s → %s; %q on the shared disk", dv.Name, source.Spec.NodeName, v.Status.NodeName, before)
}
