package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestHealthAndMetrics: /healthz, /livez, /readyz (with the etcd check) and Prometheus /metrics.
func TestHealthAndMetrics(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	// One API request, so the request metrics have a kubevirt.io sample.
	if resp, err := client.Get(srv.Config.Host + "/apis/kubevirt.io/v1/virtualmachines"); err != nil {
		t.Fatalf("list: %v", err)
	} else {
		resp.Body.Close()
	}
	cases := []struct {
		path string
		want []string
	}{
		{"/healthz", []string{"ok"}},
		{"/livez?verbose", []string{"[+]etcd ok", "livez check passed"}},
		{"/readyz?verbose", []string{"[+]etcd-readiness ok", "readyz check passed"}},
		{"/metrics", []string{"apiserver_request_total", `group="kubevirt.io"`, "etcd_request_duration_seconds"}},
		{"/apis/subresources.kubevirt.io/v1/version", []string{`"gitVersion"`, `"goVersion"`}},
		{"/apis/subresources.kubevirt.io/v1/healthz", []string{"ok"}},
	}
	for _, c := range cases {
		resp, err := client.Get(srv.Config.Host + c.path)
		if err != nil {
			t.Fatalf("GET %s: %v", c.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", c.path, resp.Status)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("GET %s: response lacks %q", c.path, w)
			}
		}
	}
}
