package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

func TestLongRunningRequestCheck(t *testing.T) {
	check := LongRunningRequestCheck()
	cases := []struct {
		info apirequest.RequestInfo
		want bool
	}{
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "kubevirt.io", Resource: "virtualmachineinstances", Subresource: "console", Verb: "get"}, true},
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "subresources.kubevirt.io", Resource: "virtualmachineinstances", Subresource: "vnc", Verb: "get"}, true},
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "kubevirt.io", Resource: "virtualmachineinstances", Verb: "watch"}, true},
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "subresources.kubevirt.io", Resource: "virtualmachines", Subresource: "portforward", Verb: "get"}, true},
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "subresources.kubevirt.io", Resource: "virtualmachineinstances", Subresource: "pause", Verb: "update"}, false},
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "kubevirt.io", Resource: "virtualmachines", Subresource: "start", Verb: "update"}, false},
		{apirequest.RequestInfo{IsResourceRequest: true, APIGroup: "kubevirt.io", Resource: "virtualmachines", Verb: "list"}, false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if got := check(r, &tc.info); got != tc.want {
			t.Errorf("%+v: long running %v, want %v", tc.info, got, tc.want)
		}
	}
}

// recordingHandler remembers which action was asked for.
type recordingHandler struct {
	key  string
	seen *[]string
}

func (h recordingHandler) ServeAction(w http.ResponseWriter, _ *http.Request, ns, name string) {
	*h.seen = append(*h.seen, h.key+" "+ns+"/"+name)
	w.WriteHeader(http.StatusAccepted)
}

func TestActionsRouting(t *testing.T) {
	var seen []string
	a := &actions{byKey: map[string]action{}}
	for _, key := range []string{"virtualmachines/start", "virtualmachineinstances/console", "virtualmachineinstances/portforward",
		"virtualmachineinstances/vnc", "virtualmachineinstances/vnc/screenshot"} {
		a.byKey[key] = action{handler: recordingHandler{key: key, seen: &seen}, takesPath: key == "virtualmachineinstances/portforward"}
	}
	cases := []struct {
		path string
		want int
	}{
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/start", 202},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/console", 202},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/console", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/start/more", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/console/22", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/portforward/22/tcp", 202},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/vnc/screenshot", 202},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/vnc/screenshot/x", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/vnc/other", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces//virtualmachines/vm1/start", 404},
		{"/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines//start", 404},
	}
	for _, tc := range cases {
		w := httptest.NewRecorder()
		a.ServeHTTP(w, httptest.NewRequest(http.MethodPut, tc.path, nil))
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.path, w.Code, tc.want)
		}
	}
	want := []string{"virtualmachines/start ns1/vm1", "virtualmachineinstances/console ns1/vmi1", "virtualmachineinstances/portforward ns1/vmi1",
		"virtualmachineinstances/vnc/screenshot ns1/vmi1"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("dispatched (-want +got):\n%s", diff)
	}
}

// TestActionAuthorizationAttributes: the filter chain authorizes every action as its own
// subresource with the verb of its method, in both groups, so RBAC rules such as
// {apiGroups: [subresources.kubevirt.io], resources: [virtualmachines/start], verbs: [update]}
// grant exactly that action.
func TestActionAuthorizationAttributes(t *testing.T) {
	f := &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	type attrs struct{ Group, Resource, Subresource, Verb, Namespace, Name string }
	cases := []struct {
		method, path string
		want         attrs
	}{
		{http.MethodPut, "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachines/vm/start",
			attrs{"subresources.kubevirt.io", "virtualmachines", "start", "update", "ns", "vm"}},
		{http.MethodPut, "/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm/stop",
			attrs{"kubevirt.io", "virtualmachines", "stop", "update", "ns", "vm"}},
		{http.MethodPut, "/apis/kubevirt.io/v1alpha3/namespaces/ns/virtualmachineinstances/vmi/pause",
			attrs{"kubevirt.io", "virtualmachineinstances", "pause", "update", "ns", "vmi"}},
		{http.MethodGet, "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachineinstances/vmi/console",
			attrs{"subresources.kubevirt.io", "virtualmachineinstances", "console", "get", "ns", "vmi"}},
		{http.MethodGet, "/apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances/vmi/vnc",
			attrs{"kubevirt.io", "virtualmachineinstances", "vnc", "get", "ns", "vmi"}},
		{http.MethodGet, "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachines/vm/portforward/22/tcp",
			attrs{"subresources.kubevirt.io", "virtualmachines", "portforward", "get", "ns", "vm"}},
		{http.MethodGet, "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachineinstances/vmi/vnc/screenshot",
			attrs{"subresources.kubevirt.io", "virtualmachineinstances", "vnc", "get", "ns", "vmi"}},
	}
	for _, tc := range cases {
		info, err := f.NewRequestInfo(httptest.NewRequest(tc.method, tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		got := attrs{info.APIGroup, info.Resource, info.Subresource, info.Verb, info.Namespace, info.Name}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
		}
	}
}
