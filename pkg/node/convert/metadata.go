package convert

import (
	"encoding/xml"
	"fmt"
	"strings"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// MetadataNamespace is the XML namespace of NativeVirt's element in a
// domain's <metadata>; with libvirt's metadata API use it as the URI and
// MetadataPrefix as the key.
const MetadataNamespace = "https://nativevirt.io/xmlns/domain/v1"

// MetadataPrefix is the XML prefix libvirt gives MetadataNamespace.
const MetadataPrefix = "nativevirt"

// InstanceMetadata identifies the VirtualMachineInstance a domain runs, so
// that a restarted node agent maps domains back to instances without
// guessing from the domain name.
type InstanceMetadata struct {
	XMLName xml.Name `xml:"https://nativevirt.io/xmlns/domain/v1 instance"`
	// UID is the instance's metadata.uid.
	UID string `xml:"uid"`
	// Namespace is the instance's namespace.
	Namespace string `xml:"namespace"`
	// Name is the instance's name.
	Name string `xml:"name"`
	// GracePeriodSeconds is the instance's termination grace period.
	GracePeriodSeconds int64 `xml:"gracePeriodSeconds"`
}

// DefaultGracePeriodSeconds is the grace period of an instance that sets none.
const DefaultGracePeriodSeconds = 30

// DomainName is the libvirt name of an instance's domain, as KubeVirt names
// it: <namespace>_<name>. Neither part may contain "_" (both are DNS names),
// so the name is unambiguous.
func DomainName(namespace, name string) string {
	return namespace + "_" + name
}

// SplitDomainName is the inverse of DomainName.
func SplitDomainName(domain string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(domain, "_")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "_") {
		return "", "", fmt.Errorf("domain name %q is not <namespace>_<name>", domain)
	}
	return namespace, name, nil
}

// ParseInstanceMetadata reads NativeVirt's element, as libvirt's metadata
// API returns it or as it appears inside a domain's <metadata>.
func ParseInstanceMetadata(data []byte) (*InstanceMetadata, error) {
	m := &InstanceMetadata{}
	if err := xml.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("parse instance metadata: %w", err)
	}
	if m.UID == "" {
		return nil, fmt.Errorf("parse instance metadata: no uid")
	}
	return m, nil
}

// ParseDomainMetadata reads NativeVirt's element from a whole domain XML.
func ParseDomainMetadata(domainXML []byte) (*InstanceMetadata, error) {
	var d struct {
		Metadata struct {
			Instance *InstanceMetadata `xml:"https://nativevirt.io/xmlns/domain/v1 instance"`
		} `xml:"metadata"`
	}
	if err := xml.Unmarshal(domainXML, &d); err != nil {
		return nil, fmt.Errorf("parse domain metadata: %w", err)
	}
	if d.Metadata.Instance == nil || d.Metadata.Instance.UID == "" {
		return nil, fmt.Errorf("parse domain metadata: the domain carries no NativeVirt instance metadata")
	}
	return d.Metadata.Instance, nil
}

// instanceMetadata builds the metadata element of vmi.
func instanceMetadata(vmi *kubevirtv1.VirtualMachineInstance) *Metadata {
	grace := int64(DefaultGracePeriodSeconds)
	if vmi.Spec.TerminationGracePeriodSeconds != nil {
		grace = *vmi.Spec.TerminationGracePeriodSeconds
	}
	return &Metadata{Instance: &InstanceMetadata{
		UID:                string(vmi.UID),
		Namespace:          vmi.Namespace,
		Name:               vmi.Name,
		GracePeriodSeconds: grace,
	}}
}
