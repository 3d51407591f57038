package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/endpoints/request"
)

func TestTablePageLimit(t *testing.T) {
	for limit, want := range map[int64]int64{0: 0, 1: 1, 499: 499, 500: 5000, 600: 5000, 5000: 5000, 9000: 9000} {
		if got := tablePageLimit(limit); got != want {
			t.Errorf("tablePageLimit(%d) = %d, want %d", limit, got, want)
		}
	}
}

func TestTablePagesRewritesOnlyTableListsOfItsGroups(t *testing.T) {
	const kubectlAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	cases := []struct {
		name, group, verb, accept, query, want string
	}{
		{"kubectl get", "kubevirt.io", "list", kubectlAccept, "limit=500", "limit=5000"},
		{"continue kept", "kubevirt.io", "list", kubectlAccept, "continue=abc&limit=500", "continue=abc&limit=5000"},
		{"small limit", "kubevirt.io", "list", kubectlAccept, "limit=100", "limit=100"},
		{"no limit", "kubevirt.io", "list", kubectlAccept, "", ""},
		{"plain JSON list", "kubevirt.io", "list", "application/json", "limit=500", "limit=500"},
		{"table only as a fallback", "kubevirt.io", "list", "application/json, application/json;as=Table;v=v1;g=meta.k8s.io", "limit=500", "limit=500"},
		{"another group", "apps", "list", kubectlAccept, "limit=500", "limit=500"},
		{"a get", "kubevirt.io", "get", kubectlAccept, "limit=500", "limit=500"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			h := tablePages(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.URL.RawQuery }),
				[]string{"kubevirt.io"})
			r := httptest.NewRequest(http.MethodGet, "/apis/"+c.group+"/v1/virtualmachines?"+c.query, nil)
			r.Header.Set("Accept", c.accept)
			r = r.WithContext(request.WithRequestInfo(r.Context(), &request.RequestInfo{
				IsResourceRequest: true, Verb: c.verb, APIGroup: c.group, APIVersion: "v1", Resource: "virtualmachines",
			}))
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != c.want {
				t.Errorf("query %q, want %q", got, c.want)
			}
		})
	}
}
