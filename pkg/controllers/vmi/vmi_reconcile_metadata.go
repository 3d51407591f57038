package vmi

import (
	"context"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/finalizer"
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
	return finalizer.Has(vmi, Finalizer)
}

// setFinalizer adds (add=true) or removes the finalizer; a concurrent change of the list makes
// the patch fail instead of being lost (finalizer.Patch).
func (a *metadataAPI) setFinalizer(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, add bool) (*kubevirtv1.VirtualMachineInstance, error) {
	data, err := finalizer.Patch(vmi, Finalizer, add)
	if err != nil {
		return nil, err
	}
	return a.patch(ctx, vmi.Namespace, vmi.Name, data)
}
