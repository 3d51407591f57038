package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func TestListContinue(t *testing.T) {
	cases := []struct {
		name, body, want string
		wantErr          bool
	}{
		{name: "continue", body: `{"kind":"VirtualMachineList","apiVersion":"kubevirt.io/v1","metadata":{"resourceVersion":"7","continue":"abc"},"items":[{}]}`, want: "abc"},
		{name: "last page", body: `{"kind":"VirtualMachineList","metadata":{"resourceVersion":"7"},"items":[]}`, want: ""},
		{name: "items first", body: `{"items":[{"metadata":{"continue":"not this"}}],"metadata":{"continue":"xyz"}}`, want: "xyz"},
		{name: "no metadata", body: `{"kind":"Status","items":[]}`, wantErr: true},
		{name: "not an object", body: `[1,2]`, wantErr: true},
		{name: "truncated", body: `{"kind":"VirtualMachineList","metadata":{"continue":`, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := listContinue(strings.NewReader(c.body))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("continue = %q, want %q", got, c.want)
			}
		})
	}
}

// TestReceivedPaged follows continue tokens through a server of three pages, on the resource's
// namespaced path with the limit asked for.
func TestReceivedPaged(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Query().Get("limit") != "2" {
			http.Error(w, "limit", http.StatusBadRequest)
			return
		}
		next := map[string]string{"": "p2", "p2": "p3", "p3": ""}[r.URL.Query().Get("continue")]
		fmt.Fprintf(w, `{"kind":"VirtualMachineList","apiVersion":"kubevirt.io/v1","metadata":{"continue":%q},"items":[{},{}]}`, next)
	}))
	defer srv.Close()
	read, err := receivedPaged(Target{Name: Direct, Config: &rest.Config{Host: srv.URL}, Resource: VMResource}, "ns1")
	if err != nil {
		t.Fatal(err)
	}
	pages, objects, err := read(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if pages != 3 || objects != -1 {
		t.Errorf("pages, objects = %d, %d; want 3, -1", pages, objects)
	}
	want := []string{
		"/apis/kubevirt.io/v1/namespaces/ns1/virtualmachines?limit=2",
		"/apis/kubevirt.io/v1/namespaces/ns1/virtualmachines?continue=p2&limit=2",
		"/apis/kubevirt.io/v1/namespaces/ns1/virtualmachines?continue=p3&limit=2",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
}

func TestReceivedPagedError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"kind":"Status","code":403}`, http.StatusForbidden)
	}))
	defer srv.Close()
	read, err := receivedPaged(Target{Config: &rest.Config{Host: srv.URL}, Resource: VMResource}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := read(context.Background(), 500); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("err = %v, want the 403", err)
	}
}
