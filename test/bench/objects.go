package bench

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// userData is a cloud-config as people write them: users, packages, files and commands. It
// brings the integration tests' VirtualMachine to the ~3 KB of a realistic manifest.
const userData = `#cloud-config
hostname: %[1]s
fqdn: %[1]s.vms.example.com
users:
- name: ops
  groups: [adm, sudo]
  shell: /bin/bash
  sudo: ALL=(ALL) NOPASSWD:ALL
  ssh_authorized_keys:
  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKJ5fq0bTw2v8y0Yx3n1pG8yKq9R7c ops@example
  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMd0t9p3kq1c8Vb2n6Yw4Lr5Zs7Ha3e deploy@example
package_update: true
packages: [qemu-guest-agent, chrony, curl, jq]
write_files:
- path: /etc/chrony/conf.d/ntp.conf
  content: |
    server ntp1.example.com iburst
    server ntp2.example.com iburst
- path: /etc/motd
  content: |
    %[1]s is managed by NativeVirt; changes outside configuration management are lost.
- path: /etc/systemd/system/billing-worker.service
  permissions: "0644"
  content: |
    [Unit]
    Description=billing worker
    After=network-online.target
    [Service]
    ExecStart=/usr/local/bin/billing-worker --queue=payments --concurrency=4
    Restart=on-failure
    [Install]
    WantedBy=multi-user.target
runcmd:
- systemctl enable --now qemu-guest-agent chrony
- systemctl enable --now billing-worker
- echo "hello from %[1]s" > /dev/console
`

// VMBuilder makes the benchmark's VirtualMachine objects: the integration tests' realistic
// VirtualMachine (framework.VMYAML) with more labels, annotations and a longer cloud-config.
type VMBuilder struct {
	// GroupVersion is written into apiVersion: kubevirt.io/v1, or the CRD's group.
	GroupVersion schema.GroupVersion
}

// Build returns the object name in namespace; runStrategy stays Halted unless running.
func (b VMBuilder) Build(namespace, name string, running bool) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), &u.Object); err != nil {
		return nil, fmt.Errorf("parse the integration VirtualMachine: %w", err)
	}
	u.SetAPIVersion(b.GroupVersion.String())
	u.SetNamespace(namespace)
	labels := u.GetLabels()
	for k, v := range map[string]string{
		"app.kubernetes.io/name":       "billing",
		"app.kubernetes.io/component":  "worker",
		"app.kubernetes.io/part-of":    "payments",
		"app.kubernetes.io/managed-by": "nativevirt-bench",
		"environment":                  "staging",
		"team":                         "platform",
	} {
		labels[k] = v
	}
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	ann["description"] = "benchmark virtual machine: " + name + ", two disks, cloud-init, the pod network"
	ann["example.com/owner"] = "platform-team@example.com"
	ann["example.com/cost-center"] = "cc-4711"
	u.SetAnnotations(ann)
	if running {
		if err := unstructured.SetNestedField(u.Object, "Always", "spec", "runStrategy"); err != nil {
			return nil, err
		}
	}
	if err := setUserData(u, fmt.Sprintf(userData, name)); err != nil {
		return nil, err
	}
	return u, nil
}

// BuildMany builds the objects prefix-00000... in namespace ahead of a timed run.
func (b VMBuilder) BuildMany(namespace, prefix string, n int) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, n)
	for i := range out {
		u, err := b.Build(namespace, fmt.Sprintf("%s-%05d", prefix, i), false)
		if err != nil {
			return nil, err
		}
		out[i] = u
	}
	return out, nil
}

// setUserData replaces the cloudInitNoCloud user data of the template's volumes.
func setUserData(u *unstructured.Unstructured, data string) error {
	vols, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
	if err != nil {
		return err
	}
	found := false
	for _, v := range vols {
		vol, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if ci, ok := vol["cloudInitNoCloud"].(map[string]any); ok {
			ci["userData"] = data
			found = true
		}
	}
	if !found {
		return fmt.Errorf("the integration VirtualMachine has no cloudInitNoCloud volume any more")
	}
	return unstructured.SetNestedSlice(u.Object, vols, "spec", "template", "spec", "volumes")
}

// JSONSize is the size of the object's JSON encoding.
func JSONSize(u *unstructured.Unstructured) int {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return 0
	}
	return len(b)
}
