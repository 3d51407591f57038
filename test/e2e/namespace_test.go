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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// namespaceDeleteTimeout bounds kube-controller-manager's namespace deletion, which discovers
// every namespaced resource (ours through the aggregation layer) and deletes what it finds.
const namespaceDeleteTimeout = 3 * time.Minute

// TestNamespaceDeletionRemovesVMs deletes a namespace holding VMs, VMIs and a replica set: our
// APIServices must not block kube-controller-manager's namespace deletion (they are Available
// and serve deletecollection), and nothing of ours may be left behind in storage. With
// nativevirt-controller running, the VMI gets a launcher pod and the controller's finalizer:
// the controller must release it once namespace deletion has removed the pod.
func TestNamespaceDeletionRemovesVMs(t *testing.T) {
	c := requireNativeVirt(t)
	ns := testNamespace(t, c, "e2e-nsdel")
	k := c.KubectlFor(t, framework.AdminUser)

	var manifests []string
	for i := 0; i < 3; i++ {
		manifests = append(manifests, strings.Replace(seedVMManifest(t), "name: vm-cirros", fmt.Sprintf("name: vm-%d", i), 1))
	}
	manifests = append(manifests,
		"apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: vmi-0\nspec:\n  domain:\n    devices: {}\n"+
			"    resources:\n      requests:\n        memory: 64M\n",
		"apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceReplicaSet\nmetadata:\n  name: rs-0\nspec:\n  replicas: 0\n"+
			"  selector:\n    matchLabels:\n      app: rs-0\n  template:\n    metadata:\n      labels:\n        app: rs-0\n"+
			"    spec:\n      domain:\n        devices: {}\n        resources:\n          requests:\n            memory: 64M\n")
	k.MustRunInput(strings.Join(manifests, "\n---\n"), "-n", ns, "apply", "-f", "-")
	k.MustRun("-n", ns, "get", "vm,vmi,vmirs")

	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	kv, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	counts := func() (map[string]int, error) {
		vms, err := kv.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		vmis, err := kv.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		rss, err := kv.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return map[string]int{"vms": len(vms.Items), "vmis": len(vmis.Items), "vmirs": len(rss.Items)}, nil
	}
	before, err := counts()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"vms": 3, "vmis": 1, "vmirs": 1}, before); diff != "" {
		t.Fatalf("objects before the deletion (-want +got):\n%s", diff)
	}

	start := time.Now()
	if _, err := k.Run("delete", "namespace", ns, fmt.Sprintf("--timeout=%s", namespaceDeleteTimeout)); err != nil {
		// Say what holds the namespace: its conditions name failing discovery or content left,
		// and what is left shows its finalizers.
		_, _ = k.Run("get", "namespace", ns, "-o", "jsonpath={range .status.conditions[*]}{.type}={.status}: {.message}{\"\\n\"}{end}")
		_, _ = k.Run("-n", ns, "get", "vm,vmi,vmirs,pods", "-o", "custom-columns=KIND:.kind,NAME:.metadata.name,DELETING:.metadata.deletionTimestamp,FINALIZERS:.metadata.finalizers,PHASE:.status.phase")
		t.Fatalf("namespace %s not deleted after %s: %v", ns, namespaceDeleteTimeout, err)
	}
	took := time.Since(start)
	_, err = k.Run("get", "namespace", ns)
	if err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Fatalf("namespace %s after kubectl delete: err = %v, want NotFound", ns, err)
	}
	t.Logf("namespace %s with 3 VMs, 1 VMI and 1 VMIRS deleted in %s", ns, took.Round(100*time.Millisecond))

	// Listing a namespace that no longer exists still reads our storage: it must be empty.
	after, err := counts()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"vms": 0, "vmis": 0, "vmirs": 0}, after); diff != "" {
		t.Errorf("objects left in %s after its deletion (-want +got):\n%s", ns, diff)
	}
}
