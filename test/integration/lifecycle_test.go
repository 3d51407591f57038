package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// request is one expected state change request; uid means "the instance's uid".
type request struct {
	Action kubevirtv1.StateChangeRequestAction
	UID    bool
	// Paused: a start request with KubeVirt's "paused" data (virtctl start --paused).
	Paused bool
}

// vmOutcome is what the test reads back from the VM.
type vmOutcome struct {
	RunStrategy string // spec.runStrategy, or "running=<bool>" for the legacy field, or "-"
	Requests    []request
}

func outcomeOf(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) vmOutcome {
	var o vmOutcome
	switch {
	case vm.Spec.RunStrategy != nil:
		o.RunStrategy = string(*vm.Spec.RunStrategy)
	case vm.Spec.Running != nil:
		o.RunStrategy = fmt.Sprintf("running=%t", *vm.Spec.Running)
	default:
		o.RunStrategy = "-"
	}
	for _, r := range vm.Status.StateChangeRequests {
		req := request{Action: r.Action, Paused: r.Data[kubevirtv1.StartRequestDataPausedKey] == kubevirtv1.StartRequestDataPausedTrue}
		if r.UID != nil {
			req.UID = vmi != nil && *r.UID == vmi.UID
			if !req.UID {
				req.Action += "(foreign uid)"
			}
		}
		o.Requests = append(o.Requests, req)
	}
	return o
}

func ptr[T any](v T) *T { return &v }

var (
	start = kubevirtv1.StartRequest
	stop  = kubevirtv1.StopRequest
)

// TestVMLifecycle drives every run strategy through start, stop, restart and migrate at all
// three paths and checks the answer and the resulting spec and status.
func TestVMLifecycle(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	client := srv.HTTPClient(t)
	ctx := context.Background()

	const (
		always = kubevirtv1.RunStrategyAlways
		halted = kubevirtv1.RunStrategyHalted
		manual = kubevirtv1.RunStrategyManual
		rerun  = kubevirtv1.RunStrategyRerunOnFailure
		once   = kubevirtv1.RunStrategyOnce
	)
	cases := []struct {
		name     string
		state    vmState
		action   string
		body     string
		query    string
		wantCode int
		wantMsg  string
		want     *vmOutcome // nil: the VM must be unchanged
		wantVMIM bool
		vmiGone  bool
	}{
		// start
		{name: "start halted", state: vmState{runStrategy: halted}, action: "start", wantCode: 202, want: &vmOutcome{RunStrategy: "Always"}},
		{name: "start legacy running=false", state: vmState{running: ptr(false)}, action: "start", body: "{}", wantCode: 202, want: &vmOutcome{RunStrategy: "running=true"}},
		{name: "start with neither field", state: vmState{}, action: "start", wantCode: 202, want: &vmOutcome{RunStrategy: "running=true"}},
		{name: "start manual", state: vmState{runStrategy: manual}, action: "start", body: `{"paused":false}`, wantCode: 202, want: &vmOutcome{RunStrategy: "Manual", Requests: []request{{Action: start}}}},
		{name: "start manual after it finished", state: vmState{runStrategy: manual, vmiPhase: kubevirtv1.Succeeded}, action: "start", wantCode: 202, want: &vmOutcome{RunStrategy: "Manual", Requests: []request{{Action: stop, UID: true}, {Action: start}}}},
		{name: "start manual while a request is pending", state: vmState{runStrategy: manual, pending: []kubevirtv1.StateChangeRequestAction{start}}, action: "start", wantCode: 409, wantMsg: "already underway"},
		{name: "start always running", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "start", wantCode: 409, wantMsg: "VM is already running"},
		{name: "start always scheduling", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Scheduling}, action: "start", wantCode: 409, wantMsg: "VM is already running"},
		{name: "start always without instance", state: vmState{runStrategy: always}, action: "start", wantCode: 409, wantMsg: "Always does not support manual start requests"},
		{name: "start rerun running", state: vmState{runStrategy: rerun, vmiPhase: kubevirtv1.Running}, action: "start", wantCode: 409, wantMsg: "VM is already running"},
		{name: "start rerun without instance", state: vmState{runStrategy: rerun}, action: "start", wantCode: 202, want: &vmOutcome{RunStrategy: "RerunOnFailure", Requests: []request{{Action: start}}}},
		{name: "start rerun succeeded", state: vmState{runStrategy: rerun, vmiPhase: kubevirtv1.Succeeded}, action: "start", wantCode: 202, want: &vmOutcome{RunStrategy: "RerunOnFailure", Requests: []request{{Action: stop, UID: true}, {Action: start}}}},
		{name: "start rerun failed", state: vmState{runStrategy: rerun, vmiPhase: kubevirtv1.Failed}, action: "start", wantCode: 409, wantMsg: "failed state"},
		{name: "start once without instance", state: vmState{runStrategy: once}, action: "start", wantCode: 202, want: &vmOutcome{RunStrategy: "Once", Requests: []request{{Action: start}}}},
		{name: "start once after it ran", state: vmState{runStrategy: once, vmiPhase: kubevirtv1.Succeeded}, action: "start", wantCode: 409, wantMsg: "Once does not support"},
		{name: "start paused halted", state: vmState{runStrategy: halted}, action: "start", body: `{"paused":true}`, wantCode: 202, want: &vmOutcome{RunStrategy: "Always", Requests: []request{{Action: start, Paused: true}}}},
		{name: "start paused manual", state: vmState{runStrategy: manual}, action: "start", body: `{"paused":true}`, wantCode: 202, want: &vmOutcome{RunStrategy: "Manual", Requests: []request{{Action: start, Paused: true}}}},
		{name: "start dry run (query)", state: vmState{runStrategy: halted}, action: "start", query: "?dryRun=All", wantCode: 202},
		{name: "start dry run (body)", state: vmState{runStrategy: manual}, action: "start", body: `{"dryRun":["All"]}`, wantCode: 202},
		// stop
		{name: "stop always", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "stop", wantCode: 202, want: &vmOutcome{RunStrategy: "Halted"}},
		{name: "stop always without instance", state: vmState{runStrategy: always}, action: "stop", body: "{}", wantCode: 202, want: &vmOutcome{RunStrategy: "Halted"}},
		{name: "stop legacy running=true", state: vmState{running: ptr(true), vmiPhase: kubevirtv1.Running}, action: "stop", wantCode: 202, want: &vmOutcome{RunStrategy: "running=false"}},
		{name: "stop rerun", state: vmState{runStrategy: rerun, vmiPhase: kubevirtv1.Running}, action: "stop", wantCode: 202, want: &vmOutcome{RunStrategy: "Halted"}},
		{name: "stop once", state: vmState{runStrategy: once, vmiPhase: kubevirtv1.Running}, action: "stop", wantCode: 202, want: &vmOutcome{RunStrategy: "Halted"}},
		{name: "stop manual", state: vmState{runStrategy: manual, vmiPhase: kubevirtv1.Running}, action: "stop", wantCode: 202, want: &vmOutcome{RunStrategy: "Manual", Requests: []request{{Action: stop, UID: true}}}},
		{name: "stop manual replaces a pending start", state: vmState{runStrategy: manual, vmiPhase: kubevirtv1.Scheduled, pending: []kubevirtv1.StateChangeRequestAction{start}}, action: "stop", wantCode: 202, want: &vmOutcome{RunStrategy: "Manual", Requests: []request{{Action: stop, UID: true}}}},
		{name: "stop manual without instance", state: vmState{runStrategy: manual}, action: "stop", wantCode: 409, wantMsg: "VM is not running"},
		{name: "stop manual finished instance", state: vmState{runStrategy: manual, vmiPhase: kubevirtv1.Failed}, action: "stop", wantCode: 409, wantMsg: "VM is not running"},
		{name: "stop halted", state: vmState{runStrategy: halted}, action: "stop", wantCode: 409, wantMsg: "VM is not running"},
		{name: "stop halted while stopping", state: vmState{runStrategy: halted, vmiPhase: kubevirtv1.Running}, action: "stop", wantCode: 409, wantMsg: "shorter graceperiod"},
		{name: "stop with grace period deletes the instance", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "stop", body: `{"gracePeriod":5}`, wantCode: 202, want: &vmOutcome{RunStrategy: "Halted"}, vmiGone: true},
		{name: "stop halted with a shorter grace period", state: vmState{runStrategy: halted, vmiPhase: kubevirtv1.Running}, action: "stop", body: `{"gracePeriod":3}`, wantCode: 202, want: &vmOutcome{RunStrategy: "Halted", Requests: []request{{Action: stop, UID: true}}}, vmiGone: true},
		{name: "stop negative grace period", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "stop", body: `{"gracePeriod":-1}`, wantCode: 400},
		{name: "force stop needs the Kubernetes API", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "stop", body: `{"gracePeriod":0}`, wantCode: 503, wantMsg: "Kubernetes API"},
		{name: "stop dry run", state: vmState{runStrategy: manual, vmiPhase: kubevirtv1.Running}, action: "stop", body: `{"gracePeriod":1,"dryRun":["All"]}`, wantCode: 202},
		// restart
		{name: "restart always", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "restart", wantCode: 202, want: &vmOutcome{RunStrategy: "Always", Requests: []request{{Action: stop, UID: true}, {Action: start}}}},
		{name: "restart manual", state: vmState{runStrategy: manual, vmiPhase: kubevirtv1.Running}, action: "restart", body: "{}", wantCode: 202, want: &vmOutcome{RunStrategy: "Manual", Requests: []request{{Action: stop, UID: true}, {Action: start}}}},
		{name: "restart rerun", state: vmState{runStrategy: rerun, vmiPhase: kubevirtv1.Running}, action: "restart", wantCode: 202, want: &vmOutcome{RunStrategy: "RerunOnFailure", Requests: []request{{Action: stop, UID: true}, {Action: start}}}},
		{name: "restart once", state: vmState{runStrategy: once, vmiPhase: kubevirtv1.Running}, action: "restart", wantCode: 202, want: &vmOutcome{RunStrategy: "Once", Requests: []request{{Action: stop, UID: true}, {Action: start}}}},
		{name: "restart without instance", state: vmState{runStrategy: always}, action: "restart", wantCode: 409, wantMsg: "VM is not running"},
		{name: "restart halted", state: vmState{runStrategy: halted}, action: "restart", wantCode: 409, wantMsg: "does not support manual restart"},
		{name: "restart while a request is pending", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running, pending: []kubevirtv1.StateChangeRequestAction{stop}}, action: "restart", wantCode: 409, wantMsg: "already underway"},
		{name: "restart with grace period 5", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "restart", body: `{"gracePeriodSeconds":5}`, wantCode: 400, wantMsg: "only gracePeriod=0"},
		{name: "force restart needs the Kubernetes API", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "restart", body: `{"gracePeriodSeconds":0}`, wantCode: 503},
		{name: "restart dry run", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "restart", query: "?dryRun=All", wantCode: 202},
		// migrate
		{name: "migrate running", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "migrate", body: `{"addedNodeSelector":{"zone":"b"}}`, wantCode: 202, wantVMIM: true},
		{name: "migrate without instance", state: vmState{runStrategy: always}, action: "migrate", wantCode: 409, wantMsg: "VM is not running"},
		{name: "migrate scheduled", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Scheduled}, action: "migrate", wantCode: 409, wantMsg: "VM is not running"},
		{name: "migrate dry run", state: vmState{runStrategy: always, vmiPhase: kubevirtv1.Running}, action: "migrate", body: `{"dryRun":["All"]}`, wantCode: 202},
		// bad requests
		{name: "body is not JSON", state: vmState{runStrategy: halted}, action: "start", body: "start please", wantCode: 400},
		{name: "body of the wrong shape", state: vmState{runStrategy: always}, action: "stop", body: `{"gracePeriod":"soon"}`, wantCode: 400},
		{name: "body is a list", state: vmState{runStrategy: always}, action: "restart", body: `[1,2]`, wantCode: 400},
		{name: "unknown dry run value", state: vmState{runStrategy: halted}, action: "start", query: "?dryRun=Some", wantCode: 400, wantMsg: "dryRun"},
	}
	for _, variant := range pathVariants {
		for i, tc := range cases {
			t.Run(variant+"/"+tc.name, func(t *testing.T) {
				name := fmt.Sprintf("lc-%s-%d", strings.ReplaceAll(variant, "v1alpha3", "a3"), i)
				vmi := makeVM(t, c, name, tc.state)
				before, err := c.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				url := srv.Config.Host + actionPath(variant, "virtualmachines", name, tc.action) + tc.query
				wantCode, wantMsg := tc.wantCode, tc.wantMsg
				if strings.Contains(tc.query, "dryRun") && variant != "sub" {
					// The generic connect handler of kubevirt.io refuses ?dryRun; the body's
					// dryRun (what virtctl sends) works there.
					wantCode, wantMsg = http.StatusBadRequest, "dryRun"
				}
				resp := do(t, client, http.MethodPut, url, "application/json", []byte(tc.body))
				if resp.code != wantCode || !strings.Contains(resp.body, wantMsg) {
					t.Fatalf("PUT %s: %d %s, want %d with %q", tc.action, resp.code, resp.body, wantCode, wantMsg)
				}
				if resp.code >= 400 {
					var st metav1.Status
					if err := json.Unmarshal([]byte(resp.body), &st); err != nil || st.Kind != "Status" || int(st.Code) != resp.code {
						t.Errorf("error body is not a matching metav1.Status: %s", resp.body)
					}
				}
				after, err := c.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if tc.want == nil {
					if after.ResourceVersion != before.ResourceVersion {
						t.Errorf("VM changed: %+v", outcomeOf(after, vmi))
					}
				} else if diff := cmp.Diff(*tc.want, outcomeOf(after, vmi)); diff != "" {
					t.Errorf("VM (-want +got):\n%s", diff)
				}
				checkSideEffects(t, srv, name, vmi, tc.wantVMIM, tc.vmiGone)
			})
		}
	}
}

// checkSideEffects verifies migrations and instance deletion of one case.
func checkSideEffects(t *testing.T, srv *framework.Server, name string, vmi *kubevirtv1.VirtualMachineInstance, wantVMIM, vmiGone bool) {
	t.Helper()
	ctx := context.Background()
	c := srv.Clientset(t)
	migs, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mine []kubevirtv1.VirtualMachineInstanceMigration
	for _, m := range migs.Items {
		if m.Spec.VMIName == name {
			mine = append(mine, m)
		}
	}
	if wantVMIM {
		if len(mine) != 1 || !strings.HasPrefix(mine[0].Name, "kubevirt-migrate-vm-") ||
			!cmp.Equal(mine[0].Spec.AddedNodeSelector, map[string]string{"zone": "b"}) {
			t.Errorf("want one migration kubevirt-migrate-vm-* of %s with the added node selector, got %+v", name, mine)
		}
	} else if len(mine) != 0 {
		t.Errorf("unexpected migrations: %+v", mine)
	}
	if vmi == nil {
		return
	}
	got, err := c.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case vmiGone && apierrors.IsNotFound(err):
	case vmiGone && (err != nil || got.DeletionTimestamp == nil):
		// The instance carries the VM controller's finalizer from its creation: deleted, it
		// stays with a deletion timestamp until the controller (not running here) releases it.
		t.Errorf("instance should be deleted, got %v without a deletion timestamp (err %v)", got.GetUID(), err)
	case !vmiGone && err != nil:
		t.Errorf("instance should still exist: %v", err)
	case !vmiGone && got.UID != vmi.UID:
		t.Errorf("instance replaced: uid %s, want %s", got.UID, types.UID(vmi.UID))
	}
}

// TestVMLifecycleNotFoundAndMethods: unknown VMs are 404 and other methods 405 at every path.
func TestVMLifecycleNotFoundAndMethods(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	for _, variant := range pathVariants {
		for _, action := range []string{"start", "stop", "restart", "migrate"} {
			url := srv.Config.Host + actionPath(variant, "virtualmachines", "no-such-vm", action)
			if resp := do(t, client, http.MethodPut, url, "", nil); resp.code != http.StatusNotFound {
				t.Errorf("%s %s of a missing VM: %d %s, want 404", variant, action, resp.code, resp.body)
			}
			if resp := do(t, client, http.MethodGet, url, "", nil); resp.code != http.StatusMethodNotAllowed {
				t.Errorf("%s GET %s: %d %s, want 405", variant, action, resp.code, resp.body)
			}
		}
	}
	url := srv.Config.Host + "/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachines/x/explode"
	if resp := do(t, client, http.MethodPut, url, "", nil); resp.code != http.StatusNotFound {
		t.Errorf("unknown action: %d %s, want 404", resp.code, resp.body)
	}
}
