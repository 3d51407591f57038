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
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// anonymous names the unauthenticated client in the matrix (no kubeconfig credentials).
const anonymous = "anonymous"

// access is what a request needs: which users may make it follows from it.
type access int

const (
	// readAccess: get, list, watch of the kubevirt.io resources and their status.
	readAccess access = iota
	// writeAccess: create, update, patch, delete, deletecollection.
	writeAccess
	// actionAccess: the VM/VMI actions (start, stop, console, ...). They are authorized before
	// they are routed, so an authorized call to an action not served yet gets 404, never 403.
	actionAccess
	// anyAuthenticatedAccess: subresources.kubevirt.io version and healthz (kubevirt.io:default).
	anyAuthenticatedAccess
	// guestAgentAccess: the guest agent's reports (guestosinfo, ...), which view may read. Like
	// actions, they are authorized before the instance is looked at.
	guestAgentAccess
	// expandAccess: virtctl expand (expand-spec of a stored VM, expand-vm-spec of a VM sent),
	// which view may use as in KubeVirt; nothing is written.
	expandAccess
)

// allowedUsers says who may make a request of each access: anonymous never; nv-nobody has no
// binding; nv-viewer, nv-editor and nv-admin are bound to view, edit and admin in the test
// namespace (RoleBindings to the built-in ClusterRoles that aggregate kubevirt.io:*).
var allowedUsers = map[access][]string{
	readAccess:             {"nv-viewer", "nv-editor", "nv-admin"},
	writeAccess:            {"nv-editor", "nv-admin"},
	actionAccess:           {"nv-editor", "nv-admin"},
	anyAuthenticatedAccess: {"nv-nobody", "nv-viewer", "nv-editor", "nv-admin"},
	guestAgentAccess:       {"nv-viewer", "nv-editor", "nv-admin"},
	expandAccess:           {"nv-viewer", "nv-editor", "nv-admin"},
}

// matrixUsers are the clients of the matrix, in report order; roles maps each bound user to the
// ClusterRole of its RoleBinding.
var (
	matrixUsers = []string{anonymous, "nv-nobody", "nv-viewer", "nv-editor", "nv-admin"}
	roles       = map[string]string{"nv-viewer": "view", "nv-editor": "edit", "nv-admin": "admin"}
)

// TestRBACMatrix sends every kind of request as every user, straight through kube-apiserver
// with client-go's transport, and checks who gets through: kube-apiserver authorizes against
// RBAC before proxying, and nativevirt-apiserver authorizes again by SubjectAccessReview.
// Mutations use dryRun=All, so the seed VM stays unchanged and every row sees the same object;
// TestRBACEditorWritesForReal shows that the same rights work without dry run.
func TestRBACMatrix(t *testing.T) {
	c := requireNativeVirt(t)
	ns := testNamespace(t, c, "e2e-rbac")
	bindRoles(t, c, ns)
	createSeedVM(t, c, ns, "seed")

	vms := "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines"
	vmis := "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances"
	sub := "/apis/subresources.kubevirt.io/v1"
	subNS := sub + "/namespaces/" + ns
	dry := "?dryRun=All"
	requests := []matrixRequest{
		{"get vm", readAccess, http.MethodGet, vms + "/seed", ""},
		{"get vm (v1alpha3)", readAccess, http.MethodGet, "/apis/kubevirt.io/v1alpha3/namespaces/" + ns + "/virtualmachines/seed", ""},
		{"list vms", readAccess, http.MethodGet, vms, ""},
		{"watch vms", readAccess, http.MethodGet, vms + "?watch=true&timeoutSeconds=1", ""},
		{"get vm/status", readAccess, http.MethodGet, vms + "/seed/status", ""},
		{"list vmis", readAccess, http.MethodGet, vmis, ""},
		{"create vm", writeAccess, http.MethodPost, vms + dry, vmJSON("matrix-created")},
		// No resourceVersion: controllers may write the VM's status meanwhile; the update is
		// unconditional.
		{"update vm", writeAccess, http.MethodPut, vms + "/seed" + dry, vmJSON("seed")},
		{"patch vm", writeAccess, http.MethodPatch, vms + "/seed" + dry, `{"metadata":{"labels":{"patched":"yes"}}}`},
		{"delete vm", writeAccess, http.MethodDelete, vms + "/seed" + dry, ""},
		{"deletecollection vms", writeAccess, http.MethodDelete, vms + dry, ""},
		{"start vm (subresources.kubevirt.io)", actionAccess, http.MethodPut, subNS + "/virtualmachines/seed/start" + dry, "{}"},
		{"start vm (kubevirt.io)", actionAccess, http.MethodPut, vms + "/seed/start" + dry, "{}"},
		{"stop vm (subresources.kubevirt.io)", actionAccess, http.MethodPut, subNS + "/virtualmachines/seed/stop" + dry, "{}"},
		{"pause vmi (subresources.kubevirt.io)", actionAccess, http.MethodPut, subNS + "/virtualmachineinstances/seed/pause" + dry, "{}"},
		{"addvolume vm (subresources.kubevirt.io)", actionAccess, http.MethodPut, subNS + "/virtualmachines/seed/addvolume" + dry,
			`{"name":"matrix","disk":{},"volumeSource":{"persistentVolumeClaim":{"claimName":"matrix"}}}`},
		{"removevolume vmi (kubevirt.io)", actionAccess, http.MethodPut, vmis + "/seed/removevolume" + dry, `{"name":"matrix"}`},
		{"console vmi (subresources.kubevirt.io)", actionAccess, http.MethodGet, subNS + "/virtualmachineinstances/seed/console", ""},
		{"portforward vm (subresources.kubevirt.io)", actionAccess, http.MethodGet, subNS + "/virtualmachines/seed/portforward/22/tcp", ""},
		{"guestosinfo vmi (subresources.kubevirt.io)", guestAgentAccess, http.MethodGet, subNS + "/virtualmachineinstances/seed/guestosinfo", ""},
		{"userlist vmi (kubevirt.io)", guestAgentAccess, http.MethodGet, vmis + "/seed/userlist", ""},
		{"expand-spec vm", expandAccess, http.MethodGet, subNS + "/virtualmachines/seed/expand-spec", ""},
		{"expand-vm-spec", expandAccess, http.MethodPut, subNS + "/expand-vm-spec", vmJSON("matrix-expanded")},
		{"version", anyAuthenticatedAccess, http.MethodGet, sub + "/version", ""},
		{"healthz", anyAuthenticatedAccess, http.MethodGet, sub + "/healthz", ""},
	}

	clients := map[string]*userClient{}
	for _, u := range matrixUsers {
		clients[u] = newUserClient(t, c, u)
	}
	codes := map[string]map[string]int{}
	for _, rq := range requests {
		codes[rq.name] = map[string]int{}
		for _, u := range matrixUsers {
			allowed := contains(allowedUsers[rq.need], u)
			t.Run(rq.name+"/"+u, func(t *testing.T) {
				code, body, err := clients[u].do(rq.method, rq.path, rq.body)
				if err != nil {
					t.Fatal(err)
				}
				codes[rq.name][u] = code
				if msg := judge(rq.need, u, allowed, code); msg != "" {
					t.Errorf("%s %s as %s: %d %s: %s", rq.method, rq.path, u, code, msg, snippet(body))
				}
			})
		}
	}
	t.Logf("HTTP status by request and user (namespace %s):\n%s", ns, matrixReport(requests, codes))
}

// judge returns why code is wrong for a request of kind need by user, or "" when it is right.
func judge(need access, user string, allowed bool, code int) string {
	denied := code == http.StatusUnauthorized || code == http.StatusForbidden
	switch {
	case !allowed && user == anonymous && denied:
		return ""
	case !allowed && code == http.StatusForbidden:
		return ""
	case !allowed:
		return "want 403 Forbidden" + map[bool]string{true: " or 401", false: ""}[user == anonymous]
	case denied:
		return "want the request authorized"
	case (need == actionAccess || need == guestAgentAccess) && code < 500:
		// Authorized; the action may not be served yet (404) or may refuse this VM's state.
		return ""
	case code >= 200 && code < 300:
		return ""
	default:
		return "want 2xx"
	}
}

// bindRoles binds nv-viewer, nv-editor and nv-admin to view, edit and admin in ns and waits
// until kube-apiserver's RBAC authorizer sees the bindings, so that nativevirt-apiserver's
// SubjectAccessReview cache never stores an answer from before they existed.
func bindRoles(t *testing.T, c *framework.Cluster, ns string) {
	t.Helper()
	k := c.KubectlFor(t, framework.AdminUser)
	users := make([]string, 0, len(roles))
	for u := range roles {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		k.MustRun("-n", ns, "create", "rolebinding", u+"-"+roles[u], "--clusterrole="+roles[u], "--user="+u)
	}
	checks := map[string]string{"nv-viewer": "list", "nv-editor": "create", "nv-admin": "create"}
	for _, u := range users {
		cfg, err := c.RESTConfigAs(u)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: checks[u], Group: "kubevirt.io", Resource: "virtualmachines"},
		}}
		ok := eventually(30*time.Second, func() bool {
			res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
			return err == nil && res.Status.Allowed
		})
		if !ok {
			t.Fatalf("%s may still not %s virtualmachines.kubevirt.io in %s after binding %s: is kubevirt.io:%s aggregated into %s?",
				u, checks[u], ns, roles[u], roles[u], roles[u])
		}
	}
}

// createSeedVM creates a stopped VM as the admin.
func createSeedVM(t *testing.T, c *framework.Cluster, ns, name string) {
	t.Helper()
	admin := newUserClient(t, c, framework.AdminUser)
	path := "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines"
	code, body, err := admin.do(http.MethodPost, path, vmJSON(name))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("creating VM %s as admin: %d %v %s", name, code, err, snippet(body))
	}
}

// vmJSON is a minimal stopped VirtualMachine (kubevirt.io/v1).
func vmJSON(name string) string {
	return fmt.Sprintf(`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":%q},`+
		`"spec":{"runStrategy":"Halted","template":{"spec":{"domain":{"devices":{},"resources":{"requests":{"memory":"64M"}}}}}}}`, name)
}

// userClient sends raw requests to kube-apiserver as one user.
type userClient struct {
	host string
	http *http.Client
}

// newUserClient authenticates as user with its kubeconfig, or not at all for anonymous.
func newUserClient(t *testing.T, c *framework.Cluster, user string) *userClient {
	t.Helper()
	var cfg *rest.Config
	var err error
	if user == anonymous {
		cfg, err = c.RESTConfig()
		if err == nil {
			cfg = rest.AnonymousClientConfig(cfg)
		}
	} else {
		cfg, err = c.RESTConfigAs(user)
	}
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &userClient{host: strings.TrimSuffix(cfg.Host, "/"), http: hc}
}

// do sends one request and returns the status and body. A watch is cut off after the status
// line: its status is the answer to the authorization question.
func (u *userClient) do(method, path, body string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.host+path, rd)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Accept", "application/json")
	switch method {
	case http.MethodPatch:
		req.Header.Set("Content-Type", "application/merge-patch+json")
	case http.MethodPost, http.MethodPut:
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := u.http.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if strings.Contains(path, "watch=true") && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "", nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// matrixRequest is one row of the matrix: a request and the access it needs.
type matrixRequest struct {
	name   string
	need   access
	method string
	path   string
	body   string
}

// matrixReport renders codes as a table: one row per request, one column per user.
func matrixReport(requests []matrixRequest, codes map[string]map[string]int) string {
	var sb strings.Builder
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "REQUEST\t%s\n", strings.Join(matrixUsers, "\t"))
	for _, rq := range requests {
		cells := make([]string, len(matrixUsers))
		for i, u := range matrixUsers {
			cells[i] = fmt.Sprint(codes[rq.name][u])
		}
		fmt.Fprintf(w, "%s %s\t%s\n", rq.method, rq.name, strings.Join(cells, "\t"))
	}
	_ = w.Flush()
	return sb.String()
}

// TestRBACEditorWritesForReal repeats the matrix's writes without dry run: the editor creates,
// updates and deletes a VM; the viewer's create is refused and leaves nothing behind.
func TestRBACEditorWritesForReal(t *testing.T) {
	c := requireNativeVirt(t)
	ns := testNamespace(t, c, "e2e-rbac-real")
	bindRoles(t, c, ns)
	vms := "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines"
	editor := newUserClient(t, c, "nv-editor")
	viewer := newUserClient(t, c, "nv-viewer")
	admin := newUserClient(t, c, framework.AdminUser)

	steps := []struct {
		name     string
		client   *userClient
		method   string
		path     string
		body     func() string
		wantCode int
	}{
		{"viewer create", viewer, http.MethodPost, vms, func() string { return vmJSON("by-viewer") }, http.StatusForbidden},
		{"admin sees no viewer VM", admin, http.MethodGet, vms + "/by-viewer", nil, http.StatusNotFound},
		{"editor create", editor, http.MethodPost, vms, func() string { return vmJSON("by-editor") }, http.StatusCreated},
		{"viewer get", viewer, http.MethodGet, vms + "/by-editor", nil, http.StatusOK},
		// Without a resourceVersion: the update is unconditional.
		{"viewer update", viewer, http.MethodPut, vms + "/by-editor", func() string { return vmJSON("by-editor") }, http.StatusForbidden},
		{"editor update", editor, http.MethodPut, vms + "/by-editor", func() string { return vmJSON("by-editor") }, http.StatusOK},
		{"viewer patch", viewer, http.MethodPatch, vms + "/by-editor", func() string { return `{"metadata":{"labels":{"by":"viewer"}}}` }, http.StatusForbidden},
		{"editor patch", editor, http.MethodPatch, vms + "/by-editor", func() string { return `{"metadata":{"labels":{"by":"editor"}}}` }, http.StatusOK},
		{"viewer delete", viewer, http.MethodDelete, vms + "/by-editor", nil, http.StatusForbidden},
		{"editor delete", editor, http.MethodDelete, vms + "/by-editor", nil, http.StatusOK},
		{"admin sees it gone", admin, http.MethodGet, vms + "/by-editor", nil, http.StatusNotFound},
	}
	for _, s := range steps {
		body := ""
		if s.body != nil {
			body = s.body()
		}
		code, resp, err := s.client.do(s.method, s.path, body)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s %s -> %d", s.name, s.method, s.path, code)
		if code != s.wantCode {
			t.Fatalf("%s: %s %s answered %d, want %d: %s", s.name, s.method, s.path, code, s.wantCode, snippet(resp))
		}
	}
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// snippet shortens a response body for an error message.
func snippet(body string) string {
	body = strings.TrimSpace(body)
	if len(body) > 300 {
		return body[:300] + "..."
	}
	return body
}
