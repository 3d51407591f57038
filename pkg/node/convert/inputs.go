package convert

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// autoInputName is the name of the tablet added by autoattachInputDevice.
const autoInputName = "default-0"

// convertInputs gives the input devices: the listed ones, or a USB tablet
// when autoattachInputDevice is true and none is listed. usb says whether a
// USB controller is needed.
func convertInputs(devices *kubevirtv1.Devices, p *field.Path) (inputs []Input, usb bool, errs field.ErrorList) {
	list := devices.Inputs
	if len(list) == 0 && devices.AutoattachInputDevice != nil && *devices.AutoattachInputDevice {
		list = []kubevirtv1.Input{{Name: autoInputName, Type: kubevirtv1.InputTypeTablet, Bus: kubevirtv1.InputBusUSB}}
	}
	for i, in := range list {
		ip := p.Child("inputs").Index(i)
		bus, typ := in.Bus, in.Type
		if bus == "" {
			bus = kubevirtv1.InputBusUSB
		}
		if typ == "" {
			typ = kubevirtv1.InputTypeTablet
		}
		if bus != kubevirtv1.InputBusUSB && bus != kubevirtv1.InputBusVirtio {
			errs = append(errs, field.NotSupported(ip.Child("bus"), in.Bus, []string{"usb", "virtio"}))
		}
		if typ != kubevirtv1.InputTypeTablet && typ != kubevirtv1.InputTypeKeyboard {
			errs = append(errs, field.NotSupported(ip.Child("type"), in.Type, []string{"tablet", "keyboard"}))
		}
		if in.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), "an input device needs a name"))
		}
		usb = usb || bus == kubevirtv1.InputBusUSB
		inputs = append(inputs, Input{Type: string(typ), Bus: string(bus), Alias: &Alias{Name: "ua-" + in.Name}})
	}
	if len(errs) > 0 {
		return nil, false, errs
	}
	return inputs, usb, nil
}
