package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// recorded is one request the fake server saw.
type recorded struct {
	Method, Path string
	Body         map[string]any
}

func fakeServer(t *testing.T, code int, reply string) (*httptest.Server, *[]recorded) {
	t.Helper()
	var mu sync.Mutex
	var seen []recorded
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rec := recorded{Method: r.Method, Path: r.URL.Path}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &rec.Body); err != nil {
				t.Errorf("body %q is not JSON: %v", raw, err)
			}
		}
		mu.Lock()
		seen = append(seen, rec)
		mu.Unlock()
		// As kube-apiserver answers: a JSON Status for errors.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func run(t *testing.T, server string, args ...string) (string, error) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	var out, errOut bytes.Buffer
	cmd := NewCommand("nativevirt", IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--server", server, "--insecure-skip-tls-verify", "--token", "t"}, args...))
	err := cmd.Execute()
	return out.String(), err
}

func TestCommandsCallVirtctlPaths(t *testing.T) {
	const sub = "/apis/subresources.kubevirt.io/v1/namespaces/"
	cases := []struct {
		args []string
		want recorded
	}{
		{[]string{"start", "vm1"}, recorded{"PUT", sub + "default/virtualmachines/vm1/start", map[string]any{}}},
		{[]string{"start", "vm1", "-n", "prod", "--dry-run"}, recorded{"PUT", sub + "prod/virtualmachines/vm1/start", map[string]any{"dryRun": []any{"All"}}}},
		{[]string{"start", "vm1", "--paused"}, recorded{"PUT", sub + "default/virtualmachines/vm1/start", map[string]any{"paused": true}}},
		{[]string{"stop", "vm1"}, recorded{"PUT", sub + "default/virtualmachines/vm1/stop", map[string]any{}}},
		{[]string{"stop", "vm1", "--force", "--grace-period=0"}, recorded{"PUT", sub + "default/virtualmachines/vm1/stop", map[string]any{"gracePeriod": float64(0)}}},
		{[]string{"restart", "vm1", "--namespace=ns2"}, recorded{"PUT", sub + "ns2/virtualmachines/vm1/restart", map[string]any{}}},
		{[]string{"restart", "vm1", "--force", "--grace-period", "0"}, recorded{"PUT", sub + "default/virtualmachines/vm1/restart", map[string]any{"gracePeriodSeconds": float64(0)}}},
		{[]string{"migrate", "vm1", "--added-node-selector", "zone=b"}, recorded{"PUT", sub + "default/virtualmachines/vm1/migrate", map[string]any{"addedNodeSelector": map[string]any{"zone": "b"}}}},
		{[]string{"pause", "vm", "vm1"}, recorded{"PUT", sub + "default/virtualmachineinstances/vm1/pause", map[string]any{}}},
		{[]string{"unpause", "vmi", "vmi1", "--dry-run"}, recorded{"PUT", sub + "default/virtualmachineinstances/vmi1/unpause", map[string]any{"dryRun": []any{"All"}}}},
		{[]string{"softreboot", "vmi1"}, recorded{"PUT", sub + "default/virtualmachineinstances/vmi1/softreboot", nil}},
		{[]string{"soft-reboot", "vmi1"}, recorded{"PUT", sub + "default/virtualmachineinstances/vmi1/softreboot", nil}},
	}
	for _, tc := range cases {
		srv, seen := fakeServer(t, http.StatusAccepted, "")
		out, err := run(t, srv.URL, tc.args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if !strings.Contains(out, "was scheduled to") {
			t.Errorf("%v: output %q", tc.args, out)
		}
		if diff := cmp.Diff([]recorded{tc.want}, *seen); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	srv, seen := fakeServer(t, http.StatusConflict,
		`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"VM is already running","reason":"Conflict","code":409}`)
	cases := []struct {
		args    []string
		wantErr string
		sent    bool
	}{
		{[]string{"start", "vm1"}, "VM is already running", true},
		{[]string{"stop", "vm1", "--grace-period=3"}, "--grace-period needs --force", false},
		{[]string{"stop", "vm1", "--force"}, "--force needs --grace-period", false},
		{[]string{"stop", "vm1", "--force", "--grace-period=-5"}, "0 or more", false},
		{[]string{"restart", "vm1", "--force", "--grace-period=5"}, "--grace-period=0", false},
		{[]string{"restart", "vm1", "--grace-period=0"}, "needs --force", false},
		{[]string{"pause", "pod", "x"}, "use vm or vmi", false},
		{[]string{"start"}, "accepts 1 arg", false},
		{[]string{"expand"}, "exactly one of --vm and --file", false},
		{[]string{"expand", "--vm", "a", "--file", "b"}, "exactly one of --vm and --file", false},
		{[]string{"expand", "--vm", "a", "-o", "xml"}, "yaml or json", false},
	}
	for _, tc := range cases {
		before := len(*seen)
		_, err := run(t, srv.URL, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
		}
		if sent := len(*seen) > before; sent != tc.sent {
			t.Errorf("%v: request sent = %v, want %v", tc.args, sent, tc.sent)
		}
	}
}

func TestEscapeReader(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{"hello", "hello"},
		{"ls\r\x1dignored", "ls\r"},
		{"\x1d", ""},
		{"", ""},
	}
	for _, tc := range cases {
		got, err := io.ReadAll(&escapeReader{r: strings.NewReader(tc.in)})
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCommandName(t *testing.T) {
	cases := map[string]string{
		"/usr/local/bin/nativevirt":         "nativevirt",
		"/usr/local/bin/kubectl-nativevirt": "kubectl nativevirt",
		"kubectl-native_virt":               "kubectl native-virt",
	}
	for in, want := range cases {
		if got := commandName(in); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestMigrateCancel: migrate-cancel deletes the unfinished migration of the instance, found by
// the kubevirt.io/vmi-name label, as virtctl does; with none unfinished it says so.
func TestMigrateCancel(t *testing.T) {
	const list = `{"kind":"VirtualMachineInstanceMigrationList","apiVersion":"kubevirt.io/v1","metadata":{},"items":[
		{"metadata":{"name":"old","namespace":"default"},"spec":{"vmiName":"vm1"},"status":{"phase":"Succeeded"}},
		{"metadata":{"name":"current","namespace":"default"},"spec":{"vmiName":"vm1"},"status":{"phase":"Running"}}]}`
	const finished = `{"kind":"VirtualMachineInstanceMigrationList","apiVersion":"kubevirt.io/v1","metadata":{},"items":[
		{"metadata":{"name":"old","namespace":"default"},"spec":{"vmiName":"vm1"},"status":{"phase":"Failed"}}]}`
	for _, tc := range []struct {
		name, reply, wantErr string
		wantDeleted          []string
	}{
		{name: "in flight", reply: list, wantDeleted: []string{"current"}},
		{name: "none to cancel", reply: finished, wantErr: "found no migration to cancel for vm1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var deleted, selectors []string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				const base = "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancemigrations"
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.Method == http.MethodGet && r.URL.Path == base:
					selectors = append(selectors, r.URL.Query().Get("labelSelector"))
					_, _ = io.WriteString(w, tc.reply)
				case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, base+"/"):
					deleted = append(deleted, strings.TrimPrefix(r.URL.Path, base+"/"))
					_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
				default:
					t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			defer srv.Close()
			out, err := run(t, srv.URL, "migrate-cancel", "vm1")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("migrate-cancel: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && !strings.Contains(out, "VM vm1 was scheduled to migrate-cancel"):
				t.Errorf("output %q", out)
			}
			if diff := cmp.Diff([]string{"kubevirt.io/vmi-name=vm1"}, selectors); diff != "" {
				t.Errorf("label selectors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDeleted, deleted); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePortForwardArguments(t *testing.T) {
	for _, tc := range []struct {
		target, resource, name string
		wantErr                bool
	}{
		{target: "vmi/a", resource: "virtualmachineinstances", name: "a"},
		{target: "vm/b", resource: "virtualmachines", name: "b"},
		{target: "c", resource: "virtualmachineinstances", name: "c"},
		{target: "pod/a", wantErr: true},
		{target: "vm/", wantErr: true},
	} {
		resource, name, err := parseForwardTarget(tc.target)
		if (err != nil) != tc.wantErr || resource != tc.resource || name != tc.name {
			t.Errorf("parseForwardTarget(%q) = %q, %q, %v", tc.target, resource, name, err)
		}
	}
	for _, tc := range []struct {
		arg     string
		want    portMapping
		wantErr bool
	}{
		{arg: "22", want: portMapping{local: 22, guest: streams.ForwardedPort{Port: 22, Protocol: "tcp"}}},
		{arg: "2222:22", want: portMapping{local: 2222, guest: streams.ForwardedPort{Port: 22, Protocol: "tcp"}}},
		{arg: ":80", want: portMapping{local: 0, guest: streams.ForwardedPort{Port: 80, Protocol: "tcp"}}},
		{arg: "0:80/tcp", want: portMapping{local: 0, guest: streams.ForwardedPort{Port: 80, Protocol: "tcp"}}},
		{arg: "5353:53/udp", want: portMapping{local: 5353, guest: streams.ForwardedPort{Port: 53, Protocol: "udp"}}},
		{arg: "53/sctp", wantErr: true},
		{arg: "53/", wantErr: true},
		{arg: "0", wantErr: true},
		{arg: "70000", wantErr: true},
		{arg: "x:22", wantErr: true},
		{arg: "-1:22", wantErr: true},
	} {
		got, err := parsePortMapping(tc.arg)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parsePortMapping(%q) = %+v, %v; want %+v, error %v", tc.arg, got, err, tc.want, tc.wantErr)
		}
	}
}
