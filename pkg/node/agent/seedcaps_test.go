package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// recordSeeding makes the env's agent record its capability seedings (the libvirt calls made
// before each, and before each outcome query), failing with fail when it is set.
func recordSeeding(e *env, fail error) (seeded, asked *[][]string) {
	var s, a [][]string
	e.agent.instances.prepare.seed = func(socket string) (func() string, error) {
		if !strings.HasSuffix(socket, "/"+podfs.LibvirtSocket) {
			return nil, errors.New("not the launcher's libvirt socket: " + socket)
		}
		s = append(s, e.daemon.Calls())
		if fail != nil {
			return nil, fail
		}
		return func() string {
			a = append(a, e.daemon.Calls())
			return "node cache"
		}, nil
	}
	return &s, &a
}

func TestCapabilitiesSeededBeforeTheFirstDefine(t *testing.T) {
	e := newEnv(t)
	seeded, asked := recordSeeding(e, nil)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync()

	if diff := cmp.Diff([][]string{{"Dial"}}, *seeded); diff != "" {
		t.Errorf("libvirt calls before each seeding (-want +got):\n%s", diff)
	}
	// The outcome is asked once the define, which reads the capabilities, is done.
	if diff := cmp.Diff([][]string{{"Dial", "Define " + domain}}, *asked); diff != "" {
		t.Errorf("libvirt calls before each outcome query (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Dial", "Define " + domain, "Start " + domain}, e.daemon.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// Seeding only saves libvirt's own probe: when it fails, the guest still starts.
func TestCapabilitiesSeedingFailureDoesNotHoldTheStart(t *testing.T) {
	e := newEnv(t)
	seeded, _ := recordSeeding(e, errors.New("no such process"))
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync()

	if len(*seeded) != 1 {
		t.Errorf("%d seedings, want 1", len(*seeded))
	}
	if diff := cmp.Diff([]string{"Dial", "Define " + domain, "Start " + domain}, e.daemon.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
