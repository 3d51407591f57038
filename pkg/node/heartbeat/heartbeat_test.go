package heartbeat

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

func TestBeat(t *testing.T) {
	tests := []struct {
		name       string
		emulation  bool
		existing   map[string]string
		wantLabels map[string]string
	}{
		{
			name: "emulating node, other labels kept", emulation: true,
			existing:   map[string]string{"kubernetes.io/hostname": "n1", SchedulableLabel: "false"},
			wantLabels: map[string]string{"kubernetes.io/hostname": "n1", SchedulableLabel: "true", EmulationLabel: "true"},
		},
		{
			name: "kvm node", emulation: false,
			wantLabels: map[string]string{SchedulableLabel: "true", EmulationLabel: "false"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{
				Name: "n1", Labels: tt.existing, Annotations: map[string]string{"keep": "me"},
			}})
			at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
			h := &Heartbeat{Client: client, NodeName: "n1", Emulation: tt.emulation, Endpoint: "10.0.0.5:8186", Now: func() time.Time { return at }}
			if err := h.Beat(t.Context()); err != nil {
				t.Fatal(err)
			}
			n, err := client.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantLabels, n.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			wantAnn := map[string]string{
				"keep":                            "me",
				HeartbeatAnnotation:               "2026-05-06T06:08:09Z",
				streams.HandlerEndpointAnnotation: "10.0.0.5:8186",
			}
			if diff := cmp.Diff(wantAnn, n.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBeatMissingNode(t *testing.T) {
	h := &Heartbeat{Client: fake.NewClientset(), NodeName: "gone"}
	if err := h.Beat(t.Context()); err == nil {
		t.Error("heartbeat on a missing node succeeded")
	}
}

// TestBeatCPUModels: the node is labelled with its CPU models; labels of models it no longer
// offers go at the first beat, other labels stay.
func TestBeatCPUModels(t *testing.T) {
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		"team": "a", CPUModelLabelPrefix + "Skylake-Client": "true", CPUModelLabelPrefix + "Nehalem": "true",
	}}})
	h := &Heartbeat{Client: client, NodeName: "n1", Emulation: true, CPUModels: []string{"Nehalem", "Westmere"}}
	for range 2 {
		if err := h.Beat(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	n, err := client.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"team": "a", SchedulableLabel: "true", EmulationLabel: "true",
		CPUModelLabelPrefix + "Nehalem": "true", CPUModelLabelPrefix + "Westmere": "true"}
	if diff := cmp.Diff(want, n.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}
