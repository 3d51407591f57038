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

package framework

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// RunMain is a cluster test binary's TestMain body: it brings the local cluster up, hands it to
// use, runs the tests and takes the cluster down again if it started it here, unless
// NV_E2E_KEEP=1. Without root it runs the tests with the cluster nil and skip saying why (each
// test skips). suite prefixes its messages; the result is the binary's exit code.
func RunMain(m *testing.M, suite string, upTimeout time.Duration, use func(c *Cluster, skip string)) int {
	if os.Geteuid() != 0 {
		skip := suite + " tests need root: they start a local Kubernetes (bridge, containerd, kubelet) and its processes; run them as root or in CI"
		fmt.Fprintf(os.Stderr, "%s: SKIP: %s\n", suite, skip)
		use(nil, skip)
		return m.Run()
	}
	c, err := New()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", suite, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), upTimeout)
	defer cancel()
	start := time.Now()
	if err := c.Up(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: bringing the cluster up: %v (logs in %s)\n", suite, err, c.LogsDir())
		return 1
	}
	fmt.Fprintf(os.Stderr, "%s: cluster of %d node(s) (NV_NODES) up in %s (started here: %t)\n", suite, c.Nodes(), time.Since(start).Round(time.Second), c.StartedHere())
	use(c, "")

	code := m.Run()

	switch {
	case os.Getenv("NV_E2E_KEEP") == "1":
		fmt.Fprintf(os.Stderr, "%s: NV_E2E_KEEP=1: cluster kept; export KUBECONFIG=%s\n", suite, c.Kubeconfig(AdminUser))
	case !c.StartedHere():
		fmt.Fprintf(os.Stderr, "%s: the cluster was up before the tests: left running\n", suite)
	default:
		if err := c.Down(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: taking the cluster down: %v\n", suite, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}
