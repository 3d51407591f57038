package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// ValidateDataSource validates a new DataSource. Its source may be empty (a DataImportCron
// creates its DataSource before the first import), but names at most one kind of source.
func ValidateDataSource(ds *v1beta1.DataSource) field.ErrorList {
	if ds == nil {
		return required()
	}
	errs := validateName(ds.Name)
	return append(errs, validateDataSourceSource(&ds.Spec.Source, field.NewPath("spec", "source"))...)
}

// ValidateDataSourceUpdate validates a changed DataSource: its source may change (a
// DataImportCron points it at each new import).
func ValidateDataSourceUpdate(newDS, oldDS *v1beta1.DataSource) field.ErrorList {
	if newDS == nil || oldDS == nil {
		return required()
	}
	return ValidateDataSource(newDS)
}

// ValidateDataSourceStatusUpdate validates a status write.
func ValidateDataSourceStatusUpdate(newDS, oldDS *v1beta1.DataSource) field.ErrorList {
	if newDS == nil || oldDS == nil {
		return required()
	}
	path := field.NewPath("status")
	errs := validateDataSourceSource(&newDS.Status.Source, path.Child("source"))
	seen := map[v1beta1.DataSourceConditionType]bool{}
	for i, c := range newDS.Status.Conditions {
		errs = append(errs, validateCondition(string(c.Type), c.Status, seen[c.Type], path.Child("conditions").Index(i))...)
		seen[c.Type] = true
	}
	return errs
}

// validateDataSourceSource accepts no source or one of pvc, snapshot and dataSource.
func validateDataSourceSource(src *v1beta1.DataSourceSource, path *field.Path) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if src.PVC != nil {
		set = append(set, "pvc")
		errs = append(errs, validateObjectName(src.PVC.Name, path.Child("pvc", "name"), "")...)
		errs = append(errs, validateOptionalNamespace(src.PVC.Namespace, path.Child("pvc", "namespace"))...)
	}
	if src.Snapshot != nil {
		set = append(set, "snapshot")
		errs = append(errs, validateObjectName(src.Snapshot.Name, path.Child("snapshot", "name"), "")...)
		errs = append(errs, validateOptionalNamespace(src.Snapshot.Namespace, path.Child("snapshot", "namespace"))...)
	}
	if src.DataSource != nil {
		set = append(set, "dataSource")
		errs = append(errs, validateObjectName(src.DataSource.Name, path.Child("dataSource", "name"), "")...)
		errs = append(errs, validateOptionalNamespace(src.DataSource.Namespace, path.Child("dataSource", "namespace"))...)
	}
	if len(set) > 1 {
		return field.ErrorList{field.Invalid(path, strings.Join(set, ", "), "a DataSource names at most one source: pvc, snapshot or dataSource")}
	}
	return errs
}

// validateOptionalNamespace holds a namespace, when given, to a DNS-1123 label (empty: the
// DataSource's own namespace).
func validateOptionalNamespace(ns string, path *field.Path) field.ErrorList {
	if ns == "" {
		return nil
	}
	return validateNamespace(ns, path)
}
