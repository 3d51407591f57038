package bench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// Deployed components the control-plane and console suites need.
const (
	controllerName = "nativevirt-controller"
	handlerName    = "nativevirt-handler"
)

// VMIResource is the kubevirt.io VirtualMachineInstance resource.
var VMIResource = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}

// controllerReady reports whether a Deployment nativevirt-controller has a ready replica in any
// namespace; the string says why not.
func (e *Env) controllerReady(ctx context.Context) (bool, string) {
	ds, err := e.KubeClient.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + controllerName})
	if err != nil {
		return false, err.Error()
	}
	if len(ds.Items) == 0 {
		return false, controllerName + " not deployed"
	}
	if d := ds.Items[0]; d.Status.ReadyReplicas == 0 {
		return false, fmt.Sprintf("%s/%s has no ready replica", d.Namespace, d.Name)
	}
	return true, ""
}

// handlerReady reports whether a DaemonSet nativevirt-handler has a ready pod.
func (e *Env) handlerReady(ctx context.Context) (bool, string) {
	ds, err := e.KubeClient.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + handlerName})
	if err != nil {
		return false, err.Error()
	}
	if len(ds.Items) == 0 {
		return false, handlerName + " (node agent) not deployed"
	}
	if d := ds.Items[0]; d.Status.NumberReady == 0 {
		return false, fmt.Sprintf("%s/%s has no ready pod", d.Namespace, d.Name)
	}
	return true, ""
}

// schedulableNode reports whether a node carries kubevirt.io/schedulable=true, which the node
// agent sets and every launcher pod's nodeSelector requires.
func (e *Env) schedulableNode(ctx context.Context) (bool, string) {
	nodes, err := e.KubeClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io/schedulable=true"})
	if err != nil {
		return false, err.Error()
	}
	if len(nodes.Items) == 0 {
		return false, "no node labelled kubevirt.io/schedulable=true (the node agent labels its node)"
	}
	return true, ""
}

// tunResource is the node agent's device plugin resource every launcher pod on the pod network
// requests (pkg/launcherpod.TUNResource).
const tunResource = "devices.nativevirt.io/tun"

// waitForDevices waits until a schedulable node offers the node agent's TUN device: the kubelet
// reports a freshly registered device plugin's resource with its next node status (up to ~10 s
// after the agent became ready), and a launcher pod created before that waits out the
// scheduler's back-off. The suite measures a settled node, not that moment.
func (e *Env) waitForDevices(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := e.KubeClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io/schedulable=true"})
		if err != nil {
			return false, nil
		}
		for _, n := range nodes.Items {
			if q, ok := n.Status.Allocatable[tunResource]; ok && !q.IsZero() {
				return true, nil
			}
		}
		return false, nil
	})
}

// smallVM is a running VirtualMachine as small as the demo guest allows (artifacts/examples/
// vm-demo.yaml: 1 core, 128Mi): the control plane is measured, not the guest. Grace period 0 so
// that clean-up does not wait for a shutdown. It requests 50m of CPU instead of the default
// 100m per vCPU (KubeVirt's, cpuAllocationRatio 10): with 100m a 2-CPU node fits only 16 such
// VMs beside NativeVirt's own pods, and a burst of 20 could not be placed at once.
const smallVM = `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app.kubernetes.io/managed-by: nativevirt-bench
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/vm: %[1]s
    spec:
      terminationGracePeriodSeconds: 0
      domain:
        cpu:
          cores: 1
        memory:
          guest: 128Mi
        resources:
          requests:
            cpu: 50m
        devices:
          disks:
          - name: containerdisk
            disk:
              bus: virtio
      volumes:
      - name: containerdisk
        containerDisk:
          image: %[3]s
          imagePullPolicy: IfNotPresent
`

// DemoDiskImage is the containerDisk of the demo guest (hack/images/build-demo-disk.sh).
const DemoDiskImage = "localhost/nativevirt-demo-disk:dev"

// smallVMObject renders smallVM.
func smallVMObject(namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	err := yaml.Unmarshal(fmt.Appendf(nil, smallVM, name, namespace, DemoDiskImage), &u.Object)
	return u, err
}
