package vmiproxy

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

func vmi(phase kubevirtv1.VirtualMachineInstancePhase, node string, paused corev1.ConditionStatus) *kubevirtv1.VirtualMachineInstance {
	v := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "v", Namespace: "ns"}}
	v.Status.Phase = phase
	v.Status.NodeName = node
	if paused != "" {
		v.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstancePaused, Status: paused}}
	}
	return v
}

func TestCheck(t *testing.T) {
	cases := []struct {
		action streams.Action
		vmi    *kubevirtv1.VirtualMachineInstance
		want   int32 // 0: allowed
	}{
		{streams.ActionConsole, vmi(kubevirtv1.Running, "n", ""), 0},
		{streams.ActionVNC, vmi(kubevirtv1.Running, "n", corev1.ConditionTrue), 0},
		{streams.ActionConsole, vmi(kubevirtv1.Scheduled, "n", ""), http.StatusConflict},
		{streams.ActionConsole, vmi(kubevirtv1.Running, "", ""), http.StatusConflict},
		{streams.ActionVNC, vmi(kubevirtv1.Succeeded, "n", ""), http.StatusConflict},
		{streams.ActionPause, vmi(kubevirtv1.Running, "n", ""), 0},
		{streams.ActionPause, vmi(kubevirtv1.Running, "n", corev1.ConditionFalse), 0},
		{streams.ActionPause, vmi(kubevirtv1.Running, "n", corev1.ConditionTrue), http.StatusConflict},
		{streams.ActionPause, vmi("", "", ""), http.StatusConflict},
		{streams.ActionUnpause, vmi(kubevirtv1.Running, "n", corev1.ConditionTrue), 0},
		{streams.ActionUnpause, vmi(kubevirtv1.Running, "n", ""), http.StatusConflict},
		{streams.ActionUnpause, vmi(kubevirtv1.Failed, "n", corev1.ConditionTrue), http.StatusConflict},
		{streams.ActionSoftReboot, vmi(kubevirtv1.Running, "n", ""), 0},
		{streams.ActionSoftReboot, vmi(kubevirtv1.Running, "n", corev1.ConditionTrue), http.StatusConflict},
		{streams.ActionFreeze, vmi(kubevirtv1.Running, "n", ""), 0},
		{streams.ActionFreeze, vmi(kubevirtv1.Running, "n", corev1.ConditionTrue), http.StatusConflict},
		{streams.ActionFreeze, vmi(kubevirtv1.Scheduled, "n", ""), http.StatusConflict},
		{streams.ActionUnfreeze, vmi(kubevirtv1.Running, "n", ""), 0},
		{streams.ActionUnfreeze, vmi(kubevirtv1.Running, "n", corev1.ConditionTrue), http.StatusConflict},
	}
	for i, tc := range cases {
		err := Check(tc.action, tc.vmi)
		var got int32
		if status, ok := err.(apierrors.APIStatus); ok {
			got = status.Status().Code
		} else if err != nil {
			t.Fatalf("case %d: %v is not an API status", i, err)
		}
		if got != tc.want {
			t.Errorf("case %d: %s on %s (paused %v): code %d (%v), want %d", i, tc.action, tc.vmi.Status.Phase,
				tc.vmi.Status.Conditions, got, err, tc.want)
		}
	}
}

func TestKubeNodeResolver(t *testing.T) {
	node := func(name, endpoint string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if endpoint != "" {
			n.Annotations = map[string]string{streams.HandlerEndpointAnnotation: endpoint}
		}
		return n
	}
	r := KubeNodeResolver{Client: fake.NewSimpleClientset(node("ok", "10.0.0.5:8186"), node("bare", ""), node("bad", "10.0.0.5"))}
	cases := []struct {
		node    string
		want    string
		wantErr bool
	}{
		{node: "ok", want: "10.0.0.5:8186"},
		{node: "bare", wantErr: true},
		{node: "bad", wantErr: true},
		{node: "missing", wantErr: true},
	}
	for _, tc := range cases {
		got, err := r.Endpoint(context.Background(), tc.node)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.node, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !apierrors.IsServiceUnavailable(err) {
			t.Errorf("%s: %v should be a 503", tc.node, err)
		}
	}
}
