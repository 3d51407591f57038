package launcherpod

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testVMI is a realistic instance: a container disk, cloud-init, scheduling hints.
func testVMI() *kubevirtv1.VirtualMachineInstance {
	guest := resource.MustParse("1Gi")
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name: "vm-cirros", Namespace: "default", UID: "11111111-2222-3333-4444-555555555555",
			Labels: map[string]string{"kubevirt.io/vm": "vm-cirros", kubevirtv1.NodeNameLabel: "stale"},
		},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{
			Domain: kubevirtv1.DomainSpec{
				Memory: &kubevirtv1.Memory{Guest: &guest},
				Resources: kubevirtv1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
				},
				Devices: kubevirtv1.Devices{Interfaces: []kubevirtv1.Interface{{Name: "default",
					InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}},
					Ports:                  []kubevirtv1.Port{{Name: "http", Port: 80}, {Port: 53, Protocol: "UDP"}}}}},
			},
			// The kubelet runs them against the pod IP; a named port is one the interface declares.
			ReadinessProbe: &kubevirtv1.Probe{Handler: kubevirtv1.Handler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
			LivenessProbe: &kubevirtv1.Probe{Handler: kubevirtv1.Handler{TCPSocket: &corev1.TCPSocketAction{
				Port: intstr.FromInt32(80)}}, InitialDelaySeconds: 120, FailureThreshold: 6},
			Networks:                      []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
			NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:                   []corev1.Toleration{{Key: "example.com/vms", Operator: corev1.TolerationOpExists}},
			PriorityClassName:             "vm-high",
			SchedulerName:                 "my-scheduler",
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
				}}},
			}},
			Volumes: []kubevirtv1.Volume{
				{Name: "containerdisk", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
					Image: "kubevirt/cirros-container-disk-demo:latest", ImagePullPolicy: corev1.PullIfNotPresent}}},
				{Name: "cloudinitdisk", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
					UserData: "#cloud-config\n"}}},
			},
		},
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "emulation", cfg: Config{LauncherImage: "localhost/nativevirt-launcher:dev", UseEmulation: true}},
		{name: "kvm", cfg: Config{LauncherImage: "registry.example/launcher:v1", LauncherPullPolicy: corev1.PullAlways}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, err := Render(testVMI(), tc.cfg)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got, err := yaml.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "pod-"+tc.name+".yaml")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("pod differs from %s (-want +got):\n%s", file, diff)
			}
		})
	}
}

func TestRenderContract(t *testing.T) {
	vmi := testVMI()
	pod, err := Render(vmi, Config{UseEmulation: true})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"generateName", pod.GenerateName, "virt-launcher-vm-cirros-"},
		{"name unset", pod.Name, ""},
		{"namespace", pod.Namespace, "default"},
		{"labels", pod.Labels, map[string]string{
			"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": string(vmi.UID),
			"vm.kubevirt.io/name": "vm-cirros", "kubevirt.io/vm": "vm-cirros"}},
		{"annotations", pod.Annotations, map[string]string{"kubevirt.io/domain": "vm-cirros",
			"kubectl.kubernetes.io/default-container": "compute"}},
		{"owner", pod.OwnerReferences, []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance",
			Name: "vm-cirros", UID: vmi.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		{"nodeSelector", pod.Spec.NodeSelector, map[string]string{"kubernetes.io/os": "linux", "kubevirt.io/schedulable": "true"}},
		{"tolerations", pod.Spec.Tolerations, vmi.Spec.Tolerations},
		{"affinity", pod.Spec.Affinity, vmi.Spec.Affinity},
		{"priorityClassName", pod.Spec.PriorityClassName, "vm-high"},
		{"schedulerName", pod.Spec.SchedulerName, "my-scheduler"},
		{"grace", *pod.Spec.TerminationGracePeriodSeconds, int64(15)},
		{"restartPolicy", pod.Spec.RestartPolicy, corev1.RestartPolicyNever},
		{"no service account token", *pod.Spec.AutomountServiceAccountToken, false},
		{"image", pod.Spec.Containers[0].Image, DefaultLauncherImage},
		{"command", pod.Spec.Containers[0].Command, []string{"/usr/bin/nativevirt-launcher", "--namespace", "default",
			"--name", "vm-cirros", "--uid", string(vmi.UID), "--grace-period-seconds", "0",
			"--hold-lock", "/var/run/nativevirt-bin/launcher.lock",
			"--await-file", "/var/run/nativevirt-disks/containerdisk/disk.img"}},
		{"mounts", pod.Spec.Containers[0].VolumeMounts, []corev1.VolumeMount{
			{Name: "private", MountPath: "/var/run/nativevirt"}, {Name: "disks", MountPath: "/var/run/nativevirt-disks"},
			{Name: "bin", MountPath: "/var/run/nativevirt-bin"}}},
		{"postStart", pod.Spec.Containers[0].Lifecycle.PostStart.Exec.Command, []string{"/usr/bin/nativevirt-copy-disk",
			"--install", "/var/run/nativevirt-bin/nativevirt-copy-disk", "--await-lock", "/var/run/nativevirt-bin/launcher.lock"}},
		{"no init containers", len(pod.Spec.InitContainers), 0},
		{"containers", containerNames(pod.Spec.Containers), []string{"compute", "container-disk-containerdisk"}},
		{"copy command", pod.Spec.Containers[1].Command, []string{"/var/run/nativevirt-bin/nativevirt-copy-disk",
			"--source", "/disk", "--dest", "/var/run/nativevirt-disks/containerdisk/disk.img",
			"--hold", "/var/run/nativevirt-bin/launcher.lock"}},
		{"copy image", pod.Spec.Containers[1].Image, "kubevirt/cirros-container-disk-demo:latest"},
		{"copy pull policy", pod.Spec.Containers[1].ImagePullPolicy, corev1.PullIfNotPresent},
		{"copy mounts", pod.Spec.Containers[1].VolumeMounts, []corev1.VolumeMount{
			{Name: "bin", MountPath: "/var/run/nativevirt-bin", ReadOnly: true},
			{Name: "disks", MountPath: "/var/run/nativevirt-disks"}}},
		{"volumes", volumeNames(pod.Spec.Volumes), []string{"private", "disks", "bin"}},
		{"hostname", pod.Spec.Hostname, "vm-cirros"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestRenderGracePeriod(t *testing.T) {
	tests := []struct {
		name      string
		grace     *int64
		wantPod   int64
		wantFlag  string
		wantGrace int64
	}{
		{name: "default", grace: nil, wantPod: 45, wantFlag: "30", wantGrace: 30},
		{name: "zero", grace: ptr.To[int64](0), wantPod: 15, wantFlag: "0", wantGrace: 0},
		{name: "long", grace: ptr.To[int64](120), wantPod: 135, wantFlag: "120", wantGrace: 120},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := testVMI()
			vmi.Spec.TerminationGracePeriodSeconds = tc.grace
			pod, err := Render(vmi, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if got := *pod.Spec.TerminationGracePeriodSeconds; got != tc.wantPod {
				t.Errorf("pod grace = %d, want %d", got, tc.wantPod)
			}
			if got := flagValues(pod.Spec.Containers[0].Command, "--grace-period-seconds"); len(got) != 1 || got[0] != tc.wantFlag {
				t.Errorf("--grace-period-seconds = %q, want %s", got, tc.wantFlag)
			}
			if got := GracePeriodSeconds(vmi); got != tc.wantGrace {
				t.Errorf("GracePeriodSeconds = %d, want %d", got, tc.wantGrace)
			}
		})
	}
}

func TestRenderCopyContainers(t *testing.T) {
	tests := []struct {
		name    string
		volumes []kubevirtv1.Volume
		kernel  *kubevirtv1.KernelBootContainer
		want    []string
		wantCmd map[string][]string
		awaits  []string
		secrets []corev1.LocalObjectReference
	}{
		{name: "no container disk", want: []string{"compute"}, volumes: []kubevirtv1.Volume{{Name: "c", VolumeSource: kubevirtv1.VolumeSource{
			CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: "x"}}}}},
		{
			name: "two disks, a path and pull secrets",
			volumes: []kubevirtv1.Volume{
				{Name: "root", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
					Image: "a", Path: "/custom/disk.qcow2", ImagePullSecret: "pull"}}},
				{Name: "data", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
					Image: "b", ImagePullSecret: "pull"}}},
			},
			want: []string{"compute", "container-disk-root", "container-disk-data"},
			wantCmd: map[string][]string{
				"container-disk-root": {"/var/run/nativevirt-bin/nativevirt-copy-disk", "--source", "/custom/disk.qcow2",
					"--dest", "/var/run/nativevirt-disks/root/disk.img", "--hold", "/var/run/nativevirt-bin/launcher.lock"},
			},
			awaits:  []string{"/var/run/nativevirt-disks/root/disk.img", "/var/run/nativevirt-disks/data/disk.img"},
			secrets: []corev1.LocalObjectReference{{Name: "pull"}},
		},
		{
			name:   "kernel boot",
			kernel: &kubevirtv1.KernelBootContainer{Image: "k", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.img", ImagePullSecret: "kp"},
			want:   []string{"compute", "kernel-boot-kernel", "kernel-boot-initrd"},
			wantCmd: map[string][]string{
				"kernel-boot-initrd": {"/var/run/nativevirt-bin/nativevirt-copy-disk", "--source", "/boot/initrd.img",
					"--dest", "/var/run/nativevirt-disks/kernel-boot/initrd", "--hold", "/var/run/nativevirt-bin/launcher.lock"},
			},
			awaits:  []string{"/var/run/nativevirt-disks/kernel-boot/kernel", "/var/run/nativevirt-disks/kernel-boot/initrd"},
			secrets: []corev1.LocalObjectReference{{Name: "kp"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := testVMI()
			vmi.Spec.Volumes = tc.volumes
			if tc.kernel != nil {
				vmi.Spec.Domain.Firmware = &kubevirtv1.Firmware{KernelBoot: &kubevirtv1.KernelBoot{Container: tc.kernel}}
			}
			pod, err := Render(vmi, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, containerNames(pod.Spec.Containers)); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			if n := len(pod.Spec.InitContainers); n != 0 {
				t.Errorf("%d init containers, want none", n)
			}
			compute := pod.Spec.Containers[0]
			if diff := cmp.Diff(tc.awaits, flagValues(compute.Command, "--await-file")); diff != "" {
				t.Errorf("launcher --await-file (-want +got):\n%s", diff)
			}
			if copies := len(tc.want) > 1; copies != (compute.Lifecycle != nil) || copies != (len(flagValues(compute.Command, "--hold-lock")) == 1) {
				t.Errorf("copies %v, but postStart %v and launcher command %q", copies, compute.Lifecycle, compute.Command)
			}
			for _, c := range pod.Spec.Containers {
				if want, ok := tc.wantCmd[c.Name]; ok {
					if diff := cmp.Diff(want, c.Command); diff != "" {
						t.Errorf("%s command (-want +got):\n%s", c.Name, diff)
					}
				}
			}
			wantVolumes := []string{"private", "disks"}
			if len(tc.want) > 1 {
				wantVolumes = append(wantVolumes, "bin")
			}
			if diff := cmp.Diff(wantVolumes, volumeNames(pod.Spec.Volumes)); diff != "" {
				t.Errorf("volumes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.secrets, pod.Spec.ImagePullSecrets); diff != "" {
				t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderPodSecurityBaseline evaluates the rendered pods with the Pod Security admission
// library itself: a user allowed only baseline pods can run any VM.
func TestRenderPodSecurityBaseline(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	vmis := map[string]*kubevirtv1.VirtualMachineInstance{"realistic": testVMI()}
	kernel := testVMI()
	kernel.Spec.Domain.Firmware = &kubevirtv1.Firmware{KernelBoot: &kubevirtv1.KernelBoot{
		Container: &kubevirtv1.KernelBootContainer{Image: "k", KernelPath: "/k", InitrdPath: "/i"}}}
	vmis["kernel boot"] = kernel
	for name, vmi := range vmis {
		for _, emulate := range []bool{true, false} {
			pod, err := Render(vmi, Config{UseEmulation: emulate})
			if err != nil {
				t.Fatal(err)
			}
			results := evaluator.EvaluatePod(api.LevelVersion{Level: api.LevelBaseline, Version: api.LatestVersion()},
				&pod.ObjectMeta, &pod.Spec)
			for _, r := range results {
				if !r.Allowed {
					t.Errorf("%s (emulation=%v): baseline forbids %s: %s", name, emulate, r.ForbiddenReason, r.ForbiddenDetail)
				}
			}
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
				sc := c.SecurityContext
				if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Errorf("%s: container %s may be privileged or escalate: %+v", name, c.Name, sc)
				}
			}
		}
	}
}

// TestPodSecurityCheckIsLive makes sure the evaluator above can refuse: a launcher pod with one
// capability too many is not baseline.
func TestPodSecurityCheckIsLive(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := Render(testVMI(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	caps := pod.Spec.Containers[0].SecurityContext.Capabilities
	caps.Add = append(caps.Add, "SYS_ADMIN")
	allowed := true
	for _, r := range evaluator.EvaluatePod(api.LevelVersion{Level: api.LevelBaseline, Version: api.LatestVersion()},
		&pod.ObjectMeta, &pod.Spec) {
		allowed = allowed && r.Allowed
	}
	if allowed {
		t.Error("a pod adding SYS_ADMIN passed the baseline check")
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := Render(nil, Config{}); err == nil {
		t.Error("Render(nil) succeeded")
	}
	vmi := testVMI()
	vmi.Spec.Domain.Memory = nil
	vmi.Spec.Domain.Resources = kubevirtv1.ResourceRequirements{}
	if _, err := Render(vmi, Config{}); err == nil {
		t.Error("Render without memory succeeded")
	}
}

func TestHostname(t *testing.T) {
	tests := []struct{ name, specHostname, want string }{
		{name: "vm-a", want: "vm-a"},
		{name: "vm.with.dots", want: ""},
		{name: "vm.with.dots", specHostname: "guest", want: "guest"},
	}
	for _, tc := range tests {
		vmi := testVMI()
		vmi.Name, vmi.Spec.Hostname = tc.name, tc.specHostname
		pod, err := Render(vmi, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.Hostname != tc.want {
			t.Errorf("%s/%s: hostname %q, want %q", tc.name, tc.specHostname, pod.Spec.Hostname, tc.want)
		}
	}
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func volumeNames(vs []corev1.Volume) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// flagValues returns the values of every `flag value` pair in args.
func flagValues(args []string, flag string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			out = append(out, args[i+1])
		}
	}
	return out
}
