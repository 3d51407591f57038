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
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestDynamicClaimVM gives the demo VM a disk on a claim as KubeVirt manifests write it (no
// storageClassName): the cluster's default StorageClass (local-path, WaitForFirstConsumer)
// binds it once the launcher pod is scheduled, to a directory of that pod's node. The guest
// writes a marker to the disk, the VM restarts (a new instance, a new launcher pod), and the
// guest reads the marker back. Deleting the claim deletes the volume and its directory.
func TestDynamicClaimVM(t *testing.T) {
	e := newCtrlEnv(t, "e2e-dynpvc")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: e.ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *resource.NewQuantity(pvcSize, resource.BinarySI)}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The default class was filled in; nothing binds before a pod uses the claim.
	got, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.StorageClassName == nil || *got.Spec.StorageClassName != "local-path" {
		t.Errorf("claim without storageClassName got class %v, want the default local-path", got.Spec.StorageClassName)
	}
	t.Logf("claim data: class %s, phase %s (WaitForFirstConsumer)", strOrNil(got.Spec.StorageClassName), got.Status.Phase)

	vm := e.demoVM(kubevirtv1.RunStrategyAlways)
	withClaimDisk(vm, "data")
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, pod := f.running(demoVM, "")
	bound := f.boundClaim("data")
	pv, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := ""
	if pv.Spec.HostPath != nil {
		dir = pv.Spec.HostPath.Path
	}
	nodesDir := filepath.Join(e.c.Dir(), "nodes", pod.Spec.NodeName, "local-path")
	if !strings.HasPrefix(dir, nodesDir+"/") {
		t.Errorf("volume %s at %q, want a directory under %s (the launcher's node %s)", pv.Name, dir, nodesDir, pod.Spec.NodeName)
	}
	t.Logf("claim data bound to %s (%s) on node %s", pv.Name, dir, pod.Spec.NodeName)
	image := filepath.Join(dir, "disk.img")
	if st, err := os.Stat(image); err != nil || st.Size() != pvcSize {
		t.Errorf("disk image on the volume: %v (size %v), want %d bytes", err, st, pvcSize)
	}

	marker := fmt.Sprintf("nv-dynpvc-%d", rand.IntN(1<<30))
	dev := f.claimDisk(demoVM)
	f.consoleRun(demoVM, fmt.Sprintf("echo %s > /dev/%s && sync && echo written-$((1+1))", marker, dev), `(?m)^written-2`)
	f.fileHas(image, marker)
	t.Logf("guest wrote %q to /dev/%s", marker, dev)

	f.cli.run("restart", demoVM)
	f.running(demoVM, first.UID)
	dev = f.claimDisk(demoVM)
	f.consoleRun(demoVM, fmt.Sprintf("echo read-$(head -c %d /dev/%s)", len(marker), dev), `read-`+regexp.QuoteMeta(marker))
	t.Logf("after the restart the guest read %q back from /dev/%s", marker, dev)

	// The VM stopped and deleted, then the claim: the volume (reclaim policy Delete) and its
	// directory go.
	f.cli.run("stop", demoVM)
	e.gone(demoVM)
	if err := e.kv.KubevirtV1().VirtualMachines(e.ns).Delete(ctx, demoVM, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the launcher pods gone", controllerTimeout, func() (bool, error) {
		pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io=virt-launcher"})
		return err == nil && len(pods.Items) == 0, err
	})
	if err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("volume "+pv.Name+" and its directory deleted", controllerTimeout, func() (bool, error) {
		_, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("volume: %v", err)
		}
		_, err = os.Stat(dir)
		return os.IsNotExist(err), fmt.Errorf("directory: %v", err)
	})
	t.Logf("claim deleted: volume %s and %s gone", pv.Name, dir)
}

// boundClaim waits until claim name is Bound and returns it.
func (f *flow) boundClaim(name string) *corev1.PersistentVolumeClaim {
	f.t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	f.waitFor("claim "+name+" Bound", controllerTimeout, func() (bool, error) {
		var err error
		pvc, err = f.kube.CoreV1().PersistentVolumeClaims(f.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return pvc.Status.Phase == corev1.ClaimBound, fmt.Errorf("phase %s", pvc.Status.Phase)
	})
	return pvc
}

// claimDisk returns the guest device of the disk with serial nvdata (withClaimDisk).
func (f *flow) claimDisk(vmName string) string {
	f.t.Helper()
	m := f.consoleRun(vmName, claimDiskScript, claimDiskRE.String())
	if want := fmt.Sprint(pvcSize / 512); m[2] != want {
		f.t.Errorf("guest disk %s has %s sectors, want %s", m[1], m[2], want)
	}
	return m[1]
}

// consoleRun waits for the guest's prompt, sends line and waits for pattern; it returns the match.
func (f *flow) consoleRun(vmName, line, pattern string) []string {
	f.t.Helper()
	s := f.cli.console(vmName)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		f.t.Fatalf("console of %s: no shell prompt:\n%s", vmName, s.all())
	}
	s.send(line)
	m := s.expect(regexp.MustCompile(pattern), time.Minute, false)
	if m == nil {
		f.t.Fatalf("console of %s: %q did not print %s:\n%s", vmName, line, pattern, s.all())
	}
	return m
}

func strOrNil(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
