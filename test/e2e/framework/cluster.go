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

// Package framework drives the local Kubernetes of hack/cluster from Go tests: it brings the
// cluster up with the same scripts `make run` uses (one implementation, not two), with as many
// nodes as $NV_NODES says, and gives tests kubectl and client-go access as the admin or as one
// of the test users.
package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// modulePath identifies the repository root: the directory whose go.mod declares it.
const modulePath = "github.com/nativevirt/nativevirt"

// AdminUser names the cluster admin (group system:masters) in KubectlAs and RESTConfigAs.
const AdminUser = "admin"

// DefaultKubectlTimeout bounds one kubectl call, so that a hung call fails the test instead of
// hanging it until go test's own timeout.
const DefaultKubectlTimeout = 5 * time.Minute

// DefaultNodes is the number of kubelet nodes of the cluster when $NV_NODES is not set.
const DefaultNodes = 1

// Cluster is the local cluster of one repository checkout.
type Cluster struct {
	root        string
	dir         string
	bin         string
	nodes       int
	ha          bool
	startedHere bool
}

// New returns the Cluster of the repository that contains the working directory. The state
// directory is $NV_LOCAL_DIR when set (as for hack/cluster/up.sh), else _output/local; the
// number of nodes is $NV_NODES when set, else DefaultNodes; NV_HA=1 makes DeployNativeVirt
// deploy the HA installation.
func New() (*Cluster, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := findRoot(wd)
	if err != nil {
		return nil, err
	}
	nodes, err := parseNodes(os.Getenv("NV_NODES"))
	if err != nil {
		return nil, err
	}
	c := newCluster(root, os.Getenv("NV_LOCAL_DIR"), os.Getenv("NV_BIN_DIR"))
	c.nodes = nodes
	if c.ha, err = parseHA(os.Getenv("NV_HA")); err != nil {
		return nil, err
	}
	return c, nil
}

func newCluster(root, dir, bin string) *Cluster {
	if dir == "" {
		dir = filepath.Join(root, "_output", "local")
	}
	if bin == "" {
		bin = filepath.Join(root, "_output", "bin")
	}
	return &Cluster{root: root, dir: dir, bin: bin, nodes: DefaultNodes}
}

// parseNodes reads $NV_NODES: empty means DefaultNodes; hack/cluster/up.sh checks the upper bound.
func parseNodes(s string) (int, error) {
	if s == "" {
		return DefaultNodes, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("NV_NODES=%q: want a number of nodes, 1 or more", s)
	}
	return n, nil
}

// parseHA reads $NV_HA: 1 asks for the HA installation, 0 or empty for the default one.
func parseHA(s string) (bool, error) {
	switch s {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("NV_HA=%q: want 0 or 1", s)
}

// findRoot walks up from dir to the directory whose go.mod declares modulePath.
func findRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && declaresModule(string(b), modulePath) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module %s in %s or above", modulePath, dir)
		}
	}
}

// declaresModule reports whether the go.mod text declares module path.
func declaresModule(gomod, path string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}

// Root is the repository root.
func (c *Cluster) Root() string { return c.root }

// Dir is the cluster's state directory (PKI, kubeconfigs, logs, etcd data, ...).
func (c *Cluster) Dir() string { return c.dir }

// LogsDir holds one log file per process of the cluster.
func (c *Cluster) LogsDir() string { return filepath.Join(c.dir, "logs") }

// Kubeconfig is the path of the kubeconfig of user: the admin's for "" or AdminUser, else
// the one hack/cluster/up.sh writes for a test user (nv-nobody, nv-viewer, ...).
func (c *Cluster) Kubeconfig(user string) string {
	if user == "" || user == AdminUser {
		return filepath.Join(c.dir, "kubeconfig")
	}
	return filepath.Join(c.dir, "kubeconfigs", user+".kubeconfig")
}

// IsUp reports whether kube-apiserver of the cluster answers /readyz.
func (c *Cluster) IsUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := c.kubectl(ctx, c.Kubeconfig(AdminUser), "", "get", "--raw", "/readyz")
	return err == nil
}

// HA reports whether DeployNativeVirt deploys the HA installation (NV_HA=1): the production
// overlay's three etcd members and two API servers (artifacts/local/ha).
func (c *Cluster) HA() bool { return c.ha }

// Nodes is the number of kubelet nodes Up brings up ($NV_NODES).
func (c *Cluster) Nodes() int { return c.nodes }

// Up brings the cluster up with hack/cluster/up.sh (which installs packages and builds the
// Kubernetes binaries when missing) unless it is up already with Nodes ready nodes or more and
// its addons (kube-proxy, CoreDNS, the storage provisioner) run; a cluster that is up with fewer
// nodes gets the missing nodes, one without the addons gets them. Its progress goes to stderr.
func (c *Cluster) Up(ctx context.Context) error {
	up := c.IsUp(ctx)
	if up {
		n, err := c.readyNodes(ctx)
		if err == nil && n >= c.nodes && c.addonsReady(ctx) {
			return nil
		}
	}
	c.startedHere = !up
	return c.Run(ctx, "hack/cluster/up.sh")
}

// addonsReady reports whether kube-proxy runs and the addons' Deployments (labelled
// nativevirt.io/cluster-addon: CoreDNS, local-path-provisioner) have available pods.
func (c *Cluster) addonsReady(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := os.Stat(filepath.Join(c.dir, "pids", "kube-proxy.pid")); err != nil {
		return false
	}
	out, err := c.kubectl(ctx, c.Kubeconfig(AdminUser), "", "get", "deployments", "-A",
		"-l", "nativevirt.io/cluster-addon", "-o", `jsonpath={range .items[*]}{.status.availableReplicas}{"\n"}{end}`)
	if err != nil {
		return false
	}
	avail := strings.Fields(out)
	if len(avail) < 2 {
		return false
	}
	for _, a := range avail {
		if a == "0" {
			return false
		}
	}
	return true
}

// readyNodes counts the nodes whose Ready condition is True.
func (c *Cluster) readyNodes(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := c.kubectl(ctx, c.Kubeconfig(AdminUser), "", "get", "nodes",
		"-o", `jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range strings.Fields(out) {
		if s == "True" {
			n++
		}
	}
	return n, nil
}

// StartedHere reports whether Up started the cluster (rather than finding it up), so that
// callers tear down only what they brought up.
func (c *Cluster) StartedHere() bool { return c.startedHere }

// Down stops the cluster with hack/cluster/down.sh; its state is kept.
func (c *Cluster) Down() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return c.Run(ctx, "hack/cluster/down.sh")
}

// Run runs a script of the repository (path relative to the root), with its output on
// stderr, e.g. c.Run(ctx, "hack/images/build-busybox.sh").
func (c *Cluster) Run(ctx context.Context, script string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.root, script), args...)
	cmd.Dir = c.root
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(), "NV_LOCAL_DIR="+c.dir, "NV_BIN_DIR="+c.bin, "NV_NODES="+strconv.Itoa(c.nodes), "NV_HA="+haEnv(c.ha))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	return nil
}

// Kubectl runs _output/bin/kubectl as the admin and returns its stdout; on failure the error
// carries stderr.
func (c *Cluster) Kubectl(args ...string) (string, error) {
	return c.KubectlAs(AdminUser, args...)
}

// KubectlAs runs kubectl as user (see Kubeconfig) and returns its stdout.
func (c *Cluster) KubectlAs(user string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultKubectlTimeout)
	defer cancel()
	return c.kubectl(ctx, c.Kubeconfig(user), "", args...)
}

// KubectlInput runs kubectl as the admin with stdin, e.g. KubectlInput(manifest, "apply", "-f", "-").
func (c *Cluster) KubectlInput(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultKubectlTimeout)
	defer cancel()
	return c.kubectl(ctx, c.Kubeconfig(AdminUser), stdin, args...)
}

func (c *Cluster) kubectl(ctx context.Context, kubeconfig, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), &KubectlError{Args: args, Err: err, Stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// KubectlError is a failed kubectl call.
type KubectlError struct {
	// Args are kubectl's arguments after --kubeconfig.
	Args []string
	// Err is the exec error (exit status, context deadline, ...).
	Err error
	// Stderr is what kubectl printed on stderr.
	Stderr string
}

// Error names the call, the exit and kubectl's message.
func (e *KubectlError) Error() string {
	return fmt.Sprintf("kubectl %s: %v: %s", strings.Join(e.Args, " "), e.Err, strings.TrimSpace(e.Stderr))
}

// Unwrap returns the exec error.
func (e *KubectlError) Unwrap() error { return e.Err }

// RESTConfig is a client-go config for the admin.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return c.RESTConfigAs(AdminUser)
}

// RESTConfigAs is a client-go config for user, read from its kubeconfig.
func (c *Cluster) RESTConfigAs(user string) (*rest.Config, error) {
	path := c.Kubeconfig(user)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no kubeconfig for user %q at %s (is the cluster up? is the user in NV_TEST_USERS of hack/cluster/lib.sh?)", user, path)
		}
		return nil, err
	}
	return clientcmd.BuildConfigFromFlags("", path)
}

// KubectlCommand is kubectl as the admin, for commands that keep running (port-forward, logs -f).
func (c *Cluster) KubectlCommand(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig(AdminUser)}, args...)...)
}

func haEnv(ha bool) string {
	if ha {
		return "1"
	}
	return "0"
}
