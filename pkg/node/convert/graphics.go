package convert

import (
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// videoModels are the video cards a guest may pick.
var videoModels = []string{"vga", "virtio", "bochs", "cirrus"}

// VNCSocketPath is the VNC socket inside the pod: <runDir>/vnc.sock.
func VNCSocketPath(runDir string) string {
	return path.Join(runDir, VNCSocketFile)
}

// convertGraphics gives a VNC display on a unix socket in the pod's run
// directory (the node agent reaches it through the pod's volume) and the
// video card, unless autoattachGraphicsDevice is false: then the guest has
// no display and no video card.
func convertGraphics(devices *kubevirtv1.Devices, c Context, p *field.Path) ([]Graphics, []Video, field.ErrorList) {
	if !enabled(devices.AutoattachGraphicsDevice) {
		if devices.Video != nil && devices.Video.Type != "" {
			return nil, nil, field.ErrorList{field.Invalid(p.Child("video"), devices.Video.Type, "a video device needs autoattachGraphicsDevice")}
		}
		return nil, []Video{{Model: VideoModel{Type: "none"}}}, nil
	}
	model := "vga"
	if devices.Video != nil && devices.Video.Type != "" {
		model = devices.Video.Type
		if !contains(videoModels, model) {
			return nil, nil, field.ErrorList{field.NotSupported(p.Child("video", "type"), model, videoModels)}
		}
	}
	graphics := []Graphics{{Type: "vnc", Listen: &GraphicsListen{Type: "socket", Socket: VNCSocketPath(c.RunDir)}}}
	return graphics, []Video{{Model: VideoModel{Type: model, Heads: 1}}}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
