package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestBuildService(t *testing.T) {
	sel := map[string]string{"kubevirt.io/vm": "vm-demo"}
	svc := func(name string, typ corev1.ServiceType, port corev1.ServicePort) *corev1.Service {
		return &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec:       corev1.ServiceSpec{Type: typ, Selector: sel, Ports: []corev1.ServicePort{port}},
		}
	}
	cases := []struct {
		name     string
		opts     exposeOptions
		selector map[string]string
		want     *corev1.Service
		wantErr  string
	}{{
		name:     "defaults: named after the object, ClusterIP, TCP, target port = port",
		opts:     exposeOptions{port: 80},
		selector: sel,
		want:     svc("vm-demo", corev1.ServiceTypeClusterIP, corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}),
	}, {
		name:     "target port number, name",
		opts:     exposeOptions{port: 80, targetPort: "8080", name: "web"},
		selector: sel,
		want:     svc("web", corev1.ServiceTypeClusterIP, corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}),
	}, {
		name:     "named target port, NodePort with a node port, UDP, port name",
		opts:     exposeOptions{port: 53, targetPort: "dns", serviceType: "NodePort", nodePort: 30053, protocol: "udp", portName: "dns"},
		selector: sel,
		want: svc("vm-demo", corev1.ServiceTypeNodePort, corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53,
			TargetPort: intstr.FromString("dns"), NodePort: 30053}),
	}, {
		name:     "type is case-insensitive",
		opts:     exposeOptions{port: 22, serviceType: "nodeport"},
		selector: sel,
		want:     svc("vm-demo", corev1.ServiceTypeNodePort, corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 22, TargetPort: intstr.FromInt32(22)}),
	}, {
		name:     "no labels",
		opts:     exposeOptions{port: 80},
		selector: nil,
		wantErr:  "cannot expose vm vm-demo: it has no labels to select its pods by (spec.template.metadata.labels)",
	}, {
		name:     "no port",
		opts:     exposeOptions{},
		selector: sel,
		wantErr:  "--port must be a port number",
	}, {
		name:     "target port out of range",
		opts:     exposeOptions{port: 80, targetPort: "70000"},
		selector: sel,
		wantErr:  "--target-port must be",
	}, {
		name:     "unknown protocol",
		opts:     exposeOptions{port: 80, protocol: "ICMP"},
		selector: sel,
		wantErr:  `unknown protocol "ICMP"`,
	}, {
		name:     "ExternalName",
		opts:     exposeOptions{port: 80, serviceType: "ExternalName"},
		selector: sel,
		wantErr:  "type ExternalName is not supported",
	}, {
		name:     "unknown type",
		opts:     exposeOptions{port: 80, serviceType: "Ingress"},
		selector: sel,
		wantErr:  `unknown service type "Ingress"`,
	}, {
		name:     "node port on a ClusterIP Service",
		opts:     exposeOptions{port: 80, nodePort: 30080},
		selector: sel,
		wantErr:  "--node-port needs --type NodePort",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildService(tc.opts, "ns", "vm", "vm-demo", tc.selector)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Service (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExposeSelectors(t *testing.T) {
	vm := &kubevirtv1.VirtualMachine{Spec: kubevirtv1.VirtualMachineSpec{Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}}}
	vm.Labels = map[string]string{"not": "these"}
	if got, want := vmSelector(vm), map[string]string{"app": "web"}; !cmp.Equal(got, want) {
		t.Errorf("VM selector %v, want the template's labels %v", got, want)
	}
	if got := vmSelector(&kubevirtv1.VirtualMachine{}); len(got) != 0 {
		t.Errorf("VM without a template: selector %v, want none", got)
	}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		"app": "web", kubevirtv1.NodeNameLabel: "node1", kubevirtv1.MigrationTargetNodeNameLabel: "node2"}}}
	if got, want := vmiSelector(vmi), map[string]string{"app": "web"}; !cmp.Equal(got, want) {
		t.Errorf("VMI selector %v, want %v (without the node labels)", got, want)
	}
	if _, ok := vmi.Labels[kubevirtv1.NodeNameLabel]; !ok {
		t.Error("vmiSelector changed the instance's labels")
	}
	rs := &kubevirtv1.VirtualMachineInstanceReplicaSet{Spec: kubevirtv1.VirtualMachineInstanceReplicaSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if got, err := vmirsSelector(rs); err != nil || !cmp.Equal(got, map[string]string{"app": "web"}) {
		t.Errorf("VMIRS selector %v, %v; want its matchLabels", got, err)
	}
	rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}
	if _, err := vmirsSelector(rs); err == nil || !strings.Contains(err.Error(), "match expressions") {
		t.Errorf("VMIRS with match expressions: %v, want a refusal", err)
	}
	for arg, want := range map[string]string{"vm": "vm", "VirtualMachines": "vm", "vmi": "vmi", "vmis": "vmi",
		"vmirs": "vmirs", "virtualmachineinstancereplicaset": "vmirs", "pod": ""} {
		if got := exposeKind(arg); got != want {
			t.Errorf("exposeKind(%q) = %q, want %q", arg, got, want)
		}
	}
}

// TestExposeCommand runs `expose vm` against a fake API server: it reads the VM and creates the
// Service from its template's labels; a VM without labels is refused before anything is created.
func TestExposeCommand(t *testing.T) {
	vm := func(labels map[string]string) string {
		b, _ := json.Marshal(&kubevirtv1.VirtualMachine{
			TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine"},
			ObjectMeta: metav1.ObjectMeta{Name: "vm-demo", Namespace: "default"},
			Spec: kubevirtv1.VirtualMachineSpec{Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels}}},
		})
		return string(b)
	}
	for _, tc := range []struct {
		name    string
		vm      string
		want    []string
		wantErr string
	}{
		{"labelled", vm(map[string]string{"kubevirt.io/vm": "vm-demo"}), []string{
			"GET /apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-demo",
			"POST /api/v1/namespaces/default/services"}, ""},
		{"no labels", vm(nil), []string{"GET /apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-demo"},
			"no labels to select its pods by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			var created corev1.Service
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, r.Method+" "+r.URL.Path)
				w.Header().Set("Content-Type", "application/json")
				if r.Method == http.MethodPost {
					// client-go may send protobuf: decode by the request's media type.
					raw, _ := io.ReadAll(r.Body)
					info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), r.Header.Get("Content-Type"))
					if !ok {
						t.Errorf("POST with media type %q", r.Header.Get("Content-Type"))
						return
					}
					if _, _, err := info.Serializer.Decode(raw, nil, &created); err != nil {
						t.Errorf("decoding the created Service: %v", err)
					}
					out, _ := json.Marshal(&created)
					w.WriteHeader(http.StatusCreated)
					_, _ = w.Write(out)
					return
				}
				_, _ = io.WriteString(w, tc.vm)
			}))
			defer srv.Close()
			out, err := run(t, srv.URL, "expose", "vm", "vm-demo", "--port", "80", "--target-port", "8080")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, seen); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				return
			}
			if got, want := strings.TrimSpace(out), "Service vm-demo successfully exposed for vm vm-demo"; got != want {
				t.Errorf("output %q, want %q", got, want)
			}
			if created.Name != "vm-demo" || created.Spec.Selector["kubevirt.io/vm"] != "vm-demo" ||
				len(created.Spec.Ports) != 1 || created.Spec.Ports[0].TargetPort != intstr.FromInt32(8080) {
				t.Errorf("created Service %+v", created)
			}
		})
	}
}
