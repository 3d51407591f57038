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
	"path/filepath"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestLiveMigrationSharedClaim migrates a guest with a disk on a ReadWriteMany claim: the claim is
// LiveMigratable, the target pod attaches the same volume (it is not copied), and what the guest
// wrote before the migration is read back on the other node, where it goes on writing.
func TestLiveMigrationSharedClaim(t *testing.T) {
	requireNodes(t, 2)
	e := newCtrlEnv(t, "e2e-migrwx")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	hostDir := e.hostPathClaim("shared", corev1.ReadWriteMany)
	image := filepath.Join(hostDir, "disk.img")

	vm := e.migratingVM()
	withClaimDisk(vm, "shared")
	if _, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, source := f.running(demoVM, "")
	f.waitFor("LiveMigratable=True with a ReadWriteMany claim", controllerTimeout, func() (bool, error) {
		s, err := f.condition(demoVM, kubevirtv1.VirtualMachineInstanceIsMigratable)
		return s == corev1.ConditionTrue, err
	})

	before := fmt.Sprintf("nv-rwx-before-%d", rand.IntN(1<<30))
	dev := f.writeClaimDisk(before, 0)
	f.fileHas(image, before)

	v := f.migrateWithClaim(vmi, source, "the shared claim")

	// On the target: the data written on the source is there, and new writes reach the volume.
	s := f.cli.console(demoVM)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("console of %s on %s: no shell prompt:\n%s", demoVM, v.Status.NodeName, s.all())
	}
	s.send(fmt.Sprintf("head -c %d /dev/%s; echo", len(before), dev))
	// Only the read can print the marker (the typed line does not contain it); the guest's counter
	// may interleave its lines with the output, so no line anchors.
	if s.expect(regexp.MustCompile(regexp.QuoteMeta(before)), time.Minute, false) == nil {
		t.Fatalf("the guest on %s does not read %q from /dev/%s:\n%s", v.Status.NodeName, before, dev, s.all())
	}
	s.close()
	after := fmt.Sprintf("nv-rwx-after-%d", rand.IntN(1<<30))
	f.writeClaimDisk(after, 512)
	f.fileHas(image, after)
	t.Logf("guest moved %s → %s with its ReadWriteMany disk /dev/%s: %q read back on the target, %q written there reached %s",
		source.Spec.NodeName, v.Status.NodeName, dev, before, after, image)
}

// migrateWithClaim live-migrates the demo VM, whose instance vmi runs in the launcher pod
// source, and checks that the same instance now runs on another node in a target pod that mounts
// the claim of the volume "data" (what names it in a failure). It returns the instance after.
func (f *flow) migrateWithClaim(vmi *kubevirtv1.VirtualMachineInstance, source *corev1.Pod, what string) *kubevirtv1.VirtualMachineInstance {
	f.t.Helper()
	f.cli.run("migrate", demoVM)
	m := f.migrationOf(demoVM, nil)
	m = f.migrationPhase(m.Name, migrationTimeout, kubevirtv1.MigrationSucceeded)
	f.logMigration(m)
	v, err := f.vmi(demoVM)
	if err != nil {
		f.t.Fatal(err)
	}
	if v.UID != vmi.UID || v.Status.NodeName == source.Spec.NodeName {
		f.t.Fatalf("after the migration: instance %s on node %s, want %s on another node than %s", v.UID, v.Status.NodeName, vmi.UID, source.Spec.NodeName)
	}
	target := f.targetPod(m.UID, true)
	if !hasMount(target.Spec.Containers[0], "data", "/var/run/nativevirt-pvcs/data") {
		f.t.Errorf("target pod %s does not mount %s", target.Name, what)
	}
	return v
}

// writeClaimDisk writes marker at byte offset off of the guest's nvdata disk through the console
// and returns the disk's device name.
func (f *flow) writeClaimDisk(marker string, off int) string {
	f.t.Helper()
	s := f.cli.console(demoVM)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		f.t.Fatalf("console of %s: no shell prompt:\n%s", demoVM, s.all())
	}
	s.send(claimDiskScript)
	m := s.expect(claimDiskRE, time.Minute, false)
	if m == nil {
		f.t.Fatalf("no disk with serial nvdata in the guest:\n%s", s.all())
	}
	s.send(fmt.Sprintf("echo -n %s | dd of=/dev/%s bs=1 seek=%d conv=notrunc 2>/dev/null && sync && echo written-$((1+1))", marker, m[1], off))
	if s.expect(regexp.MustCompile(`written-2`), time.Minute, false) == nil {
		f.t.Fatalf("writing to /dev/%s failed:\n%s", m[1], s.all())
	}
	return m[1]
}
