package vmi

import (
	"context"
	"encoding/json"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// metadataAPI patches instance metadata (a JSON merge patch on the main resource; /status
// keeps metadata as it was).
type metadataAPI struct {
	patch func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error)
}

// Finalizer is the finalizer that keeps an instance until no launcher pod of it exists, so that
// its VM cannot create the next instance while the old guest may still run (fencing).
const Finalizer = kubevirtv1.VirtualMachineControllerFinalizer

func hasFinalizer(vmi *kubevirtv1.VirtualMachineInstance) bool {
	for _, f := range vmi.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

type finalizerPatch struct {
	Metadata struct {
		Finalizers      []string `json:"finalizers"`
		ResourceVersion string   `json:"resourceVersion"`
	} `json:"metadata"`
}

// setFinalizer adds (add=true) or removes the finalizer. The patch carries the resource version,
// so a concurrent change of the list makes it fail instead of being lost.
func (a *metadataAPI) setFinalizer(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, add bool) (*kubevirtv1.VirtualMachineInstance, error) {
	var p finalizerPatch
	p.Metadata.ResourceVersion = vmi.ResourceVersion
	p.Metadata.Finalizers = []string{}
	for _, f := range vmi.Finalizers {
		if f != Finalizer {
			p.Metadata.Finalizers = append(p.Metadata.Finalizers, f)
		}
	}
	if add {
		p.Metadata.Finalizers = append(p.Metadata.Finalizers, Finalizer)
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return a.patch(ctx, vmi.Namespace, vmi.Name, data)
}
