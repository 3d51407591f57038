package convert

import kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"

// rngSource is the host entropy source; it exists in every container.
const rngSource = "/dev/urandom"

// convertRNG gives a virtio RNG fed from /dev/urandom when devices.rng is set.
func convertRNG(devices *kubevirtv1.Devices, transitional bool) []RNG {
	if devices.Rng == nil {
		return nil
	}
	model := "virtio"
	if transitional {
		model = "virtio-transitional"
	}
	return []RNG{{Model: model, Backend: RNGBackend{Model: "random", Source: rngSource}}}
}
