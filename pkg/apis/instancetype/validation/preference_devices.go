package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtvalidation "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/validation"
)

// validateDevicePreferences accepts, for each preferred device setting, exactly the values the
// instance's device of that kind accepts. The preferred LUN bus is held to the disk buses: LUN
// disks themselves are refused in an instance, so it can only ever meet a plain disk's rules.
func validateDevicePreferences(d *v1beta1.DevicePreferences, path *field.Path) field.ErrorList {
	if d == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, kubevirtvalidation.ValidateDiskBus(d.PreferredDiskBus, path.Child("preferredDiskBus"))...)
	errs = append(errs, kubevirtvalidation.ValidateDiskBus(d.PreferredLunBus, path.Child("preferredLunBus"))...)
	errs = append(errs, kubevirtvalidation.ValidateCdromBus(d.PreferredCdromBus, path.Child("preferredCdromBus"))...)
	errs = append(errs, kubevirtvalidation.ValidateDiskCache(d.PreferredDiskCache, path.Child("preferredDiskCache"))...)
	errs = append(errs, kubevirtvalidation.ValidateDiskIO(d.PreferredDiskIO, path.Child("preferredDiskIO"))...)
	errs = append(errs, kubevirtvalidation.ValidateInterfaceModel(d.PreferredInterfaceModel, path.Child("preferredInterfaceModel"))...)
	errs = append(errs, kubevirtvalidation.ValidateInputBus(d.PreferredInputBus, path.Child("preferredInputBus"))...)
	errs = append(errs, kubevirtvalidation.ValidateInputType(d.PreferredInputType, path.Child("preferredInputType"))...)
	errs = append(errs, kubevirtvalidation.ValidateSoundModel(d.PreferredSoundModel, path.Child("preferredSoundModel"))...)
	if m := d.PreferredPanicDeviceModel; m != nil {
		errs = append(errs, kubevirtvalidation.ValidatePanicDeviceModel(*m, path.Child("preferredPanicDeviceModel"))...)
	}
	return errs
}
