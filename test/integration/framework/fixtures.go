package framework

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Resources of kubevirt.io/v1 by plural name.
var (
	VMs   = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	VMIs  = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
	VMIRS = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstancereplicasets"}
	VMIMs = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstancemigrations"}
)

// vmiSpec is a realistic instance spec (about 1.5 KB of YAML): two disks, cloud-init, the pod
// network, resources, scheduling hints. Indented for use under `template: spec:` or `spec:`.
const vmiSpec = `
      domain:
        cpu:
          cores: 2
          sockets: 1
          threads: 1
        memory:
          guest: 256Mi
        resources:
          requests:
            memory: 256Mi
            cpu: 500m
          limits:
            memory: 512Mi
        machine:
          type: q35
        firmware:
          serial: nativevirt-test
        devices:
          disks:
          - name: containerdisk
            disk:
              bus: virtio
            bootOrder: 1
          - name: cloudinitdisk
            disk:
              bus: virtio
          - name: scratch
            disk:
              bus: sata
          interfaces:
          - name: default
            masquerade: {}
            ports:
            - name: ssh
              port: 22
              protocol: TCP
            - name: http
              port: 80
      terminationGracePeriodSeconds: 30
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
      - key: example.com/dedicated
        operator: Equal
        value: vms
        effect: NoSchedule
      networks:
      - name: default
        pod: {}
      volumes:
      - name: containerdisk
        containerDisk:
          image: localhost/nativevirt-demo-disk:dev
          imagePullPolicy: IfNotPresent
      - name: cloudinitdisk
        cloudInitNoCloud:
          userData: |
            #cloud-config
            hostname: %[1]s
            ssh_authorized_keys:
            - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKJ5fq0bTw2v8y0Yx3n1pG8yKq9R7c nativevirt@example
            runcmd:
            - echo "hello from %[1]s" > /dev/console
      - name: scratch
        emptyDisk:
          capacity: 1Gi
`

// VMYAML is a realistic VirtualMachine (runStrategy Halted) in kubevirt.io/v1.
func VMYAML(name string) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: %[1]s
  labels:
    app: %[1]s
    kubevirt.io/vm: %[1]s
  annotations:
    description: integration test virtual machine
spec:
  runStrategy: Halted
  template:
    metadata:
      labels:
        kubevirt.io/vm: %[1]s
    spec:`+indent(vmiSpec, 0), name)
}

// VMIYAML is a realistic VirtualMachineInstance in kubevirt.io/v1.
func VMIYAML(name string) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:`+indent(vmiSpec, -4), name)
}

// VMIRSYAML is a replica set of the realistic instance.
func VMIRSYAML(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels:
      rs: %[1]s
  template:
    metadata:
      labels:
        rs: %[1]s
    spec:`+indent(vmiSpec, 0), name, replicas)
}

// VMIMYAML is a migration of the instance vmi.
func VMIMYAML(name, vmi string) string {
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceMigration
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:
  vmiName: %[2]s
`, name, vmi)
}

// Object parses a manifest into an unstructured object.
func Object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("parse manifest: %v\n%s", err, manifest)
	}
	return u
}

// indent shifts every line of the block spec by n spaces (negative: removes up to -n spaces).
func indent(block string, n int) string {
	out := make([]byte, 0, len(block)+64)
	start := true
	for i := 0; i < len(block); i++ {
		c := block[i]
		if start && c != '\n' {
			if n >= 0 {
				for j := 0; j < n; j++ {
					out = append(out, ' ')
				}
			} else {
				skip := 0
				for skip < -n && i < len(block) && block[i] == ' ' {
					i++
					skip++
				}
				c = block[i]
			}
		}
		out = append(out, c)
		start = c == '\n'
	}
	return string(out)
}
