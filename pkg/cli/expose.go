package cli

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
)

// exposeOptions are the flags of `expose`, virtctl expose's names.
type exposeOptions struct {
	name        string
	port        int32
	targetPort  string
	nodePort    int32
	protocol    string
	serviceType string
	portName    string
	clusterIP   string
	externalIP  string
}

// exposeKind is the kind argument of `expose` normalised: vm, vmi or vmirs; "" when unknown.
func exposeKind(arg string) string {
	switch strings.ToLower(arg) {
	case "vm", "vms", "virtualmachine", "virtualmachines":
		return "vm"
	case "vmi", "vmis", "virtualmachineinstance", "virtualmachineinstances":
		return "vmi"
	case "vmirs", "vmirss", "virtualmachineinstancereplicaset", "virtualmachineinstancereplicasets":
		return "vmirs"
	}
	return ""
}

// instanceLabelsNotSelected are labels the system puts on an instance that say where it runs
// now: a selector with them would lose the instance when it moves (virtctl drops them too).
var instanceLabelsNotSelected = []string{kubevirtv1.NodeNameLabel, kubevirtv1.MigrationTargetNodeNameLabel}

// vmSelector is the selector of a Service for a VM: its template's labels, which its instances
// and their launcher pods carry.
func vmSelector(vm *kubevirtv1.VirtualMachine) map[string]string {
	if vm.Spec.Template == nil {
		return nil
	}
	return maps.Clone(vm.Spec.Template.ObjectMeta.Labels)
}

// vmiSelector is the selector of a Service for an instance: its labels, less those naming nodes.
func vmiSelector(vmi *kubevirtv1.VirtualMachineInstance) map[string]string {
	sel := maps.Clone(vmi.Labels)
	for _, l := range instanceLabelsNotSelected {
		delete(sel, l)
	}
	return sel
}

// vmirsSelector is the selector of a Service for a replica set: its selector's matchLabels; a
// Service cannot select with expressions.
func vmirsSelector(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) (map[string]string, error) {
	if rs.Spec.Selector == nil {
		return nil, nil
	}
	if len(rs.Spec.Selector.MatchExpressions) > 0 {
		return nil, fmt.Errorf("cannot expose VirtualMachineInstanceReplicaSet %s: its selector has match expressions, which a Service cannot use", rs.Name)
	}
	return maps.Clone(rs.Spec.Selector.MatchLabels), nil
}

// buildService is the Service that exposes the object kind/name (selector: its labels) as o
// says. It refuses what virtctl refuses: no labels to select by, an unknown protocol or type.
func buildService(o exposeOptions, namespace, kind, name string, selector map[string]string) (*corev1.Service, error) {
	if len(selector) == 0 {
		return nil, fmt.Errorf("cannot expose %s %s: it has no labels to select its pods by (%s)", kind, name, labelsWhere(kind))
	}
	if o.port <= 0 || o.port > 65535 {
		return nil, fmt.Errorf("--port must be a port number from 1 to 65535, not %d", o.port)
	}
	var protocol corev1.Protocol
	switch strings.ToUpper(o.protocol) {
	case "", "TCP":
		protocol = corev1.ProtocolTCP
	case "UDP":
		protocol = corev1.ProtocolUDP
	case "SCTP":
		protocol = corev1.ProtocolSCTP
	default:
		return nil, fmt.Errorf("unknown protocol %q: use TCP, UDP or SCTP", o.protocol)
	}
	var typ corev1.ServiceType
	switch strings.ToLower(o.serviceType) {
	case "", "clusterip":
		typ = corev1.ServiceTypeClusterIP
	case "nodeport":
		typ = corev1.ServiceTypeNodePort
	case "loadbalancer":
		typ = corev1.ServiceTypeLoadBalancer
	case "externalname":
		return nil, fmt.Errorf("type %s is not supported: an ExternalName Service selects no pods", o.serviceType)
	default:
		return nil, fmt.Errorf("unknown service type %q: use ClusterIP, NodePort or LoadBalancer", o.serviceType)
	}
	if o.nodePort != 0 && typ == corev1.ServiceTypeClusterIP {
		return nil, fmt.Errorf("--node-port needs --type NodePort or LoadBalancer")
	}
	svcName := o.name
	if svcName == "" {
		svcName = name
	}
	target := intstr.FromInt32(o.port)
	if o.targetPort != "" {
		target = intstr.Parse(o.targetPort)
		if target.Type == intstr.Int && (target.IntVal <= 0 || target.IntVal > 65535) {
			return nil, fmt.Errorf("--target-port must be a port number from 1 to 65535 or a port name, not %q", o.targetPort)
		}
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: svcName, Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Type:      typ,
			Selector:  selector,
			ClusterIP: o.clusterIP,
			Ports: []corev1.ServicePort{{
				Name: o.portName, Protocol: protocol, Port: o.port, TargetPort: target, NodePort: o.nodePort,
			}},
		},
	}
	if o.externalIP != "" {
		svc.Spec.ExternalIPs = []string{o.externalIP}
	}
	return svc, nil
}

// labelsWhere says where the labels of kind come from, for the refusal.
func labelsWhere(kind string) string {
	switch kind {
	case "vm":
		return "spec.template.metadata.labels"
	case "vmirs":
		return "spec.selector.matchLabels"
	}
	return "metadata.labels"
}

// exposeSelector reads the object and returns its selector.
func exposeSelector(ctx context.Context, kv versioned.Interface, namespace, kind, name string) (map[string]string, error) {
	switch kind {
	case "vm":
		vm, err := kv.KubevirtV1().VirtualMachines(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("error fetching VirtualMachine %s: %w", name, err)
		}
		return vmSelector(vm), nil
	case "vmi":
		vmi, err := kv.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("error fetching VirtualMachineInstance %s: %w", name, err)
		}
		return vmiSelector(vmi), nil
	default:
		rs, err := kv.KubevirtV1().VirtualMachineInstanceReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("error fetching VirtualMachineInstanceReplicaSet %s: %w", name, err)
		}
		return vmirsSelector(rs)
	}
}

// newExposeCommand builds `expose (vm|vmi|vmirs) NAME --port P`, virtctl expose: a Service
// selecting the pods of a VM's instances, an instance, or a replica set's instances.
func newExposeCommand(o *options) *cobra.Command {
	var e exposeOptions
	cmd := &cobra.Command{
		Use:   "expose (vm|vmi|vmirs) NAME --port PORT",
		Short: "Expose a virtual machine, an instance or a replica set as a new Service",
		Long: "expose creates a Service that selects the launcher pods of a VirtualMachine's instances (by the " +
			"labels of spec.template), of a VirtualMachineInstance (by its labels) or of a " +
			"VirtualMachineInstanceReplicaSet's instances (by spec.selector.matchLabels), like virtctl expose. " +
			"The Service is named NAME unless --name says otherwise. With the masquerade binding, the guest's " +
			"port --target-port (default: --port) receives the Service's traffic.",
		Example: "  nativevirt expose vm vm-demo --port 80 --target-port 8080\n" +
			"  nativevirt expose vmi vmi-web --port 8080 --type NodePort --name web",
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"vm", "vmi", "vmirs"},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name := exposeKind(args[0]), args[1]
			if kind == "" {
				return fmt.Errorf("unsupported resource type %q: use vm, vmi or vmirs", args[0])
			}
			cfg, namespace, err := o.restConfig()
			if err != nil {
				return err
			}
			kv, err := versioned.NewForConfig(cfg)
			if err != nil {
				return err
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			selector, err := exposeSelector(cmd.Context(), kv, namespace, kind, name)
			if err != nil {
				return err
			}
			svc, err := buildService(e, namespace, kind, name, selector)
			if err != nil {
				return err
			}
			if _, err := kube.CoreV1().Services(namespace).Create(cmd.Context(), svc, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("service creation failed: %w", err)
			}
			_, _ = fmt.Fprintf(o.streams.Out, "Service %s successfully exposed for %s %s\n", svc.Name, kind, name)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&e.name, "name", "", "Name of the Service (default: NAME).")
	fs.Int32Var(&e.port, "port", 0, "The port the Service serves on.")
	_ = cmd.MarkFlagRequired("port")
	fs.StringVar(&e.targetPort, "target-port", "", "Number or name of the port of the guest that receives the traffic (default: --port).")
	fs.Int32Var(&e.nodePort, "node-port", 0, "The port on every node (type NodePort or LoadBalancer; default: allocated).")
	fs.StringVar(&e.protocol, "protocol", "TCP", "The network protocol: TCP, UDP or SCTP.")
	fs.StringVar(&e.serviceType, "type", "ClusterIP", "Type of the Service: ClusterIP, NodePort or LoadBalancer.")
	fs.StringVar(&e.portName, "port-name", "", "Name of the Service's port.")
	fs.StringVar(&e.clusterIP, "cluster-ip", "", "ClusterIP of the Service: empty to allocate one, None for a headless Service.")
	fs.StringVar(&e.externalIP, "external-ip", "", "An external IP address the Service also accepts traffic on.")
	return cmd
}
