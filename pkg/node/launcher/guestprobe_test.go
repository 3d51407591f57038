package launcher

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAgent is a guest agent that runs one kind of command: guest-exec starts a "process" that
// exits after polls status calls with exit code (and stderr).
type fakeAgent struct {
	mu       sync.Mutex
	polls    int
	exitCode int
	stderr   string
	execs    [][]string
	domains  []string
}

func (a *fakeAgent) answer(domain, command string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.domains = append(a.domains, domain)
	var req struct {
		Execute   string          `json:"execute"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(command), &req); err != nil {
		return "", err
	}
	switch req.Execute {
	case "guest-ping":
		return `{"return":{}}`, nil
	case "guest-exec":
		var args struct {
			Path    string   `json:"path"`
			Arg     []string `json:"arg"`
			Capture bool     `json:"capture-output"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil || !args.Capture {
			return "", fmt.Errorf("bad guest-exec arguments %s", req.Arguments)
		}
		a.execs = append(a.execs, append([]string{args.Path}, args.Arg...))
		return `{"return":{"pid":4242}}`, nil
	case "guest-exec-status":
		if string(req.Arguments) != `{"pid":4242}` {
			return "", fmt.Errorf("status of an unknown process %s", req.Arguments)
		}
		if a.polls > 0 {
			a.polls--
			return `{"return":{"exited":false}}`, nil
		}
		return fmt.Sprintf(`{"return":{"exited":true,"exitcode":%d,"err-data":%q}}`, a.exitCode,
			base64.StdEncoding.EncodeToString([]byte(a.stderr))), nil
	}
	return "", fmt.Errorf("unexpected command %s", req.Execute)
}

func TestGuestProbe(t *testing.T) {
	running := map[string]*fakeGuest{"stopped_vm": {}, "ns_vm": {active: true}}
	tests := []struct {
		name    string
		guests  map[string]*fakeGuest
		agent   *fakeAgent
		command []string
		wantErr string
	}{
		{name: "guest agent ping", guests: running, agent: &fakeAgent{}},
		{name: "no agent in the guest", guests: running, wantErr: "guest-ping: Guest agent is not responding"},
		{name: "no running guest", guests: map[string]*fakeGuest{"ns_vm": {}}, agent: &fakeAgent{}, wantErr: "no guest runs in this pod"},
		{name: "command succeeds after a while", guests: running, agent: &fakeAgent{polls: 3},
			command: []string{"cat", "/tmp/healthy"}},
		{name: "command fails", guests: running, agent: &fakeAgent{exitCode: 1, stderr: "cat: /tmp/healthy: No such file or directory\n"},
			command: []string{"cat", "/tmp/healthy"},
			wantErr: "cat /tmp/healthy exited with status 1 (signal 0): cat: /tmp/healthy: No such file or directory"},
		{name: "command outlives the timeout", guests: running, agent: &fakeAgent{polls: 1 << 30},
			command: []string{"sleep", "60"}, wantErr: "sleep 60 still runs in the guest after 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHypervisor(tt.guests)
			if tt.agent != nil {
				h.agent = tt.agent.answer
			}
			p := GuestProbe{Command: tt.command, Timeout: 300 * time.Millisecond, Poll: 5 * time.Millisecond}
			err := p.Run(context.Background(), h)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Run error %v, want one containing %q", err, tt.wantErr)
			}
			if tt.agent == nil {
				return
			}
			for _, d := range tt.agent.domains {
				if d != "ns_vm" {
					t.Errorf("agent command sent to %s, want the running domain ns_vm", d)
				}
			}
			if tt.command != nil && (len(tt.agent.execs) != 1 || strings.Join(tt.agent.execs[0], " ") != strings.Join(tt.command, " ")) {
				t.Errorf("guest-exec calls %v, want one of %v", tt.agent.execs, tt.command)
			}
		})
	}
	if !errors.Is(GuestProbe{Command: []string{"false"}}.Run(context.Background(), func() Hypervisor {
		h := newFakeHypervisor(running)
		h.agent = (&fakeAgent{exitCode: 1}).answer
		return h
	}()), ErrGuestCommandFailed) {
		t.Error("a failing command is not ErrGuestCommandFailed")
	}
}
