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

// Package faults is the fault suite of issue 25 (`make test-faults`): with guests running and a
// writer writing, it kills NativeVirt's components and the nodes' processes one at a time and
// checks what operators are promised: nothing acknowledged is lost, no guest restarts unless it
// was the one killed, no VM runs twice, and everything comes back by itself. TestNodeLoss takes a
// whole node away. Figures and method: docs/reliability.md.
package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

const (
	upTimeout     = 45 * time.Minute
	deployTimeout = 20 * time.Minute
)

var (
	cluster    *framework.Cluster
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, "faults", upTimeout, func(c *framework.Cluster, skip string) {
		cluster, skipReason = c, skip
	}))
}

// env is one test's view of the cluster: clients, its namespace, the cluster itself.
type env struct {
	t    *testing.T
	c    *framework.Cluster
	cfg  *rest.Config
	ns   string
	kv   *versioned.Clientset
	kube *kubernetes.Clientset

	demoOnce sync.Once
	demo     *kubevirtv1.VirtualMachine
	demoErr  error
}

// newEnv deploys NativeVirt (once per binary) and makes a namespace for t, deleted at its end.
func newEnv(t *testing.T, prefix string) *env {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	c := cluster
	ctx, cancel := context.WithTimeout(context.Background(), deployTimeout)
	defer cancel()
	if err := c.DeployNativeVirt(ctx); err != nil {
		t.Fatalf("deploying NativeVirt (hack/deploy-local.sh): %v", err)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	// The writer and the probes must see failures as they happen, not after client-go's
	// default retries and rate limits.
	cfg.Timeout = 10 * time.Second
	cfg.QPS, cfg.Burst = 100, 200
	e := &env{t: t, c: c, cfg: cfg, ns: prefix + "-" + randomSuffix(t)}
	if e.kv, err = versioned.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl("create", "namespace", e.ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Kubectl("delete", "namespace", e.ns, "--wait=false", "--ignore-not-found"); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	e.waitFor("every node labelled kubevirt.io/schedulable=true", 3*time.Minute, func() (bool, error) {
		nodes, err := e.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			if n.Labels["kubevirt.io/schedulable"] != "true" {
				return false, fmt.Errorf("node %s not schedulable", n.Name)
			}
		}
		return len(nodes.Items) > 0, nil
	})
	return e
}

// waitFor polls cond every second until it holds, failing the test after timeout.
func (e *env) waitFor(what string, timeout time.Duration, cond func() (bool, error)) {
	e.t.Helper()
	if err := poll(timeout, time.Second, cond); err != nil {
		out, _ := e.c.Kubectl("get", "vm,vmi,pods", "-n", e.ns, "-o", "wide")
		nodes, _ := e.c.Kubectl("get", "nodes,pods", "-A", "-o", "wide")
		e.t.Fatalf("timed out waiting for %s: %v\n%s\n%s", what, err, out, nodes)
	}
}

// poll calls cond every interval until it holds or timeout passes; the error is cond's last.
func poll(timeout, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last == nil {
				last = fmt.Errorf("not yet after %s", timeout)
			}
			return last
		}
		time.Sleep(interval)
	}
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
