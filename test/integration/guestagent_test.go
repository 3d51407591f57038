package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// TestGuestAgentActions: guestosinfo, userlist and filesystemlist (virtctl guestosinfo, userlist,
// fslist) reach the instance's node agent as GETs with the instance's uid, and its JSON comes
// back as it is; an instance that does not run is refused before the agent is asked.
func TestGuestAgentActions(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	client := w.srv.HTTPClient(t)
	running := makeVMI(t, c, "ga-running", kubevirtv1.Running, false)
	w.agent.run(running.Name, running.UID)
	makeVMI(t, c, "ga-scheduled", kubevirtv1.Scheduled, false)

	var want []string
	for _, variant := range pathVariants {
		for _, action := range []string{"guestosinfo", "userlist", "filesystemlist"} {
			url := w.srv.Config.Host + actionPath(variant, "virtualmachineinstances", "ga-running", action)
			resp := do(t, client, http.MethodGet, url, "", nil)
			wantBody := fmt.Sprintf(`{"kind":"VirtualMachineInstanceGuestAgentInfo","apiVersion":"subresources.kubevirt.io/v1","hostname":"ga-running","action":%q}`, action)
			if resp.code != http.StatusOK || resp.body != wantBody {
				t.Errorf("%s %s: %d %s, want 200 with the agent's answer", variant, action, resp.code, resp.body)
			}
			want = append(want, "GET default/ga-running/"+action+" uid-ok")
			url = w.srv.Config.Host + actionPath(variant, "virtualmachineinstances", "ga-scheduled", action)
			if resp := do(t, client, http.MethodGet, url, "", nil); resp.code != http.StatusConflict || !strings.Contains(resp.body, "VMI is not running") {
				t.Errorf("%s %s of a scheduled VMI: %d %s, want 409", variant, action, resp.code, resp.body)
			}
			if resp := do(t, client, http.MethodPut, w.srv.Config.Host+actionPath(variant, "virtualmachineinstances", "ga-running", action), "", nil); resp.code != http.StatusMethodNotAllowed {
				t.Errorf("%s PUT %s: %d %s, want 405", variant, action, resp.code, resp.body)
			}
		}
	}
	// The CLI prints the agent's answer as indented JSON, and the server's refusal.
	var out bytes.Buffer
	if err := runCLI(t, w.srv, strings.NewReader(""), &out, "guestosinfo", "ga-running"); err != nil || !strings.Contains(out.String(), `"hostname": "ga-running"`) {
		t.Errorf("nativevirt guestosinfo: %v\n%s", err, out.String())
	}
	want = append(want, "GET default/ga-running/guestosinfo uid-ok")
	if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, "fslist", "ga-scheduled"); err == nil || !strings.Contains(err.Error(), "VMI is not running") {
		t.Errorf("nativevirt fslist of a scheduled VMI: %v, want the 409 message", err)
	}
	if got := w.agent.seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests at the agent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestScreenshotThroughNodeAgent: vnc/screenshot (virtctl vnc screenshot) comes back as the node
// agent's PNG, in subresources.kubevirt.io only; moveCursor=true is refused, not ignored.
func TestScreenshotThroughNodeAgent(t *testing.T) {
	w := startStreamWorld(t, streams.APIServerCommonName)
	c := w.srv.Clientset(t)
	client := w.srv.HTTPClient(t)
	running := makeVMI(t, c, "shot-running", kubevirtv1.Running, false)
	w.agent.run(running.Name, running.UID)
	makeVMI(t, c, "shot-scheduled", kubevirtv1.Scheduled, false)

	base := w.srv.Config.Host + actionPath("sub", "virtualmachineinstances", "shot-running", "vnc/screenshot")
	req, err := http.NewRequest(http.MethodGet, base+"?moveCursor=false", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || string(body) != "\x89PNG of shot-running" {
		t.Errorf("screenshot: %d %s %q, want the agent's PNG", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	// nativevirt vnc screenshot writes the PNG to a file.
	file := filepath.Join(t.TempDir(), "shot.png")
	if err := runCLI(t, w.srv, strings.NewReader(""), io.Discard, "vnc", "screenshot", "shot-running", "--file", file); err != nil {
		t.Errorf("nativevirt vnc screenshot: %v", err)
	} else if got, err := os.ReadFile(file); err != nil || string(got) != "\x89PNG of shot-running" {
		t.Errorf("the screenshot file holds %q (%v), want the agent's PNG", got, err)
	}
	for _, tc := range []struct {
		url      string
		wantCode int
		wantMsg  string
	}{
		{base + "?moveCursor=true", http.StatusBadRequest, "moveCursor=true is not supported"},
		{w.srv.Config.Host + actionPath("sub", "virtualmachineinstances", "shot-scheduled", "vnc/screenshot"), http.StatusConflict, "VMI is not running"},
		{w.srv.Config.Host + actionPath("v1", "virtualmachineinstances", "shot-running", "vnc/screenshot"), http.StatusNotFound, ""},
		{base + "/more", http.StatusNotFound, ""},
	} {
		if resp := do(t, client, http.MethodGet, tc.url, "", nil); resp.code != tc.wantCode || !strings.Contains(resp.body, tc.wantMsg) {
			t.Errorf("GET %s: %d %s, want %d with %q", tc.url, resp.code, resp.body, tc.wantCode, tc.wantMsg)
		}
	}
}
