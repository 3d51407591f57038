package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// dataVolumesReady returns the instance's DataVolumesReady condition, or nil.
func dataVolumesReady(vmi *kubevirtv1.VirtualMachineInstance) *kubevirtv1.VirtualMachineInstanceCondition {
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == kubevirtv1.VirtualMachineInstanceDataVolumesReady {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}

// TestControllerVMIDataVolumes: a VMI of its own with a dataVolume volume waits, as in KubeVirt,
// without a launcher pod while its DataVolume imports, saying so in DataVolumesReady; once the
// import Succeeded its pod is created and the condition turns True.
func TestControllerVMIDataVolumes(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	if _, err := env.admin.CdiV1beta1().DataVolumes(ns).Create(ctx, &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "bare-root"},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/bare.qcow2"}},
			PVC: &corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Mi")}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi := &kubevirtv1.VirtualMachineInstance{}
	if err := yaml.Unmarshal([]byte(framework.VMIYAML("bare")), vmi); err != nil {
		t.Fatal(err)
	}
	for i, v := range vmi.Spec.Volumes {
		if v.ContainerDisk != nil {
			vmi.Spec.Volumes[i].VolumeSource = kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "bare-root"}}
		}
	}
	vmi, err := env.admin.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	env.eventually("DataVolumesReady False while importing", func() (bool, error) {
		got, err := env.vmi("bare")
		if err != nil {
			return false, err
		}
		c := dataVolumesReady(got)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == "NotAllDVsReady" &&
			c.Message == "Not all of the VMI's DVs are ready" && got.Status.Phase == kubevirtv1.Pending, fmt.Errorf("status %+v", got.Status)
	})
	list, err := env.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(vmi.UID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("a launcher pod while the DataVolume imports: %s", list.Items[0].Name)
	}

	env.finishImporter("bare-root", `{"result":{"format":"qcow2","sourceBytes":1048576,"seconds":1}}`)
	env.schedule(env.launcherPod(vmi.UID), "node1")
	env.eventually("DataVolumesReady True, Scheduled", func() (bool, error) {
		got, err := env.vmi("bare")
		if err != nil {
			return false, err
		}
		c := dataVolumesReady(got)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == "AllDVsReady" &&
			c.Message == "All of the VMI's DVs are bound and not running" && got.Status.Phase == kubevirtv1.Scheduled, fmt.Errorf("status %+v", got.Status)
	})
}
