package validation

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// maxVolumeLabel is the longest label of a config disk (an ISO9660 volume identifier).
const maxVolumeLabel = 32

// downwardAPIFieldPaths are the pod fields a downwardAPI volume's file may hold (the kubelet's
// list for volumes; labels['<key>'] and annotations['<key>'] pick one entry).
var downwardAPIFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"}

// validateConfigVolumes checks the config volumes (configMap, secret, serviceAccount,
// downwardAPI, sysprep), which become pod volumes of the launcher and ISO disks of the guest: what they
// name, their labels, the downward API's files, and one service account at most (the pod has
// one).
func validateConfigVolumes(volumes []kubevirtv1.Volume, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	serviceAccount := -1
	for i := range volumes {
		v := &volumes[i]
		p := fldPath.Index(i)
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name == "" {
				errs = append(errs, field.Required(p.Child("configMap", "name"), ""))
			}
			errs = append(errs, validateVolumeLabel(v.ConfigMap.VolumeLabel, p.Child("configMap", "volumeLabel"))...)
		case v.Secret != nil:
			if v.Secret.SecretName == "" {
				errs = append(errs, field.Required(p.Child("secret", "secretName"), ""))
			}
			errs = append(errs, validateVolumeLabel(v.Secret.VolumeLabel, p.Child("secret", "volumeLabel"))...)
		case v.ServiceAccount != nil:
			namePath := p.Child("serviceAccount", "serviceAccountName")
			if name := v.ServiceAccount.ServiceAccountName; name == "" {
				errs = append(errs, field.Required(namePath, ""))
			} else {
				for _, msg := range content.IsDNS1123Subdomain(name) {
					errs = append(errs, field.Invalid(namePath, name, msg))
				}
			}
			if serviceAccount >= 0 {
				errs = append(errs, field.Invalid(p.Child("serviceAccount"), v.Name,
					fmt.Sprintf("only one serviceAccount volume is allowed (the launcher pod runs as one service account); %s already is one", fldPath.Index(serviceAccount))))
			} else {
				serviceAccount = i
			}
		case v.Sysprep != nil:
			sPath := p.Child("sysprep")
			switch sp := v.Sysprep; {
			case sp.ConfigMap == nil && sp.Secret == nil:
				errs = append(errs, field.Required(sPath, "one of configMap and secret must name the source of autounattend.xml"))
			case sp.ConfigMap != nil && sp.Secret != nil:
				errs = append(errs, field.Invalid(sPath, "configMap, secret", "exactly one of configMap and secret may be set"))
			case sp.ConfigMap != nil && sp.ConfigMap.Name == "":
				errs = append(errs, field.Required(sPath.Child("configMap", "name"), ""))
			case sp.Secret != nil && sp.Secret.Name == "":
				errs = append(errs, field.Required(sPath.Child("secret", "name"), ""))
			}
		case v.DownwardAPI != nil:
			dPath := p.Child("downwardAPI")
			errs = append(errs, validateVolumeLabel(v.DownwardAPI.VolumeLabel, dPath.Child("volumeLabel"))...)
			errs = append(errs, validateDownwardAPIFields(v.DownwardAPI, dPath.Child("fields"))...)
		}
	}
	return errs
}

// validateVolumeLabel allows what an ISO9660 volume identifier holds.
func validateVolumeLabel(label string, p *field.Path) field.ErrorList {
	return validatePrintable(label, maxVolumeLabel, func(r rune) bool { return r >= 0x20 && r <= 0x7e }, "printable ASCII characters", p)
}

// validateDownwardAPIFields checks the files of a downwardAPI volume as the kubelet needs them:
// unique relative paths without "..", each from one pod field.
func validateDownwardAPIFields(d *kubevirtv1.DownwardAPIVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := nameSet{}
	for i, f := range d.Fields {
		fPath := p.Index(i)
		switch {
		case f.Path == "":
			errs = append(errs, field.Required(fPath.Child("path"), ""))
		case path.IsAbs(f.Path) || strings.HasPrefix(f.Path, "..") || strings.Contains(f.Path, "/../") || strings.HasSuffix(f.Path, "/.."):
			errs = append(errs, field.Invalid(fPath.Child("path"), f.Path, "must be a relative path without '..'"))
		}
		errs = appendErr(errs, paths.add(f.Path, fPath.Child("path")))
		switch {
		case f.FieldRef != nil && f.ResourceFieldRef != nil:
			errs = append(errs, field.Invalid(fPath, f.Path, "exactly one of fieldRef and resourceFieldRef must be set"))
		case f.FieldRef != nil:
			fp := f.FieldRef.FieldPath
			if !contains(downwardAPIFieldPaths, fp) && !strings.HasPrefix(fp, "metadata.labels['") && !strings.HasPrefix(fp, "metadata.annotations['") {
				errs = append(errs, field.NotSupported(fPath.Child("fieldRef", "fieldPath"), fp, downwardAPIFieldPaths))
			}
		case f.ResourceFieldRef != nil:
			// The resources of the launcher's compute container, as KubeVirt gives them.
			if f.ResourceFieldRef.Resource == "" {
				errs = append(errs, field.Required(fPath.Child("resourceFieldRef", "resource"), ""))
			}
		default:
			errs = append(errs, field.Required(fPath, "one of fieldRef and resourceFieldRef must be set"))
		}
	}
	return errs
}
