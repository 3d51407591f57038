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
	"fmt"
	"strings"
	"testing"
)

// haDumpTail is how many lines of each NativeVirt container's log a failed HA test prints.
const haDumpTail = "150"

// haDumpOnFailure prints, when t has failed, what explains a stuck installation: the test
// namespace's objects in full, the installation's pods, the controller Lease, and the recent
// logs (current and previous container) of every API server, controller replica, node agent and
// etcd member.
func haDumpOnFailure(t *testing.T, e *ctrlEnv) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var b strings.Builder
		show := func(title string, args ...string) {
			out, err := e.c.Kubectl(args...)
			if err != nil {
				out += fmt.Sprintf("\n(error: %v)", err)
			}
			fmt.Fprintf(&b, "\n===== %s (kubectl %s)\n%s", title, strings.Join(args, " "), out)
		}
		show("the test's objects", "get", "vm,vmi,pods", "-n", e.ns, "-o", "yaml")
		show("the installation's pods", "get", "pods", "-n", haNamespace, "-o", "wide")
		show("the controller Lease", "get", "lease", "-n", haNamespace, haLease, "-o", "yaml")
		show("the resourceVersion of the VMI list (the API's storage revision)", "get", "--raw", "/apis/kubevirt.io/v1/virtualmachineinstances?limit=1")
		for _, selector := range []string{haAPISelector, haCtrlSelector, "app.kubernetes.io/name=nativevirt-handler", haEtcdSelector} {
			names, err := e.c.Kubectl("get", "pods", "-n", haNamespace, "-l", selector, "-o", "jsonpath={.items[*].metadata.name}")
			if err != nil {
				fmt.Fprintf(&b, "\n===== pods of %s: %v", selector, err)
				continue
			}
			for _, pod := range strings.Fields(names) {
				show("log of "+pod, "logs", "-n", haNamespace, pod, "--all-containers", "--timestamps", "--tail="+haDumpTail)
				show("previous log of "+pod, "logs", "-n", haNamespace, pod, "--all-containers", "--timestamps", "--previous", "--tail="+haDumpTail)
			}
		}
		t.Logf("the HA test failed; the state and logs:%s", b.String())
	})
}
