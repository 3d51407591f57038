package streamserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// TestMissingPartIsNotFound: a request whose part of the Backend the agent does not serve is
// answered 404, not a panic on a nil interface.
func TestMissingPartIsNotFound(t *testing.T) {
	h := &handler{}
	vmi := streams.Target{Namespace: "default", Name: "vm"}
	for _, tt := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
	}{
		{"command", func(w http.ResponseWriter, r *http.Request) {
			t := vmi
			t.Action = streams.ActionPause
			h.command(w, r, t, "uid", klog.Background())
		}},
		{"stream", func(w http.ResponseWriter, r *http.Request) {
			t := vmi
			t.Action = streams.ActionConsole
			h.stream(w, r, t, "uid", klog.Background())
		}},
		{"query", func(w http.ResponseWriter, r *http.Request) {
			t := vmi
			t.Action = streams.ActionScreenshot
			h.query(w, r, t, "uid")
		}},
		{"tunnel", func(w http.ResponseWriter, r *http.Request) {
			r.URL.Path = streams.MigrationTarget{UID: "mig-1", Channel: streams.ChannelQEMU}.Path()
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", streams.MigrationUpgrade)
			h.tunnel(w, r)
		}},
	} {
		w := httptest.NewRecorder()
		tt.serve(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "does not serve") {
			t.Errorf("%s without its part: %d %s, want 404", tt.name, w.Code, w.Body)
		}
	}
}
