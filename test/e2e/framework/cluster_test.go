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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFindRoot(t *testing.T) {
	tmp := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/go.mod", "module "+modulePath+"\n\ngo 1.26\n")
	write("repo/hack/tools/k8s/go.mod", "module "+modulePath+"/hack/tools/k8s\n")
	write("repo/test/e2e/x.go", "package e2e\n")
	write("quoted/go.mod", "// comment\nmodule \""+modulePath+"\"\n")
	write("other/go.mod", "module example.com/other\n")

	tests := []struct {
		name    string
		start   string
		want    string
		wantErr bool
	}{
		{name: "root itself", start: "repo", want: "repo"},
		{name: "nested package", start: "repo/test/e2e", want: "repo"},
		{name: "nested module is skipped", start: "repo/hack/tools/k8s", want: "repo"},
		{name: "quoted module path", start: "quoted", want: "quoted"},
		{name: "other module", start: "other", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findRoot(filepath.Join(tmp, tc.start))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("findRoot = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(filepath.Join(tmp, tc.want), got); diff != "" {
				t.Errorf("findRoot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	tests := []struct {
		name           string
		dir, bin       string
		user           string
		wantKubeconfig string
		wantDir        string
	}{
		{name: "admin by name", user: AdminUser, wantKubeconfig: "/r/_output/local/kubeconfig", wantDir: "/r/_output/local"},
		{name: "admin by default", user: "", wantKubeconfig: "/r/_output/local/kubeconfig", wantDir: "/r/_output/local"},
		{name: "test user", user: "nv-viewer", wantKubeconfig: "/r/_output/local/kubeconfigs/nv-viewer.kubeconfig", wantDir: "/r/_output/local"},
		{name: "NV_LOCAL_DIR override", dir: "/state", user: "nv-nobody", wantKubeconfig: "/state/kubeconfigs/nv-nobody.kubeconfig", wantDir: "/state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("/r", tc.dir, tc.bin)
			got := []string{c.Kubeconfig(tc.user), c.Dir()}
			if diff := cmp.Diff([]string{tc.wantKubeconfig, tc.wantDir}, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNodes(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{in: "", want: DefaultNodes},
		{in: "1", want: 1},
		{in: "2", want: 2},
		{in: "0", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "two", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseNodes(tc.in)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "NV_NODES") {
					t.Fatalf("parseNodes(%q) = %d, %v; want an error naming NV_NODES", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("parseNodes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseHA(t *testing.T) {
	tests := []struct {
		in      string
		want    bool
		wantErr bool
	}{
		{in: "", want: false},
		{in: "0", want: false},
		{in: "1", want: true},
		{in: "yes", wantErr: true},
		{in: "2", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseHA(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseHA(%q) = %t, %v; want %t, error %t", tt.in, got, err, tt.want, tt.wantErr)
		}
		if got, want := haEnv(got), map[bool]string{false: "0", true: "1"}[tt.want]; err == nil && got != want {
			t.Errorf("haEnv after parseHA(%q) = %q, want %q", tt.in, got, want)
		}
	}
}

func TestKubectlErrorCarriesStderr(t *testing.T) {
	tmp := t.TempDir()
	// A stand-in kubectl that echoes its arguments and fails when asked to.
	script := "#!/bin/sh\nfor a in \"$@\"; do case $a in fail) echo \"boom: $*\" >&2; exit 3;; esac; done\necho \"ok: $*\"\n"
	if err := os.WriteFile(filepath.Join(tmp, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCluster(tmp, filepath.Join(tmp, "state"), tmp)

	tests := []struct {
		name       string
		user       string
		args       []string
		wantOut    string
		wantErrSub string
	}{
		{name: "success as admin", user: AdminUser, args: []string{"get", "pods"},
			wantOut: "ok: --kubeconfig " + filepath.Join(tmp, "state", "kubeconfig") + " get pods\n"},
		{name: "success as test user", user: "nv-editor", args: []string{"auth", "whoami"},
			wantOut: "ok: --kubeconfig " + filepath.Join(tmp, "state", "kubeconfigs", "nv-editor.kubeconfig") + " auth whoami\n"},
		{name: "failure", user: AdminUser, args: []string{"fail", "now"}, wantErrSub: "kubectl fail now: exit status 3: boom:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.KubectlAs(tc.user, tc.args...)
			if tc.wantErrSub != "" {
				var kerr *KubectlError
				if !errors.As(err, &kerr) {
					t.Fatalf("err = %v, want a *KubectlError", err)
				}
				var exitErr *exec.ExitError
				if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
					t.Errorf("err = %v, want exit status 3 to unwrap", err)
				}
				if !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Errorf("err = %q, want it to contain %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}
