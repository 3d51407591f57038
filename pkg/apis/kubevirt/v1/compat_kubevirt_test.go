package v1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// kubeVirtVM is a realistic VirtualMachine written with KubeVirt's own Go
// types: the kind of object KubeVirt's client or virtctl sends.
func kubeVirtVM() *kubevirtv1.VirtualMachine {
	runStrategy := kubevirtv1.RunStrategyRerunOnFailure
	bootOrder := uint(1)
	grace := int64(10)
	eviction := kubevirtv1.EvictionStrategyLiveMigrate
	yes := true
	uid := types.UID("6a1f6bd0-3f3c-4c33-8d9f-1b3d2f0c7a11")
	stamp := metav1.NewTime(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC))
	return &kubevirtv1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "vms", Labels: map[string]string{"kubevirt.io/vm": "fedora"}},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: &runStrategy,
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": "fedora"}},
				Spec: kubevirtv1.VirtualMachineInstanceSpec{
					EvictionStrategy:              &eviction,
					TerminationGracePeriodSeconds: &grace,
					NodeSelector:                  map[string]string{"kubernetes.io/arch": "amd64"},
					Tolerations:                   []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
					Domain: kubevirtv1.DomainSpec{
						CPU:     &kubevirtv1.CPU{Cores: 2, Sockets: 1, Threads: 1, Model: "host-model"},
						Memory:  &kubevirtv1.Memory{Guest: resource.NewQuantity(2<<30, resource.BinarySI)},
						Machine: &kubevirtv1.Machine{Type: "q35"},
						Resources: kubevirtv1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
						},
						Firmware: &kubevirtv1.Firmware{
							Bootloader: &kubevirtv1.Bootloader{EFI: &kubevirtv1.EFI{SecureBoot: &yes}},
						},
						Features: &kubevirtv1.Features{SMM: &kubevirtv1.FeatureState{Enabled: &yes}},
						Devices: kubevirtv1.Devices{
							Disks: []kubevirtv1.Disk{
								{Name: "root", BootOrder: &bootOrder, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}},
								{Name: "cloudinit", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{Bus: kubevirtv1.DiskBusSATA}}},
							},
							Interfaces: []kubevirtv1.Interface{{
								Name:                   "default",
								InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}},
								Ports:                  []kubevirtv1.Port{{Name: "ssh", Port: 22}},
							}},
							Rng: &kubevirtv1.Rng{},
						},
					},
					Networks: []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
					Volumes: []kubevirtv1.Volume{
						{Name: "root", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "quay.io/containerdisks/fedora:41"}}},
						{Name: "cloudinit", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: "#cloud-config\npassword: fedora\n"}}},
					},
				},
			},
		},
		Status: kubevirtv1.VirtualMachineStatus{
			Created:         true,
			Ready:           true,
			PrintableStatus: kubevirtv1.VirtualMachineStatusRunning,
			Conditions: []kubevirtv1.VirtualMachineCondition{{
				Type: kubevirtv1.VirtualMachineReady, Status: corev1.ConditionTrue, LastTransitionTime: stamp,
			}},
			StateChangeRequests: []kubevirtv1.VirtualMachineStateChangeRequest{{Action: kubevirtv1.StopRequest, UID: &uid}},
			ObservedGeneration:  2,
			DesiredGeneration:   2,
			RunStrategy:         runStrategy,
		},
	}
}
