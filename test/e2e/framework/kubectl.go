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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Kubectl runs the real kubectl for one test, as one user, and logs every call with its output
// so that a test's -v log shows what a user would have seen.
//
// kubectl caches discovery under ~/.kube/cache and trusts it for hours; a cache written before
// NativeVirt's APIServices were registered (or before they changed) would hide or misname the
// kubevirt.io resources. Each test therefore gets an empty cache of its own under the cluster's
// state directory, removed when the test ends.
type Kubectl struct {
	t        testing.TB
	c        *Cluster
	user     string
	cacheDir string
}

// KubectlFor returns kubectl for test t acting as user (AdminUser or a test user such as
// nv-viewer; see Kubeconfig).
func (c *Cluster) KubectlFor(t testing.TB, user string) *Kubectl {
	t.Helper()
	dir := filepath.Join(c.dir, "kubectl-cache", cacheDirName(t.Name()), user)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("kubectl cache: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return &Kubectl{t: t, c: c, user: user, cacheDir: dir}
}

// In returns the same kubectl (user, cache) reporting to t instead, for use inside a subtest:
// a failure must end the subtest that hit it, not its parent.
func (k *Kubectl) In(t testing.TB) *Kubectl {
	cp := *k
	cp.t = t
	return &cp
}

// cacheDirName turns a test name (with subtests and spaces) into one path element.
func cacheDirName(testName string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, testName)
}

// Run runs kubectl with args and returns its stdout; on failure the *KubectlError carries stderr.
func (k *Kubectl) Run(args ...string) (string, error) {
	k.t.Helper()
	return k.RunInput("", args...)
}

// RunInput runs kubectl with stdin, e.g. RunInput(manifest, "apply", "-f", "-").
func (k *Kubectl) RunInput(stdin string, args ...string) (string, error) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultKubectlTimeout)
	defer cancel()
	full := append([]string{"--cache-dir", k.cacheDir}, args...)
	out, err := k.c.kubectl(ctx, k.c.Kubeconfig(k.user), stdin, full...)
	k.t.Logf("[%s] $ kubectl %s\n%s", k.user, strings.Join(args, " "), indent(out, err))
	return out, err
}

// MustRun is Run failing the test on error.
func (k *Kubectl) MustRun(args ...string) string {
	k.t.Helper()
	out, err := k.Run(args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

// MustRunInput is RunInput failing the test on error.
func (k *Kubectl) MustRunInput(stdin string, args ...string) string {
	k.t.Helper()
	out, err := k.RunInput(stdin, args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

// indent formats kubectl's output (and error) for the test log.
func indent(out string, err error) string {
	text := strings.TrimRight(out, "\n")
	if err != nil {
		if text != "" {
			text += "\n"
		}
		text += "error: " + err.Error()
	}
	if text == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(text, "\n", "\n    ")
}
