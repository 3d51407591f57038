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

// Package e2e holds the end-to-end tests: they run against the local Kubernetes of
// hack/cluster (real kube-apiserver, kubelets, containerd), brought up once by TestMain with
// $NV_NODES nodes (make test-e2e sets it; tests that need two nodes skip with fewer).
package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// upTimeout covers a cold start: apt packages and building Kubernetes on 2 cores (~15 min).
const upTimeout = 45 * time.Minute

var (
	// cluster is the local cluster, up for every test; nil when skipReason is set.
	cluster *framework.Cluster
	// skipReason says why the e2e tests cannot run here.
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, "e2e", upTimeout, func(c *framework.Cluster, skip string) {
		cluster, skipReason = c, skip
	}))
}

// requireCluster skips t when the e2e tests cannot run here, else returns the cluster.
func requireCluster(t *testing.T) *framework.Cluster {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return cluster
}

// requireNodes skips the test unless the cluster has at least n nodes (the e2e default is two:
// make test-e2e; by hand NV_NODES=2).
func requireNodes(t *testing.T, n int) {
	t.Helper()
	c := requireCluster(t)
	names, err := c.Kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(strings.Fields(names)); got < n {
		t.Skipf("needs a cluster of %d nodes, this one has %d (%s): run the e2e tests with NV_NODES=%d (make test-e2e NODES=%d)", n, got, names, n, n)
	}
}

// randomSuffix makes names and log lines unique to one run, so that no stale object or log
// can satisfy a test.
func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestPodFromLocalImage runs pods from localhost/busybox:dev, an image built and imported
// without a registry, and checks what they print and whether they reach kube-apiserver on the
// bridge address that NativeVirt's pods use in place of the kubernetes Service.
func TestPodFromLocalImage(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	// Not deferred: the parallel subtests run after this function returns, before cleanups.
	t.Cleanup(cancel)
	if err := c.Run(ctx, "hack/images/build-busybox.sh"); err != nil {
		t.Fatal(err)
	}
	ns := "e2e-pod-" + randomSuffix(t)
	if _, err := c.Kubectl("create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Kubectl("delete", "namespace", ns, "--wait=false"); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	marker := randomSuffix(t)

	tests := []struct {
		name      string
		script    string
		wantPhase string
		wantLogs  []string
	}{
		{
			name:      "prints a line readable by kubectl logs",
			script:    "echo hello-" + marker,
			wantPhase: "Succeeded",
			wantLogs:  []string{"hello-" + marker},
		},
		{
			name:      "opens a TCP connection to kube-apiserver at 10.88.0.1:6443",
			script:    "nc -w 5 10.88.0.1 6443 -e /bin/true && echo connected-" + marker,
			wantPhase: "Succeeded",
			wantLogs:  []string{"connected-" + marker},
		},
		{
			// The control: a closed port is refused, so the case above proves a connection.
			name:      "a closed port on 10.88.0.1 is refused",
			script:    "nc -w 5 10.88.0.1 6444 -e /bin/true 2>/dev/null && echo connected-" + marker + " || { echo refused-" + marker + "; exit 7; }",
			wantPhase: "Failed",
			wantLogs:  []string{"refused-" + marker},
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := fmt.Sprintf("busybox-%d", i)
			if _, err := c.KubectlInput(busyboxPod(ns, pod, tc.script), "apply", "-f", "-"); err != nil {
				t.Fatal(err)
			}
			phase, err := waitForPodDone(ctx, c, ns, pod)
			if err != nil {
				t.Fatal(err)
			}
			logs, err := c.Kubectl("-n", ns, "logs", pod)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(logs), "\n")
			if diff := cmp.Diff(tc.wantLogs, got); diff != "" {
				t.Errorf("logs of %s (-want +got):\n%s", pod, diff)
			}
			if phase != tc.wantPhase {
				t.Errorf("pod %s ended %s, want %s", pod, phase, tc.wantPhase)
			}
			ip, err := c.Kubectl("-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.podIP}")
			if err != nil {
				t.Fatal(err)
			}
			_, podNet, _ := net.ParseCIDR("10.88.0.0/16")
			if parsed := net.ParseIP(ip); parsed == nil || !podNet.Contains(parsed) {
				t.Errorf("pod IP %q is not in %s", ip, podNet)
			}
		})
	}
}

// busyboxPod is a run-once pod of localhost/busybox:dev running script with sh.
func busyboxPod(ns, name, script string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: busybox
    image: localhost/busybox:dev
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", %q]
`, name, ns, script)
}

// waitForPodDone polls the pod until it has succeeded or failed and returns that phase.
func waitForPodDone(ctx context.Context, c *framework.Cluster, ns, name string) (string, error) {
	var phase string
	for {
		out, err := c.Kubectl("-n", ns, "get", "pod", name, "-o", "jsonpath={.status.phase}")
		if err == nil {
			phase = out
			if phase == "Succeeded" || phase == "Failed" {
				return phase, nil
			}
		}
		select {
		case <-ctx.Done():
			desc, _ := c.Kubectl("-n", ns, "describe", "pod", name)
			return "", fmt.Errorf("pod %s/%s still %q: %w\n%s", ns, name, phase, ctx.Err(), desc)
		case <-time.After(time.Second):
		}
	}
}
