package launcher

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The guest probes (KubeVirt's exec and guestAgentPing probes) run in the guest, through its
// QEMU guest agent: the kubelet runs `nativevirt-launcher --guest-probe [-- command...]` in the
// compute container as an exec probe (pkg/launcherpod/probes.go), and it asks the pod's libvirtd
// to pass guest-ping, or guest-exec and guest-exec-status, to the agent of the pod's guest. Exit
// status 0 is success; anything else (no guest yet, no agent, the command failing or running
// past the timeout) is failure, with the reason on stderr, which the kubelet puts into the pod's
// Unhealthy event.

// GuestProbe is one probe of the guest.
type GuestProbe struct {
	// Command runs in the guest (guest-exec); empty pings the guest agent (guest-ping).
	Command []string
	// Timeout bounds the whole probe (KubeVirt's timeoutSeconds, default 1 s).
	Timeout time.Duration
	// Poll is the interval between guest-exec-status calls.
	Poll time.Duration
}

// ErrGuestCommandFailed is returned (wrapped) when the guest's command ended with a non-zero
// exit status.
var ErrGuestCommandFailed = errors.New("the command failed in the guest")

// Run probes the guest of the pod's only running domain through h.
func (p GuestProbe) Run(ctx context.Context, h Hypervisor) error {
	if p.Timeout <= 0 {
		p.Timeout = time.Second
	}
	if p.Poll <= 0 {
		p.Poll = 50 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	domain, err := runningDomain(h)
	if err != nil {
		return err
	}
	if len(p.Command) == 0 {
		return agentCall(ctx, h, domain, "guest-ping", nil, nil)
	}
	var started struct {
		PID int `json:"pid"`
	}
	if err := agentCall(ctx, h, domain, "guest-exec", map[string]any{
		"path": p.Command[0], "arg": p.Command[1:], "capture-output": true,
	}, &started); err != nil {
		return err
	}
	stillRuns := fmt.Errorf("%s still runs in the guest after %s", strings.Join(p.Command, " "), p.Timeout)
	for {
		if ctx.Err() != nil {
			return stillRuns
		}
		var st struct {
			Exited   bool   `json:"exited"`
			ExitCode int    `json:"exitcode"`
			Signal   int    `json:"signal"`
			Out      string `json:"out-data"`
			Err      string `json:"err-data"`
		}
		if err := agentCall(ctx, h, domain, "guest-exec-status", map[string]any{"pid": started.PID}, &st); err != nil {
			if ctx.Err() != nil {
				return stillRuns
			}
			return err
		}
		if st.Exited {
			if st.ExitCode == 0 && st.Signal == 0 {
				return nil
			}
			return fmt.Errorf("%w: %s exited with status %d (signal %d)%s", ErrGuestCommandFailed,
				strings.Join(p.Command, " "), st.ExitCode, st.Signal, outputTail(st.Err, st.Out))
		}
		select {
		case <-ctx.Done():
			return stillRuns
		case <-time.After(p.Poll):
		}
	}
}

// runningDomain is the name of the pod's running domain.
func runningDomain(h Hypervisor) (string, error) {
	doms, err := h.Domains()
	if err != nil {
		return "", err
	}
	for _, d := range doms {
		if d.Active {
			return d.Name, nil
		}
	}
	return "", errors.New("no guest runs in this pod")
}

// agentCall sends one guest agent command, bounded by what is left of ctx (at least a second:
// libvirt counts its agent timeout in seconds), and decodes the answer's "return" into ret
// (nil: the answer is not read).
func agentCall(ctx context.Context, h Hypervisor, domain, command string, args map[string]any, ret any) error {
	req := map[string]any{"execute": command}
	if args != nil {
		req["arguments"] = args
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	wait := time.Second
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) > wait {
		wait = time.Until(deadline)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	answer, err := h.AgentCommand(domain, string(raw), wait)
	if err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	if ret == nil {
		return nil
	}
	var msg struct {
		Return json.RawMessage `json:"return"`
	}
	if err := json.Unmarshal([]byte(answer), &msg); err != nil || len(msg.Return) == 0 {
		return fmt.Errorf("%s: the guest agent answered %q", command, answer)
	}
	return json.Unmarshal(msg.Return, ret)
}

// outputTail is the end of the command's output (base64 in the agent's answer) for the error.
func outputTail(stderr, stdout string) string {
	for _, enc := range []string{stderr, stdout} {
		b, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		s := strings.TrimSpace(string(b))
		if len(s) > 200 {
			s = "…" + s[len(s)-200:]
		}
		return ": " + s
	}
	return ""
}

// RunGuestProbe connects to the pod's libvirtd (found through opts.RunDir) and runs p.
func RunGuestProbe(ctx context.Context, opts Options, p GuestProbe) error {
	opts.Complete()
	h, err := DialLibvirt(opts.URI())
	if err != nil {
		return err
	}
	defer func() { _ = h.Close() }()
	return p.Run(ctx, h)
}
