package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var (
	inputBuses  = []kubevirtv1.InputBus{kubevirtv1.InputBusUSB, kubevirtv1.InputBusVirtio}
	inputTypes  = []kubevirtv1.InputType{kubevirtv1.InputTypeTablet, kubevirtv1.InputTypeKeyboard}
	panicModels = []kubevirtv1.PanicDeviceModel{kubevirtv1.Hyperv, kubevirtv1.Isa, kubevirtv1.Pvpanic}
	// soundModels are KubeVirt's sound cards (ich9 when empty).
	soundModels     = []string{"ich9", "ac97"}
	watchdogActions = []kubevirtv1.WatchdogAction{kubevirtv1.WatchdogActionPoweroff, kubevirtv1.WatchdogActionReset,
		kubevirtv1.WatchdogActionShutdown}
)

// validateOtherDevices checks the devices that have no volume or network behind them: input
// devices, the watchdog and panic devices. Disks and interfaces are checked with their volumes
// and networks; passthrough devices are refused by the unsupported table.
func validateOtherDevices(devices *kubevirtv1.Devices, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := nameSet{}
	for i, input := range devices.Inputs {
		inputPath := fldPath.Child("inputs").Index(i)
		if input.Name == "" {
			errs = append(errs, field.Required(inputPath.Child("name"), ""))
		}
		errs = appendErr(errs, seen.add(input.Name, inputPath.Child("name")))
		errs = append(errs, ValidateInputBus(input.Bus, inputPath.Child("bus"))...)
		errs = append(errs, ValidateInputType(input.Type, inputPath.Child("type"))...)
	}
	errs = append(errs, validateWatchdog(devices.Watchdog, fldPath.Child("watchdog"))...)
	if snd := devices.Sound; snd != nil {
		if snd.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("sound", "name"), ""))
		}
		errs = append(errs, ValidateSoundModel(snd.Model, fldPath.Child("sound", "model"))...)
	}
	for i, panicDevice := range devices.PanicDevices {
		if panicDevice.Model != nil {
			errs = append(errs, ValidatePanicDeviceModel(*panicDevice.Model, fldPath.Child("panicDevices").Index(i).Child("model"))...)
		}
	}
	return errs
}

// validateWatchdog requires a named i6300esb watchdog: diag288 exists only on s390x, which
// NativeVirt does not run.
func validateWatchdog(w *kubevirtv1.Watchdog, fldPath *field.Path) field.ErrorList {
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	if w.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	if w.Diag288 != nil {
		errs = append(errs, field.NotSupported(fldPath.Child("diag288"), "diag288", []string{"i6300esb"}))
	}
	if w.I6300ESB == nil {
		if w.Diag288 == nil {
			errs = append(errs, field.Required(fldPath.Child("i6300esb"), "a watchdog model must be set"))
		}
		return errs
	}
	if a := w.I6300ESB.Action; a != "" && !contains(watchdogActions, a) {
		errs = append(errs, field.NotSupported(fldPath.Child("i6300esb", "action"), string(a), watchdogActions))
	}
	return errs
}
