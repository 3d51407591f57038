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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// deployTimeout covers a cold `make build` of the NativeVirt binaries on 2 cores plus the
// rollout; a warm deployment takes seconds.
const deployTimeout = 20 * time.Minute

// requireNativeVirt skips t when the e2e tests cannot run here, else deploys NativeVirt into the
// cluster (once for all tests; see framework.Cluster.DeployNativeVirt) and returns the cluster.
func requireNativeVirt(t *testing.T) *framework.Cluster {
	t.Helper()
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), deployTimeout)
	defer cancel()
	start := time.Now()
	if err := c.DeployNativeVirt(ctx); err != nil {
		t.Fatalf("deploying NativeVirt (hack/deploy-local.sh): %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("NativeVirt deployed in %s", d.Round(time.Second))
	}
	return c
}

// testNamespace creates a namespace unique to this run, deleted (without waiting) when t ends.
func testNamespace(t *testing.T, c *framework.Cluster, prefix string) string {
	t.Helper()
	ns := prefix + "-" + randomSuffix(t)
	if _, err := c.Kubectl("create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found"); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	return ns
}

// seedVMManifest is the project's seed manifest, vm-cirros in kubevirt.io/v1alpha3.
func seedVMManifest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vm-cirros.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eventually polls cond every second until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Second)
	}
}
