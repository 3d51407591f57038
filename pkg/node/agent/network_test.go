package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// netnsIP is the pod IP the recorded network preparation finds on the pod's interface.
const netnsIP = "10.88.1.9"

// netCall is one PrepareNetwork call with the libvirt calls made before it.
type netCall struct {
	vmi, socket, runDir string
	libvirtBefore       []string
}

// recordNetwork makes the env's agent record its network preparations,
// failing with fail while it is set.
func recordNetwork(e *env, fail *error) *[]netCall {
	var calls []netCall
	e.agent.instances.prepare.prepareNetwork = func(_ context.Context, vmi *kubevirtv1.VirtualMachineInstance, socket, runDir string) ([]string, error) {
		// The run directory is the launcher's private volume: leave a file there.
		if err := os.WriteFile(filepath.Join(runDir, "network-prepared"), []byte(vmi.Name), 0o644); err != nil {
			return nil, err
		}
		calls = append(calls, netCall{vmi: vmi.Name, socket: socket, runDir: runDir, libvirtBefore: e.daemon.Calls()})
		if fail != nil {
			return nil, *fail
		}
		return []string{netnsIP}, nil
	}
	return &calls
}

func TestNetworkPreparedBeforeTheDomainIsDefined(t *testing.T) {
	e := newEnv(t)
	calls := recordNetwork(e, nil)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	e.sync()

	if len(*calls) != 1 {
		t.Fatalf("%d network preparations, want 1", len(*calls))
	}
	c := (*calls)[0]
	if diff := cmp.Diff([]string{"Dial"}, c.libvirtBefore); diff != "" {
		t.Errorf("libvirt calls before the network was prepared (-want +got):\n%s", diff)
	}
	if c.vmi != vmName || !strings.HasSuffix(c.socket, "/"+podfs.LibvirtSocket) {
		t.Errorf("prepared for %q through socket %q, want %s through the launcher's %s", c.vmi, c.socket, vmName, podfs.LibvirtSocket)
	}
	private := podfs.Locator{KubeletRoot: e.root}.EmptyDir(podUID, podfs.PrivateVolume)
	if b, err := os.ReadFile(filepath.Join(private, "network-prepared")); err != nil || string(b) != vmName {
		t.Errorf("the run directory %q is not the launcher's private volume: %v", c.runDir, err)
	}
	if diff := cmp.Diff([]string{"Dial", "Define " + domain, "Start " + domain}, e.daemon.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	// A running guest, also after an agent restart, is never prepared again.
	e.sync()
	e.agent = e.newAgent()
	calls = recordNetwork(e, nil)
	e.sync()
	if len(*calls) != 0 {
		t.Errorf("%d preparations for a running guest, want none", len(*calls))
	}
}

func TestNetworkFailureHoldsTheStart(t *testing.T) {
	e := newEnv(t)
	fail := errors.New("nft: no table")
	calls := recordNetwork(e, &fail)
	e.addVMI(scheduledVMI())
	e.addLauncher(true)
	if _, err := e.agent.instances.sync(context.Background(), key); err == nil || !strings.Contains(err.Error(), "preparing the pod network: nft: no table") {
		t.Fatalf("sync: %v, want the preparation's error", err)
	}
	for _, c := range e.daemon.Calls() {
		if strings.HasPrefix(c, "Define") || strings.HasPrefix(c, "Start") {
			t.Errorf("libvirt call %q although the network is not ready", c)
		}
	}
	// The retry prepares again and starts.
	fail = nil
	e.sync()
	if len(*calls) != 2 {
		t.Errorf("%d preparations, want 2 (the failed one and the retry)", len(*calls))
	}
	if got := e.daemon.Calls(); len(got) == 0 || got[len(got)-1] != "Start "+domain {
		t.Errorf("calls %v, want the domain started after the retry", got)
	}
}

// TestRunningStatusHasThePodIPBeforeTheKubelet: the kubelet writes the pod's IPs into its
// status at its next status update, often after the domain started. The start's Running status
// takes them from the pod's interface, so that the kubelet's update costs no second write.
func TestRunningStatusHasThePodIPBeforeTheKubelet(t *testing.T) {
	e := newEnv(t)
	recordNetwork(e, nil)
	e.addVMI(scheduledVMI())
	pod := e.addPod("virt-launcher-vm-abcde", podUID, netnsIP, true)
	pod.Status.PodIP, pod.Status.PodIPs = "", nil
	if err := e.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
	e.sync()
	st := e.getVMI().Status
	if st.Phase != kubevirtv1.Running || len(st.Interfaces) != 1 || st.Interfaces[0].IP != netnsIP ||
		!cmp.Equal(st.Interfaces[0].IPs, []string{netnsIP}) {
		t.Fatalf("phase %s, interfaces %+v: want Running with the pod interface's IP %s", st.Phase, st.Interfaces, netnsIP)
	}
	writes := e.writeCount()

	// The kubelet catches up: the same IP, nothing to write.
	pod = pod.DeepCopy()
	pod.Status.PodIP, pod.Status.PodIPs = netnsIP, []corev1.PodIP{{IP: netnsIP}}
	if err := e.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
	e.sync()
	if got := e.writeCount(); got != writes {
		t.Errorf("%d status writes after the kubelet reported the pod's IP, want none", got-writes)
	}
}
